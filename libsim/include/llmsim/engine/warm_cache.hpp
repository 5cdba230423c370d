#pragma once
// A benchmark served from a warm prefix cache (workload.warm_cache; docs/engine.md "Warm prefix cache"). Running
// `vllm bench serve` once per request rate against one server with prefix caching on and the same seed re-sends the
// same prompts, so every run after the first starts with the earlier run's blocks still cached. The engine then
// starts from the cache as that run left it: every request's full blocks (prompt, then reply) freed in the run's
// order into vLLM V1's free-block queue, each request's deepest block first, the least recently freed evicted first
// when the pool is full (vllm/v1/core/block_pool.py FreeKVCacheBlockQueue; kv_cache_manager.py free():
// reversed(blocks)).
#include <cstdint>

#include "llmsim/engine/kv_block_manager.hpp"

namespace llmsim::engine {

/// Leaves `kv` as one more request of the earlier run left it: its `n` cached blocks, named by `keys` (shallowest
/// first), are taken — a key already cached is reused (a shared prefix: it moves to the queue's tail), a missing one
/// allocated and published, evicting the least recently freed blocks when no raw block is free — then freed deepest
/// first. A request with more blocks than the pool can hold keeps its first ones: taking stops at the first missing
/// block that does not fit. Needs nothing referenced in `kv` (before t = 0). Returns the blocks it left cached;
/// `hit` (may be null) receives how many of them were cached already (the rest, keys [hit, return), it computed:
/// what a host tier's write-through stores).
std::int64_t warm_request(KvBlockManager& kv, const std::uint64_t* keys, std::int64_t n, std::int64_t* hit = nullptr);

}  // namespace llmsim::engine
