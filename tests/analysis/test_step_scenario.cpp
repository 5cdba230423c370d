// `llmsim step` and llmsim.step() price an iteration on the cost model a simulation of the same scenario steps on
// (analysis::step_of_scenario -> perf::make_cost_model): for every runtime, async scheduling on and off, LoRA,
// TP 2, speculative decoding and a fitted profile, the step's time is the engine's iteration_time for that batch.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/analysis/step.hpp"
#include "llmsim/memory/engine_kv.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "scenarios.hpp"

using namespace llmsim;

namespace {

// The scenario with `engine` merged into its engine block (and `workload` into its workload block).
spec::ResolvedScenario step_scenario(const Json& engine, const Json& hardware = Json::object(),
                                     const Json& workload = Json::object()) {
  Json j = test::chat_json("a100-80gb-sxm");
  j["engine"].update(engine);
  j["hardware"].update(hardware);
  j["workload"].update(workload);
  return test::resolve_json(j);
}

// The batch step_cost prices for the lengths, built here on its own (the engine's BatchShape).
perf::BatchShape step_batch(const analysis::StepLengths& l, int spec_tokens) {
  perf::BatchShape b;
  if (l.prefill_tokens > 0) b.add_prefill(l.prefill_tokens, l.prefill_context, true);
  for (std::int64_t i = 0; i < l.decode_seqs; ++i) b.add_decode(l.context);
  b.spec_tokens = spec_tokens;
  return b;
}

}  // namespace

TEST_CASE("step prices an iteration as the scenario's engine does, whatever the runtime", "[step]") {
  const std::string profile = std::string(LLMSIM_SOURCE_DIR) + "/data/profiles/a100-80gb-sxm-public.json";
  struct Case {
    const char* name;
    Json engine, hardware, workload;
  };
  const std::vector<Case> cases{
      {"vLLM V1", Json::object(), Json::object(), Json::object()},
      {"vLLM V0", {{"policy", "vllm-v0"}}, Json::object(), Json::object()},
      {"vLLM 0.6.3 (V0 served, host work)", {{"runtime", "vllm==0.6.3"}}, Json::object(), Json::object()},
      {"async scheduling on", {{"runtime", "vllm==0.15.1"}}, Json::object(), Json::object()},
      {"async scheduling off", {{"runtime", "vllm==0.15.1"}, {"async_scheduling", false}}, Json::object(), Json::object()},
      {"SGLang overlap", {{"runtime", "sglang==0.4.7"}}, Json::object(), Json::object()},
      {"SGLang, small graph limit", {{"runtime", "sglang"}, {"cuda_graph_max_bs", 8}}, Json::object(), Json::object()},
      {"LoRA", {{"enable_lora", true}, {"max_loras", 4}, {"max_lora_rank", 64}}, Json::object(), {{"lora_adapters", 3}}},
      {"TP 2", Json::object(), {{"tp", 2}}, Json::object()},
      {"TP 2, SGLang", {{"runtime", "sglang==0.4.7"}}, {{"tp", 2}}, Json::object()},
      {"eager", {{"cuda_graphs", false}}, Json::object(), Json::object()},
      {"speculative (EAGLE) on 0.15.1", {{"runtime", "vllm==0.15.1"}, {"speculative", {{"method", "eagle"}, {"num_speculative_tokens", 3}}}},
       Json::object(), Json::object()},
      {"fitted profile", Json::object(), {{"gpu_profile", profile}}, Json::object()},
  };
  const std::vector<analysis::StepLengths> batches{{0, 0, 32, 1024}, {512, 0, 0, 0}, {256, 1024, 16, 700}};
  bool some_async = false, some_lora = false, some_host = false;
  for (const auto& c : cases) {
    const spec::ResolvedScenario r = step_scenario(c.engine, c.hardware, c.workload);
    const perf::CostModel engine = perf::make_cost_model(r);  // what the simulation's replicas step on
    some_async = some_async || engine.async_scheduling();
    for (const auto& l : batches) {
      INFO(c.name << ": prefill " << l.prefill_tokens << " after " << l.prefill_context << ", decode " << l.decode_seqs
                  << " at " << l.context);
      const analysis::ScenarioStep s = analysis::step_of_scenario(r, l);
      const int k = r.speculation ? r.speculation->config.num_speculative_tokens : 0;
      const double want = engine.iteration_time(step_batch(l, k));
      CHECK(s.cost.time_s == Approx(want).epsilon(1e-12));
      CHECK(s.json["time_ms"].get<double>() == Approx(want * 1e3).epsilon(1e-12));
      for (const auto& op : s.cost.ops) {
        some_lora = some_lora || op.name == "lora";
        some_host = some_host || op.name == "cpu";
      }
    }
  }
  // The cases reach the mechanisms they name (a case that stopped reaching one would make this test weaker).
  CHECK(some_async);
  CHECK(some_lora);
  CHECK(some_host);
}

