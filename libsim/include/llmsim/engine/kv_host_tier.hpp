#pragma once
// The second KV cache tier of one replica: blocks kept in host memory, by content key (the chained block keys of
// KvBlockManager's hashed blocks), least recently used evicted when full. It models vLLM's OffloadingConnector
// with the CPU backend (vllm/distributed/kv_transfer/kv_connector/v1/offloading_connector.py,
// vllm/v1/kv_offload/lru_manager.py; `--kv-offloading-size`), which LMCache's CPU tier and SGLang's HiCache
// (`--enable-hierarchical-cache`, write-through by default) resemble:
// * store: every full block a request computes is copied to the host after the step that computed it
//   (write-through, `_get_reqs_to_store`); a block already there is not copied again. The copy runs on its own CUDA
//   stream, overlapped with the next steps: it costs no step time here, only PCIe bytes (counted).
// * lookup: at admission, after the GPU prefix-cache hit, the blocks that follow it and are in the host tier (a run
//   from the first missing one, as `get_num_new_matched_tokens` looks them up) are loaded instead of recomputed.
// * recency: a lookup touches every block of the request's prompt that the tier holds, the last first, so the
//   first blocks become the most recent (LRUOffloadingManager.touch walks the list reversed); a store of a block
//   already held changes nothing (prepare_store filters it out).
// Memory is O(blocks stored), at most the capacity; no allocation once the tier has filled.
#include <cstdint>
#include <vector>

#include "llmsim/engine/block_hash_index.hpp"

namespace llmsim::engine {

/// The tier's capacity in blocks of one engine: `offload_gb` GiB (engine.kv_offload_gb: vLLM's
/// --kv-offloading-size, summed over the TP ranks) over blocks of `replica_block_bytes` (one block on every GPU of
/// the replica), split like the swap space between the pipeline's `virtual_engines`. 0 for no tier; ConfigError
/// naming engine.kv_offload_gb when a tier was asked for that holds no block (it would run as no tier at all).
std::int64_t host_tier_blocks(double offload_gb, double replica_block_bytes, int virtual_engines);

class KvHostTier {
 public:
  /// `capacity_blocks` >= 0 (0: no host tier; every call is then a cheap no-op). InternalError when negative.
  explicit KvHostTier(std::int64_t capacity_blocks = 0);

  bool enabled() const noexcept { return capacity_ > 0; }
  std::int64_t capacity() const noexcept { return capacity_; }
  /// Blocks stored now (<= capacity()).
  std::int64_t size() const noexcept { return static_cast<std::int64_t>(index_.size()); }
  bool contains(std::uint64_t key) const noexcept { return enabled() && index_.find(key) >= 0; }
  /// Stores block `key` as the most recently used, evicting the least recently used block when full; true when it
  /// was not stored before (a device-to-host copy), false (nothing changes) when it was.
  bool store(std::uint64_t key);
  /// Makes `key` the most recently used when stored; returns whether it is.
  bool touch(std::uint64_t key);

  // Totals over the run.
  std::int64_t stored_blocks() const noexcept { return stored_; }   ///< copies to the host
  std::int64_t evicted_blocks() const noexcept { return evicted_; }  ///< dropped to make room

 private:
  struct Node {
    std::uint64_t key = 0;
    std::int32_t prev = -1, next = -1;
  };
  void unlink(std::int32_t id);
  void push_back(std::int32_t id);

  std::int64_t capacity_;
  BlockHashIndex index_;  ///< key -> node
  std::vector<Node> nodes_;
  std::int32_t head_ = -1, tail_ = -1;  ///< least / most recently used
  std::int64_t stored_ = 0, evicted_ = 0;
};

}  // namespace llmsim::engine
