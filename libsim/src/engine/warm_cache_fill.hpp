#pragma once
// The warm prefix cache's engine side (private; llmsim/engine/warm_cache.hpp has the fill rule): a replayed trace
// without block hashes gets one identity per prompt block, and before the first event each engine's cache is filled
// with the requests the earlier run sent it.
#include <cstdint>
#include <vector>

#include "llmsim/engine/workload_source.hpp"

namespace llmsim::engine::detail {

class Replica;
class WorkloadDriver;

/// Gives every row of `trace` (which has no hash ids) one id per full prompt block of `block_size` tokens, unique to
/// the row, and sets hash_block_tokens to `block_size`.
void give_prompt_hashes(Trace& trace, int block_size);

/// The keys of the blocks a request left cached, shallowest first, into `keys`: its prompt's full blocks named as
/// Replica::block_key names them (`chain`: the row's chained hashes, `hash_count` of them, `hash_block_tokens` tokens
/// each), then the full blocks of its reply (input + output − 1 tokens have KV), keyed by the row.
void warm_keys(const std::uint64_t* chain, std::int32_t hash_count, int hash_block_tokens, std::int64_t input,
               std::int64_t output, std::uint64_t row, int block_size, std::vector<std::uint64_t>& keys);

/// Fills the caches of `engines` (the first `count` of them) with the first `requests` rows of the driver's trace, in
/// the trace's order, row i on engine i mod count (the earlier run's requests spread evenly). The driver's trace must
/// carry hashes (give_prompt_hashes).
void warm_engines(const WorkloadDriver& driver, std::int64_t requests, std::vector<Replica>& engines, std::size_t count);

}  // namespace llmsim::engine::detail
