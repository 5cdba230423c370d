// The lifecycle's KV invariant (kv_holdings.hpp): the comparison, each replica's view of a request's blocks, and the
// Simulation's walk over every request in flight.
#include "kv_holdings.hpp"

#include <algorithm>
#include <string>

#include "llmsim/core/error.hpp"
#include "disaggregation.hpp"
#include "request_lifecycle.hpp"
#include "simulation.hpp"

namespace llmsim::engine::detail {

void check_kv_holdings(const KvBlockManager& kv, KvHoldings& held, std::int32_t engine) {
  const std::string at = "KV blocks of engine " + std::to_string(engine) + ": ";
  std::int64_t shared = 0;
  std::sort(held.prefixes.begin(), held.prefixes.end());
  for (std::size_t k = 0; k < held.prefixes.size(); ++k) {
    if (k > 0 && held.prefixes[k] == held.prefixes[k - 1]) continue;
    const std::int64_t resident = kv.prefix_resident(held.prefixes[k]);
    if (resident <= 0 || kv.prefix_cost(held.prefixes[k], resident) != 0)
      throw InternalError(at + "a request references a shared prefix the cache does not hold referenced");
    shared += resident;
  }
  std::sort(held.blocks.begin(), held.blocks.end());
  std::vector<std::uint64_t> referenced;
  if (!held.blocks.empty()) kv.referenced_keys(referenced);
  std::sort(referenced.begin(), referenced.end());
  for (std::size_t k = 0; k < held.blocks.size(); ++k) {
    if (k > 0 && held.blocks[k] == held.blocks[k - 1]) continue;
    if (!std::binary_search(referenced.begin(), referenced.end(), held.blocks[k]))
      throw InternalError(at + "a request references a cached block the cache does not hold referenced");
    ++shared;
  }
  if (kv.used() != held.own + shared)
    throw InternalError(at + std::to_string(kv.used()) + " in use, but its requests hold " + std::to_string(held.own) +
                        " own + " + std::to_string(shared) + " shared (a block leaked, or was freed twice)");
  if (kv.window_credit() != held.window_credit)
    throw InternalError(at + std::to_string(kv.window_credit()) + " sliding-window pages credited, but its decoders " +
                        "freed " + std::to_string(held.window_credit));
}

void Replica::add_holding(const Seq& s, std::int64_t own, std::int64_t prefix, KvHoldings& out) const {
  out.own += own;
  if (prefix <= 0) return;
  if (s.chain) {
    for (std::int64_t k = 0; k < prefix; ++k) out.blocks.push_back(block_key(s, k));
  } else {
    out.prefixes.push_back(s.prefix_key);
  }
}

void Replica::add_holding(const Seq& s, KvHoldings& out) const {
  // Swapped: its own blocks are on the host (no shared ones: swap needs the whole KV private).
  if (s.state == SeqState::swapped) {
    LLMSIM_CHECK(s.prefix_blocks == 0, "a swapped request references shared blocks");
  } else {
    add_holding(s, s.state == SeqState::decoding ? decoding_own_blocks(s) : s.own_blocks, s.prefix_blocks, out);
  }
  if (windowed() && s.state == SeqState::decoding) out.window_credit += window_credit_of(s);
  if (!s.finished && s.state != SeqState::handoff) ++out.counted;
}

void Simulation::check_holdings() const {
  if (synthetic_) return;  // no KV cache
  std::vector<KvHoldings> held(replicas_.size());
  std::size_t pulls_held = 0;
  for (std::size_t k = 0; k < pool_.capacity(); ++k) {
    const Seq& s = pool_[static_cast<std::int32_t>(k)];
    if (s.state == SeqState::free || s.state == SeqState::done) {
      LLMSIM_CHECK(s.own_blocks == 0 && s.prefix_blocks == 0, "a request that is free or done holds KV blocks");
      continue;
    }
    if (s.engine < 0) {  // pending at the router (no replica ready), or rendering on an API server's loop
      LLMSIM_CHECK(s.state == SeqState::waiting && s.own_blocks == 0 && s.prefix_blocks == 0,
                   "a request no engine holds is not a waiting one without blocks");
      continue;
    }
    const auto e = static_cast<std::size_t>(s.engine);
    replicas_[e].add_holding(s, held[e]);
    // Pull: the prefill replica still holds the KV of a request queued at, or reading into, a decode replica.
    if (disagg_ && (s.kv_pending || s.state == SeqState::receiving)) {
      const HeldKv* h = disagg_->find_held(static_cast<std::int32_t>(k));
      LLMSIM_CHECK(h != nullptr, "a request reading its KV whose prefill blocks nobody holds");
      const auto from = static_cast<std::size_t>(s.kv_source);
      replicas_[from].add_holding(s, h->own, h->prefix, held[from]);
      ++pulls_held;
    }
  }
  LLMSIM_CHECK(!disagg_ || pulls_held == disagg_->held_count(), "the prefill pool holds the KV of a request not reading it");
  // A request rendering on its replica's API server loop (the chat render barrier) counts at the engine it will join.
  for (const auto& loop : api_loops_)
    loop.each([&](std::int32_t, std::int32_t e) { ++held[static_cast<std::size_t>(e)].counted; });
  for (std::size_t r = 0; r < replicas_.size(); ++r) {
    held[r].own += replicas_[r].state_blocks_held();  // the running list's linear-attention states
    check_kv_holdings(replicas_[r].kv(), held[r], static_cast<std::int32_t>(r));
    if (held[r].counted != replicas_[r].outstanding())
      throw InternalError("engine " + std::to_string(r) + " counts " + std::to_string(replicas_[r].outstanding()) +
                          " requests, but " + std::to_string(held[r].counted) + " unfinished ones are routed to it");
  }
}

}  // namespace llmsim::engine::detail
