// The serving path's latency around the engine; sources in docs/cost-model.md "The serving path" and
// perf/provenance.cpp (runtime.api_server_s).
#include "llmsim/perf/serving_path.hpp"

#include "llmsim/perf/runtime.hpp"

namespace llmsim::perf {

double serving_path_latency_s(const spec::EngineConfig& engine, bool offline) {
  if (!engine.api_server || offline || engine.synthetic_service) return 0;
  if (engine.policy == spec::SchedulerPolicy::static_batching) return 0;
  return runtime_traits(runtime_of(engine)).api_server_s;
}

}  // namespace llmsim::perf
