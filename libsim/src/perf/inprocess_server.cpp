// The OpenAI server's per-output work on a pre-0.6 vLLM engine's event loop; the value's derivation in
// perf/inprocess_server.hpp and perf/provenance_engine.cpp (runtime.served_step_per_seq_s), the reasoning in
// docs/cost-model.md "Pre-0.6: the API server on the engine's event loop"; and each request's front part on that loop
// (runtime.inprocess_server_per_request_s).
#include "llmsim/perf/inprocess_server.hpp"

#include "llmsim/perf/rpc_frontend.hpp"
#include "llmsim/spec/runtime_version.hpp"

namespace llmsim::perf {

static_assert(inprocess_server::derived_per_output_s() > 0.9 * inprocess_server::kPerOutputS &&
                  inprocess_server::derived_per_output_s() < 1.1 * inprocess_server::kPerOutputS,
              "kPerOutputS is vllm#6883's derivation rounded");

double inprocess_server_per_output_s(Runtime r) {
  switch (r) {
    case Runtime::vllm_v0_sync:
    case Runtime::vllm_v0_paged:
      return inprocess_server::kPerOutputS;
    default:
      return 0;
  }
}

double inprocess_server_per_request_s(Runtime r) {
  return inprocess_server_per_output_s(r) > 0 ? inprocess_server::kPerRequestS : 0;  // the same in-process server
}

InprocessFront inprocess_front(const spec::EngineConfig& engine, bool offline) {
  // The requests that cross the OpenAI server (perf/serving_path.hpp's and perf/served_step_host.hpp's): an in-process
  // caller of AsyncLLMEngine has no HTTP handler, LLM.generate and static batches no server at all.
  if (!engine.api_server || offline || engine.synthetic_service) return {};
  if (engine.policy == spec::SchedulerPolicy::static_batching) return {};
  const Runtime r = runtime_of(engine);
  const double tokenise = runtime_traits(r).tokenise_per_token_s;
  if (const double fixed = inprocess_server_per_request_s(r); fixed > 0) return {fixed, tokenise, 0};
  // vLLM 0.6.0-0.6.4: the OpenAI server runs in a process of its own (MQLLMEngine, vllm#6883), but its handler still
  // parses and tokenises on that process's event loop before the request is sent to the engine (vllm#10635, 0.6.5):
  // the same front part, carved out of the runtime's post-engine path (api_server_s).
  // 0.6.0-0.6.1 add the RPC frontend's engine time per request (perf/rpc_frontend.hpp), which a burst meets ahead of
  // the engine's first step as well; it is not part of the path after the engine.
  if (r == Runtime::vllm_v0 && spec::api_server_tokenises_on_loop(engine.runtime_release))
    return {inprocess_server::kPerRequestS + (through_rpc_frontend(engine, offline) ? rpc_frontend::kPerRequestS : 0),
            tokenise, inprocess_server::kPerRequestS};
  return {};
}

InprocessFront inprocess_front(const spec::EngineConfig& engine, bool offline, const HardwareProfile& profile) {
  InprocessFront front = inprocess_front(engine, offline);
  // A profile fitted on another runtime does not price this one's (runtime_mismatch's note says so).
  if (front.applies() && profile.inprocess_server_per_request_s && !runtime_mismatch(profile, runtime_of(engine)))
    front.fixed_s = *profile.inprocess_server_per_request_s;
  return front;
}

}  // namespace llmsim::perf