TEST_CASE("step on a multi-step scenario prices the window's later steps as the engine runs them", "[step][multi_step]") {
  // vLLM 0.6.3 V0 with --num-scheduler-steps 8 (max_model_len 8192: no automatic chunking): a decode batch opens a
  // window whose later steps run on the cost model without its CPU time (ReplicaConfig::window_cost).
  const spec::ResolvedScenario r = step_scenario({{"runtime", "vllm==0.6.3"}, {"max_model_len", 8192},
                                                  {"num_scheduler_steps", 8}});
  const perf::CostModel engine = perf::make_cost_model(r);
  const analysis::StepLengths decode{0, 0, 16, 1024};
  const analysis::ScenarioStep s = analysis::step_of_scenario(r, decode);
  REQUIRE(s.json.contains("multi_step"));
  const Json& m = s.json["multi_step"];
  const double first = engine.iteration_time(step_batch(decode, 0));
  const double later = engine.without_cpu_overhead().iteration_time(step_batch(decode, 0));
  CHECK(m["num_scheduler_steps"] == 8);
  CHECK(m["first_step_ms"].get<double>() == Approx(first * 1e3).epsilon(1e-12));
  CHECK(s.json["time_ms"].get<double>() == Approx(first * 1e3).epsilon(1e-12));
  CHECK(m["later_step_ms"].get<double>() == Approx(later * 1e3).epsilon(1e-12));
  CHECK(later < first);  // the host's share of a small batch's step is gone from the later steps
  CHECK(m["window_mean_step_ms"].get<double>() == Approx((first + 7 * later) / 8 * 1e3).epsilon(1e-12));
  CHECK_THAT(s.json["notes"].dump(), Catch::Contains("engine.num_scheduler_steps 8"));
  // A batch with a prefill runs one step (no window), said so; a single-step scenario has no such field.
  const analysis::ScenarioStep p = analysis::step_of_scenario(r, {512, 0, 4, 100});
  CHECK_FALSE(p.json.contains("multi_step"));
  CHECK_THAT(p.json["notes"].dump(), Catch::Contains("runs alone"));
  CHECK_FALSE(analysis::step_of_scenario(step_scenario({{"runtime", "vllm==0.6.3"}, {"max_model_len", 8192}}), decode)
                  .json.contains("multi_step"));
}

TEST_CASE("step counts a batch's KV blocks as the engine does: past the window, the window's", "[step]") {
  // gpt-oss-120b on one H100 under vLLM V1: one full and one sliding KV-cache group (window 128). A 400-token decoder
  // holds 26 blocks of 16 in the full group and 9 in the sliding one (KvLayout::blocks_held, the engine's window
  // credit), not 26 in each: the pool holds more such decoders than its token capacity reads.
  const auto rs = test::resolve_json(test::chat_json("h100-80gb-sxm", "gpt-oss-120b", "mxfp4-experts"));
  const auto cm = perf::make_cost_model(rs);
  const auto plan = memory::plan_memory(rs);
  REQUIRE(plan.fits);
  REQUIRE(plan.kv_cache_groups == 2);
  REQUIRE(plan.kv_sliding_groups == 1);
  const auto charged = memory::engine_kv_layout(plan, rs.scenario.engine);
  REQUIRE(charged.blocks_held(400, 1, 16) == 26 + 9);
  const std::int64_t fit = plan.kv_capacity_blocks * 2 / 35;  // the most 400-token decoders the pool's blocks hold
  CHECK(fit * 401 > plan.kv_capacity_tokens);                  // refused when every group held every token
  CHECK(analysis::step_cost(cm, rs.scenario.engine, {0, 0, fit, 400}).time_s > 0);
  CHECK_THROWS_WITH(analysis::step_cost(cm, rs.scenario.engine, {0, 0, fit + 1, 400}),
                    Catch::StartsWith("batch: needs"));
  // With a prefill chunk beside them, its blocks count too (the window behind its first token and the chunk).
  const std::int64_t chunk_blocks = charged.blocks_held(0, 2048, 16);
  CHECK(chunk_blocks == 2 * 128);
  const std::int64_t beside = (plan.kv_capacity_blocks * 2 - chunk_blocks) / 35;
  CHECK(analysis::step_cost(cm, rs.scenario.engine, {2048, 0, beside, 400}).time_s > 0);
  CHECK_THROWS_WITH(analysis::step_cost(cm, rs.scenario.engine, {2048, 0, beside + 1, 400}),
                    Catch::StartsWith("batch: needs"));
  CHECK_THROWS_WITH(analysis::step_cost(cm, rs.scenario.engine, {0, 0, std::int64_t{1} << 62, 400}),
                    Catch::StartsWith("batch: needs"));  // no int64 overflow on the way
  // Another scheduler (V0's, SGLang's) keeps every layer's blocks: no credit, the token capacity decides.
  spec::EngineConfig v0 = rs.scenario.engine;
  v0.policy = spec::SchedulerPolicy::vllm_v0;
  CHECK(memory::engine_kv_layout(plan, v0).sliding_groups == 0);
}
