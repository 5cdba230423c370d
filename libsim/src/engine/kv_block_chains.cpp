// KvBlockManager's blocks cached by content hash, run-length (kv_block_manager.hpp, docs/engine.md "Sessions"):
// vLLM V1's block-by-block prefix cache (one free-queue entry per block, vllm/v1/core/block_pool.py) kept as chain
// segments and runs, with the same outcome.
//
// Why runs suffice. A sequence references blocks [0, n) of its chain, publishes the blocks it computes in order and
// releases deepest first; keys are chained (equal keys at block k mean equal blocks 0..k). So (1) the cached blocks
// of any chain are a prefix of it, and every cached key sits in one place: a segment holds the keys of one chain
// from `base` to its end, all cached, and a sequence's path enters each segment at its base (found by the index of
// first keys) and leaves it at its end or where the two chains part; (2) a path takes a prefix of each segment, so
// acquiring splits a run at most once, at the path's end in it; (3) the blocks a release frees are pushed to the
// LRU tail as runs, deepest first, each run's blocks in the order vLLM frees them, and a run freed right after the
// run that continues it merges with it; (4) the least recently freed block is always the deepest cached block of
// its segment, so eviction shortens the segment's last run. A session's turn thus touches a handful of runs however
// long its history. tests/engine/test_kv_chains.cpp checks every state against a block-by-block model.
#include <algorithm>

#include "llmsim/core/error.hpp"
#include "llmsim/engine/kv_block_manager.hpp"

namespace llmsim::engine {

// ---- segments and runs ----

std::int32_t KvBlockManager::new_segment(std::int64_t base, std::int32_t parent) {
  std::int32_t g;
  if (!free_chains_.empty()) {
    g = free_chains_.back();
    free_chains_.pop_back();
  } else {
    g = static_cast<std::int32_t>(chains_.size());
    chains_.emplace_back();
  }
  Segment& seg = chains_[static_cast<std::size_t>(g)];
  seg.base = base;
  seg.parent = parent;
  seg.children = 0;
  seg.fork = std::numeric_limits<std::int64_t>::max();
  if (parent >= 0) {
    Segment& up = chains_[static_cast<std::size_t>(parent)];
    ++up.children;
    up.fork = std::min(up.fork, base);
  }
  return g;
}

std::size_t KvBlockManager::run_at(const Segment& g, std::int64_t k) const {
  // The last run starting at or before k (runs partition the segment in order).
  std::size_t lo = 0, hi = g.runs.size();
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    if (entries_[static_cast<std::size_t>(g.runs[mid])].lo <= k) lo = mid;
    else hi = mid;
  }
  return lo;
}

std::int32_t KvBlockManager::split_run(std::int32_t id, std::int64_t at) {
  // [lo, hi) becomes [lo, at) (this entry) and [at, hi) (a new one, next in the segment). In the LRU queue the
  // deeper part comes first (blocks are freed deepest first), so the new entry goes right before this one.
  const std::int32_t d = new_entry();
  Entry& e = entries_[static_cast<std::size_t>(id)];
  Entry& n = entries_[static_cast<std::size_t>(d)];
  n.hashed = true;
  n.chain = e.chain;
  n.lo = at;
  n.resident = e.lo + e.resident - at;
  n.refs = e.refs;
  e.resident = at - e.lo;
  if (e.in_lru) {
    n.lru_prev = e.lru_prev;
    n.lru_next = id;
    if (e.lru_prev >= 0) entries_[static_cast<std::size_t>(e.lru_prev)].lru_next = d;
    else lru_head_ = d;
    e.lru_prev = d;
    n.in_lru = true;
  }
  Segment& g = chains_[static_cast<std::size_t>(e.chain)];
  g.runs.insert(g.runs.begin() + static_cast<std::ptrdiff_t>(run_at(g, e.lo) + 1), d);
  return d;
}

