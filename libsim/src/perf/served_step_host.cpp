// The host work serving adds to each engine step; the value and its source in perf/runtime.cpp and
// perf/provenance.cpp (runtime.served_step_per_seq_s), the reasoning in docs/cost-model.md "Overheads".
#include "llmsim/perf/served_step_host.hpp"

#include "llmsim/perf/inprocess_server.hpp"
#include "llmsim/perf/rpc_frontend.hpp"
#include "llmsim/perf/runtime.hpp"

namespace llmsim::perf {

double served_step_host_per_seq_s(const spec::EngineConfig& engine, bool offline) {
  // The same requests as perf/serving_path.hpp's: those that cross the API server.
  if (!engine.api_server || offline || engine.synthetic_service) return 0;
  if (engine.policy == spec::SchedulerPolicy::static_batching) return 0;
  // vLLM 0.6.0-0.6.1's RPC frontend pickles and sends every output from a coroutine per request of AsyncLLMEngine's
  // loop, where MQLLMEngine (the runtime's value) sends one list per step: perf/rpc_frontend.hpp.
  if (through_rpc_frontend(engine, offline)) return rpc_frontend::kPerOutputS;
  return runtime_traits(runtime_of(engine)).served_step_per_seq_s;
}

double served_step_host_per_seq_s(const spec::EngineConfig& engine, bool offline, const HardwareProfile& profile) {
  const double own = served_step_host_per_seq_s(engine, offline);
  const Runtime r = runtime_of(engine);
  // Only the in-process server's term is a profile field (vLLM 0.6+'s MQLLMEngine keeps its sourced value), and a
  // profile fitted on another runtime does not price this one's (runtime_mismatch's note says so).
  if (own > 0 && inprocess_server_per_output_s(r) > 0 && profile.inprocess_server_per_output_s && !runtime_mismatch(profile, r))
    return *profile.inprocess_server_per_output_s;
  return own;
}

}  // namespace llmsim::perf
