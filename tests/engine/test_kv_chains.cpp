// The KV cache's run-length hashed blocks (engine/kv_block_chains.cpp) against a block-by-block model of vLLM V1's
// free-block queue (one queue entry per block, freed deepest first, evicted least recently freed first), with the
// other cached entries (a preempted request's own blocks) in the same queue: every block's state, the counts, the
// hit lengths and the handles agree after every step of random runs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <list>
#include <map>
#include <random>

#include "llmsim/engine/kv_block_manager.hpp"

using llmsim::engine::KvBlockManager;

namespace {

// One queue entry per hashed block; a preempted request's blocks are one entry, evicted from its end.
class BlockModel {
 public:
  explicit BlockModel(std::int64_t capacity) : capacity_(capacity) {}
  std::int64_t used() const { return used_; }
  std::int64_t cached_free() const { return cached_; }
  int state(std::uint64_t key) const {
    const auto it = blocks_.find(key);
    return it == blocks_.end() ? -1 : it->second.refs > 0 ? 1 : 0;
  }
  std::int64_t cached(const std::vector<std::uint64_t>& c, std::int64_t limit, std::int64_t* referenced) const {
    std::int64_t k = 0;
    while (k < limit && state(c[static_cast<std::size_t>(k)]) >= 0) ++k;
    *referenced = 0;
    while (*referenced < k && state(c[static_cast<std::size_t>(*referenced)]) == 1) ++*referenced;
    return k;
  }
  void allocate(std::int64_t n) {
    while (capacity_ - used_ - cached_ < n) {
      Item& head = queue_.front();
      const std::int64_t take = std::min(head.resident, n - (capacity_ - used_ - cached_));
      head.resident -= take;
      cached_ -= take;
      if (head.resident > 0) continue;
      if (head.hashed) blocks_.erase(head.key);
      else handles_.erase(head.handle);
      queue_.pop_front();
    }
    used_ += n;
  }
  void release(std::int64_t n) { used_ -= n; }
  void acquire(const std::vector<std::uint64_t>& c, std::int64_t n) {
    for (std::int64_t k = 0; k < n; ++k) {
      Block& b = blocks_.at(c[static_cast<std::size_t>(k)]);
      if (b.refs++ == 0) {
        queue_.erase(b.at);
        --cached_;
        ++used_;
      }
    }
  }
  std::int64_t publish(const std::vector<std::uint64_t>& c, std::int64_t from, std::int64_t to) {
    std::int64_t k = from;
    for (; k < to && !blocks_.count(c[static_cast<std::size_t>(k)]); ++k) blocks_[c[static_cast<std::size_t>(k)]].refs = 1;
    return k - from;
  }
  void release_chain(const std::vector<std::uint64_t>& c, std::int64_t n) {
    for (std::int64_t k = n - 1; k >= 0; --k) {
      const std::uint64_t key = c[static_cast<std::size_t>(k)];
      Block& b = blocks_.at(key);
      if (--b.refs == 0) {
        b.at = queue_.insert(queue_.end(), Item{true, key, -1, 1});
        --used_;
        ++cached_;
      }
    }
  }
  std::int64_t cache_released(std::int64_t n) {
    const std::int64_t h = next_handle_++;
    handles_[h] = queue_.insert(queue_.end(), Item{false, 0, h, n});
    used_ -= n;
    cached_ += n;
    return h;
  }
  std::int64_t resident(std::int64_t h) const {
    const auto it = handles_.find(h);
    return it == handles_.end() ? 0 : it->second->resident;
  }
  std::int64_t reclaim(std::int64_t h, std::int64_t want) {
    const auto it = handles_.find(h);
    if (it == handles_.end()) return 0;
    const std::int64_t take = std::clamp<std::int64_t>(want, 0, it->second->resident);
    cached_ -= it->second->resident;
    used_ += take;
    queue_.erase(it->second);
    handles_.erase(it);
    return take;
  }

