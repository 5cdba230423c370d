#pragma once
// The lifecycle's KV invariant (DESIGN.md "The request lifecycle"; private to the engine): an engine's KV blocks in
// use are exactly what its requests hold — each request's own blocks, plus every shared block (a named prefix, a
// hashed block) that at least one of them references, counted once — and a request that is free or done holds none.
// A block nobody holds is back in the pool, or in the prefix cache as free (evictable): at the end of a complete run
// every engine's count of blocks in use is 0.
//
// Checked by Simulation::check_holdings (kv_holdings.cpp) where LLMSIM_DEEP_CHECK is on (debug and sanitizer builds):
// every few hundred events, and at the end of the run. O(requests in flight) per check, so never in Release's loop;
// the check itself is ordinary code (tests call it on a broken state), only its calls are compiled out.
#include <cstdint>
#include <vector>

#include "llmsim/engine/kv_block_manager.hpp"

namespace llmsim::engine::detail {

/// What one engine's requests hold, as they see it.
struct KvHoldings {
  std::int64_t own = 0;                 ///< blocks private to requests (Σ over requests)
  std::vector<std::uint64_t> prefixes;  ///< named shared prefixes referenced (one entry per reference)
  std::vector<std::uint64_t> blocks;    ///< hashed blocks referenced (one entry per reference)
  std::int64_t counted = 0;             ///< requests that count at this engine (routed, not finished, not handed off)
  std::int64_t window_credit = 0;       ///< pages its decoders' sliding groups freed (Replica::window_credit_of)
};

/// InternalError naming `engine` when `kv` does not match `held`: blocks in use != own + the distinct shared blocks
/// referenced, a referenced shared block that `kv` does not have referenced, or a window credit other than the
/// decoders' (kv_window.cpp). Sorts `held`'s key lists.
void check_kv_holdings(const KvBlockManager& kv, KvHoldings& held, std::int32_t engine);

}  // namespace llmsim::engine::detail
