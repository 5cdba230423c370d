// vLLM V0's multi-step scheduling (`--num-scheduler-steps n`, engine.num_scheduler_steps; engine/multi_step.cpp,
// spec/multi_step.hpp): a scheduled decode batch runs n steps back to back, the scheduler's CPU time paid once per
// window, KV slots for the window's tokens allocated when it is scheduled, admissions and departures only at its
// boundaries, and (0.6.0-0.6.2) its tokens streamed to the client together at its end. Every case here fails under
// the old rule (one step per scheduler call whatever the flag).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "engine_test_util.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/spec/multi_step.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

/// `n` requests of `input`/`output` tokens, `gap_s` apart (n = 1: one request at t = 0), on an A100 running `release`
/// with `steps` scheduler steps.
engine::SimulationResult ms_run(const char* release, int steps, int output, int input = 510, int n = 1,
                                double gap_s = 1.0) {
  const Json w = {{"arrival", {{"process", "constant"}, {"rate", 1.0 / gap_s}}},
                  {"input_tokens", {{"dist", "fixed"}, {"value", input}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", output}}},
                  {"num_requests", n}, {"warmup_requests", 0}};
  engine::SimulationOptions opt;
  opt.record_requests = true;
  opt.record_iterations = true;
  return engine::simulate(make(test::scenario(w, {{"runtime", release}, {"num_scheduler_steps", steps}})), opt);
}

/// A loaded A100 (Poisson `rate` req/s of ShareGPT-like lengths) under `engine`, for the conservation cases.
Json ms_loaded(double rate, const Json& engine, int n = 400) {
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", rate}}},
                  {"input_tokens", {{"dist", "uniform"}, {"min", 64}, {"max", 1024}}},
                  {"output_tokens", {{"dist", "uniform"}, {"min", 1}, {"max", 400}}},
                  {"num_requests", n}, {"warmup_requests", 0}};
  return test::scenario(w, engine);
}

std::int64_t ms_output_tokens(const engine::SimulationResult& r) {
  std::int64_t t = 0;
  for (const auto& q : r.requests) t += q.output_tokens;
  return t;
}

}  // namespace

TEST_CASE("multi-step: a decode window runs n steps, the scheduler's CPU time paid by its first alone",
          "[multi_step]") {
  // One request, 64 tokens, vLLM 0.6.0 (asynchronous output processor: 64 decode steps, the last one V0's extra step).
  const auto one = ms_run("vllm==0.6.0", 1, 64);
  const auto ms = ms_run("vllm==0.6.0", 8, 64);
  REQUIRE(one.iterations.size() == 65);
  REQUIRE(ms.iterations.size() == 65);  // the prefill and 8 windows of 8 steps
  // The window's first step is the single-step engine's step, bit for bit (same batch, context and CPU time); its
  // later steps cost the GPU's work alone: shorter, by the same CPU time at every window.
  CHECK(ms.iterations[1].duration_s == one.iterations[1].duration_s);
  const double saved = one.iterations[2].duration_s - ms.iterations[2].duration_s;  // the same context
  CHECK(saved > 0.05 * ms.iterations[1].duration_s);  // batch 1 on an A100: the host's share of a step is large
  CHECK(ms.iterations[9].duration_s == Approx(one.iterations[9].duration_s).epsilon(1e-12));  // window 2 opens
  CHECK(one.iterations[10].duration_s - ms.iterations[10].duration_s == Approx(saved).epsilon(1e-6));
  // Step rate up, E2E down, by the 7 of 8 CPU times saved per window.
  const auto& a = one.requests.at(0);
  const auto& b = ms.requests.at(0);
  CHECK((a.finish_s - a.arrival_s) - (b.finish_s - b.arrival_s) == Approx(56 * saved).epsilon(1e-3));
  CHECK(a.output_tokens == 64);
  CHECK(b.output_tokens == 64);
}

TEST_CASE("multi-step: a request that stops inside a window keeps its slot until the window ends", "[multi_step]") {
  // 60 tokens: 60 decode steps single-step (59 and V0's extra one); with 8-step windows the batch runs 8 windows,
  // the last 4 steps computed for nothing, and the request leaves when the last window ends.
  const auto one = ms_run("vllm==0.6.0", 1, 60);
  const auto ms = ms_run("vllm==0.6.0", 8, 60);
  REQUIRE(one.iterations.size() == 61);
  REQUIRE(ms.iterations.size() == 65);
  const auto& last = ms.iterations.back();
  CHECK(ms.requests.at(0).finish_s == Approx(last.start_s + last.duration_s).epsilon(1e-12));
  CHECK(ms.requests.at(0).output_tokens == 60);
  CHECK(ms.kv_blocks_in_use_at_end == 0);
}

