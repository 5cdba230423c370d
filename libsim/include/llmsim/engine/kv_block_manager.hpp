#pragma once
// Paged KV-cache accounting of one replica: blocks of block_size tokens, an admission watermark, host swap
// space, and a cache of blocks whose content is kept after release (prefix caching): shared prompt prefixes
// and the blocks a preempted request computed. Cached blocks nobody references count as free and are evicted
// least-recently-released first, each entry's deepest blocks first (vLLM V1's free-block queue:
// vllm/v1/core/block_pool.py, ../shared/reference/serving-engines.md §2.3). Memory is proportional to the
// entries in use or cached (each cached entry holds at least one block), never to a user-given count.
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "llmsim/engine/block_hash_index.hpp"

namespace llmsim::engine {

class KvBlockManager {
 public:
  /// `capacity_blocks` > 0, `block_size` > 0, `watermark` in [0, 1) of the capacity, `host_blocks` >= 0.
  KvBlockManager(std::int64_t capacity_blocks, int block_size, double watermark, std::int64_t host_blocks);

  // The block arithmetic, by a shift and a mask for a power-of-two block size (every arrival, admission and decode
  // step asks; a 64-bit division costs tens of cycles), by division otherwise: the same integers either way.
  /// Blocks that hold `tokens` >= 0.
  std::int64_t blocks_for(std::int64_t tokens) const noexcept {
    const std::int64_t n = tokens + block_size_ - 1;
    return block_shift_ >= 0 ? n >> block_shift_ : n / block_size_;
  }
  /// x mod block_size in [0, block_size), also for negative x: a token position's place in its block.
  std::int64_t block_offset(std::int64_t x) const noexcept {
    if (block_mask_ >= 0) return x & block_mask_;
    return ((x % block_size_) + block_size_) % block_size_;
  }
  int block_size() const noexcept { return block_size_; }
  std::int64_t capacity() const noexcept { return capacity_; }
  /// Blocks held by sequences (own and referenced cache entries).
  std::int64_t used() const noexcept { return used_; }
  /// Blocks available to an allocation (unreferenced cached blocks count: they can be evicted), the pages sliding
  /// groups freed included (window credit, below).
  std::int64_t free() const noexcept { return capacity_ - used_ + credit_blocks_; }
  std::int64_t watermark_blocks() const noexcept { return watermark_; }
  /// Of the pool, the share held: blocks used less the pages sliding groups freed (held()).
  double used_fraction() const noexcept { return static_cast<double>(held()) / static_cast<double>(capacity_); }
  /// Unreferenced blocks whose content is still cached (evictable).
  std::int64_t cached_free() const noexcept { return cached_unreferenced_; }

  /// Admission test (vLLM V0 can_allocate): `blocks` more leave at least the watermark free.
  bool can_admit(std::int64_t blocks) const noexcept { return free() - blocks >= watermark_; }
  /// Growth test: the watermark does not apply to decode growth.
  bool can_grow(std::int64_t blocks) const noexcept { return blocks <= free(); }
  /// Takes `blocks` (evicting cached blocks as needed); InternalError if they are not free.
  void allocate(std::int64_t blocks) {
    // Hot path (every decode step that crosses a block boundary): raw free blocks suffice, nothing to evict.
    if (blocks >= 0 && blocks <= capacity_ + credit_blocks_ - used_ - cached_unreferenced_) {
      used_ += blocks;
      if (used_ > peak_used_) peak_used_ = used_;
      return;
    }
    allocate_evicting(blocks);
  }
  void release(std::int64_t blocks);

