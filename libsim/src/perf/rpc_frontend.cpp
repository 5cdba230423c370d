// vLLM 0.6.0-0.6.1's RPC frontend around AsyncLLMEngine: its two costs derived from vllm#8092's table
// (perf/rpc_frontend.hpp), the reasoning in docs/cost-model.md, provenance runtime.rpc_frontend_per_output_s and
// runtime.rpc_frontend_per_request_s (vllm-v0, releases 0.6.0-0.6.1).
#include "llmsim/perf/rpc_frontend.hpp"

#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/runtime_version.hpp"

namespace llmsim::perf {

static_assert(rpc_frontend::derived_per_output_s() > 0.95 * rpc_frontend::kPerOutputS &&
                  rpc_frontend::derived_per_output_s() < 1.05 * rpc_frontend::kPerOutputS,
              "kPerOutputS is vllm#8092's derivation rounded");
static_assert(rpc_frontend::derived_per_request_s() > 0.95 * rpc_frontend::kPerRequestS &&
                  rpc_frontend::derived_per_request_s() < 1.05 * rpc_frontend::kPerRequestS,
              "kPerRequestS is vllm#8092's derivation rounded");

bool through_rpc_frontend(const spec::EngineConfig& engine, bool offline) {
  if (!engine.api_server || offline || engine.synthetic_service) return false;
  if (engine.policy == spec::SchedulerPolicy::static_batching) return false;
  return runtime_of(engine) == Runtime::vllm_v0 && spec::vllm_rpc_frontend(engine.runtime_release);
}

}  // namespace llmsim::perf
