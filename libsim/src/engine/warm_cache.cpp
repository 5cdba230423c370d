// A warm prefix cache at t = 0 (llmsim/engine/warm_cache.hpp): the fill rule, the prompt identities a replayed trace
// without block hashes gets, the keys of each request's blocks, and the fill of the replicas before the first event.
#include "llmsim/engine/warm_cache.hpp"

#include <algorithm>
#include <vector>

#include "llmsim/core/error.hpp"
#include "replica.hpp"
#include "warm_cache_fill.hpp"
#include "workload_driver.hpp"

namespace llmsim::engine {

std::int64_t warm_request(KvBlockManager& kv, const std::uint64_t* keys, std::int64_t n, std::int64_t* hit_out) {
  LLMSIM_CHECK(kv.used() == 0, "a warm cache is filled before any request holds blocks");
  if (hit_out) *hit_out = 0;
  if (n <= 0) return 0;
  // As a request that ran: it references the cached prefix of its blocks, computes the rest into blocks it
  // allocates (as many as the pool holds beside its own), publishes them, and frees them all deepest first.
  KvBlockManager::ChainKeys c;
  c.keys = keys;
  std::int64_t referenced = 0;
  const std::int64_t hit = kv.chain_cached(c, n, &referenced);
  LLMSIM_CHECK(referenced == 0, "a warm cache is filled before any request holds blocks");
  if (hit_out) *hit_out = hit;
  std::int32_t tip = kv.acquire_chain(c, hit);
  const std::int64_t own = std::min(n - hit, kv.free());
  std::int64_t published = 0;
  if (own > 0) {
    kv.allocate(own);
    published = kv.publish_chain(c, hit, hit + own, &tip);
    if (published < own) kv.release(own - published);  // a key repeated in the request: nothing deeper is kept
  }
  const std::int64_t taken = hit + published;
  kv.release_chain(c, taken, tip);  // deepest first, as vLLM frees
  return taken;
}

namespace detail {

void give_prompt_hashes(Trace& trace, int block_size) {
  // One id per full prompt block, unique to its row: a re-sent prompt matches only its own earlier blocks (the rows
  // of a trace without hashes are different prompts; ShareGPT's share no prefix longer than a block or two).
  trace.hash_ids.clear();
  trace.hash_block_tokens = block_size;
  for (std::size_t r = 0; r < trace.rows.size(); ++r) {
    TraceRow& row = trace.rows[r];
    row.hash_begin = static_cast<std::int64_t>(trace.hash_ids.size());
    row.hash_count = static_cast<std::int32_t>(row.input_tokens / block_size);
    for (std::int32_t k = 0; k < row.hash_count; ++k)
      trace.hash_ids.push_back((static_cast<std::uint64_t>(r + 1) << 32) | static_cast<std::uint64_t>(k));
  }
}

void warm_keys(const std::uint64_t* chain, std::int32_t hash_count, int hash_block_tokens, std::int64_t input,
               std::int64_t output, std::uint64_t row, int block_size, std::vector<std::uint64_t>& keys) {
  keys.clear();
  const std::int64_t bs = block_size;
  // Prompt blocks whose tokens the trace's hashes cover (Replica::block_key: block k ends inside hash block j).
  const std::int64_t hashed = chain && hash_block_tokens > 0
                                  ? std::min(input / bs, static_cast<std::int64_t>(hash_count) * hash_block_tokens / bs)
                                  : 0;
  for (std::int64_t k = 0; k < hashed; ++k)
    keys.push_back(KvBlockManager::block_key(chain[((k + 1) * bs - 1) / hash_block_tokens], k));
  if (hashed < input / bs) return;  // an unhashed prompt block: nothing after it can be matched or kept apart
  // The reply's full blocks: its last token was sampled, never fed back, so input + output − 1 tokens have KV. Their
  // content is the row's own (keyed by the row and the prompt's last hash): they take room, no later prompt hits them.
  const std::uint64_t reply = KvBlockManager::chain_hash(hashed > 0 ? chain[((hashed * bs) - 1) / hash_block_tokens] : 0,
                                                         0x7E9A11ULL + row);
  for (std::int64_t k = hashed; k < (input + output - 1) / bs; ++k) keys.push_back(KvBlockManager::block_key(reply, k));
}

}  // namespace detail
}  // namespace llmsim::engine

namespace llmsim::engine::detail {

void warm_engines(const WorkloadDriver& driver, std::int64_t requests, std::vector<Replica>& engines, std::size_t count) {
  const Trace& trace = driver.trace();
  LLMSIM_CHECK(count >= 1 && count <= engines.size(), "warm cache: no engine to fill");
  const auto rows = std::min<std::size_t>(trace.rows.size(), static_cast<std::size_t>(std::max<std::int64_t>(0, requests)));
  std::vector<std::uint64_t> keys;
  for (std::size_t r = 0; r < rows; ++r) {
    const TraceRow& row = trace.rows[r];
    Replica& engine = engines[r % count];
    warm_keys(driver.row_chain(row), row.hash_count, trace.hash_block_tokens, row.input_tokens, row.output_tokens,
              static_cast<std::uint64_t>(r), engine.kv().block_size(), keys);
    const auto n = static_cast<std::int64_t>(keys.size());
    engine.warm(keys.data(), n, std::min<std::int64_t>(n, row.input_tokens / engine.kv().block_size()));
  }
}

}  // namespace llmsim::engine::detail