void KvBlockManager::push_run(std::int32_t id) {
  // Freed after the run that continues it (its deeper neighbour, now the LRU tail): one run, deepest blocks first.
  Entry& e = entries_[static_cast<std::size_t>(id)];
  const std::int32_t t = lru_tail_;
  if (t >= 0) {
    const Entry& deeper = entries_[static_cast<std::size_t>(t)];
    if (deeper.hashed && deeper.chain == e.chain && deeper.lo == e.lo + e.resident) {
      e.resident += deeper.resident;
      Segment& g = chains_[static_cast<std::size_t>(e.chain)];
      g.runs.erase(g.runs.begin() + static_cast<std::ptrdiff_t>(run_at(g, deeper.lo)));
      lru_remove(t);
      drop_entry(t);
    }
  }
  lru_push(id);
}

void KvBlockManager::evict_run(std::int32_t id, std::int64_t take) {
  Entry& e = entries_[static_cast<std::size_t>(id)];
  Segment& g = chains_[static_cast<std::size_t>(e.chain)];
  LLMSIM_CHECK(!g.runs.empty() && g.runs.back() == id, "evicting cached blocks whose deeper blocks stay cached");
  const bool emptied = take == e.resident && g.runs.size() == 1;
  const std::uint64_t first_key = emptied ? g.keys.front() : 0;  // read only when needed (a cold line)
  e.resident -= take;
  cached_unreferenced_ -= take;
  g.keys.resize(static_cast<std::size_t>(e.lo + e.resident - g.base));
  if (e.resident > 0) return;
  lru_remove(id);
  g.runs.pop_back();
  drop_entry(id);
  if (!g.runs.empty()) return;
  // The segment is empty: its first key leaves the index; a long one gives its memory back.
  LLMSIM_CHECK(g.children == 0, "a chain segment evicted before the segments continuing it");
  hashed_.erase(first_key);
  if (g.parent >= 0) --chains_[static_cast<std::size_t>(g.parent)].children;
  if (g.keys.capacity() > 256) std::vector<std::uint64_t>().swap(g.keys);
  free_chains_.push_back(static_cast<std::int32_t>(&g - chains_.data()));
}

// ---- a sequence's path ----

