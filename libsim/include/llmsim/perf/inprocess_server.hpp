#pragma once
// vLLM before 0.6.0 served from the engine's own process (issues 27 and 28; docs/cost-model.md "Pre-0.6: the API
// server on the engine's event loop"). Until frontend multiprocessing (vllm#6883, RFC #6797, first released in
// 0.6.0) `vllm.entrypoints.openai.api_server` built an AsyncLLMEngine in its own process and ran it as a task of the
// same asyncio event loop (and the same GIL) as the HTTP server. Each step, AsyncLLMEngine.engine_step returns the
// step's RequestOutputs and puts each into its request's AsyncStream (RequestTracker.process_request_output); that
// wakes one streaming coroutine per running request (the OpenAI serving generator: the stream chunk's pydantic
// objects, its JSON, the SSE write through starlette/uvicorn). run_engine_loop then yields (`await asyncio.sleep(0)`)
// before it creates the next engine_step task, so those coroutines run between two steps, after the GPU's forward
// (execute_model_async runs the worker in a thread only while the step itself runs): the per-output server work is
// serialized with the engine's step like V0's own CPU time, and grows with the number of streaming requests. What
// overlaps the GPU is per request: each request's handler (HTTP parsing, the prompt's tokenisation) runs on the same
// loop while execute_model's thread runs, and hands the request to the engine only in a continuation queued behind the
// handlers the loop received meanwhile (inprocess_front below; engine/api_render_loop.hpp queues it). An offline LLM.generate run and a static batch have no stream
// coroutines; 0.6+ V0 moved the server out (perf/served_step_host.hpp prices what its engine process keeps).
#include <cstdint>

#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/engine_config.hpp"

