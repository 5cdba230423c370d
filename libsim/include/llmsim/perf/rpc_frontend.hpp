#pragma once
// vLLM 0.6.0-0.6.1's OpenAI server: the RPC frontend around AsyncLLMEngine (issue 28; docs/cost-model.md "0.6.0-0.6.1:
// the RPC frontend around AsyncLLMEngine"). From vllm#6883 the API server sends each request to an engine process
// over ZMQ (vllm/entrypoints/openai/rpc/client.py: AsyncEngineRPCClient opens a DEALER socket per request, cloudpickles
// an RPCGenerateRequest and forwards it through one proxy task; rpc/server.py: AsyncEngineRPCServer unpickles it,
// creates a task per request and iterates AsyncLLMEngine.generate, pickling and sending every RequestOutput one
// request at a time). The engine process runs AsyncLLMEngine on an asyncio loop: every request gets an AsyncStream,
// a coroutine and, in engine_step, add_request_async before the step; every streamed output a pickle and a send.
// vllm#8157 replaced it with MQLLMEngine (a plain LLMEngine loop, one pickled list of outputs per step:
// perf/served_step_host.hpp's 15 us), first released in 0.6.2 (spec::vllm_rpc_frontend).
//
// Its cost is measured end to end by vllm#8092's table (1 H100, Llama-3.1-8B, ShareGPT, the OpenAI server against
// offline LLM.generate, the same engine, 2024-09-02, i.e. 0.6.0's server): single-step 14.9 req/s served against
// 34.8 offline; multi-step (8 steps, which "only stream 1/8 tokens") 33.3 against 42.9. A served request costs the
// engine c_r + (outputs it streams) x c_o more than an offline one; the two rows give both terms.
#include "llmsim/spec/engine_config.hpp"

namespace llmsim::perf {

namespace rpc_frontend {
inline constexpr double kOfflineSingleReqS = 34.8, kServedSingleReqS = 14.9;  // vllm#8092, single-step (req/s)
inline constexpr double kOfflineMultiReqS = 42.9, kServedMultiReqS = 33.3;    // vllm#8092, multi-step (req/s)
inline constexpr double kMultiSteps = 8;  // "we currently only stream 1/8 tokens"
/// Output tokens per request of the authors' 1,000-prompt ShareGPT runs: 197,520 (vllm#8125, #8335).
inline constexpr double kTokensPerRequest = 197.52;

/// The served path's extra engine time per request, single-step and multi-step (seconds).
constexpr double served_extra_single_s() { return 1 / kServedSingleReqS - 1 / kOfflineSingleReqS; }
constexpr double served_extra_multi_s() { return 1 / kServedMultiReqS - 1 / kOfflineMultiReqS; }
/// c_o: per streamed output (every token single-step, one in 8 multi-step): the two rows' difference over the outputs
/// the multi-step run does not stream. 183 us.
constexpr double derived_per_output_s() {
  return (served_extra_single_s() - served_extra_multi_s()) / (kTokensPerRequest * (1 - 1 / kMultiSteps));
}
/// c_r: per request, what the multi-step row leaves after its outputs. 2.20 ms.
constexpr double derived_per_request_s() {
  return served_extra_multi_s() - kTokensPerRequest / kMultiSteps * derived_per_output_s();
}

/// Engine host time per streamed output (per sequence per step it streams), rounded: replaces MQLLMEngine's 15 us
/// (perf/served_step_host.hpp) on these releases [D].
inline constexpr double kPerOutputS = 180e-6;
/// Engine host time per request, rounded: the RPC server's task and unpickling, AsyncLLMEngine's stream and
/// add_request_async. Priced where a burst meets it, ahead of the engine's first step, in the front part's queue
/// (perf/inprocess_server.hpp inprocess_front) [D].
inline constexpr double kPerRequestS = 2.2e-3;
}  // namespace rpc_frontend

/// Whether `engine`'s requests cross vLLM 0.6.0-0.6.1's RPC frontend: runtime vllm-v0 named by such a release
/// (spec::vllm_rpc_frontend), served through the OpenAI server (engine.api_server on), not an offline workload, a
/// static batch or the synthetic service.
bool through_rpc_frontend(const spec::EngineConfig& engine, bool offline);

}  // namespace llmsim::perf
