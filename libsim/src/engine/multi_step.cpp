// vLLM V0's multi-step scheduling (`--num-scheduler-steps n`, spec/multi_step.hpp; docs/engine.md "Multi-step
// scheduling"), private to the engine. A decode step the V0 scheduler forms opens a window of n steps:
//   * scheduling: LLMEngine.step calls the scheduler only when the cached batch has no remaining steps
//     (`_has_remaining_steps`), so the window's later steps admit nothing, preempt nothing and swap nothing in; a
//     request that arrives meanwhile waits for the window's end. A prefill batch has no lookahead slots and runs
//     one step (`init_multi_step_from_lookahead_slots`: num_steps = lookahead + 1 = 1).
//   * memory: the scheduler appends each decoder's slots for the window's n tokens at once (`_append_slots` with
//     num_lookahead_slots = n − 1), preempting the running tail when they do not fit (`_can_append_slots`).
//   * cost: the window's first step pays the engine's per-step CPU time (schedule, prepare the inputs); the later
//     ones advance the inputs on the GPU (`advance_step`) and process the previous step's outputs while the GPU runs
//     (MultiStepModelRunner's asynchronous pythonisation), so they cost the GPU's work alone (CostModel::
//     without_cpu_overhead, ReplicaConfig::window_cost).
//   * finishing: the batch is fixed for the window; a request that stops inside it stays in the batch, its extra
//     tokens computed and dropped (MultiStepOutputProcessor truncates after the stop), and leaves at the window's
//     end with the rest.
//   * streaming: before vllm#9047 (0.6.3) the tokens of a window reach the client together at its end (ITL samples
//     are chunks of up to n tokens); from 0.6.3 multi_step_stream_outputs streams each step's (ReplicaConfig::
//     window_streams_steps). A request's first token comes from its single-step prefill as before.
// Every window step is an event (V0 keeps one per step); each is O(1) in the batch size, and the window's lookahead
// is O(n) once per window (the phase counts of n token positions).
#include "llmsim/core/error.hpp"
#include "replica.hpp"

namespace llmsim::engine::detail {

void Replica::open_window() {
  // begin_decode_step has advanced the token clock by the window's first step; grow_decoders allocated n positions.
  window_start_step_ = step_ - 1;
  window_end_step_ = window_start_step_ + cfg_.scheduler_steps;
  window_left_ = cfg_.scheduler_steps - 1;  // start_iteration counts none of the window's tokens before its end
}

void Replica::continue_window(double now_s) {
  // A later step of the window: the same decoders, one more token each, the scheduler not called (nor the cancels
  // applied: vLLM aborts between scheduler calls, and the batch is fixed until the window ends).
  --window_left_;
  perf::BatchShape shape;
  preempted_this_step_ = false;
  swap_bytes_ = load_bytes_ = 0;
  if (cfg_.window_streams_steps) {
    begin_decode_step(shape);  // fresh_ is empty inside a window: every decoder's gap runs from the last step
  } else {
    // The gaps run from the window's start (the snapshot its first step took) until its end: the step only moves the
    // token clock.
    decode_step_ = true;
    step_tokens_ = 1;
    step_ += 1;
    shape.decode_seqs = n_dec_;
    shape.decode_context = ctx_sum_;
    shape.decode_max_context = longest_ctx_ = longest_context_now();
  }
  kv_used_.set(now_s, static_cast<double>(kv_.held()));
  saturated_ = !waiting_.empty() || !swapped_.empty();
  sat_prefill_share_ = 0;  // decode only
  emitting_ = window_left_ == 0 ? n_dec_ * cfg_.scheduler_steps : 0;  // less the dropped tokens at the end
  duration_s_ = window_decode_steps(n_dec_, long_context(shape.decode_max_context)).time(ctx_sum_);
  count_iteration(shape, now_s);
}

void Replica::finish_window_step(double now_s) {
  // A step of the window before its last: nobody leaves. The context grows by a token per decoder (emit_token_gaps'
  // growth); under streaming the step's tokens reach the client now.
  if (cfg_.window_streams_steps) {
    emit_token_gaps(now_s);
  } else {
    ctx_sum_ += n_dec_;
  }
}

}  // namespace llmsim::engine::detail
