// A replica's iteration start (the iteration lifecycle's first half; finish_iteration and step_time, its pricing on
// the cost model's paths, are replica.cpp's): forming the batch through the policy's scheduler and counting it in
// the replica's totals and record (count_iteration).
#include <algorithm>

#include "llmsim/core/error.hpp"
#include "replica.hpp"

namespace llmsim::engine::detail {

bool Replica::start_iteration(double now_s) {
  LLMSIM_CHECK(!busy_, "iteration started while one is in flight");
  if (window_left_ > 0) {  // multi-step: the window's next step, without the scheduler (multi_step.cpp)
    continue_window(now_s);
    return true;
  }
  if (!cancels_.empty()) apply_cancels();  // the boundary after the step in which their clients gave up
  perf::BatchShape shape;
  decode_step_ = false;
  preempted_this_step_ = false;
  swap_bytes_ = 0;
  load_bytes_ = 0;
  // vLLM V1's async scheduling (EngineCore.step_with_batch_queue, two batches in flight): the engine plans this
  // step while the one before it runs, so a step that follows another at once admits only requests queued before
  // that one started. Were that plan empty, vLLM's loop would have queued an empty batch and planned again at once:
  // the step then admits what is queued now (below). Otherwise (sync, or the engine was idle) the cutoff is now.
  const bool planned_ahead = cfg_.async_scheduling && prev_step_end_s_ == now_s;
  plan_cutoff_s_ = planned_ahead ? prev_step_start_s_ : now_s;
  // A step that only preempted (everything went back to the queue) schedules again; bounded because each
  // retry either runs work or finds the replica idle.
  for (int attempt = 0; attempt < 3 && shape.empty(); ++attempt) {
    switch (cfg_.policy) {
      case spec::SchedulerPolicy::vllm: schedule_v1(now_s, shape); break;
      case spec::SchedulerPolicy::vllm_v0: schedule_vllm_v0(now_s, shape); break;
      case spec::SchedulerPolicy::chunked: schedule_chunked(now_s, shape); break;
      case spec::SchedulerPolicy::static_batching: schedule_static(now_s, shape); break;
      case spec::SchedulerPolicy::sglang: schedule_sglang(now_s, shape); break;
    }
    if (shape.empty() && plan_cutoff_s_ < now_s && !preempted_this_step_) {
      plan_cutoff_s_ = now_s;  // the empty plan: planned again with what is queued now
      continue;
    }
    if (!preempted_this_step_) break;
  }
  kv_used_.set(now_s, static_cast<double>(kv_.held()));
  if (shape.empty()) return false;
  // Requests left waiting: the batch is at a limit (token budget, max_num_seqs, KV blocks, or a static batch
  // still running), so this iteration runs at the replica's saturation rate.
  // (Under async scheduling a request queued after the plan is not held back by a limit.)
  saturated_ = (!waiting_.empty() && queued_at((*pool_)[waiting_.front()]) <= plan_cutoff_s_) || !swapped_.empty();
  const std::int64_t padding = cfg_.policy == spec::SchedulerPolicy::static_batching ? static_done_ : 0;
  // A prefill-only replica's sampled token is discarded (the decode pool emits the first token).
  emitting_ = cfg_.prefill_only ? 0
                                : (shape.decode_seqs - padding) * (decode_step_ ? step_tokens_ : 1) + shape.prefill_last_chunks;
  if (window_left_ > 0) emitting_ = 0;  // a multi-step window opened: its tokens are counted at its end
  double proposer_s = 0;
  // A step planned now (from idle, or after an empty plan) has no step in flight to hide its host time behind.
  const bool serial = cfg_.async_scheduling && plan_cutoff_s_ == now_s;
  duration_s_ = step_time(shape, serial, &proposer_s);
  // A saturated step's share of time spent on prompts (SaturationTotals::prefill_s): what its prefill chunks added
  // to the decode step the running sequences take anyway (vLLM schedules running requests before waiting ones).
  // Priced only for saturated steps that mix both, so the decode-only hot path pays nothing.
  sat_prefill_share_ = 0;
  if (saturated_ && shape.prefill_seqs > 0) {
    sat_prefill_share_ = 1;
    if (shape.decode_seqs > 0) {
      perf::BatchShape decodes = shape;
      decodes.prefill_seqs = decodes.prefill_tokens = decodes.prefill_kv_tokens = decodes.prefill_last_chunks = 0;
      decodes.prefill_attn_pairs = 0;
      sat_prefill_share_ = std::clamp(1.0 - step_time(decodes, serial, nullptr) / duration_s_, 0.0, 1.0);
    }
  }
  const bool spec_step = shape.spec_tokens > 0 && shape.decode_seqs > 0;
  spec_plan_seqs_ = spec_step ? static_cast<double>(shape.decode_seqs - padding) : 0;
  spec_plan_proposer_s_ = spec_step ? proposer_s : 0;
  // Swaps and host-tier loads cross the same PCIe link before the step can use them (kv_offload.cpp).
  if (swap_bytes_ > 0 || load_bytes_ > 0) duration_s_ += cost_->host_transfer_time(swap_bytes_ + load_bytes_);
  count_iteration(shape, now_s);
  return true;
}

void Replica::count_iteration(const perf::BatchShape& shape, double now_s) {
  LLMSIM_CHECK(duration_s_ > 0, "the cost model returned a non-positive iteration time");
  busy_ = true;
  work_.busy_s += duration_s_;
  work_.tokens += static_cast<double>(shape.tokens());
  // A decode-only step adds 0 to the prefill totals and a step without swaps 0 to the swap bytes: skipped (x + 0.0
  // is x for these non-negative sums).
  if (shape.prefill_seqs > 0) {
    work_.prefill_tokens += static_cast<double>(shape.prefill_tokens);
    work_.attn_pairs += shape.prefill_attn_pairs;
    work_.prefill_kv_tokens += static_cast<double>(shape.prefill_kv_tokens);
  }
  work_.decode_context += static_cast<double>(shape.decode_context + shape.decode_seqs);
  work_.iterations += 1;
  if (moe_) work_.expert_share += cost_->routed_expert_share(static_cast<double>(shape.tokens()));
  if (swap_bytes_ > 0) work_.swap_bytes += swap_bytes_;
  const std::int64_t seqs = shape.decode_seqs + shape.prefill_seqs;
  work_.seq_time += static_cast<double>(seqs) * duration_s_;
  work_.max_seqs = std::max(work_.max_seqs, seqs);
  record_.start_s = now_s;
  record_.duration_s = duration_s_;
  record_.prefill_tokens = static_cast<std::int32_t>(shape.prefill_tokens);
  record_.prefill_seqs = static_cast<std::int32_t>(shape.prefill_seqs);
  record_.decode_seqs = static_cast<std::int32_t>(shape.decode_seqs);
  record_.waiting = static_cast<std::int32_t>(waiting_.size());
  record_.kv_blocks_used = kv_.held();
}

}  // namespace llmsim::engine::detail