 private:
  struct Item {
    bool hashed;
    std::uint64_t key;
    std::int64_t handle, resident;
  };
  struct Block {
    int refs = 0;
    std::list<Item>::iterator at;
  };
  std::int64_t capacity_, used_ = 0, cached_ = 0, next_handle_ = 0;
  std::list<Item> queue_;
  std::map<std::uint64_t, Block> blocks_;
  std::map<std::int64_t, std::list<Item>::iterator> handles_;
};

// Chains as a tree: chain c copies a prefix of an earlier chain and adds blocks of its own (a system prompt shared
// by sessions, a turn extending the previous turn, a truncated history parting early). Keys are chained: equal at
// block k means equal before it.
std::vector<std::vector<std::uint64_t>> chain_tree(std::mt19937_64& rng, int count, int max_len) {
  std::vector<std::vector<std::uint64_t>> chains;
  std::uint64_t node = 1;
  for (int c = 0; c < count; ++c) {
    std::vector<std::uint64_t> ch;
    if (c > 0 && rng() % 4 != 0) {
      const auto& parent = chains[rng() % chains.size()];
      ch.assign(parent.begin(), parent.begin() + static_cast<std::ptrdiff_t>(rng() % (parent.size() + 1)));
    }
    const std::size_t len = 1 + rng() % static_cast<std::uint64_t>(max_len);
    while (ch.size() < len) {
      const auto k = static_cast<std::int64_t>(ch.size());
      ch.push_back(KvBlockManager::block_key(KvBlockManager::chain_hash(ch.empty() ? 0 : ch.back(), node++), k));
    }
    chains.push_back(std::move(ch));
  }
  return chains;
}

void random_run(std::uint64_t seed, std::int64_t capacity, int n_chains, int max_len, int max_held, int steps) {
  std::mt19937_64 rng(seed);
  const auto chains = chain_tree(rng, n_chains, max_len);
  KvBlockManager kv(capacity, 16, 0.0, 0);
  BlockModel model(capacity);
  struct Held {
    int chain;
    std::int64_t published, own;
    std::int32_t tip;  // the segment holding its last block, as the replica keeps it (a hint the cache checks)
  };
  struct Kept {  // a preempted request's own blocks: the cache's handle and the model's
    std::int64_t handle, model, blocks;
  };
  std::vector<Held> held;
  std::vector<Kept> kept;
  std::int64_t hits = 0, evicted = 0, max_entries = 0, max_segments = 0;
  for (int step = 0; step < steps; ++step) {
    const auto op = rng() % 8;
    if (op < 3 && static_cast<int>(held.size()) < max_held) {  // admit: hit, allocate the rest, publish
      const int c = static_cast<int>(rng() % chains.size());
      const auto& ch = chains[static_cast<std::size_t>(c)];
      const KvBlockManager::ChainKeys keys{ch.data()};
      const auto n = 1 + static_cast<std::int64_t>(rng() % ch.size());
      std::int64_t ref = -1, model_ref = -1;
      const std::int64_t h = kv.chain_cached(keys, n, &ref);
      REQUIRE(h == model.cached(ch, n, &model_ref));
      REQUIRE(ref == model_ref);
      if (!kv.can_grow(n - ref)) continue;
      std::int32_t tip = kv.acquire_chain(keys, h);
      model.acquire(ch, h);
      kv.allocate(n - h);
      model.allocate(n - h);
      const bool publish = rng() % 4 != 0;  // some never publish (what a preempted request computed is its own)
      if (rng() % 4 == 0) tip = static_cast<std::int32_t>(rng() % 40) - 1;  // a stale hint: found by a walk
      const std::int64_t p = publish ? h + kv.publish_chain(keys, h, n, &tip) : h;
      if (publish) REQUIRE(model.publish(ch, h, n) == p - h);
      held.push_back({c, p, n - p, tip});
      hits += h;
    } else if (op < 6 && !held.empty()) {  // finish, or (op 5) preempt keeping its own blocks cached
      const std::size_t at = rng() % held.size();
      const Held x = held[at];
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(at));
      if (op == 5 && x.own > 0) {
        kept.push_back({kv.cache_released(x.own), model.cache_released(x.own), x.own});
      } else {
        kv.release(x.own);
        model.release(x.own);
      }
      const auto& ch = chains[static_cast<std::size_t>(x.chain)];
      kv.release_chain(KvBlockManager::ChainKeys{ch.data()}, x.published, rng() % 4 == 0 ? -1 : x.tip);
      model.release_chain(ch, x.published);
    } else if (op == 6 && !kept.empty()) {  // a preempted request comes back for what is left of its blocks
      const std::size_t at = rng() % kept.size();
      const Kept k = kept[at];
      kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(at));
      const auto want = static_cast<std::int64_t>(rng() % 6);
      evicted += kv.entry_resident(k.handle) < k.blocks;
      const std::int64_t taken = kv.reclaim(k.handle, want);
      REQUIRE(taken == model.reclaim(k.model, want));
      kv.release(taken);
      model.release(taken);
    } else if (op == 7) {  // other requests' blocks come and go (pressure on the queue)
      const auto n = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(capacity / 3 + 1));
      if (kv.can_grow(n)) {
        kv.allocate(n);
        model.allocate(n);
        kv.release(n);
        model.release(n);
      }
    }
    REQUIRE(kv.used() == model.used());
    REQUIRE(kv.cached_free() == model.cached_free());
    // Every block of every chain, every step; the assertion is reached only by a block that differs, since a Catch
    // assertion per passing block (9 million of them at -O0) was most of this test's time (issue 30).
    for (const auto& ch : chains)
      for (const auto key : ch)
        if (kv.block_state(key) != model.state(key)) REQUIRE(kv.block_state(key) == model.state(key));
    for (const Kept& k : kept)
      if (kv.entry_resident(k.handle) != model.resident(k.model))
        REQUIRE(kv.entry_resident(k.handle) == model.resident(k.model));
    // Memory: an entry per run and per kept request, a segment per chain stretch — never more than the blocks.
    REQUIRE(static_cast<std::int64_t>(kv.chain_segments()) <= kv.cached_free() + kv.used());
    REQUIRE(static_cast<std::int64_t>(kv.cache_entries()) <= kv.cached_free() + kv.used());
    max_entries = std::max<std::int64_t>(max_entries, static_cast<std::int64_t>(kv.cache_entries()));
    max_segments = std::max<std::int64_t>(max_segments, static_cast<std::int64_t>(kv.chain_segments()));
  }
  // The runs exercised what they are for: hits, evictions of kept blocks, several segments at once.
  CHECK(hits > 100);
  CHECK(evicted > 0);
  CHECK(max_segments > 2);
  CHECK(max_entries > 2);
}

}  // namespace

