// vLLM V1's unified scheduler (policy "vllm", the default) against the behaviour read from vLLM's source
// (vllm/v1/core/sched/scheduler.py, kv_cache_manager.py, engine/arg_utils.py; ../shared/reference/serving-engines.md
// §2), and the V0 policy kept as "vllm-v0".
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "llmsim/engine/simulator.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"
#include "engine_test_util.hpp"

using namespace llmsim;
using engine::SimulationOptions;
using engine::simulate;
using test::make;
using test::scenario;

namespace {

Json closed(int users, int in, int out, int n) {
  return {{"arrival", {{"process", "closed"}, {"concurrency", users}}},
          {"input_tokens", {{"dist", "fixed"}, {"value", in}}},
          {"output_tokens", {{"dist", "fixed"}, {"value", out}}},
          {"num_requests", n}, {"warmup_requests", 0}};
}

}  // namespace

TEST_CASE("V1 defaults depend on the GPU and the entry point, as vLLM's get_batch_defaults sets them") {
  const Json poisson = {{"arrival", {{"process", "poisson"}, {"rate", 1}}}};
  const Json offline = {{"arrival", {{"process", "offline"}}}};
  struct Case { const char* gpu; const Json* w; int tokens, seqs; };
  for (const auto& c : {Case{"a100-80gb-sxm", &poisson, 2048, 256}, Case{"a100-80gb-sxm", &offline, 8192, 256},
                        Case{"h100-80gb-sxm", &poisson, 8192, 1024}, Case{"h100-80gb-sxm", &offline, 16384, 1024},
                        Case{"h200-141gb-sxm", &poisson, 8192, 1024}, Case{"rtx4090-24gb", &poisson, 2048, 256},
                        Case{"l40s-48gb", &offline, 8192, 256}}) {
    INFO(c.gpu << " " << c.w->dump());
    Json j = {{"hardware", {{"gpu", c.gpu}}}, {"engine", {{"max_model_len", 4096}}}, {"workload", *c.w}};
    const auto e = make(j).scenario.engine;
    CHECK(e.policy == spec::SchedulerPolicy::vllm);
    CHECK(e.max_num_batched_tokens == c.tokens);
    CHECK(e.max_num_seqs == c.seqs);
    CHECK(e.prefix_caching());           // V1: prefix caching on
    CHECK(e.watermark_or_default() == 0);  // V1: no admission watermark
    CHECK(e.chunked_prefill());
  }
  // No engine section at all reads the same as an empty one.
  CHECK(make({{"workload", poisson}, {"engine", {{"max_model_len", 4096}}}}).scenario.engine.max_num_batched_tokens == 2048);
  // vllm-v0 keeps V0's: 256 sequences, llmsim's 8192-token budget, the 1 % watermark, no prefix caching.
  const auto v0 = make({{"engine", {{"policy", "vllm-v0"}}}, {"workload", poisson}}).scenario.engine;
  CHECK(v0.max_num_batched_tokens == 8192);
  CHECK(v0.max_num_seqs == 256);
  CHECK(v0.watermark_or_default() == 0.01);
  CHECK_FALSE(v0.prefix_caching());
  // Explicit values win, and an explicit 0 is refused.
  const auto set = make({{"engine", {{"max_num_batched_tokens", 4096}, {"max_num_seqs", 64}, {"max_model_len", 4096}}},
                         {"workload", poisson}}).scenario.engine;
  CHECK(set.max_num_batched_tokens == 4096);
  CHECK(set.max_num_seqs == 64);
  CHECK_THROWS_WITH(make({{"engine", {{"max_num_seqs", 0}}}}), Catch::Contains("engine.max_num_seqs"));
  CHECK_THROWS_WITH(make({{"engine", {{"preemption", "swap"}}}}), Catch::Contains("engine.preemption"));
  // The summary names the engine it models.
  const auto s = simulate(make(scenario({{"num_requests", 5}, {"warmup_requests", 0}}))).summary;
  CHECK(s.engine == "vLLM V1 (0.11 scheduler)");
  CHECK(metrics::to_json(s)["engine"] == "vLLM V1 (0.11 scheduler)");
  // ... and whatever else prices the run that the scheduler's name hides (attack round 3: vllm==0.6.3 under policy
  // "vllm" read "vLLM V1 (0.11 scheduler)" while V0's host loop and kernels priced it): the release, a runtime other
  // than the scheduler's own, and V1's async scheduling.
  const Json few = {{"num_requests", 5}, {"warmup_requests", 0}};
  auto label = [&](const Json& engine) { return simulate(make(scenario(few, engine))).summary.engine; };
  CHECK(label({{"policy", "vllm"}, {"runtime", "vllm==0.6.3"}}) ==
        "vLLM V1 (0.11 scheduler) on vllm==0.6.3 (runtime vllm-v0)");
  CHECK(label({{"runtime", "vllm==0.14.0"}}) == "vLLM V1 (0.11 scheduler) on vllm==0.14.0, async scheduling");
  CHECK(label({{"async_scheduling", true}}) == "vLLM V1 (0.11 scheduler), async scheduling");
  CHECK(label({{"policy", "vllm"}, {"runtime", "sglang"}}) == "vLLM V1 (0.11 scheduler) on runtime sglang");
  CHECK(label({{"policy", "vllm-v0"}, {"runtime", "vllm-v0"}}) == spec::engine_name(spec::SchedulerPolicy::vllm_v0));
}

