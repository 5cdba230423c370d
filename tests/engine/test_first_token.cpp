// vLLM V0's asynchronous output processor (0.6.0 until V0's removal, vllm#7049): a step's sampled tokens become
// request outputs inside the next step, so a served request's first token reaches the caller when the iteration
// after its prefill ends (perf::first_token_after_next_step; docs/cost-model.md "Runtimes").
#include <catch2/catch.hpp>

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
  REQUIRE(r.iterations.size() == 64);
  const double prefill = r.iterations[0].duration_s, decode1 = r.iterations[1].duration_s;
  REQUIRE(r.iterations[0].prefill_tokens == 512);
  REQUIRE(r.iterations[1].decode_seqs == 1);
  double total = 0;
  for (const auto& it : r.iterations) total += it.duration_s;
  const auto& q = r.requests.at(0);
  // The first token waits for the first decode step: TTFT = prefill + one decode iteration (an 8B decode step on an
  // A100 is ~40 % of a 512-token prefill, so the difference is large enough to see).
  CHECK(q.first_token_s - q.arrival_s == Approx(prefill + decode1).epsilon(1e-9));
  CHECK(decode1 > 0.2 * prefill);
  // The end of the request does not move: the delay is in the stream, not in the engine's work.
  CHECK(q.finish_s - q.arrival_s == Approx(total).epsilon(1e-9));
  CHECK(r.summary.ttft_ms.mean == Approx((prefill + decode1) * 1e3).epsilon(1e-9));
  // A request whose second token is its last keeps its first at the prefill's end: llmsim does not delay the last
  // token, and the first token stays before it.
  const auto two = one_request({{"runtime", "vllm==0.7.3"}}, 2);
  const auto& t = two.requests.at(0);
  CHECK(t.first_token_s - t.arrival_s == Approx(two.iterations.at(0).duration_s).epsilon(1e-9));
  CHECK(t.first_token_s < t.finish_s);
}

TEST_CASE("the first token is not delayed where vLLM turns the async output processor off", "[first_token]") {
  auto ttft_is_prefill = [](const Json& engine) {
    const auto r = one_request(engine);
    const auto& q = r.requests.at(0);
    INFO(engine.dump());
    CHECK(q.first_token_s - q.arrival_s == Approx(r.iterations.at(0).duration_s).epsilon(1e-9));
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
