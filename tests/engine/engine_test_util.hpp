#pragma once
// Helpers shared by the engine tests: a scenario from JSON, resolved against the built-in catalogue, and the
// llama-3.1-8b scenario most tests start from.
#include "llmsim/core/json_view.hpp"
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

}  // namespace llmsim::test
