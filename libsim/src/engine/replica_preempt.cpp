// Preemption (docs/engine.md "Replica: scheduler, KV blocks, preemption"): when the running sequences' next step
// needs more KV blocks than are free, the tail of the running list (the last admitted) gives its blocks back, either
// swapped to host memory (vLLM V0's preemption_mode swap) or released to be recomputed from the queue; swapped
// sequences resume decoding when their blocks fit again. The demand that triggers it (grow_decoders) and the
// policies that call it are replica.cpp and schedule_*.cpp. A failed replica's eviction of everything it holds
// (evict_all) is here too.
#include "replica.hpp"
#include "request_lifecycle.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "llmsim/core/error.hpp"

namespace llmsim::engine::detail {

std::int64_t Replica::preempt_tail(double now_s, bool to_back) {
  (void)now_s;
  const std::int32_t i = tail_;
  LLMSIM_CHECK(i >= 0, "preemption with nothing running");
  Seq& s = (*pool_)[i];
  const std::int64_t bs = kv_.block_size();
  std::int64_t demand = 0;
  std::int64_t tokens = 0;
  const bool was_decoding = s.state == SeqState::decoding;
  s.walk_lead = false;  // leaves the walk's head block (v0_walk.cpp)
  std::int64_t swap_blocks = 0;
  bool swap = false;
  // Recompute keeps the victim's full computed blocks in the cache when prefix caching is on (vLLM V1 frees
  // them with their hashes): re-admitted before they are evicted, it re-prefills only the rest.
  auto release_for_recompute = [&](std::int64_t computed, std::int64_t own_held) {
    if (cfg_.prefix_caching && !s.finished) {
      const std::int64_t full = std::clamp<std::int64_t>(computed / bs - s.prefix_blocks, 0, own_held);
      s.cache_handle = kv_.cache_released(full);
      s.cached_after = s.prefix_blocks;
      kv_.release(own_held - full);
      s.own_blocks = 0;
      release_shared(s);
    } else {
      release_blocks(s);
    }
  };
  if (was_decoding) {
    demand = growth_of(phase_of(s), next_step_tokens());
    tokens = tokens_now(s);
    swap_blocks = decoding_own_blocks(s);
    // Swap needs the whole KV private to the victim (a shared prefix would be recomputed instead).
    swap = !s.finished && cfg_.swap && s.prefix_blocks == 0 && kv_.can_swap_out(swap_blocks);
    if (swap) kv_.swap_out(swap_blocks);
    else release_for_recompute(tokens, swap_blocks);  // uses the decode-state block count
    leave_decoding(i);
  } else {
    release_for_recompute(s.prefilled, s.own_blocks);
    auto it = std::find(chunked_partial_.begin(), chunked_partial_.end(), i);
    if (it != chunked_partial_.end()) chunked_partial_.erase(it);
  }
  unlink(i);
  if (s.finished) {  // static batching padding: its request is complete already
    --static_done_;
    transition(s, SeqState::done);
    pool_->release(i);
    return demand;
  }
  ++preemptions_;
  ++s.preemptions;
  preempted_this_step_ = true;
  if (swap) {
    // The victim's KV goes to host memory (PCIe time added to this step); it resumes decoding later.
    swap_bytes_ += static_cast<double>(swap_blocks) * cfg_.block_bytes;
    s.own_blocks = swap_blocks;
    s.ctx0 = tokens;
    transition(s, SeqState::swapped);
    swapped_.push_back(i);
  } else {
    // Recompute: forget the KV, re-prefill prompt + generated tokens later, from the front of the queue (SGLang's
    // retraction: from its back, behind every request waiting now).
    s.prefill_target = s.input + s.generated;
    s.prefilled = 0;
    s.remote_tokens = 0;  // a transferred KV is gone too: the decode replica recomputes it (as vLLM does)
    transition(s, SeqState::waiting);
    if (to_back) waiting_.push_back(i);
    else waiting_.push_front(i);
  }
  return demand;
}

void Replica::swap_in(double now_s) {
  while (!swapped_.empty()) {
    const std::int32_t i = swapped_.front();
    Seq& s = (*pool_)[i];
    if (running_ >= cfg_.max_num_seqs) break;
    // Blocks its first decode step after resuming needs (its n positions from ctx0).
    const std::int64_t growth = kv_.blocks_for(s.ctx0 + next_step_tokens()) - kv_.blocks_for(s.ctx0);
    if (!kv_.can_admit(s.own_blocks + growth + cfg_.state_blocks)) break;
    swapped_.pop_front();
    kv_.swap_in(s.own_blocks);
    kv_.allocate(growth);
    swap_bytes_ += static_cast<double>(s.own_blocks) * cfg_.block_bytes;
    s.own_blocks = 0;
    link_running(i);
    start_decoding(i, now_s, true);
  }
}

// A failed replica gives everything back (failures, docs/engine.md "Failures"): every request it held, running,
// waiting or swapped, is evicted with what it produced, and the replica restarts empty, keeping what was measured.
void Replica::evict_all(double now_s, std::vector<std::int32_t>& out, std::vector<std::int64_t>& produced) {
  if (!skipped_.empty()) rejoin_skipped();  // decoders the lost step's walk skipped hold what they produced
  auto take = [&](std::int32_t i) {
    Seq& s = (*pool_)[i];
    if (s.finished) {  // static-batching padding: reported when its last token came, only holding a slot
      s.own_blocks = s.prefix_blocks = 0;
      transition(s, SeqState::done);
      pool_->release(i);
      return;
    }
    evicted_from_engine(s, *outstanding_);
    s.own_blocks = s.prefix_blocks = 0;  // its KV went with the replica's (the pool restarts fresh below)
    produced.push_back(s.state == SeqState::decoding ? std::min(s.output, s.gen_base + (step_ - s.k0)) : s.generated);
    out.push_back(i);
  };
  for (std::int32_t i = head_; i >= 0;) {
    const std::int32_t next = (*pool_)[i].next;
    take(i);
    i = next;
  }
  for (; !waiting_.empty(); waiting_.pop_front()) take(waiting_.front());
  for (; !swapped_.empty(); swapped_.pop_front()) take(swapped_.front());
  // Every request it counted was running, waiting or swapped (a KV read in flight is disaggregation's, which
  // failures do not combine with).
  LLMSIM_DEEP_CHECK(*outstanding_ == 0, "a failed replica counted a request it did not hold");
  // Restart empty, keeping what was measured so far.
  Replica fresh(index_, record_.virtual_engine, cfg_, kv_initial_, *cost_, *pool_, *metrics_, outstanding_);
  fresh.work_ = work_;
  fresh.sat_ = sat_;
  fresh.preemptions_ = preemptions_;
  fresh.kv_used_ = kv_used_;
  fresh.itl_ = itl_;
  fresh.kv_used_.set(now_s, 0.0);
  fresh.last_decode_end_s_ = now_s;
  *this = std::move(fresh);
}

}  // namespace llmsim::engine::detail