namespace llmsim::perf {

namespace inprocess_server {
/// vllm#6883's table (2024-07-29, robertgshaw2; Llama-3-8B-Instruct, 1 H100, sonnet prompts of 550 tokens, 150
/// output tokens, Poisson 10 QPS for 60 s, chunked prefill): the OpenAI server in the engine's process (`main`,
/// between 0.5.3 and 0.5.4) against the server in a process of its own (`zmq + pickle`, the PR), means in seconds.
inline constexpr double kMainTpotS = 70.74e-3, kMainTtftS = 687.69e-3;
inline constexpr double kSplitTpotS = 57.35e-3, kSplitTtftS = 298.09e-3;
inline constexpr double kQps = 10, kOutputTokens = 150;
/// The engine's own growth per sequence in the step between the two runs' batches, as llmsim prices a vllm-v0.5
/// step: 0.1 ms of synchronous output processing (RFC #6913) + V0's 10 us per sequence + ~30 us of decode attention
/// (a Llama-3-8B sequence's ~620 cached tokens × 128 KiB at ~2.7 TB/s); the step's GEMMs hold the 512-token
/// chunked-prefill budget either way.
inline constexpr double kEngineSlopeS = 140e-6;
/// What the split run's engine process still does per output (pickle and send each RequestOutput over ZMQ): taken
/// as vLLM 0.6+'s MQLLMEngine value (served_step_per_seq_s of vllm-v0).
inline constexpr double kSplitPerOutputS = 15e-6;

/// The derivation, as written in the provenance table: N = QPS × (TTFT + (output − 1) × TPOT) streaming requests
/// in each run (Little's law: 112.3 in-process, 88.4 split); the in-process server's share of a step is what the
/// split run saves once the engine's own growth with the larger batch is taken out and its own per-output sends
/// are put back: (ΔTPOT − slope × ΔN + split × N_split) / N_main = 101 us per streamed output per step.
constexpr double derived_per_output_s() {
  const double n_main = kQps * (kMainTtftS + (kOutputTokens - 1) * kMainTpotS);
  const double n_split = kQps * (kSplitTtftS + (kOutputTokens - 1) * kSplitTpotS);
  return ((kMainTpotS - kSplitTpotS) - kEngineSlopeS * (n_main - n_split) + kSplitPerOutputS * n_split) / n_main;
}

/// Host seconds per streamed output per step that the OpenAI server adds to a pre-0.6 engine's step: the derivation
/// above, rounded [D].
inline constexpr double kPerOutputS = 100e-6;
}  // namespace inprocess_server

/// Seconds of serialized host time per sequence per step that the OpenAI server running in the engine's own process
/// adds to a step of runtime `r`: inprocess_server::kPerOutputS for vLLM before 0.6.0 (vllm-v0.5: 0.4.3-0.5.x,
/// vllm-v0-paged: 0.2-0.4.2), 0 for every other runtime. Which requests pay it is perf/served_step_host.hpp's rule
/// (engine.api_server on, not offline, not a static batch, not the synthetic service).
double inprocess_server_per_output_s(Runtime r);

namespace inprocess_server {
/// The handler's synchronous front part per request on the event loop, apart from the prompt's tokenisation (which is
/// RuntimeTraits::tokenise_per_token_s per prompt token): FastAPI's parse of the JSON body into the pydantic request,
/// its SamplingParams, the length check and AsyncLLMEngine.generate's setup. No measurement of 0.5's own handler was
/// found; vllm#51349's frontend timings put the same work of vLLM V1's API server (process_for_engine: the request's
/// validation and processing for the engine, its prompt already tokenised) at 0.5 ms per request [D]. A fit to served
/// runs moves it (HardwareProfile::inprocess_server_per_request_s).
inline constexpr double kPerRequestS = 0.5e-3;
}  // namespace inprocess_server

/// Seconds of synchronous front part per request (besides tokenisation) that the OpenAI server in the engine's own
/// process runs on the engine's event loop: inprocess_server::kPerRequestS for vLLM before 0.6.0 (vllm-v0.5,
/// vllm-v0-paged), 0 for every other runtime.
double inprocess_server_per_request_s(Runtime r);

/// The in-process server's front part of one scenario: what each request's handler runs on the event loop before its
/// continuation hands the request to the engine (engine/api_render_loop.hpp queues it).
struct InprocessFront {
  double fixed_s = 0;             ///< inprocess_server_per_request_s, or the profile's fitted value
  double per_prompt_token_s = 0;  ///< the prompt's tokenisation (RuntimeTraits::tokenise_per_token_s), on the loop
  /// The part of the runtime's own path after the engine (RuntimeTraits::api_server_s) that this front part is, so
  /// perf/serving_path.hpp takes it out there: 0 before 0.6 (that runtime's api_server_s is 0), the carried-over
  /// kPerRequestS for 0.6.0-0.6.4 (their api_server_s, 4 ms, is the whole frontend's, handler included).
  double from_path_s = 0;
  bool applies() const noexcept { return fixed_s > 0 || per_prompt_token_s > 0; }
  /// Seconds of loop time for a request of `prompt_tokens` (>= 0) prompt tokens.
  double cost_s(std::int64_t prompt_tokens) const noexcept {
    return fixed_s + per_prompt_token_s * static_cast<double>(prompt_tokens);
  }
};

/// The front part on the engine's loop where the runtime serves from the engine's own process
/// (inprocess_server_per_request_s(runtime) > 0), and on the API server's own loop for vLLM 0.6.0-0.6.4 (runtime
/// vllm-v0 with a release that spec::api_server_tokenises_on_loop: the server moved to a process of its own in 0.6.0,
/// vllm#6883, but its handler still tokenised synchronously until vllm#10635; the same queue before the engine, the
/// same 0.5 ms + tokenisation), where the request crosses its OpenAI server (engine.api_server, not offline, not a
/// static batch, not the synthetic service); nothing otherwise. Either loop only delays the hand-off: the engine's
/// steps are not stalled by it (before 0.6 the handlers ran while execute_model's thread ran the step; from 0.6 they
/// are in another process). The one rule: perf/serving_path.hpp leaves the tokenisation and `from_path_s` out of
/// the path exactly where this prices them.
InprocessFront inprocess_front(const spec::EngineConfig& engine, bool offline);
/// The same, with the fixed part that `profile` sets (HardwareProfile::inprocess_server_per_request_s, fitted from
/// served runs) where the profile was fitted on this runtime (or names none).
InprocessFront inprocess_front(const spec::EngineConfig& engine, bool offline, const HardwareProfile& profile);

}  // namespace llmsim::perf