TEST_CASE("multi-step: lookahead slots for the window's tokens are allocated when it is scheduled", "[multi_step]") {
  // A 510-token prompt fills 32 blocks of 16 less 2 slots: the first decode step's token fits (32 blocks), a window
  // of 8 needs 518 positions (33 blocks) at once.
  const auto one = ms_run("vllm==0.6.0", 1, 64);
  const auto ms = ms_run("vllm==0.6.0", 8, 64);
  CHECK(one.iterations[1].kv_blocks_used == 32);
  CHECK(ms.iterations[1].kv_blocks_used == 33);
  CHECK(ms.iterations[2].kv_blocks_used == 33);  // nothing allocated inside the window
}

TEST_CASE("multi-step: 0.6.0 streams a window's tokens as one chunk; 0.6.3 streams every step", "[multi_step]") {
  const auto one = ms_run("vllm==0.6.0", 1, 64);
  const auto chunked = ms_run("vllm==0.6.0", 8, 64);
  const auto streamed = ms_run("vllm==0.6.3", 8, 64);
  CHECK(one.summary.itl_ms.count == 63);
  // 0.6.0: the first token when the window's first step ends (the asynchronous output processor), then one chunk per
  // window: 8 ITL samples whose sum is E2E − TTFT, each a whole window at the end.
  const auto& q = chunked.requests.at(0);
  CHECK(chunked.summary.itl_ms.count == 8);
  CHECK(chunked.summary.itl_ms.mean * 8 == Approx((q.finish_s - q.first_token_s) * 1e3).epsilon(1e-9));
  CHECK(chunked.summary.itl_ms.max > 6 * chunked.iterations[2].duration_s * 1e3);
  // TPOT is per token still (E2E − TTFT over 63), a fraction of the chunk gap.
  CHECK(chunked.summary.tpot_ms.mean < chunked.summary.itl_ms.mean / 5);
  // 0.6.3 (multi_step_stream_outputs on by default, vllm#9047): a sample per token, as single-step.
  CHECK(streamed.summary.itl_ms.count == 63);
  CHECK(streamed.requests.at(0).finish_s == Approx(q.finish_s).epsilon(1e-12));  // same steps, same end
  // --multi-step-stream-outputs (engine.multi_step_stream_outputs) overrides the release's default either way.
  auto with_flag = [](const char* release, bool stream) {
    const Json w = {{"arrival", {{"process", "constant"}, {"rate", 1.0}}},
                    {"input_tokens", {{"dist", "fixed"}, {"value", 510}}},
                    {"output_tokens", {{"dist", "fixed"}, {"value", 64}}},
                    {"num_requests", 1}, {"warmup_requests", 0}};
    return engine::simulate(make(test::scenario(
        w, {{"runtime", release}, {"num_scheduler_steps", 8}, {"multi_step_stream_outputs", stream}})));
  };
  CHECK(with_flag("vllm==0.6.3", false).summary.itl_ms.count == 8);
  CHECK(with_flag("vllm==0.6.0", true).summary.itl_ms.count == 63);
}

TEST_CASE("multi-step: a request arriving inside a window waits for its end (TTFT up by up to a window)",
          "[multi_step]") {
  // Two requests 0.1 s apart: the second arrives while the first decodes (windows of 32 steps ~ 0.25 s at batch 1).
  const auto one = ms_run("vllm==0.6.0", 1, 256, 510, 2, 0.1);
  const auto ms = ms_run("vllm==0.6.0", 32, 256, 510, 2, 0.1);
  const auto& a = one.requests.at(1);
  const auto& b = ms.requests.at(1);
  const double ttft_one = a.first_token_s - a.arrival_s, ttft_ms = b.first_token_s - b.arrival_s;
  // The window in flight when it arrived (its 32 steps; the later ones shorter than the first).
  double window = 0;
  for (std::size_t k = 1; k <= 32; ++k) window += ms.iterations[k].duration_s;
  CHECK(ttft_ms > ttft_one + 0.1 * window);
  CHECK(ttft_ms < ttft_one + window);
  // Admitted at a window boundary: its prefill starts when a window of the first request ends.
  bool at_boundary = false;
  for (std::size_t k = 1; k < ms.iterations.size(); ++k) {
    const auto& it = ms.iterations[k];
    if (it.prefill_tokens == 0) continue;
    at_boundary = (k - 1) % 32 == 0;
    break;
  }
  CHECK(at_boundary);
}

