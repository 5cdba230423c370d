// A replica's prefix cache (docs/engine.md "Prefix caching", "Sessions"): which of a request's tokens are already
// cached when it is admitted (a shared prompt prefix, a block-hash trace's or a session's chained block keys, the
// request's own blocks kept across a preemption, then the host tier), and the publishing of its computed full
// blocks as cached blocks. The admission and iteration loop that uses them is replica.cpp.
#include <algorithm>

#include "replica.hpp"

namespace llmsim::engine::detail {

// ---- block-hash traces ----
// The trace hashes the prompt per hash block of H tokens (Mooncake: 512); the engine's blocks are block_size B
// tokens. Engine block k holds tokens [kB, (k+1)B), which end inside hash block j = ((k+1)B − 1) / H: the chained
// hash up to j fixes every token before the block's end, so it names block k's content and prefix (as vLLM's
// parent-chained block hash does); the key adds k for the block's place inside hash block j. With B dividing H
// each hash block covers H/B engine blocks. Tokens shared inside a hash block whose id differs are not
// visible in the trace: those blocks count as misses (at most one hash block per request).

std::uint64_t Replica::block_key(const Seq& s, std::int64_t k) const {
  if (s.chain_blocks > 0) return s.chain[k];  // a session turn's keys, hashed once by its session (one per block)
  const std::int64_t j = ((k + 1) * kv_.block_size() - 1) / cfg_.hash_block_tokens;
  return KvBlockManager::block_key(s.chain[j], k);
}

KvBlockManager::ChainKeys Replica::chain_keys(const Seq& s) const {
  return {s.chain_blocks > 0 ? s.chain : nullptr, s.chain, kv_.block_size(), cfg_.hash_block_tokens};
}

std::int64_t Replica::hashed_hit(const Seq& s, std::int64_t max_blocks, std::int64_t* evictable) const {
  // vLLM's find_longest_cache_hit walks from the first block and stops at the first one not cached; the cache walks
  // the chain's segments, not its blocks (kv_block_chains.cpp).
  const std::int64_t limit = std::min(max_blocks, s.input / kv_.block_size());  // blocks with a key: prompt only
  std::int64_t referenced = 0;
  const std::int64_t cached = kv_.chain_cached(chain_keys(s), limit, &referenced);
  *evictable = cached - referenced;
  return cached;
}

void Replica::publish_blocks(Seq& s) {
  // vLLM V1 caches a request's full blocks as it allocates them for the tokens scheduled (allocate_slots ->
  // cache_blocks), so a request admitted after it in the same step already hits them. Prompt blocks only: the
  // trace has no hash for generated tokens.
  s.own_blocks = publish_through(s, std::min(s.prefilled, s.input) / kv_.block_size(), s.own_blocks);
}

std::int64_t Replica::publish_reply(Seq& s, std::int64_t own) {
  // A finished session turn: vLLM V1 caches every full block it computed, the reply's too (allocate_slots ->
  // cache_blocks), and frees them into the LRU queue. The reply's last token was sampled, never fed back: its KV
  // does not exist. Blocks past the chain (which covers prompt + reply) have no key.
  const std::int64_t bs = kv_.block_size();
  const std::int64_t per_hash = std::max<std::int64_t>(1, cfg_.hash_block_tokens / bs);
  const std::int64_t keyed = static_cast<std::int64_t>(s.chain_blocks) * per_hash;
  return publish_through(s, std::min(std::min(s.input + s.output - 1, s.input + s.generated) / bs, keyed), own);
}

std::int64_t Replica::publish_through(Seq& s, std::int64_t full, std::int64_t own) {
  if (s.prefix_blocks >= full || own <= 0) return own;
  const std::int64_t from = s.prefix_blocks;
  const std::int64_t n = kv_.publish_chain(chain_keys(s), from, std::min(full, from + own), &s.chain_tip);
  if (host_.enabled())
    for (std::int64_t k = from; k < from + n; ++k) host_store(block_key(s, k));  // write-through to the host tier
  s.prefix_blocks += n;
  return own - n;
}

std::int64_t Replica::cached_tokens(const Seq& s, std::int64_t* prefix_blocks, std::int64_t* own_blocks,
                                    std::int64_t* shared_cost, std::int64_t* host_blocks) const {
  *prefix_blocks = *own_blocks = *shared_cost = 0;
  if (host_blocks) *host_blocks = 0;
  if (s.remote_tokens > 0) return s.remote_tokens;  // disaggregation: the KV came over the link (own blocks)
  if (!cfg_.prefix_caching) return 0;
  const std::int64_t bs = kv_.block_size();
  // A hit is whole blocks and never covers the prompt's last token: its logits must be computed.
  // A hybrid model's hit is whole blocks of vLLM's raised block size (g of llmsim's blocks; 1 for others).
  const std::int64_t g = cfg_.prefix_granule_blocks;
  const std::int64_t max_blocks = (s.prefill_target - 1) / bs, hit_max = max_blocks / g * g;
  std::int64_t chain = 0;  // cached blocks from the start of the sequence
  bool unbroken = true;
  if (s.chain) {
    chain = *prefix_blocks = hashed_hit(s, hit_max, shared_cost);
    if (g > 1 && chain % g != 0) chain = *prefix_blocks = hashed_hit(s, chain / g * g, shared_cost);
    unbroken = chain == s.cached_after;  // the own entry continues the blocks it held when preempted
  } else if (s.prefix_len > 0 && s.prefix_len <= max_blocks) {
    *prefix_blocks = s.prefix_len;  // referenced whole; its resident part is the hit
    *shared_cost = kv_.prefix_cost(s.prefix_key, s.prefix_len);
    // (A hybrid model's hit: the resident part's whole hybrid blocks.)
    chain = std::min(kv_.prefix_resident(s.prefix_key), s.prefix_len) / g * g;
    unbroken = chain == s.prefix_len;  // blocks after an evicted one cannot be matched (chained hashes)
  }
  if (unbroken && s.cache_handle >= 0) {
    const std::int64_t own = std::min(kv_.entry_resident(s.cache_handle), max_blocks - chain);
    *own_blocks = std::max<std::int64_t>(0, (chain + own) / g * g - chain);
    chain += *own_blocks;
  }
  // The host tier continues a hashed GPU hit (vLLM's connector looks up the blocks after the GPU's computed ones).
  if (s.chain && *own_blocks == 0 && host_.enabled()) {
    const std::int64_t loaded =
        std::max<std::int64_t>(0, (chain + host_hit(s, chain, std::min(max_blocks, s.input / bs))) / g * g - chain);
    if (host_blocks) *host_blocks = loaded;
    chain += loaded;
  }
  return chain * bs;
}

}  // namespace llmsim::engine::detail
