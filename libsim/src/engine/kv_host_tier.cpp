#include "llmsim/engine/kv_host_tier.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "llmsim/core/error.hpp"

namespace llmsim::engine {

std::int64_t host_tier_blocks(double offload_gb, double replica_block_bytes, int virtual_engines) {
  if (!(offload_gb > 0) || !(replica_block_bytes > 0)) return 0;
  const double bytes = std::ldexp(offload_gb, 30);  // GiB; validation bounds it (<= 1e6 GiB), the count saturates
  const auto blocks = static_cast<std::int64_t>(std::min(bytes / replica_block_bytes / virtual_engines, 4e18));
  if (blocks < 1)
    throw ConfigError("engine.kv_offload_gb",
                      "a host KV tier of " + format_given(offload_gb) + " GiB holds no KV block (one block is " +
                          format_given(replica_block_bytes * virtual_engines / (1 << 20)) +
                          " MiB here); give at least that, or 0 for no tier");
  return blocks;
}

KvHostTier::KvHostTier(std::int64_t capacity_blocks) : capacity_(capacity_blocks) {
  LLMSIM_CHECK(capacity_blocks >= 0, "negative host KV tier capacity");
  // Node ids are 32-bit; a larger tier than 2^31 blocks (petabytes) stores at most that many.
  if (capacity_ > INT32_MAX - 1) capacity_ = INT32_MAX - 1;
}

void KvHostTier::unlink(std::int32_t id) {
  Node& n = nodes_[static_cast<std::size_t>(id)];
  if (n.prev >= 0) nodes_[static_cast<std::size_t>(n.prev)].next = n.next;
  else head_ = n.next;
  if (n.next >= 0) nodes_[static_cast<std::size_t>(n.next)].prev = n.prev;
  else tail_ = n.prev;
  n.prev = n.next = -1;
}

void KvHostTier::push_back(std::int32_t id) {
  Node& n = nodes_[static_cast<std::size_t>(id)];
  n.prev = tail_;
  n.next = -1;
  if (tail_ >= 0) nodes_[static_cast<std::size_t>(tail_)].next = id;
  else head_ = id;
  tail_ = id;
}

bool KvHostTier::touch(std::uint64_t key) {
  if (!enabled()) return false;
  const std::int32_t id = index_.find(key);
  if (id < 0) return false;
  if (id != tail_) {
    unlink(id);
    push_back(id);
  }
  return true;
}

bool KvHostTier::store(std::uint64_t key) {
  if (!enabled()) return false;
  if (index_.find(key) >= 0) return false;  // vLLM's prepare_store filters stored blocks out (no touch)
  std::int32_t id;
  if (size() >= capacity_) {  // full: the least recently used block's slot takes the new one
    id = head_;
    LLMSIM_CHECK(id >= 0, "host KV tier full with no block in its LRU list");
    unlink(id);
    index_.erase(nodes_[static_cast<std::size_t>(id)].key);
    ++evicted_;
  } else {
    id = static_cast<std::int32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  nodes_[static_cast<std::size_t>(id)].key = key;
  index_.insert(key, id);
  push_back(id);
  ++stored_;
  return true;
}

}  // namespace llmsim::engine
