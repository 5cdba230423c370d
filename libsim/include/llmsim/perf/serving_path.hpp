#pragma once
// The serving path around the engine (issue 27; docs/cost-model.md "The serving path"): what a request served through
// a runtime's OpenAI-compatible server pays outside the engine's iterations. vLLM 0.6+ (V0's MQLLMEngine, V1's
// EngineCore) runs the engine in a process of its own behind the API server: the HTTP request is parsed, the prompt
// rendered and tokenised and sent to the engine over ZMQ; each step's outputs come back over ZMQ, are detokenised and
// streamed as server-sent events. The client sees every token that much later than the engine sampled it, so TTFT and
// E2E grow by it and the gaps between tokens do not.
#include "llmsim/spec/engine_config.hpp"

namespace llmsim::perf {

/// Seconds between the engine and the client on a served request: the runtime's api_server_s (RuntimeTraits) when
/// `engine.api_server` is on; 0 for an in-process engine (engine.api_server false), static batches (one generate
/// call), an offline workload (`offline`: every prompt at t = 0 through LLM.generate, benchmark_throughput) and the
/// synthetic service.
double serving_path_latency_s(const spec::EngineConfig& engine, bool offline);

}  // namespace llmsim::perf