std::int64_t KvBlockManager::match(const Segment& g, const ChainKeys& c, std::int64_t from, std::int64_t to) const {
  // Keys are chained, so the blocks [from, to) the chain shares with the segment are a prefix of them; block `from`
  // is shared (the walk entered the segment there). Mostly all are: test the last one first.
  const auto key = [&](std::int64_t k) { return g.keys[static_cast<std::size_t>(k - g.base)]; };
  if (to <= from || key(to - 1) == c.at(to - 1)) return std::max(from, to);
  // Chains part where others parted before (sessions sharing a system prompt part at its end): test there first.
  if (g.fork > from && g.fork < to && key(g.fork - 1) == c.at(g.fork - 1) && key(g.fork) != c.at(g.fork)) return g.fork;
  std::int64_t lo = from + 1, hi = to - 1;  // the first block not shared is in [lo, hi]
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (key(mid) == c.at(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

std::int64_t KvBlockManager::walk(const ChainKeys& c, std::int64_t limit) const {
  path_.clear();
  if (limit <= 0) return 0;
  std::int64_t k = 0;
  std::int32_t g = hashed_.find(c.at(0));
  while (g >= 0) {
    const Segment& seg = chains_[static_cast<std::size_t>(g)];
    LLMSIM_CHECK(seg.base == k, "a chain segment entered away from its first block");
    const std::int64_t end = seg.base + static_cast<std::int64_t>(seg.keys.size());
    const std::int64_t to = match(seg, c, k, std::min(end, limit));
    path_.push_back({g, k, to});
    k = to;
    // The next block, if cached, starts a segment continuing this one (where the two chains part, or at its end).
    if (k >= limit || seg.children == 0) break;
    g = hashed_.find(c.at(k));
  }
  return k;
}

bool KvBlockManager::holds(std::int32_t seg, const ChainKeys& c, std::int64_t k) const {
  if (seg < 0 || static_cast<std::size_t>(seg) >= chains_.size()) return false;
  const Segment& g = chains_[static_cast<std::size_t>(seg)];
  return k >= g.base && k < g.base + static_cast<std::int64_t>(g.keys.size()) &&
         g.keys[static_cast<std::size_t>(k - g.base)] == c.at(k);
}

void KvBlockManager::path_to(const ChainKeys& c, std::int64_t n, std::int32_t hint) {
  if (!holds(hint, c, n - 1)) {
    hint = path_.empty() ? -1 : path_.back().seg;  // the last walk's (an admission: chain_cached, then acquire)
    if (!holds(hint, c, n - 1)) {
      LLMSIM_CHECK(walk(c, n) == n, "blocks of a chain that are not cached");
      return;
    }
  }
  // The segment holding block n − 1 holds it for c (keys are unique and chained), and so do its parents for the
  // blocks before: no key to compare on the way.
  path_.clear();
  std::int64_t to = n;
  for (std::int32_t g = hint; g >= 0; g = chains_[static_cast<std::size_t>(g)].parent) {
    const std::int64_t base = chains_[static_cast<std::size_t>(g)].base;
    path_.push_back({g, base, to});
    to = base;
  }
  LLMSIM_CHECK(to == 0, "a chain segment's parents do not reach the first block");
  std::reverse(path_.begin(), path_.end());
}

std::int64_t KvBlockManager::chain_cached(const ChainKeys& c, std::int64_t limit, std::int64_t* referenced) const {
  const std::int64_t cached = walk(c, limit);
  *referenced = 0;
  for (const Stretch& p : path_) {
    for (const std::int32_t id : chains_[static_cast<std::size_t>(p.seg)].runs) {
      const Entry& e = entries_[static_cast<std::size_t>(id)];
      if (e.lo >= p.to) break;
      if (e.refs == 0) return cached;  // the referenced blocks are a prefix too
      *referenced += std::min(e.lo + e.resident, p.to) - e.lo;
    }
  }
  return cached;
}

std::int32_t KvBlockManager::acquire_chain(const ChainKeys& c, std::int64_t n) {
  if (n <= 0) return -1;
  path_to(c, n, -1);
  for (const Stretch& p : path_) {
    for (std::size_t i = 0; i < chains_[static_cast<std::size_t>(p.seg)].runs.size(); ++i) {
      const std::int32_t id = chains_[static_cast<std::size_t>(p.seg)].runs[i];
      if (entries_[static_cast<std::size_t>(id)].lo >= p.to) break;
      const Entry& before = entries_[static_cast<std::size_t>(id)];
      if (before.lo + before.resident > p.to) split_run(id, p.to);  // the rest is not on this path
      Entry& e = entries_[static_cast<std::size_t>(id)];
      if (e.refs++ == 0) {  // from the evictable pool to referenced blocks
        lru_remove(id);
        cached_unreferenced_ -= e.resident;
        used_ += e.resident;
        if (used_ > peak_used_) peak_used_ = used_;
      }
    }
  }
  return path_.back().seg;
}

void KvBlockManager::release_chain(const ChainKeys& c, std::int64_t n, std::int32_t tip) {
  if (n <= 0) return;
  path_to(c, n, tip);
  run_scratch_.clear();
  for (const Stretch& p : path_) {
    for (std::size_t i = 0; i < chains_[static_cast<std::size_t>(p.seg)].runs.size(); ++i) {
      const std::int32_t id = chains_[static_cast<std::size_t>(p.seg)].runs[i];
      if (entries_[static_cast<std::size_t>(id)].lo >= p.to) break;
      const Entry& e = entries_[static_cast<std::size_t>(id)];
      if (e.lo + e.resident > p.to) split_run(id, p.to);
      run_scratch_.push_back(id);
    }
  }
  // Deepest first, as vLLM frees a request's blocks: a prefix cut short by eviction keeps its first blocks.
  for (auto it = run_scratch_.rbegin(); it != run_scratch_.rend(); ++it) {
    Entry& e = entries_[static_cast<std::size_t>(*it)];
    LLMSIM_CHECK(e.refs > 0, "block released more often than acquired");
    if (--e.refs == 0) {
      used_ -= e.resident;
      cached_unreferenced_ += e.resident;
      push_run(*it);
    }
  }
}

std::int64_t KvBlockManager::publish_chain(const ChainKeys& c, std::int64_t from, std::int64_t to, std::int32_t* tip) {
  if (to <= from) return 0;
  std::int32_t g = -1;  // the segment holding block k − 1
  if (from > 0) {
    g = tip ? *tip : -1;
    if (!holds(g, c, from - 1)) {
      LLMSIM_CHECK(walk(c, from) == from, "publishing after blocks that are not cached");
      g = path_.back().seg;
    }
  }
  std::int64_t k = from;
  for (; k < to; ++k) {
    if (g >= 0) {  // The common case, a turn extending its own history: the caller's run grows by all the blocks.
      Segment& seg = chains_[static_cast<std::size_t>(g)];
      Entry& last = entries_[static_cast<std::size_t>(seg.runs.back())];
      if (seg.children == 0 && last.refs == 1 && seg.base + static_cast<std::int64_t>(seg.keys.size()) == k) {
        if (c.keys) seg.keys.insert(seg.keys.end(), c.keys + k, c.keys + to);
        else
          for (std::int64_t j = k; j < to; ++j) seg.keys.push_back(c.at(j));
        last.resident += to - k;
        k = to;
        break;
      }
    }
    const std::uint64_t key = c.at(k);
    bool start = g < 0;  // a new segment from k
    if (g >= 0) {
      const Segment& seg = chains_[static_cast<std::size_t>(g)];
      const std::int64_t end = seg.base + static_cast<std::int64_t>(seg.keys.size());
      if (end > k && seg.keys[static_cast<std::size_t>(k - seg.base)] == key) break;  // cached already
      start = end > k;  // the segment goes on with another chain: this one parts here
      // Cached as the first block of a segment continuing this one.
      if (seg.children > 0 && hashed_.find(key) >= 0) break;
    } else if (hashed_.find(key) >= 0) {
      break;
    }
    if (start) {
      const std::int32_t parent = g;
      g = new_segment(k, parent);
      hashed_.insert(key, g);
    }
    Segment& seg = chains_[static_cast<std::size_t>(g)];
    seg.keys.push_back(key);
    // The caller's blocks so far end here: its run grows while nobody else references it.
    if (!start && entries_[static_cast<std::size_t>(seg.runs.back())].refs == 1) {
      ++entries_[static_cast<std::size_t>(seg.runs.back())].resident;
      continue;
    }
    const std::int32_t id = new_entry();
    Entry& e = entries_[static_cast<std::size_t>(id)];
    e.hashed = true;
    e.chain = g;
    e.lo = k;
    e.resident = 1;
    e.refs = 1;  // the caller's block: used_ already counts it
    chains_[static_cast<std::size_t>(g)].runs.push_back(id);
  }
  if (tip && k > from) *tip = g;
  return k - from;
}

// ---- whole-cache views (tests, the lifecycle check) ----

int KvBlockManager::block_state(std::uint64_t key) const {
  for (const Segment& g : chains_) {
    for (const std::int32_t id : g.runs) {
      const Entry& e = entries_[static_cast<std::size_t>(id)];
      for (std::int64_t k = e.lo; k < e.lo + e.resident; ++k)
        if (g.keys[static_cast<std::size_t>(k - g.base)] == key) return e.refs > 0 ? 1 : 0;
    }
  }
  return -1;
}

void KvBlockManager::referenced_keys(std::vector<std::uint64_t>& out) const {
  for (const Segment& g : chains_) {
    for (const std::int32_t id : g.runs) {
      const Entry& e = entries_[static_cast<std::size_t>(id)];
      if (e.refs > 0)
        for (std::int64_t k = e.lo; k < e.lo + e.resident; ++k) out.push_back(g.keys[static_cast<std::size_t>(k - g.base)]);
    }
  }
}

}  // namespace llmsim::engine
