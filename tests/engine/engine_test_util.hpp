#pragma once
// Helpers shared by the engine tests: a scenario from JSON, resolved against the built-in catalogue, and the
// llama-3.1-8b scenario most tests start from.
#include <algorithm>

#include "llmsim/core/json_view.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/perf/serving_path.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::test {

inline spec::ResolvedScenario make(const Json& j) {
  return spec::resolve(spec::scenario_from_json(JsonView(j, "")), spec::Catalog::builtin());
}

/// llama-3.1-8b fp16 on `gpu` with max_model_len 8192 and the given engine knobs (the rest at defaults). The engine
/// tests time the engine itself: its requests come in-process (engine.api_server false) unless `engine` says
/// otherwise; the serving path in front of it has its own test (test_serving_path.cpp).
inline Json scenario(const Json& workload, const Json& engine = Json::object(), const char* gpu = "a100-80gb-sxm") {
  Json e = {{"max_model_len", 8192}, {"api_server", false}};
  for (auto it = engine.begin(); it != engine.end(); ++it) e[it.key()] = it.value();
  return Json{{"model", "llama-3.1-8b"}, {"hardware", {{"gpu", gpu}}}, {"engine", e}, {"workload", workload}};
}

/// What an in-process caller (engine.api_server false) still waits for outside the engine's iterations on a scenario
/// that is not offline: vLLM V1's AsyncLLM hop to its EngineCore process (perf/serving_path.hpp), 0 for V0 and the
/// other runtimes. A request's client-side stamps (first token, finish) are the engine's plus this.
inline double in_process_hop_s(const spec::ResolvedScenario& rs) {
  return perf::serving_path(rs.scenario.engine, false).latency_s(0);
}

/// A run that records its requests and iterations, one event per decode step (the front-of-engine tests read when
/// the first step started and each request's TTFT).
inline engine::SimulationResult recorded_run(const Json& scenario) {
  engine::SimulationOptions opt;
  opt.record_requests = true;
  opt.record_iterations = true;
  opt.decode_runs = false;
  return engine::simulate(make(scenario), opt);
}

/// When the run's first engine step started.
inline double first_step_s(const engine::SimulationResult& r) {
  double t = 1e300;
  for (const auto& it : r.iterations) t = std::min(t, it.start_s);
  return t;
}

/// The mean of the recorded requests' first token less arrival.
inline double mean_ttft_s(const engine::SimulationResult& r) {
  double sum = 0;
  for (const auto& q : r.requests) sum += q.first_token_s - q.arrival_s;
  return sum / static_cast<double>(r.requests.size());
}

/// An offline burst's plan, result and the most sequences any step ran (the hybrid-state and Mamba-cap tests).
struct OfflineBurst {
  memory::MemoryPlan plan;
  engine::SimulationResult result;
  std::int64_t most_running = 0;
};

/// The scenario of an offline burst of `n` prompts of `input` tokens, `output` each, on `model`; the engine at its
/// defaults but for `engine`.
inline Json offline_burst_scenario(const char* model, const char* gpu, int n, int input, int output,
                                   const Json& engine) {
  const Json w = {{"arrival", {{"process", "offline"}}},
                  {"input_tokens", {{"dist", "fixed"}, {"value", input}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", output}}},
                  {"num_requests", n}, {"warmup_requests", 0}};
  Json j = scenario(w, engine, gpu);
  j["model"] = model;
  return j;
}

/// Plans and runs scenario `j` with its iterations recorded.
inline OfflineBurst run_burst(const Json& j) {
  const auto rs = make(j);
  OfflineBurst r;
  r.plan = memory::plan_memory(rs);
  engine::SimulationOptions opt;
  opt.record_iterations = true;
  r.result = engine::simulate(rs, opt);
  for (const auto& it : r.result.iterations)
    r.most_running = std::max<std::int64_t>(r.most_running, it.prefill_seqs + it.decode_seqs);
  return r;
}

inline OfflineBurst offline_burst(const char* model, const char* gpu, int n, int input, int output,
                                  const Json& engine) {
  return run_burst(offline_burst_scenario(model, gpu, n, input, output, engine));
}

}  // namespace llmsim::test
