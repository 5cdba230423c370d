#pragma once
// The engine host work that serving through vLLM V0's OpenAI server adds to every step (issue 27; docs/cost-model.md
// "Overheads"). Since vllm#8157 (2024-09, after 0.6.0) the server runs V0's engine as MQLLMEngine in a process of its
// own (vllm/engine/multiprocessing/engine.py): each step's RequestOutputs — one per running sequence group, with its
// new token and detokenised text — are pickled and sent over ZMQ to the API server process (_send_outputs, from the
// asynchronous output processor's callback), which unpickles them and streams each request's delta. That work sits on
// the engine's host thread, grows with the sequences in the batch, and an offline LLM.generate run does not do it. It
// is priced as more CPU time per sequence per step, serialized with the GPU like the rest of V0's host time; the fixed
// latency of the same path (HTTP, tokenisation, IPC) is perf/serving_path.hpp's. Before 0.6 (vllm-v0.5,
// vllm-v0-paged) the server ran in the engine's process and its streaming coroutines ran between the engine's steps:
// the same rule prices them with perf/inprocess_server.hpp's value.
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/engine_config.hpp"

namespace llmsim::perf {

/// Seconds of engine host time per sequence per step that the OpenAI server's path adds to `engine`'s steps: the
/// runtime's served_step_per_seq_s (RuntimeTraits; vLLM V0's MQLLMEngine, pre-0.6's in-process server) when
/// requests come through the server (engine.api_server on); 0 for an in-process engine, static batches (one generate
/// call), an offline workload (`offline`: every prompt at t = 0 through LLM.generate, benchmark_throughput) and the
/// synthetic service.
double served_step_host_per_seq_s(const spec::EngineConfig& engine, bool offline);
/// The same, with the in-process server's cost that `profile` sets (HardwareProfile::inprocess_server_per_output_s,
/// fitted from a pre-0.6 vLLM's served runs) in place of the runtime's, where the runtime streams from the engine's
/// own process (inprocess_server_per_output_s(runtime) > 0) and the profile was fitted on this runtime (or names
/// none). The one rule of which per-step serving cost a simulation prices: make_cost_model calls it with the
/// scenario's profile.
double served_step_host_per_seq_s(const spec::EngineConfig& engine, bool offline, const HardwareProfile& profile);

}  // namespace llmsim::perf