TEST_CASE("V1 steps mix decodes and prefill chunks under one token budget; V0 runs prefill-only steps") {
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 6.0}}},
                  {"input_tokens", {{"dist", "lognormal"}, {"mean", 1500}, {"sigma", 0.8}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", 150}}},
                  {"num_requests", 400}, {"warmup_requests", 0}};
  SimulationOptions opt;
  opt.record_iterations = true;
  const auto v1 = simulate(make(scenario(w, {{"max_num_batched_tokens", 2048}})), opt);
  const auto v0 = simulate(make(scenario(w, {{"policy", "vllm-v0"}})), opt);
  int mixed = 0, prefill_only = 0;
  for (std::size_t k = 0; k < v1.iterations.size(); ++k) {
    const auto& it = v1.iterations[k];
    REQUIRE(it.prefill_tokens + it.decode_seqs <= 2048);
    mixed += it.prefill_seqs > 0 && it.decode_seqs > 0;
    prefill_only += it.prefill_seqs > 0 && it.decode_seqs == 0;
  }
  INFO("V1: " << mixed << " mixed, " << prefill_only << " prefill-only of " << v1.iterations.size() << " steps");
  int v0_mixed = 0, v0_prefill_only = 0;
  for (const auto& it : v0.iterations) {
    v0_mixed += it.prefill_seqs > 0 && it.decode_seqs > 0;
    v0_prefill_only += it.prefill_seqs > 0 && it.decode_seqs == 0;
  }
  // V1 schedules the running decodes first: a step with a prefill chunk decodes too unless nothing was decoding.
  CHECK(mixed > 200);
  CHECK(prefill_only < mixed / 10);
  CHECK(v0_mixed == 0);             // V0: a step is all prompts or all decodes
  CHECK(v0_prefill_only > 200);     // each one stalls every running decode
  CHECK(v1.summary.itl_ms.p99 < 0.5 * v0.summary.itl_ms.p99);
  CHECK(v1.summary.engine != v0.summary.engine);
}

TEST_CASE("V1 allocates KV blocks per chunk; V0 allocates the whole prompt at admission") {
  const Json one = {{"arrival", {{"process", "constant"}, {"rate", 1.0}}},
                    {"input_tokens", {{"dist", "fixed"}, {"value", 6000}}},
                    {"output_tokens", {{"dist", "fixed"}, {"value", 4}}},
                    {"num_requests", 1}, {"warmup_requests", 0}};
  SimulationOptions opt;
  opt.record_iterations = true;
  const auto v1 = simulate(make(scenario(one, {{"max_num_batched_tokens", 2048}})), opt).iterations;
  REQUIRE(v1.size() >= 3);
  CHECK(v1[0].prefill_tokens == 2048);
  CHECK(v1[0].kv_blocks_used == 2048 / 16);  // the first chunk's blocks only
  CHECK(v1[1].kv_blocks_used == 4096 / 16);
  CHECK(v1[2].prefill_tokens == 6000 - 4096);
  CHECK(v1[2].kv_blocks_used == 6000 / 16);
  const auto v0 = simulate(make(scenario(one, {{"policy", "chunked"}, {"max_num_batched_tokens", 2048}})), opt).iterations;
  CHECK(v0[0].prefill_tokens == 2048);
  CHECK(v0[0].kv_blocks_used == 6000 / 16);  // V0's chunked prefill: the whole prompt up front
}