TEST_CASE("multi-step conserves requests and tokens, alone and with timeouts, prefix caching, replicas and swap",
          "[multi_step]") {
  struct Case { const char* what; Json engine; double rate; double timeout_s; int replicas; };
  const std::vector<Case> cases = {
      {"plain", {{"runtime", "vllm==0.6.0"}}, 8, 0, 1},
      {"streams", {{"runtime", "vllm==0.6.3"}}, 8, 0, 1},
      {"prefix caching", {{"runtime", "vllm==0.6.0"}, {"enable_prefix_caching", true}}, 8, 0, 1},
      {"two replicas", {{"runtime", "vllm==0.6.0"}}, 16, 0, 2},
      {"KV-bound, swap", {{"runtime", "vllm==0.6.0"}, {"gpu_memory_utilization", 0.25}, {"preemption", "swap"}}, 12, 0, 1},
      {"KV-bound, recompute", {{"runtime", "vllm==0.6.0"}, {"gpu_memory_utilization", 0.25}}, 12, 0, 1},
      {"timeouts", {{"runtime", "vllm==0.6.0"}}, 30, 6, 1},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    Json e = c.engine;
    Json base = ms_loaded(c.rate, e);
    if (c.replicas > 1) base["hardware"]["replicas"] = c.replicas;
    if (c.timeout_s > 0) base["workload"]["timeout_s"] = c.timeout_s;
    Json multi = base;
    multi["engine"]["num_scheduler_steps"] = 10;
    engine::SimulationOptions opt;
    opt.record_requests = true;
    const auto r1 = engine::simulate(make(base), opt);
    const auto rn = engine::simulate(make(multi), opt);
    REQUIRE(rn.summary.complete);
    const auto& s = rn.summary;
    CHECK(s.completed_requests + s.timed_out_requests == 400);
    CHECK(rn.kv_blocks_in_use_at_end == 0);
    if (c.timeout_s > 0) {
      CHECK(s.timed_out_requests > 0);
      CHECK(s.e2e_ms.max <= c.timeout_s * 1e3 + 1e-6);
    } else {
      // The same requests (the same draws) with the same lengths: every output token delivered once.
      CHECK(s.completed_requests == 400);
      CHECK(ms_output_tokens(rn) == ms_output_tokens(r1));
    }
    if (std::string(c.what).rfind("KV-bound", 0) == 0) {
      CHECK(r1.summary.preemptions > 0);
      CHECK(s.preemptions >= r1.summary.preemptions);  // n tokens of slots per decoder: the edge comes sooner
    }
  }
}