  // ---- sliding-window groups (vLLM V1's hybrid KV-cache manager; docs/engine.md "Sliding-window groups") ----
  // A block of this pool is `block_size` tokens in every KV-cache group: a page in each of groups() groups
  // (memory::KvLayout). Sequences are charged whole blocks, as if every group held every token; a sliding group
  // frees the pages of blocks that left its window (SlidingWindowManager.remove_skipped_blocks), which the replica
  // counts here as a credit of pages. Every allocation may use it (free() adds its whole blocks), and held() is what
  // the pool really holds. groups 1 and no credit: the plain pool.
  void set_groups(int groups);
  int groups() const noexcept { return groups_; }
  /// Pages sliding groups freed from the sequences now holding blocks (given back by take_window_credit when one
  /// leaves or is preempted).
  std::int64_t window_credit() const noexcept { return credit_pages_; }
  void add_window_credit(std::int64_t pages);
  void take_window_credit(std::int64_t pages);
  /// free() if `extra_pages` more pages were credited (a step's planned growth).
  std::int64_t free_with_credit(std::int64_t extra_pages) const noexcept {
    return capacity_ - used_ + (credit_pages_ + extra_pages) / groups_;
  }
  /// Blocks the pool holds: used() less the credited pages, in whole blocks.
  std::int64_t held() const noexcept { return used_ - credit_blocks_; }

  // Host swap space.
  bool can_swap_out(std::int64_t blocks) const noexcept { return host_used_ + blocks <= host_capacity_; }
  void swap_out(std::int64_t blocks);  ///< release on the GPU, hold on the host
  void swap_in(std::int64_t blocks);   ///< release on the host, allocate on the GPU
  void drop_swapped(std::int64_t blocks);  ///< release on the host (a swapped request was cancelled)

  // ---- shared prompt prefixes, by key (a tenant class's prefix group), created on first use ----
  /// Blocks of prefix `key` resident in the cache (0 when never computed or evicted).
  std::int64_t prefix_resident(std::uint64_t key) const;
  /// Blocks an acquire of a `blocks`-block prefix would newly take from the free pool (0 when referenced).
  std::int64_t prefix_cost(std::uint64_t key, std::int64_t blocks) const;
  /// References prefix `key` of `blocks` blocks; returns the blocks that were resident (the cache hit). Missing
  /// blocks are allocated (the caller computes them; the caller checked the cost fits).
  std::int64_t acquire_prefix(std::uint64_t key, std::int64_t blocks);
  void release_prefix(std::uint64_t key);

  // ---- a preempted request's own computed blocks ----
  /// Moves `blocks` of the caller's held blocks into a new cache entry (unreferenced, evictable); returns a
  /// handle to it, or -1 when `blocks` is 0. A handle stays valid (and harmless) after its entry was evicted.
  std::int64_t cache_released(std::int64_t blocks);
  /// Blocks of the entry still resident (0 once evicted).
  std::int64_t entry_resident(std::int64_t handle) const;
  /// Takes up to `want` resident blocks of the entry back as held blocks (a cache hit) and drops the entry;
  /// returns the blocks taken (0 once evicted).
  std::int64_t reclaim(std::int64_t handle, std::int64_t want);

