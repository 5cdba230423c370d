#include "llmsim/engine/kv_block_manager.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "llmsim/core/error.hpp"

namespace llmsim::engine {

KvBlockManager::KvBlockManager(std::int64_t capacity_blocks, int block_size, double watermark, std::int64_t host_blocks)
    : capacity_(capacity_blocks),
      block_size_(block_size),
      // vLLM: watermark_blocks = int(watermark × num_gpu_blocks).
      watermark_(static_cast<std::int64_t>(watermark * static_cast<double>(capacity_blocks))),
      host_capacity_(host_blocks) {
  LLMSIM_CHECK(capacity_blocks > 0 && block_size > 0 && watermark >= 0 && watermark < 1 && host_blocks >= 0,
               "invalid KV block manager parameters");
  if ((block_size & (block_size - 1)) == 0) {
    block_shift_ = std::countr_zero(static_cast<unsigned>(block_size));
    block_mask_ = block_size - 1;
  }
}

// ---- entries and their LRU list ----

std::int32_t KvBlockManager::new_entry() {
  if (!free_entries_.empty()) {
    const auto id = free_entries_.back();
    free_entries_.pop_back();
    Entry& e = entries_[static_cast<std::size_t>(id)];
    const std::uint32_t generation = e.generation + 1;
    e = Entry{};
    e.generation = generation;
    return id;
  }
  entries_.emplace_back();
  return static_cast<std::int32_t>(entries_.size() - 1);
}

void KvBlockManager::drop_entry(std::int32_t id) {
  Entry& e = entries_[static_cast<std::size_t>(id)];
  if (e.prefix) prefixes_.erase(e.key);
  const std::uint32_t generation = e.generation;
  e = Entry{};
  e.generation = generation;
  free_entries_.push_back(id);
}

void KvBlockManager::lru_push(std::int32_t id) {
  Entry& e = entries_[static_cast<std::size_t>(id)];
  e.lru_prev = lru_tail_;
  e.lru_next = -1;
  if (lru_tail_ >= 0) entries_[static_cast<std::size_t>(lru_tail_)].lru_next = id;
  else lru_head_ = id;
  lru_tail_ = id;
  e.in_lru = true;
}

void KvBlockManager::lru_remove(std::int32_t id) {
  Entry& e = entries_[static_cast<std::size_t>(id)];
  if (!e.in_lru) return;
  if (e.lru_prev >= 0) entries_[static_cast<std::size_t>(e.lru_prev)].lru_next = e.lru_next;
  else lru_head_ = e.lru_next;
  if (e.lru_next >= 0) entries_[static_cast<std::size_t>(e.lru_next)].lru_prev = e.lru_prev;
  else lru_tail_ = e.lru_prev;
  e.lru_prev = e.lru_next = -1;
  e.in_lru = false;
}

void KvBlockManager::evict_for(std::int64_t blocks) {
  // Raw free blocks exclude cached ones; evict from the least recently released entry, deepest blocks first
  // (a prefix cut short still hits on the blocks before the cut), until `blocks` fit.
  while (capacity_ + credit_blocks_ - used_ - cached_unreferenced_ < blocks) {
    LLMSIM_CHECK(lru_head_ >= 0 && cached_unreferenced_ > 0, "cached block accounting out of step");
    const std::int32_t id = lru_head_;
    Entry& e = entries_[static_cast<std::size_t>(id)];
    const std::int64_t take = std::min(e.resident, blocks - (capacity_ + credit_blocks_ - used_ - cached_unreferenced_));
    if (e.hashed) {  // a run of a chain: its deepest blocks go (kv_block_chains.cpp)
      evict_run(id, take);
      continue;
    }
    e.resident -= take;
    cached_unreferenced_ -= take;
    if (e.resident == 0) {
      lru_remove(id);
      drop_entry(id);  // nothing cached and nobody refers to it: the entry goes (memory stays bounded)
    }
  }
}

// ---- blocks ----

void KvBlockManager::allocate_evicting(std::int64_t blocks) {
  LLMSIM_CHECK(blocks >= 0 && blocks <= free(), "KV allocation beyond the free blocks");
  evict_for(blocks);
  used_ += blocks;
  if (used_ > peak_used_) peak_used_ = used_;
}

void KvBlockManager::release(std::int64_t blocks) {
  LLMSIM_CHECK(blocks >= 0 && blocks <= used_, "KV release of more blocks than held");
  used_ -= blocks;
}

void KvBlockManager::set_groups(int groups) {
  LLMSIM_CHECK(groups >= 1 && credit_pages_ == 0, "KV-cache groups set on a pool in use, or fewer than one");
  groups_ = groups;
}

void KvBlockManager::add_window_credit(std::int64_t pages) {
  LLMSIM_CHECK(pages >= 0, "a negative window credit");
  credit_pages_ += pages;
  credit_blocks_ = credit_pages_ / groups_;
}

void KvBlockManager::take_window_credit(std::int64_t pages) {
  LLMSIM_CHECK(pages >= 0 && pages <= credit_pages_, "taking back more window credit than given");
  credit_pages_ -= pages;
  credit_blocks_ = credit_pages_ / groups_;
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

void KvBlockManager::drop_swapped(std::int64_t blocks) {
  LLMSIM_CHECK(blocks >= 0 && blocks <= host_used_, "dropping blocks that were not swapped out");
  host_used_ -= blocks;
}

// ---- shared prefixes ----

std::int32_t KvBlockManager::find_prefix(std::uint64_t key) const {
  const auto it = prefixes_.find(key);
  return it == prefixes_.end() ? -1 : it->second;
}

std::int64_t KvBlockManager::prefix_resident(std::uint64_t key) const {
  const auto id = find_prefix(key);
  return id < 0 ? 0 : entries_[static_cast<std::size_t>(id)].resident;
}

std::int64_t KvBlockManager::prefix_cost(std::uint64_t key, std::int64_t blocks) const {
  const auto id = find_prefix(key);
  if (id < 0) return blocks;
  const Entry& e = entries_[static_cast<std::size_t>(id)];
  return e.refs > 0 ? 0 : blocks;  // resident blocks leave the evictable pool, missing ones the raw pool
}

std::int64_t KvBlockManager::acquire_prefix(std::uint64_t key, std::int64_t blocks) {
  std::int32_t id = find_prefix(key);
  if (id < 0) {
    id = new_entry();
    Entry& e = entries_[static_cast<std::size_t>(id)];
    e.prefix = true;
    e.key = key;
    e.blocks = blocks;
    prefixes_.emplace(key, id);
  }
  Entry* e = &entries_[static_cast<std::size_t>(id)];
  const std::int64_t hit = e->resident;
  if (e->refs == 0) {
    lru_remove(id);
    cached_unreferenced_ -= e->resident;
    used_ += e->resident;  // from the evictable pool to referenced blocks
    if (used_ > peak_used_) peak_used_ = used_;
    const std::int64_t missing = e->blocks - e->resident;
    allocate(missing);  // may evict other entries (never this one: it left the LRU list)
    e = &entries_[static_cast<std::size_t>(id)];
    e->resident = e->blocks;
  }
  ++e->refs;
  return hit;
}

void KvBlockManager::release_prefix(std::uint64_t key) {
  const auto id = find_prefix(key);
  LLMSIM_CHECK(id >= 0, "release of a prefix never acquired");
  Entry& e = entries_[static_cast<std::size_t>(id)];
  LLMSIM_CHECK(e.refs > 0, "prefix released more often than acquired");
  if (--e.refs == 0) {
    used_ -= e.resident;
    cached_unreferenced_ += e.resident;
    lru_push(id);
  }
}

// ---- a preempted request's own blocks ----

std::int64_t KvBlockManager::cache_released(std::int64_t blocks) {
  if (blocks <= 0) return -1;
  LLMSIM_CHECK(blocks <= used_, "caching more blocks than held");
  const std::int32_t id = new_entry();
  Entry& e = entries_[static_cast<std::size_t>(id)];
  e.blocks = e.resident = blocks;
  used_ -= blocks;
  cached_unreferenced_ += blocks;
  lru_push(id);
  return (static_cast<std::int64_t>(e.generation) << 32) | id;
}

const KvBlockManager::Entry* KvBlockManager::from_handle(std::int64_t handle) const {
  if (handle < 0) return nullptr;
  const auto id = static_cast<std::size_t>(handle & 0xffffffff);
  if (id >= entries_.size()) return nullptr;
  const Entry& e = entries_[id];
  if (e.generation != static_cast<std::uint32_t>(handle >> 32) || e.prefix || e.hashed || e.resident == 0) return nullptr;
  return &e;
}

std::int64_t KvBlockManager::entry_resident(std::int64_t handle) const {
  const Entry* e = from_handle(handle);
  return e ? e->resident : 0;
}

std::int64_t KvBlockManager::reclaim(std::int64_t handle, std::int64_t want) {
  if (!from_handle(handle)) return 0;  // evicted meanwhile (its slot may hold another entry now)
  const auto id = static_cast<std::int32_t>(handle & 0xffffffff);
  Entry& e = entries_[static_cast<std::size_t>(id)];
  const std::int64_t take = std::clamp<std::int64_t>(want, 0, e.resident);
  lru_remove(id);
  cached_unreferenced_ -= e.resident;  // the rest is dropped: plain free blocks again
  used_ += take;
  if (used_ > peak_used_) peak_used_ = used_;
  drop_entry(id);
  return take;
}

}  // namespace llmsim::engine