TEST_CASE("V1 preempts the newest running request by recompute, and its cached blocks shorten the re-prefill") {
  // A 24 GB card, long outputs: KV runs out, the newest requests are preempted and recomputed. With prefix
  // caching (V1's default) a victim re-admitted before its blocks are evicted re-prefills only the rest.
  const Json w = closed(48, 1000, 900, 240);
  SimulationOptions opt;
  opt.record_iterations = true;
  opt.record_requests = true;
  auto run = [&](bool caching) {
    return simulate(make(scenario(w, {{"enable_prefix_caching", caching}, {"max_num_batched_tokens", 2048}}, "rtx4090-24gb")), opt);
  };
  const auto cached = run(true), plain = run(false);
  for (const auto* r : {&cached, &plain}) {
    REQUIRE(r->summary.complete);
    REQUIRE(r->summary.completed_requests == 240);
    REQUIRE(r->summary.preemptions > 0);
    for (const auto& q : r->requests) REQUIRE(q.output_tokens == 900);
  }
  auto prefill_tokens = [](const engine::SimulationResult& r) {
    double t = 0;
    for (const auto& it : r.iterations) t += it.prefill_tokens;
    return t;
  };
  const double fresh = 240.0 * 1000;  // every prompt once
  INFO("prefill tokens: cached " << prefill_tokens(cached) << ", no cache " << prefill_tokens(plain) << ", prompts "
                                 << fresh << "; preemptions " << cached.summary.preemptions << " / "
                                 << plain.summary.preemptions);
  CHECK(prefill_tokens(plain) > fresh);                             // recompute re-prefills prompt + output so far
  CHECK(prefill_tokens(cached) - fresh < 0.8 * (prefill_tokens(plain) - fresh));  // hits on the victims' own blocks
  CHECK(cached.summary.kv.peak_used_fraction <= 1.0);
}

TEST_CASE("N users started at once: V1 keeps them staggered, V0's prefill-first steps lock them into waves") {
  // A benchmark harness that starts 64 users together, fixed 512-token prompts and 128-token replies. V1's
  // 2048-token budget takes four prompts a step beside the running decodes, so first tokens spread over 16+
  // steps and stay staggered: returning users' prefills join running batches, each waits about one step. V0
  // admits 16 prompts per prefill-only step (8192-token budget) while every decode stalls; the first users then
  // decode in step with the last, all 64 finish together and come back together — lock step, round after round,
  // with a second of TTFT each time. (Real clients add jitter that V1 keeps; V0 re-synchronises them.)
  const Json w = closed(64, 512, 128, 640);
  SimulationOptions opt;
  opt.record_iterations = true;
  opt.record_requests = true;
  const auto rs1 = make(scenario(w, {{"max_num_batched_tokens", 2048}}));
  const auto v1 = simulate(rs1, opt);
  const auto v0 = simulate(make(scenario(w, {{"policy", "vllm-v0"}})), opt);
  REQUIRE(v1.summary.completed_requests == 640);
  REQUIRE(v0.summary.completed_requests == 640);
  auto distinct = [](const engine::SimulationResult& r, auto field, std::int64_t first, std::int64_t last) {
    std::set<double> t;
    for (const auto& q : r.requests)
      if (q.id >= first && q.id < last) t.insert(field(q));
    return t.size();
  };
  auto first_token = [](const engine::RequestRecord& q) { return q.first_token_s; };
  auto finish = [](const engine::RequestRecord& q) { return q.finish_s; };
  INFO("V1 TTFT p50 " << v1.summary.ttft_ms.p50 << " ITL p99 " << v1.summary.itl_ms.p99 << "; V0 TTFT p50 "
                      << v0.summary.ttft_ms.p50 << " ITL p99 " << v0.summary.itl_ms.p99);
  CHECK(distinct(v1, first_token, 0, 64) >= 16);  // the first wave is spread by the budget
  CHECK(distinct(v1, finish, 576, 640) >= 16);    // and still staggered in the last round
  CHECK(distinct(v0, first_token, 0, 64) <= 5);   // V0: 16 prompts per prefill-only step
  CHECK(distinct(v0, finish, 576, 640) <= 4);     // V0: locked in step
  int v1_mixed = 0, v1_prefill_only = 0;
  for (std::size_t k = 20; k < v1.iterations.size(); ++k) {  // after the first wave
    const auto& it = v1.iterations[k];
    v1_mixed += it.prefill_seqs > 0 && it.decode_seqs > 0;
    v1_prefill_only += it.prefill_seqs > 0 && it.decode_seqs == 0;
  }
  CHECK(v1_mixed > 100);
  CHECK(v1_prefill_only == 0);  // a returning user's prompt never stops the running decodes
  CHECK(v1.summary.ttft_ms.p50 < 0.5 * v0.summary.ttft_ms.p50);
  // V1's price: a decode sharing a step with a full budget of prompt tokens waits for that step. The budget
  // bounds it: no gap exceeds one such step.
  perf::BatchShape full;
  full.add_prefill(2048 - 60, 0, true);
  full.decode_seqs = 60;
  full.decode_context = 60 * 576;
  CHECK(v1.summary.itl_ms.max <= 1.05e3 * perf::make_cost_model(rs1).iteration_time(full));
}