  // ---- blocks cached by content hash (block-hash traces, e.g. Mooncake's hash_ids; session turns) ----
  // vLLM's automatic prefix caching: every full block is hashed with its parent's hash
  // (vllm/v1/core/kv_cache_utils.py hash_block_tokens), so a block's key names the whole prefix up to it and a
  // lookup walks a prompt's blocks from the first until one is missing (find_longest_cache_hit). A sequence holds
  // blocks [0, n) of its chain: it references the cached prefix, publishes the blocks it computes in order, and
  // releases them deepest first into the free queue (vLLM frees a request's blocks in reverse), so every cached
  // block's parent is cached, and evicted after it — the cached blocks of any chain are a prefix of it, and so are
  // the referenced ones. The cache keeps them run-length (kv_block_chains.cpp): the keys of a chain's cached blocks
  // in one array per chain segment, and an entry per run of blocks that share their reference count and, when
  // free, their place in the LRU queue (a released history is one entry, evicted from its deep end). Each call is
  // O(runs and chain segments on the sequence's path), not O(blocks): the outcome is vLLM's block-by-block one.
  /// splitmix64's finaliser: a bijection in which every input bit moves every output bit.
  static std::uint64_t mix64(std::uint64_t x) noexcept {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
  }
  /// The key of a sequence's block `block_index` whose tokens end inside the prefix named by `chain_hash`.
  static std::uint64_t block_key(std::uint64_t chain_hash, std::int64_t block_index) noexcept {
    return mix64(chain_hash + 0xD6E8FEB86659FD93ULL * static_cast<std::uint64_t>(block_index + 1));
  }
  /// The hash of a prefix extended by one more block of content `block_id` (`parent` 0 for the first block).
  static std::uint64_t chain_hash(std::uint64_t parent, std::uint64_t block_id) noexcept {
    return mix64(parent ^ mix64(block_id));
  }
  /// A sequence's block keys: `keys[k]` (one per block: session turns), or, with `keys` null, a block-hash trace's
  /// block_key(hashes[j], k) for the hash block j of `hash_tokens` tokens in which engine block k of `block_tokens`
  /// ends.
  struct ChainKeys {
    const std::uint64_t* keys = nullptr;
    const std::uint64_t* hashes = nullptr;
    std::int64_t block_tokens = 1, hash_tokens = 1;
    std::uint64_t at(std::int64_t k) const noexcept {
      return keys ? keys[k] : block_key(hashes[((k + 1) * block_tokens - 1) / hash_tokens], k);
    }
  };
  // A sequence's "tip" is the segment holding the last block it references: kept by the caller and passed back, it
  // spares the walk from the first block (checked with one key — keys are unique in the cache — and found by a walk
  // when it does not hold; −1 for none).
  /// Blocks of `c`'s [0, limit) cached (the first missing one ends the hit); of those, `*referenced` are referenced
  /// (the rest are unreferenced: a hit takes them from the evictable pool).
  std::int64_t chain_cached(const ChainKeys& c, std::int64_t limit, std::int64_t* referenced) const;
  /// References blocks [0, n) of `c`, all cached (chain_cached >= n): a hit. Returns the tip (−1 for n = 0).
  std::int32_t acquire_chain(const ChainKeys& c, std::int64_t n);
  /// The caller references [0, from) of `c` (tip `*tip`) and holds blocks for [from, to): registers them as cached
  /// blocks keyed by `c`, each referenced once, in order, until one is cached already. Returns the blocks published;
  /// `*tip` (when given) becomes the new tip.
  std::int64_t publish_chain(const ChainKeys& c, std::int64_t from, std::int64_t to, std::int32_t* tip = nullptr);
  /// Drops the references to blocks [0, n) of `c` (tip `tip`), deepest first; unreferenced, they stay cached
  /// (evictable).
  void release_chain(const ChainKeys& c, std::int64_t n, std::int32_t tip = -1);
  /// -1: `key` not cached; 0: cached and unreferenced; 1: referenced. A scan over the cached keys (tests).
  int block_state(std::uint64_t key) const;
  /// Appends the keys of every referenced cached block to `out` (the lifecycle check, kv_holdings.cpp).
  void referenced_keys(std::vector<std::uint64_t>& out) const;

  std::int64_t peak_used() const noexcept { return peak_used_; }
  /// Cache entries allocated (referenced or cached; a hashed run is one): bounded by sequences in flight + cached blocks.
  std::size_t cache_entries() const noexcept { return entries_.size() - free_entries_.size(); }
  /// Chain segments holding cached keys (at most the cached hashed blocks).
  std::size_t chain_segments() const noexcept { return chains_.size() - free_chains_.size(); }

