#pragma once
// The serving path around the engine (issue 27; docs/cost-model.md "The serving path"): what a request served through
// a runtime's OpenAI-compatible server pays outside the engine's iterations. vLLM 0.6+ (V0's MQLLMEngine, V1's
// EngineCore) runs the engine in a process of its own behind the API server, SGLang its Scheduler and
// DetokenizerManager behind the TokenizerManager: the HTTP request is parsed, the prompt rendered and tokenised and
// sent to the engine over ZMQ; each step's outputs come back over ZMQ, are detokenised and streamed as server-sent
// events. The client sees every token that much later than the engine sampled it, so TTFT and E2E grow by it and the
// gaps between tokens do not.
#include <cstdint>

#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/engine_config.hpp"

namespace llmsim::perf {

/// The serving path of one scenario: a fixed part (HTTP and the IPC hops) and the prompt's tokenisation, which grows
/// with its length.
struct ServingPath {
  double fixed_s = 0;             ///< RuntimeTraits::api_server_s (served) or engine_client_s (in-process)
  double per_prompt_token_s = 0;  ///< RuntimeTraits::tokenise_per_token_s
  /// Seconds a request of `prompt_tokens` prompt tokens (>= 0) spends on the path.
  double latency_s(std::int64_t prompt_tokens) const noexcept {
    return fixed_s + per_prompt_token_s * static_cast<double>(prompt_tokens);
  }
};

/// The path between the engine and the client on a served request: the runtime's api_server_s and
/// tokenise_per_token_s (RuntimeTraits) when `engine.api_server` is on; for an in-process engine (engine.api_server
/// false) only the runtime's engine_client_s (vLLM V1's AsyncLLM still crosses ZMQ to its EngineCore process; no
/// tokenisation: the caller may pass token ids); nothing for static batches (one generate call), an offline workload (`offline`: every prompt at
/// t = 0 through LLM.generate, benchmark_throughput) and the synthetic service.
ServingPath serving_path(const spec::EngineConfig& engine, bool offline);
/// The same, with the fixed part that `profile` sets (HardwareProfile::api_server_s, fitted from serving runs) in place
/// of the runtime's, where the path applies and the profile was fitted on this runtime (or names none). The one rule
/// of which serving path a simulation prices: the engine layer calls it with the scenario's profile.
ServingPath serving_path(const spec::EngineConfig& engine, bool offline, const HardwareProfile& profile);

/// serving_path(engine, offline).latency_s(prompt_tokens).
double serving_path_latency_s(const spec::EngineConfig& engine, bool offline, std::int64_t prompt_tokens = 0);

}  // namespace llmsim::perf
