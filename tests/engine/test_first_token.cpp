// vLLM V0's asynchronous output processor (0.6.0 until V0's removal, vllm#7049): a step's sampled tokens become
// request outputs inside the next step, so a served request's first token reaches the caller when the iteration
// after its prefill ends (perf::first_token_after_next_step; docs/cost-model.md "Runtimes").
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "engine_test_util.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/perf/runtime.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

engine::SimulationResult one_request(const Json& engine, int output = 64) {
  const Json w = {{"arrival", {{"process", "constant"}, {"rate", 1.0}}},
                  {"input_tokens", {{"dist", "fixed"}, {"value", 512}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", output}}},
                  {"num_requests", 1}, {"warmup_requests", 0}};
  engine::SimulationOptions opt;
  opt.record_requests = true;
  opt.record_iterations = true;
  return engine::simulate(make(test::scenario(w, engine)), opt);
}

}  // namespace

TEST_CASE("vLLM 0.6-0.10 V0 streams the first token when the next iteration ends", "[first_token]") {
  const auto r = one_request({{"runtime", "vllm==0.7.3"}});
  // The prefill, 63 decode steps for tokens 2..64, and the step in which the engine finds the stop: it scheduled the
  // sequence before its last output was processed (LLMEngine.step: the stop check runs in the next step's
  // async_callback), so the last token is delivered when that step ends.
  REQUIRE(r.iterations.size() == 65);
  const double prefill = r.iterations[0].duration_s, decode1 = r.iterations[1].duration_s;
  REQUIRE(r.iterations[0].prefill_tokens == 512);
  REQUIRE(r.iterations[1].decode_seqs == 1);
  REQUIRE(r.iterations[64].decode_seqs == 1);
  double total = 0;
  for (const auto& it : r.iterations) total += it.duration_s;
  const auto& q = r.requests.at(0);
  // The first token waits for the first decode step: TTFT = prefill + one decode iteration (an 8B decode step on an
  // A100 is ~40 % of a 512-token prefill, so the difference is large enough to see).
  CHECK(q.first_token_s - q.arrival_s == Approx(prefill + decode1).epsilon(1e-9));
  CHECK(decode1 > 0.2 * prefill);
  // The last token waits for the step after it: E2E is every iteration's, the extra step included.
  CHECK(q.finish_s - q.arrival_s == Approx(total).epsilon(1e-9));
  CHECK(q.finish_s - q.arrival_s > prefill + 63 * decode1 * 0.99);
  CHECK(r.summary.ttft_ms.mean == Approx((prefill + decode1) * 1e3).epsilon(1e-9));
  // 64 tokens reach the caller (the extra step's token is dropped), 63 gaps apart: each gap is the step that
  // delivers the token, so they add up to E2E - TTFT, and TPOT = (E2E - TTFT) / 63 is a whole decode step.
  CHECK(q.output_tokens == 64);
  CHECK(r.summary.itl_ms.count == 63);
  CHECK(r.summary.itl_ms.mean * 63 == Approx((q.finish_s - q.first_token_s) * 1e3).epsilon(1e-9));
  CHECK(r.summary.tpot_ms.mean == Approx(r.summary.itl_ms.mean).epsilon(1e-9));
  CHECK(r.summary.tpot_ms.mean == Approx(decode1 * 1e3).epsilon(0.02));
  // A request whose second token is its last: both delivered one step late, one decode step apart.
  const auto two = one_request({{"runtime", "vllm==0.7.3"}}, 2);
  REQUIRE(two.iterations.size() == 3);
  const auto& t = two.requests.at(0);
  CHECK(t.first_token_s - t.arrival_s ==
        Approx(two.iterations[0].duration_s + two.iterations[1].duration_s).epsilon(1e-9));
  CHECK(t.finish_s - t.first_token_s == Approx(two.iterations[2].duration_s).epsilon(1e-9));
  // One token: delivered with its stop, by the step after the prefill; no gap.
  const auto one = one_request({{"runtime", "vllm==0.7.3"}}, 1);
  REQUIRE(one.iterations.size() == 2);
  const auto& o = one.requests.at(0);
  CHECK(o.first_token_s == Approx(o.finish_s).epsilon(1e-12));
  CHECK(o.finish_s - o.arrival_s == Approx(one.iterations[0].duration_s + one.iterations[1].duration_s).epsilon(1e-9));
  CHECK(o.output_tokens == 1);
  CHECK(one.summary.itl_ms.count == 0);
}

TEST_CASE("V0's delayed stop: TPOT of short requests is a whole step, not (n - 2) / (n - 1) of one", "[first_token]") {
  // Before the extra step llmsim ended a request when its last token was computed while its first was delivered a
  // step late: a 3-token request's TPOT was half a decode step. With both ends one step late it is a whole one, as
  // long requests' are.
  auto tpot_over_step = [](int output) {
    const auto r = one_request({{"runtime", "vllm==0.7.3"}}, output);
    const auto& q = r.requests.at(0);
    return (q.finish_s - q.first_token_s) / (output - 1) / r.iterations.at(1).duration_s;
  };
  CHECK(tpot_over_step(3) == Approx(1.0).epsilon(0.01));
  CHECK(tpot_over_step(64) == Approx(1.0).epsilon(0.02));
  // V1 sends a step's outputs when it ends: no extra step, E2E is the iterations' own.
  const auto v1 = one_request({{"runtime", "vllm==0.10.1"}}, 64);
  CHECK(v1.iterations.size() == 64);
}

TEST_CASE("the first token is not delayed where vLLM turns the async output processor off", "[first_token]") {
  auto ttft_is_prefill = [](const Json& engine) {
    const auto r = one_request(engine);
    const auto& q = r.requests.at(0);
    INFO(engine.dump());
    const double hop = test::in_process_hop_s(make(test::scenario(Json::object(), engine)));
    CHECK(q.first_token_s - q.arrival_s == Approx(r.iterations.at(0).duration_s + hop).epsilon(1e-9));
  };
  ttft_is_prefill({{"runtime", "vllm==0.5.4"}});                          // synchronous output processing (0.5.x)
  ttft_is_prefill({{"runtime", "vllm==0.7.3"}, {"cuda_graphs", false}});  // enforce_eager turns it off
  ttft_is_prefill({{"runtime", "vllm==0.10.1"}});                         // V1: outputs leave with the step
  ttft_is_prefill(Json::object());                                         // the default (V1)
}

TEST_CASE("first_token_after_next_step follows verify_async_output_proc", "[first_token]") {
  spec::EngineConfig e;
  e.runtime = spec::Runtime::vllm_v0;
  e.policy = spec::SchedulerPolicy::vllm_v0;
  CHECK(perf::first_token_after_next_step(e, 1, false));
  CHECK_FALSE(perf::first_token_after_next_step(e, 2, false));  // pipeline parallel
  CHECK_FALSE(perf::first_token_after_next_step(e, 1, true));   // speculative decoding
  e.cuda_graphs = false;
  CHECK_FALSE(perf::first_token_after_next_step(e, 1, false));  // enforce_eager
  e.cuda_graphs = true;
  e.policy = spec::SchedulerPolicy::static_batching;
  CHECK_FALSE(perf::first_token_after_next_step(e, 1, false));  // one generate call, drained at its end
  for (const auto r : {spec::Runtime::vllm_v1, spec::Runtime::vllm_v0_sync, spec::Runtime::vllm_v0_paged,
                       spec::Runtime::sglang}) {
    e.runtime = r;
    e.policy = spec::SchedulerPolicy::vllm;
    CHECK_FALSE(perf::first_token_after_next_step(e, 1, false));
  }
}

TEST_CASE("V0's delayed outputs under load: gaps add up to E2E - TTFT, and a prefill-only step delivers stops",
          "[first_token]") {
  // Poisson arrivals on V0 without chunked prefill (max_model_len 8192): waiting prompts get prefill-only steps
  // between decode steps. The stop of a sequence whose last token was just computed is found during whatever
  // iteration follows, so some requests end with a prefill-only step; every request's gaps (the first token's
  // delivery to the last's) add up to its E2E - TTFT, prefill stalls included.
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 12.0}}},
                  {"input_tokens", {{"dist", "lognormal"}, {"mean", 1500}, {"sigma", 0.5}}},
                  {"output_tokens", {{"dist", "lognormal"}, {"mean", 60}, {"sigma", 0.8}}},
                  {"num_requests", 400}, {"warmup_requests", 0}, {"seed", 5}};
  engine::SimulationOptions opt;
  opt.record_requests = true;
  opt.record_iterations = true;
  const auto r = engine::simulate(make(test::scenario(w, {{"runtime", "vllm==0.7.3"}})), opt);
  REQUIRE(r.requests.size() == 400);
  double span_ms = 0;
  std::int64_t ones = 0;
  for (const auto& q : r.requests) {
    CHECK(q.first_token_s <= q.finish_s);
    if (q.output_tokens > 1) span_ms += (q.finish_s - q.first_token_s) * 1e3;
    else ++ones;
  }
  REQUIRE(r.summary.itl_ms.count > 0);
  CHECK(r.summary.itl_ms.mean * static_cast<double>(r.summary.itl_ms.count) == Approx(span_ms).epsilon(1e-9));
  // Requests that ended when a prefill-only iteration ended.
  std::vector<double> prefill_only_ends;
  for (const auto& it : r.iterations)
    if (it.decode_seqs == 0 && it.prefill_seqs > 0) prefill_only_ends.push_back(it.start_s + it.duration_s);
  std::sort(prefill_only_ends.begin(), prefill_only_ends.end());
  std::int64_t ended_by_prefill_step = 0;
  for (const auto& q : r.requests)
    if (std::binary_search(prefill_only_ends.begin(), prefill_only_ends.end(), q.finish_s)) ++ended_by_prefill_step;
  INFO(prefill_only_ends.size() << " prefill-only iterations, " << ones << " one-token requests");
  CHECK(ended_by_prefill_step > 0);
}
