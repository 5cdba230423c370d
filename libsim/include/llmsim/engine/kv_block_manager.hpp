#pragma once
// Paged KV-cache accounting of one replica: blocks of block_size tokens, an admission watermark, host swap
// space, and shared prompt-prefix blocks (prefix caching) kept while referenced and, unreferenced, until
// evicted least-recently-used when blocks run short.
#include <cstdint>
#include <vector>

namespace llmsim::engine {

class KvBlockManager {
 public:
  /// `capacity_blocks` > 0, `block_size` > 0, `watermark` in [0, 1) of the capacity, `host_blocks` >= 0,
  /// `prefix_groups` shared prefixes of `prefix_blocks[g]` blocks each.
  KvBlockManager(std::int64_t capacity_blocks, int block_size, double watermark, std::int64_t host_blocks,
                 std::vector<std::int64_t> prefix_blocks = {});

  std::int64_t blocks_for(std::int64_t tokens) const noexcept { return (tokens + block_size_ - 1) / block_size_; }
  int block_size() const noexcept { return block_size_; }
  std::int64_t capacity() const noexcept { return capacity_; }
  /// Blocks held by sequences (own and referenced shared prefixes).
  std::int64_t used() const noexcept { return used_; }
  /// Blocks available to an allocation (unreferenced cached prefixes count: they can be evicted).
  std::int64_t free() const noexcept { return capacity_ - used_; }
  std::int64_t watermark_blocks() const noexcept { return watermark_; }
  double used_fraction() const noexcept { return static_cast<double>(used_) / static_cast<double>(capacity_); }

  /// Admission test (vLLM can_allocate): `blocks` more leave at least the watermark free.
  bool can_admit(std::int64_t blocks) const noexcept { return free() - blocks >= watermark_; }
  /// Growth test: the watermark does not apply to decode growth.
  bool can_grow(std::int64_t blocks) const noexcept { return blocks <= free(); }
  /// Takes `blocks` (evicting cached prefixes as needed); InternalError if they are not free.
  void allocate(std::int64_t blocks);
  void release(std::int64_t blocks);

  // Host swap space.
  bool can_swap_out(std::int64_t blocks) const noexcept { return host_used_ + blocks <= host_capacity_; }
  void swap_out(std::int64_t blocks);  ///< release on the GPU, hold on the host
  void swap_in(std::int64_t blocks);   ///< release on the host, allocate on the GPU

  // Prefix caching. acquire_prefix returns true on a hit (the prefix's KV is resident); on a miss the
  // prefix blocks are allocated (the caller must have checked can_admit for them).
  std::int64_t prefix_blocks(int group) const { return prefixes_[static_cast<std::size_t>(group)].blocks; }
  bool prefix_resident(int group) const { return prefixes_[static_cast<std::size_t>(group)].resident; }
  /// Blocks an acquire of `group` would newly take from the free pool (0 when referenced already).
  std::int64_t prefix_cost(int group) const;
  bool acquire_prefix(int group);
  void release_prefix(int group);

  std::int64_t peak_used() const noexcept { return peak_used_; }

 private:
  void evict_for(std::int64_t blocks);
  struct Prefix {
    std::int64_t blocks = 0;
    std::int64_t refs = 0;
    bool resident = false;
    std::uint64_t last_release = 0;
  };
  std::int64_t capacity_;
  int block_size_;
  std::int64_t watermark_;
  std::int64_t used_ = 0, peak_used_ = 0;
  std::int64_t cached_unreferenced_ = 0;  ///< resident prefix blocks nobody references (evictable)
  std::int64_t host_capacity_, host_used_ = 0;
  std::vector<Prefix> prefixes_;
  std::uint64_t clock_ = 0;
};

}  // namespace llmsim::engine
