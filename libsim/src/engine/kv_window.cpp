// Sliding-window KV-cache groups in the engine (docs/engine.md "Sliding-window groups"; private to the engine).
// vLLM V1's hybrid KV-cache manager gives each sliding-window group its own block table and frees the blocks that
// left the window before it allocates a step's: KVCacheManager.allocate_slots calls remove_skipped_blocks(request,
// num_computed_tokens), and SlidingWindowManager frees blocks [0, (num_computed_tokens − sliding_window + 1) //
// block_size) (vllm/v1/core/single_type_kv_cache_manager.py). So a decoder past its window keeps at most
// cdiv(window, block_size) + 1 blocks in each sliding group whatever its length (memory::KvLayout::blocks_held),
// and from then on each block it adds costs a page in the full groups only.
//
// The pool (KvBlockManager) charges a sequence a block, a page in every group, per block_size tokens; a decoder's
// blocks past Seq::window_base (its shared prefix's and the window's, window_blocks) each give window_pages pages
// back as the pool's window credit. The credit is a function of the decoder's state (window_credit_of), kept in
// the pool as a sum, changed only when a decoder joins or leaves the decode set and by each step's growth: the
// decoders past window_base are counted per phase like every decoder's growth (phase_count_), those still before it
// in a ring by the token clock at which they pass it, so a step costs O(1) in the batch. A prompt's chunks are
// charged in every group (a first chunk is in vLLM too: nothing is skipped before any token is computed).
#include <algorithm>

#include "llmsim/core/error.hpp"
#include "replica.hpp"

namespace llmsim::engine::detail {

void Replica::window_init() {
  // A decoder passes its window_base within window_blocks × block_size clocks of joining (its context is at least its
  // shared prefix's and one more token).
  LLMSIM_CHECK(cfg_.window_blocks >= 1, "sliding-window groups without a window");
  window_past_.assign(static_cast<std::size_t>(kv_.block_size()), 0);  // decoders past their window_base, by phase
  window_ring_.assign(static_cast<std::size_t>(cfg_.window_blocks * kv_.block_size() + 2), 0);  // the others, by clock
}

std::int64_t Replica::window_clock(const Seq& s) const noexcept {
  return s.k0 + 1 - s.ctx0 + static_cast<std::int64_t>(s.window_base) * kv_.block_size();  // a clock of its phase
}

std::int64_t Replica::window_credit_of(const Seq& s) const noexcept {
  return cfg_.window_pages * std::max<std::int64_t>(0, kv_.blocks_for(tokens_now(s)) - s.window_base);
}

void Replica::window_join(Seq& s) {
  s.window_base = static_cast<std::int32_t>(cfg_.window_blocks + s.prefix_blocks);
  kv_.add_window_credit(window_credit_of(s));
  const std::int64_t clock = window_clock(s);
  if (clock <= step_) {
    ++window_past_[static_cast<std::size_t>(phase_of(s))];
  } else {
    LLMSIM_CHECK(clock - step_ < static_cast<std::int64_t>(window_ring_.size()), "a decoder's window beyond the ring");
    ++window_ring_[static_cast<std::size_t>(clock % static_cast<std::int64_t>(window_ring_.size()))];
  }
}

void Replica::window_leave(const Seq& s) {
  kv_.take_window_credit(window_credit_of(s));
  const std::int64_t clock = window_clock(s);
  if (clock <= step_) --window_past_[static_cast<std::size_t>(phase_of(s))];
  else --window_ring_[static_cast<std::size_t>(clock % static_cast<std::int64_t>(window_ring_.size()))];
}

std::int64_t Replica::window_freed(std::int64_t n) const {
  // A ring arrival at clock a adds a block at a and at every clock of its phase after it.
  const auto ring = static_cast<std::int64_t>(window_ring_.size());
  std::int64_t past = 0;
  for (std::int64_t t = step_ + 1; t <= step_ + n; ++t) {
    past += window_past_[static_cast<std::size_t>(mod_block(t))];
    for (std::int64_t a = t; a > step_; a -= kv_.block_size()) past += window_ring_[static_cast<std::size_t>(a % ring)];
  }
  return past * cfg_.window_pages;
}

bool Replica::grow_windowed(double now_s, std::int64_t n, std::int64_t need) {
  // The pages this step's blocks free past the window come first (remove_skipped_blocks before allocate_slots).
  bool preempted = false;
  std::int64_t freed = window_freed(n);
  while (need > kv_.free_with_credit(freed)) {
    need -= preempt_tail(now_s);
    preempted = true;
    freed = window_freed(n);  // the victim's blocks are no longer among them
  }
  if (n_dec_ > 0) {  // begin_decode_step takes the step's n tokens next: the ring's arrivals by then are past
    const auto ring = static_cast<std::int64_t>(window_ring_.size());
    for (std::int64_t t = step_ + 1; t <= step_ + n; ++t) {
      auto& arrivals = window_ring_[static_cast<std::size_t>(t % ring)];
      window_past_[static_cast<std::size_t>(mod_block(t))] += arrivals;
      arrivals = 0;
    }
    kv_.add_window_credit(freed);
  }
  kv_.allocate(need);
  return preempted;
}

}  // namespace llmsim::engine::detail
