// Batch formation of the vLLM V0-era policies (private to the engine): `vllm-v0` (prefill-first), `chunked`
// (decode-first with chunked prefills, whole prompts allocated at admission) and `static` (request-level
// batching). The mechanics they share (admission, growth, preemption, decode set) live in replica.cpp.
#include <algorithm>

#include "llmsim/core/error.hpp"
#include "replica.hpp"
#include "request_lifecycle.hpp"

namespace llmsim::engine::detail {

void Replica::schedule_vllm_v0(double now_s, perf::BatchShape& shape) {
  // Prefill-first: a step is all prompts (FCFS from the queue head, whole prompt + watermark, head-of-line
  // blocking) or, when none can be admitted, all decodes. Swapped requests block admissions.
  if (swapped_.empty()) {
    std::int64_t tokens = 0;
    bool any = false;
    while (!waiting_.empty() && running_ < cfg_.max_num_seqs) {
      const std::int32_t i = waiting_.front();
      const Seq& s = (*pool_)[i];
      if (s.kv_pending) [[unlikely]] {  // disaggregation: allocate and read the KV, compute nothing yet
        if (!start_pull(i, now_s)) break;
        waiting_.pop_front();
        continue;
      }
      const std::int64_t t = s.prefill_target;  // upper bound before a prefix hit is known
      if (any && tokens + t > cfg_.max_num_batched_tokens) break;
      if (!try_admit(i, now_s, t)) break;
      waiting_.pop_front();
      const std::int64_t chunk = s.prefill_target - s.prefilled;
      add_prefill_chunk(i, chunk, shape);
      tokens += chunk;
      any = true;
    }
    if (any) return;
  }
  if (n_dec_ == 0 && swapped_.empty()) return;
  // Multi-step scheduling (multi_step.cpp): the decoders' slots for the window's n tokens, allocated now
  // (num_lookahead_slots = n − 1), the window's later steps running without the scheduler.
  lookahead_ = cfg_.scheduler_steps - 1;
  const bool preempted = n_dec_ > 0 ? grow_decoders(now_s) : false;
  if (!preempted) swap_in(now_s);
  lookahead_ = 0;
  if (n_dec_ == 0) return;
  begin_decode_step(shape);
  if (cfg_.scheduler_steps > 1) open_window();
}

void Replica::schedule_chunked(double now_s, perf::BatchShape& shape) {
  // Decode-first: every decoder takes one token, partial prefills then new prompts fill the leftover
  // budget in chunks (Sarathi-Serve / vLLM V0 chunked prefill). A step that preempted swaps nothing in but still
  // admits: V0's _schedule_chunked_prefill calls _schedule_prefills whatever _schedule_running preempted, and puts
  // the recompute victims at the queue front only afterwards (waiting.extendleft), so the prompts behind them may
  // take the blocks they freed (vllm/core/scheduler.py, 0.4-0.10).
  const std::int64_t queued = waiting();
  bool preempted = n_dec_ > 0 ? grow_decoders(now_s) : false;
  // vLLM 0.5.4-0.5.5: the walk's order decides which decoders the budget covers (v0_walk.cpp).
  const bool walk = cfg_.prefills_ahead_of_decodes;
  if (walk) v0_walk_cut(preempted);
  if (!preempted) swap_in(now_s);
  if (n_dec_ > 0) {
    begin_decode_step(shape);
  }
  std::int64_t budget = cfg_.max_num_batched_tokens - n_dec_ * (1 + cfg_.spec_tokens);  // 1 + k per decoder
  if (walk) {
    budget = v0_walk_prefills(budget, shape);
  } else {
    for (std::size_t k = 0; k < chunked_partial_.size() && budget > 0; ++k) {
      const std::int32_t i = chunked_partial_[k];
      const Seq& s = (*pool_)[i];
      const std::int64_t chunk = std::min(s.prefill_target - s.prefilled, budget);
      add_prefill_chunk(i, chunk, shape);
      budget -= chunk;
    }
  }
  // This step's recompute victims (pushed to the front by preempt_tail) wait aside while the queue behind them
  // is admitted, then return to the front in their order.
  const std::int64_t victims = preempted ? waiting() - queued : 0;
  if (victims > 0) {
    victims_.clear();
    for (std::int64_t k = 0; k < victims; ++k) {
      victims_.push_back(waiting_.front());
      waiting_.pop_front();
    }
  }
  const std::int32_t admitted_after = tail_;
  admit_chunked(now_s, budget, /*whole_prompt=*/true, shape);  // V0 allocates the whole prompt at admission
  if (walk) v0_walk_order(admitted_after);
  for (auto it = victims_.rbegin(); victims > 0 && it != victims_.rend(); ++it) waiting_.push_front(*it);
}

void Replica::schedule_static(double now_s, perf::BatchShape& shape) {
  // Request-level batching: admit a batch only when the previous one is gone; it runs (finished requests as
  // padding) until its longest request ends.
  if (running_ > 0 && static_done_ == running_) release_static_batch();
  if (running_ == 0) {
    std::int64_t tokens = 0;
    while (!waiting_.empty() && running_ < cfg_.max_num_seqs) {
      const std::int32_t i = waiting_.front();
      const std::int64_t t = (*pool_)[i].prefill_target;
      if (running_ > 0 && tokens + t > cfg_.max_num_batched_tokens) break;
      if (!try_admit(i, now_s, t)) break;
      waiting_.pop_front();
      const Seq& s = (*pool_)[i];
      const std::int64_t chunk = s.prefill_target - s.prefilled;
      add_prefill_chunk(i, chunk, shape);
      tokens += chunk;
    }
    return;
  }
  if (n_dec_ == 0) return;
  grow_decoders(now_s);
  if (n_dec_ == 0) return;
  begin_decode_step(shape);
}

void Replica::release_static_batch() {
  while (head_ >= 0) {
    const std::int32_t i = head_;
    Seq& s = (*pool_)[i];
    LLMSIM_CHECK(s.finished, "static batch released with an unfinished request");
    release_blocks(s);
    if (s.state == SeqState::decoding) leave_decoding(i);
    unlink(i);
    transition(s, SeqState::done);
    pool_->release(i);
  }
  static_done_ = 0;
}

}  // namespace llmsim::engine::detail