TEST_CASE("KV chains: run-length hashed blocks behave block by block as vLLM's free queue", "[kv_chains]") {
  SECTION("tight cache, short chains") { random_run(1, 24, 12, 10, 3, 20000); }
  SECTION("sessions' shape: long chains extending each other, many holders") { random_run(2, 160, 30, 60, 8, 10000); }
  SECTION("more holders: long-lived runs split and merged") { random_run(3, 200, 20, 40, 12, 8000); }
}

TEST_CASE("KV chains: a released history is one run; eviction shortens it from its deep end", "[kv_chains]") {
  std::vector<std::uint64_t> ch;
  for (std::uint64_t k = 0; k < 40; ++k) ch.push_back(KvBlockManager::block_key(KvBlockManager::chain_hash(k, k + 1), static_cast<std::int64_t>(k)));
  const KvBlockManager::ChainKeys keys{ch.data()};
  KvBlockManager kv(64, 16, 0.0, 0);
  kv.allocate(30);
  REQUIRE(kv.publish_chain(keys, 0, 30) == 30);
  CHECK(kv.cache_entries() == 1);  // thirty blocks, one run
  CHECK(kv.chain_segments() == 1);
  kv.release_chain(keys, 30);
  // The next turn: hits the 30, computes 10 more and publishes them on the same segment.
  std::int64_t ref = -1;
  REQUIRE(kv.chain_cached(keys, 40, &ref) == 30);
  CHECK(ref == 0);
  kv.acquire_chain(keys, 30);
  kv.allocate(10);
  REQUIRE(kv.publish_chain(keys, 30, 40) == 10);
  CHECK(kv.cache_entries() == 1);
  kv.release_chain(keys, 40);
  CHECK(kv.cached_free() == 40);
  kv.allocate(64 - 40 + 5);  // 5 evicted: blocks 39..35
  CHECK(kv.chain_cached(keys, 40, &ref) == 35);
  CHECK(kv.block_state(ch[34]) == 0);
  CHECK(kv.block_state(ch[35]) == -1);
  CHECK(kv.cache_entries() == 1);
  kv.release(64 - 40 + 5);
  kv.allocate(64);  // everything: the segment goes, and with it its index entry
  CHECK(kv.chain_segments() == 0);
  CHECK(kv.cache_entries() == 0);
  CHECK(kv.chain_cached(keys, 40, &ref) == 0);
}
