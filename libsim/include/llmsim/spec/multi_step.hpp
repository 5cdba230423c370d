#pragma once
// vLLM V0's multi-step scheduling (`--num-scheduler-steps n`, engine.num_scheduler_steps): which engines run it and
// how their client sees its tokens. The one rule; the engine (engine/multi_step.cpp) runs the windows, `llmsim check`
// and the scenario readers go through it.
//
// vLLM 0.6.0 (vllm#7000, RFC vllm#6854) added it to the V0 engine: LLMEngine.step calls the scheduler only when the
// cached batch has no remaining steps (`_has_remaining_steps`), a decode batch is scheduled with
// num_lookahead_slots = n − 1 (KV slots for n tokens per sequence, `_append_slots`) and runs n forward passes
// (MultiStepModelRunner, `advance_step` on the GPU), while a prefill batch has no lookahead slots and runs one step.
// vllm#22138 removed it (merged 2025-08-03, after 0.10.0). V1 (0.8+) has no such flag (0.8-0.10 fall back to V0 for
// it), and SGLang never had one.
#include <string>

#include "llmsim/spec/engine_config.hpp"

namespace llmsim::spec {

struct MultiStep {
  int steps = 1;                 ///< forward steps per scheduler call (1 = off)
  /// The client receives every step's token as it is processed (multi_step_stream_outputs, default from 0.6.3,
  /// vllm#9047; engine.multi_step_stream_outputs when set); false = a window's tokens arrive together at its end
  /// (0.6.0-0.6.2).
  bool stream_each_step = true;
};

/// The multi-step scheduling engine `e` runs (after spec::resolve: the policy and runtime final). steps = 1 when
/// num_scheduler_steps is 1. ConfigError at `path` (engine.num_scheduler_steps) when n > 1 on an engine without it:
/// vLLM V1 (policy 'vllm'), SGLang, a V0 release before 0.6.0 or after 0.10.0, or a combination llmsim does not
/// model (chunked prefill: vLLM 0.6.3's own multi-step + chunked path, vllm#8645, which does not chunk prompts;
/// static batching; speculative decoding, which vLLM refuses with multi-step). With n = 1, a set
/// multi_step_stream_outputs is ignored where vLLM's parser takes and ignores it (multi_step_flag_ignored) and a
/// ConfigError naming that field elsewhere.
MultiStep multi_step_for(const EngineConfig& e, const std::string& path = "engine.num_scheduler_steps");

/// Whether `e` sets multi_step_stream_outputs without a multi-step window on an engine whose vLLM parser takes the
/// flag (V0 releases 0.6.0-0.10.0, or a V0 engine named without a release): vLLM ignores it there, and so does llmsim
/// (analysis::scenario_warnings says so).
bool multi_step_flag_ignored(const EngineConfig& e);

}  // namespace llmsim::spec