 private:
  struct Entry {
    std::int64_t blocks = 0;    ///< full size (prefix) or blocks cached (released request)
    std::int64_t resident = 0;  ///< of those, still in the cache
    std::int64_t refs = 0;
    std::uint64_t key = 0;
    std::uint32_t generation = 0;  ///< bumped when the slot is reused, so stale handles miss
    bool prefix = false, hashed = false, in_lru = false;
    std::int32_t lru_prev = -1, lru_next = -1;
    // A hashed run: blocks [lo, lo + resident) of chain segment `chain` (`blocks` = `resident`).
    std::int32_t chain = -1;
    std::int64_t lo = 0;
  };
  // A chain segment: the keys of cached blocks [base, base + keys.size()) of one chain, whose first key is indexed
  // (hashed_), and the runs that partition them, in order. Its blocks are cached from base on (a chain's cached
  // blocks are a prefix of it), so the deepest run is the last one and eviction shortens the segment.
  struct Segment {
    std::int64_t base = 0;
    std::vector<std::uint64_t> keys;
    std::vector<std::int32_t> runs;
    std::int32_t parent = -1;  ///< the segment holding block base − 1 (−1 for base 0)
    std::int32_t children = 0;  ///< segments whose parent this is (a publish at its end must look up the index)
    std::int64_t fork = std::numeric_limits<std::int64_t>::max();  ///< the first block at which a child parted from it (a hint: a system prompt's end)
  };
  // One segment's stretch of a sequence's path: blocks [from, to) of segment `seg`.
  struct Stretch {
    std::int32_t seg;
    std::int64_t from, to;
  };
  /// The path of `c`'s blocks [0, limit) that are cached, segment by segment, into path_; returns its length.
  std::int64_t walk(const ChainKeys& c, std::int64_t limit) const;
  /// The path of `c`'s blocks [0, n), all cached, into path_: from the segment holding block n − 1 (`hint` when it
  /// does, else the last walk's or a new walk's) back through the segments' parents.
  void path_to(const ChainKeys& c, std::int64_t n, std::int32_t hint);
  bool holds(std::int32_t seg, const ChainKeys& c, std::int64_t k) const;
  std::int64_t match(const Segment& g, const ChainKeys& c, std::int64_t from, std::int64_t to) const;
  std::size_t run_at(const Segment& g, std::int64_t k) const;
  std::int32_t split_run(std::int32_t id, std::int64_t at);
  std::int32_t new_segment(std::int64_t base, std::int32_t parent);
  void evict_run(std::int32_t id, std::int64_t take);
  void push_run(std::int32_t id);
  std::int32_t new_entry();
  void drop_entry(std::int32_t id);
  void lru_push(std::int32_t id);
  void lru_remove(std::int32_t id);
  void evict_for(std::int64_t blocks);
  void allocate_evicting(std::int64_t blocks);
  std::int32_t find_prefix(std::uint64_t key) const;
  const Entry* from_handle(std::int64_t handle) const;

  std::int64_t capacity_;
  int block_size_;
  // For a power-of-two block size (else -1): log2 of it (blocks_for) and it − 1 (block_offset).
  int block_shift_ = -1;
  std::int64_t block_mask_ = -1;
  std::int64_t watermark_;
  std::int64_t used_ = 0, peak_used_ = 0;
  int groups_ = 1;                                     ///< pages per block (set_groups)
  std::int64_t credit_pages_ = 0, credit_blocks_ = 0;  ///< window credit, and its whole blocks (credit / groups)
  std::int64_t cached_unreferenced_ = 0;  ///< resident blocks of unreferenced entries (evictable)
  std::int64_t host_capacity_, host_used_ = 0;
  std::vector<Entry> entries_;
  std::vector<std::int32_t> free_entries_;
  std::unordered_map<std::uint64_t, std::int32_t> prefixes_;
  BlockHashIndex hashed_;  ///< first key of a chain segment -> segment
  std::vector<Segment> chains_;
  std::vector<std::int32_t> free_chains_;
  mutable std::vector<Stretch> path_;  ///< scratch: the last walk's path
  std::vector<std::int32_t> run_scratch_;  ///< scratch: the runs a release frees
  std::int32_t lru_head_ = -1, lru_tail_ = -1;  ///< least / most recently released unreferenced entries
};

}  // namespace llmsim::engine
