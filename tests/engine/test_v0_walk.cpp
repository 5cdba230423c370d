// vLLM 0.5.4-0.5.5's chunked-prefill walk (engine/v0_walk.cpp; docs/engine.md `chunked`): the running queue is walked
// from its head, each entry taking its tokens from the budget, and the walk stops at the first entry the budget
// cannot serve (vllm/core/scheduler.py `_schedule_running`: `if num_running_tokens == 0: break`); 0.5.4-0.5.5 put
// the prompts admitted by a step ahead of the running decodes, vllm#7874 (0.6.0) behind them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>

#include "engine_test_util.hpp"
#include "llmsim/engine/simulator.hpp"

using namespace llmsim;
using test::make;
using test::scenario;

namespace {

/// Eight short prompts at t = 0 (16 tokens, 200 out), then at 50 ms one prompt of 2000 tokens (2 out), under a budget
/// of 512 tokens per step on vLLM `release` with chunked prefill.
engine::SimulationResult walk_run(const char* release) {
  Json reqs = Json::array();
  for (int k = 0; k < 8; ++k) reqs.push_back(Json::array({0.0, 16, 200}));
  reqs.push_back(Json::array({0.05, 2000, 2}));
  const Json w = {{"arrival", {{"process", "trace"}, {"requests", reqs}}}, {"warmup_requests", 0}};
  engine::SimulationOptions opt;
  opt.record_iterations = true;
  opt.decode_runs = false;
  return engine::simulate(make(scenario(w, {{"runtime", release}, {"policy", "chunked"}, {"max_num_batched_tokens", 512}})),
                          opt);
}

/// The steps from the one that admitted the long prompt (the first with more than 128 prompt tokens) to the one that
/// completed it.
std::vector<engine::IterationRecord> long_prompt_steps(const engine::SimulationResult& r) {
  std::vector<engine::IterationRecord> out;
  std::int32_t done = 0;
  for (const auto& it : r.iterations) {
    if (out.empty() && it.prefill_tokens <= 128) continue;
    out.push_back(it);
    done += it.prefill_tokens;
    if (done >= 2000) break;
  }
  return out;
}

}  // namespace

TEST_CASE("vLLM 0.5.5's chunked walk: a prompt carried over leads the next step and the decoders behind it skip it",
          "[scheduler_v0][v0_walk]") {
  const auto r = walk_run("vllm==0.5.5");
  REQUIRE(r.summary.complete);
  const auto steps = long_prompt_steps(r);
  REQUIRE(steps.size() == 4);
  // Admitted behind the 8 decoders with the 504 tokens they left; next step it leads and takes min(1496, 512): the
  // budget is gone before the decoders, which all skip. They lead the step after (8 tokens), the prompt, served last
  // step and so appended behind them, takes the other 504; then the last 480.
  CHECK(steps[0].decode_seqs == 8);
  CHECK(steps[0].prefill_tokens == 504);
  CHECK(steps[1].decode_seqs == 0);
  CHECK(steps[1].prefill_tokens == 512);
  CHECK(steps[2].decode_seqs == 8);
  CHECK(steps[2].prefill_tokens == 504);
  CHECK(steps[3].prefill_tokens == 480);
  // Each decoder's gap across the skipped step is two steps long: the longest inter-token gap of the run.
  CHECK(r.summary.itl_ms.max == Approx((steps[1].duration_s + steps[2].duration_s) * 1e3).epsilon(1e-6));
}

TEST_CASE("vLLM 0.6.0's chunked walk serves the decoders first: no decoder skips a step (vllm#7874)",
          "[scheduler_v0][v0_walk]") {
  for (const char* release : {"vllm==0.6.0", "vllm==0.5.3"}) {
    CAPTURE(release);
    const auto r = walk_run(release);
    REQUIRE(r.summary.complete);
    const auto steps = long_prompt_steps(r);
    REQUIRE(steps.size() == 4);
    double longest = 0;
    for (const auto& s : steps) {
      CHECK(s.decode_seqs == 8);  // every step decodes all 8; the prompt takes what they leave
      longest = std::max(longest, s.duration_s);
    }
    CHECK(steps[3].prefill_tokens == 2000 - 3 * 504);
    CHECK(r.summary.itl_ms.max < 1.5 * longest * 1e3);
  }
}

TEST_CASE("vLLM 0.5.5's chunked walk keeps its books under preemption, timeouts and failures", "[scheduler_v0][v0_walk]") {
  // Prompts of 1500 tokens under a 512-token budget: one is carried over in most steps, so decoders skip often.
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 12}}},
                  {"input_tokens", {{"dist", "uniform"}, {"min", 200}, {"max", 3000}}},
                  {"output_tokens", {{"dist", "uniform"}, {"min", 1}, {"max", 400}}},
                  {"num_requests", 1500},
                  {"warmup_requests", 0}};
  const Json base = {{"runtime", "vllm==0.5.5"}, {"policy", "chunked"}, {"max_num_batched_tokens", 512}};
  Json kv_bound = base;  // short of KV: preemptions (recompute, and swap)
  kv_bound["max_num_seqs"] = 512;
  kv_bound["gpu_memory_utilization"] = 0.3;
  Json swap = kv_bound;
  swap["preemption"] = "swap";
  for (const Json& e : {base, kv_bound, swap}) {
    for (const bool timeouts : {false, true}) {
      for (const bool failures : {false, true}) {
        Json j = scenario(w, e);
        if (timeouts) j["workload"]["timeout_s"] = 8;
        if (failures) {
          j["hardware"]["replicas"] = 2;
          j["failures"] = {{"mtbf_h", 0.01}, {"mttr_h", 0.002}};
        }
        INFO(j["engine"].dump() << " timeouts " << timeouts << " failures " << failures);
        const auto r = engine::simulate(make(j));
        const auto& s = r.summary;
        REQUIRE(s.complete);
        CHECK(s.rejected_requests + s.completed_requests + s.timed_out_requests + s.failed_requests == 1500);
        CHECK(r.kv_blocks_in_use_at_end == 0);
        if (!timeouts && !failures) CHECK(s.completed_requests == 1500);
        if (timeouts) CHECK(s.timed_out_requests > 0);  // the cases are not vacuous
        if (e.contains("gpu_memory_utilization")) CHECK(s.preemptions > 0);
        if (failures) CHECK(s.requeued_requests + s.failed_requests > 0);
      }
    }
  }
}
