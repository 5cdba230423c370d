#include "llmsim/engine/kv_block_manager.hpp"

#include <string>

#include "llmsim/core/error.hpp"

namespace llmsim::engine {

KvBlockManager::KvBlockManager(std::int64_t capacity_blocks, int block_size, double watermark,
                               std::int64_t host_blocks, std::vector<std::int64_t> prefix_blocks)
    : capacity_(capacity_blocks),
      block_size_(block_size),
      // vLLM: watermark_blocks = int(watermark × num_gpu_blocks).
      watermark_(static_cast<std::int64_t>(watermark * static_cast<double>(capacity_blocks))),
      host_capacity_(host_blocks) {
  LLMSIM_CHECK(capacity_blocks > 0 && block_size > 0 && watermark >= 0 && watermark < 1 && host_blocks >= 0,
               "invalid KV block manager parameters");
  prefixes_.resize(prefix_blocks.size());
  for (std::size_t i = 0; i < prefix_blocks.size(); ++i) prefixes_[i].blocks = prefix_blocks[i];
}

void KvBlockManager::evict_for(std::int64_t blocks) {
  // Raw free blocks exclude cached-but-unreferenced prefixes; evict those LRU until `blocks` fit.
  while (capacity_ - used_ - cached_unreferenced_ < blocks && cached_unreferenced_ > 0) {
    Prefix* victim = nullptr;
    for (auto& p : prefixes_)
      if (p.resident && p.refs == 0 && (!victim || p.last_release < victim->last_release)) victim = &p;
    LLMSIM_CHECK(victim != nullptr, "cached prefix accounting out of step");
    victim->resident = false;
    cached_unreferenced_ -= victim->blocks;
  }
}

void KvBlockManager::allocate(std::int64_t blocks) {
  LLMSIM_CHECK(blocks >= 0 && blocks <= free(), "KV allocation beyond the free blocks");
  evict_for(blocks);
  used_ += blocks;
  if (used_ > peak_used_) peak_used_ = used_;
}

void KvBlockManager::release(std::int64_t blocks) {
  LLMSIM_CHECK(blocks >= 0 && blocks <= used_, "KV release of more blocks than held");
  used_ -= blocks;
}

void KvBlockManager::swap_out(std::int64_t blocks) {
  LLMSIM_CHECK(can_swap_out(blocks), "swap space exceeded");
  release(blocks);
  host_used_ += blocks;
}

void KvBlockManager::swap_in(std::int64_t blocks) {
  LLMSIM_CHECK(blocks <= host_used_, "swap-in of blocks that were not swapped out");
  allocate(blocks);
  host_used_ -= blocks;
}

std::int64_t KvBlockManager::prefix_cost(int group) const {
  const auto& p = prefixes_[static_cast<std::size_t>(group)];
  return p.refs > 0 ? 0 : p.blocks;  // unreferenced resident blocks come out of the (evictable) free pool
}

bool KvBlockManager::acquire_prefix(int group) {
  auto& p = prefixes_[static_cast<std::size_t>(group)];
  const bool hit = p.resident;
  if (p.refs == 0) {
    if (p.resident) {
      cached_unreferenced_ -= p.blocks;
      used_ += p.blocks;  // moves from the evictable pool to the referenced blocks
      LLMSIM_CHECK(used_ + cached_unreferenced_ <= capacity_, "prefix reuse overflow");
      if (used_ > peak_used_) peak_used_ = used_;
    } else {
      allocate(p.blocks);
      p.resident = true;
    }
  }
  ++p.refs;
  return hit;
}

void KvBlockManager::release_prefix(int group) {
  auto& p = prefixes_[static_cast<std::size_t>(group)];
  LLMSIM_CHECK(p.refs > 0, "prefix released more often than acquired");
  if (--p.refs == 0) {
    used_ -= p.blocks;
    cached_unreferenced_ += p.blocks;
    p.last_release = ++clock_;
  }
}

}  // namespace llmsim::engine
