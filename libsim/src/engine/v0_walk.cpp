// vLLM 0.5.4-0.5.5's chunked-prefill walk (ReplicaConfig::prefills_ahead_of_decodes; the release rule is
// spec::v0_prefills_ahead_of_decodes, docs/engine.md `chunked`). `_schedule_chunked_prefill` (vllm/core/scheduler.py)
// walks the running queue from its head, each entry taking its tokens from the step's budget (a decoder one, a partly
// prefilled prompt min(rest, budget left)), and stops at the first entry the budget cannot serve
// (`_schedule_running`: `if num_running_tokens == 0: break`); the rest skip the step and stay at the head. Then it
// appends, in this order, the prompts admitted from the waiting queue, the decoders served, the chunked prompts
// served (`self.running.extend(...)`; vllm#7874, first in 0.6.0, moved the new prompts behind the decodes).
//
// Here the running list is that queue. Its head block (Seq::walk_lead: the entries the last step skipped or admitted)
// is walked entry by entry: O(its length), what the last step moved. The decoders behind it take one token each, so
// only their count matters until the budget ends: the c the budget no longer covers are the list's last c decoders,
// found from the tail. They leave the decode set for this step (the block the step's growth gave them freed) and
// rejoin at its end carrying their last token's time, so their next gap spans two steps through the ITL path every
// decoder uses (Replica::start_decoding's fresh group). Work per step: O(head block + c + partial prompts), never a
// pass over every running sequence. Not modelled: a step that preempted serves every decoder (V0 preempts from the
// queue's tail inside the walk); the served chunked prompts are appended before a swapped-in decoder, not after.
#include <algorithm>

#include "llmsim/core/error.hpp"
#include "replica.hpp"
#include "request_lifecycle.hpp"

namespace llmsim::engine::detail {

void Replica::move_after(std::int32_t i, std::int32_t anchor) {
  SeqPool& pool = *pool_;
  Seq& s = pool[i];
  if (i == anchor || s.prev == anchor) return;  // already there
  // Out of the list (the running count and state blocks stay: it is still running)...
  if (s.prev >= 0) pool[s.prev].next = s.next;
  else head_ = s.next;
  if (s.next >= 0) pool[s.next].prev = s.prev;
  else tail_ = s.prev;
  // ...and back after `anchor`.
  s.prev = anchor;
  s.next = anchor >= 0 ? pool[anchor].next : head_;
  if (anchor >= 0) pool[anchor].next = i;
  else head_ = i;
  if (s.next >= 0) pool[s.next].prev = i;
  else tail_ = i;
}

void Replica::v0_walk_cut(bool preempted) {
  SeqPool& pool = *pool_;
  walk_anchor_ = -1;
  walk_served_.clear();
  walk_left_.clear();
  if (!skipped_.empty()) rejoin_skipped();  // a scheduling retry within one start_iteration
  // The head block: its decoders take a token each, then its partial prompts min(rest, budget left) (the order in
  // which v0_walk_prefills serves them; their sum is what the decoders behind them are left).
  std::int64_t front = 0, lead_rest = 0;
  for (std::int32_t i = head_; i >= 0 && pool[i].walk_lead; i = pool[i].next) {
    Seq& s = pool[i];
    if (s.state == SeqState::decoding) {
      s.walk_lead = false;
      ++front;
    } else if (s.state == SeqState::prefill) {
      lead_rest += s.prefill_target - s.prefilled;
    }
  }
  std::int64_t left = std::max<std::int64_t>(cfg_.max_num_batched_tokens - front, 0);
  left -= std::min(lead_rest, left);
  const std::int64_t older = std::max<std::int64_t>(n_dec_ - front, 0);
  const std::int64_t cut = older - std::min(older, left);
  if (preempted || cut == 0) return;
  // The last `cut` decoders and everything behind them: found from the tail, moved in order to the list's head.
  std::int32_t start = tail_;
  for (std::int64_t found = 0; start >= 0; start = pool[start].prev) {
    if (pool[start].state == SeqState::decoding && ++found == cut) break;
  }
  LLMSIM_CHECK(start >= 0, "V0 walk: fewer decoders behind the head block than the budget cut");
  const std::int64_t n = next_step_tokens();
  const std::int32_t last = tail_;
  for (std::int32_t i = start, next = -1; i >= 0; i = next) {
    next = i == last ? -1 : pool[i].next;
    Seq& s = pool[i];
    s.walk_lead = true;
    if (s.state == SeqState::decoding) {
      const std::int64_t growth = growth_of(phase_of(s), n);
      const std::int64_t ctx = tokens_now(s);
      const std::int64_t held = decoding_own_blocks(s);  // before this step's growth, which it gives back
      leave_decoding(i);
      s.ctx0 = ctx;
      kv_.release(growth);
      s.own_blocks = held;  // what it holds until it rejoins (decoding_own_blocks reads it while walk_skip)
      s.walk_skip = true;
      skipped_.emplace_back(i, s.stamp);
    } else if (s.state == SeqState::prefill) {
      s.walk_skip = true;  // a partial prompt behind the cut: no chunk this step
    }
    move_after(i, walk_anchor_);
    walk_anchor_ = i;
  }
}

std::int64_t Replica::v0_walk_prefills(std::int64_t budget, perf::BatchShape& shape) {
  // The head block's partial prompts first (walk_lead), then the others; a prompt behind the cut takes nothing.
  for (const bool lead : {true, false}) {
    for (const std::int32_t i : chunked_partial_) {
      Seq& s = (*pool_)[i];
      if (s.walk_lead != lead || s.walk_skip) continue;
      const std::int64_t chunk = std::min(s.prefill_target - s.prefilled, budget);
      if (chunk > 0) {
        add_prefill_chunk(i, chunk, shape);
        budget -= chunk;
        walk_served_.push_back(i);
      } else {
        walk_left_.push_back(i);
      }
    }
  }
  return budget;
}

void Replica::v0_walk_order(std::int32_t admitted_after) {
  SeqPool& pool = *pool_;
  // After the skipped block: the prompts left without a chunk, then the prompts admitted this step; the served chunked
  // prompts go to the tail (the served decoders stay between, in walk order).
  const std::int32_t first_new = admitted_after >= 0 ? pool[admitted_after].next : head_;
  for (const std::int32_t i : walk_left_) {
    pool[i].walk_lead = true;
    move_after(i, walk_anchor_);
    walk_anchor_ = i;
  }
  for (std::int32_t i = first_new, next = -1; i >= 0; i = next) {
    next = pool[i].next;
    pool[i].walk_lead = true;
    move_after(i, walk_anchor_);
    walk_anchor_ = i;
  }
  for (const std::int32_t i : walk_served_) {
    Seq& s = pool[i];
    s.walk_lead = false;
    if (s.state == SeqState::prefill) move_after(i, tail_);
  }
  for (const std::int32_t i : chunked_partial_) pool[i].walk_skip = false;
}

void Replica::rejoin_skipped() {
  for (const auto& [i, stamp] : skipped_) {
    Seq& s = (*pool_)[i];
    if (s.stamp != stamp || !s.walk_skip) continue;
    s.walk_skip = false;
    start_decoding(i, 0.0, /*fresh_group_member=*/true);  // its gap runs from its last token (Seq::last_token_s)
  }
  skipped_.clear();
}

}  // namespace llmsim::engine::detail
