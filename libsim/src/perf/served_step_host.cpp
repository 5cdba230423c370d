// The host work serving adds to each engine step; the value and its source in perf/runtime.cpp and
// perf/provenance.cpp (runtime.served_step_per_seq_s), the reasoning in docs/cost-model.md "Overheads".
#include "llmsim/perf/served_step_host.hpp"

#include "llmsim/perf/runtime.hpp"

namespace llmsim::perf {

double served_step_host_per_seq_s(const spec::EngineConfig& engine, bool offline) {
  // The same requests as perf/serving_path.hpp's: those that cross the API server.
  if (!engine.api_server || offline || engine.synthetic_service) return 0;
  if (engine.policy == spec::SchedulerPolicy::static_batching) return 0;
  return runtime_traits(runtime_of(engine)).served_step_per_seq_s;
}

}  // namespace llmsim::perf