TEST_CASE("multi-step: engines without it refuse num_scheduler_steps, naming the field", "[multi_step]") {
  const Json w = {{"arrival", {{"process", "constant"}, {"rate", 1.0}}}, {"num_requests", 4}};
  auto refused = [&](const Json& engine, const char* why) {
    INFO(engine.dump());
    CHECK_THROWS_WITH(make(test::scenario(w, engine)),
                      Catch::Contains("engine.num_scheduler_steps") && Catch::Contains(why));
  };
  refused({{"policy", "vllm"}, {"num_scheduler_steps", 8}}, "V1");
  refused({{"runtime", "vllm==0.9.2"}, {"policy", "vllm"}, {"num_scheduler_steps", 8}}, "V1");
  refused({{"runtime", "vllm==0.10.1"}, {"num_scheduler_steps", 8}}, "V1");  // removed (vllm#22138): V1 only
  refused({{"runtime", "sglang==0.4.9"}, {"num_scheduler_steps", 8}}, "SGLang");
  refused({{"runtime", "vllm==0.5.4"}, {"num_scheduler_steps", 8}}, "0.6.0");
  refused({{"runtime", "vllm==0.6.3"}, {"policy", "chunked"}, {"num_scheduler_steps", 8}}, "chunked");
  refused({{"policy", "static"}, {"num_scheduler_steps", 8}}, "static");
  // A long context turns chunked prefill on by itself in V0 releases (vllm#6666): a release without the flag is
  // refused for its release, not for a scheduler its defaults chose; a release with it says where 'chunked' came from.
  refused({{"runtime", "vllm==0.5.4"}, {"max_model_len", 131072}, {"num_scheduler_steps", 8}}, "0.6.0");
  CHECK_THROWS_WITH(make(test::scenario(w, {{"runtime", "vllm==0.5.4"}, {"max_model_len", 131072},
                                            {"num_scheduler_steps", 8}})), !Catch::Contains("chunked"));
  refused({{"runtime", "vllm==0.6.3"}, {"max_model_len", 131072}, {"num_scheduler_steps", 8}},
          "turned on by itself for a context above 32K");
  CHECK_NOTHROW(make(test::scenario(w, {{"runtime", "vllm==0.6.3"}, {"max_model_len", 32768}, {"num_scheduler_steps", 8}})));
  CHECK_THROWS_WITH(make(test::scenario(w, {{"runtime", "vllm==0.6.3"}, {"policy", "chunked"}, {"num_scheduler_steps", 8}})),
                    !Catch::Contains("by itself"));
  refused({{"policy", "vllm-v0"}, {"num_scheduler_steps", 0}}, "1..1024");
  // vLLM 0.8-0.10 fall back to their V0 engine for it (EngineArgs._is_v1_supported_oracle) when no policy is named.
  const auto fallback = make(test::scenario(w, {{"runtime", "vllm==0.9.2"}, {"num_scheduler_steps", 8}}));
  CHECK(fallback.scenario.engine.policy == spec::SchedulerPolicy::vllm_v0);
  CHECK(fallback.scenario.engine.resolved_runtime() == spec::Runtime::vllm_v0);
  CHECK(make(test::scenario(w, {{"runtime", "vllm==0.9.2"}})).scenario.engine.policy == spec::SchedulerPolicy::vllm);
  // vLLM 0.8-0.10 with the V0 scheduler named, and a V0 scenario without a release, take it; 1 is everywhere fine.
  CHECK_NOTHROW(make(test::scenario(w, {{"runtime", "vllm==0.9.2"}, {"policy", "vllm-v0"}, {"num_scheduler_steps", 8}})));
  CHECK_NOTHROW(make(test::scenario(w, {{"policy", "vllm-v0"}, {"num_scheduler_steps", 8}})));
  CHECK_NOTHROW(make(test::scenario(w, {{"policy", "vllm"}, {"num_scheduler_steps", 1}})));
}

TEST_CASE("multi-step: multi_step_stream_outputs without a window is ignored where vLLM takes it, refused elsewhere",
          "[multi_step]") {
  // It streams a window's tokens; with num_scheduler_steps 1 it changes nothing. vLLM 0.6.0-0.10.0's parser takes the
  // flag and ignores it without --num-scheduler-steps: llmsim accepts it there (spec::multi_step_flag_ignored, and
  // analysis::scenario_warnings says so), and refuses it, naming the field, where no vLLM parser has it.
  const Json w = {{"arrival", {{"process", "constant"}, {"rate", 1.0}}}, {"num_requests", 4}};
  for (const Json& engine : {Json{{"runtime", "vllm==0.6.3"}, {"multi_step_stream_outputs", false}},
                             Json{{"policy", "vllm-v0"}, {"num_scheduler_steps", 1}, {"multi_step_stream_outputs", true}}}) {
    INFO(engine.dump());
    const auto r = make(test::scenario(w, engine));
    CHECK(spec::multi_step_flag_ignored(r.scenario.engine));
    CHECK(spec::multi_step_for(r.scenario.engine).steps == 1);
  }
  for (const Json& engine : {Json{{"policy", "vllm"}, {"multi_step_stream_outputs", true}},
                             Json{{"runtime", "vllm==0.11.0"}, {"multi_step_stream_outputs", true}},
                             Json{{"policy", "sglang"}, {"multi_step_stream_outputs", false}}}) {
    INFO(engine.dump());
    CHECK_THROWS_WITH(make(test::scenario(w, engine)),
                      Catch::StartsWith("engine.multi_step_stream_outputs: ") &&
                          Catch::Contains("this engine has no multi-step scheduling (engine.num_scheduler_steps 1)"));
  }
  // With a window it is taken, either way.
  CHECK_NOTHROW(make(test::scenario(
      w, {{"runtime", "vllm==0.6.3"}, {"max_model_len", 8192}, {"num_scheduler_steps", 8}, {"multi_step_stream_outputs", false}})));
}
