// A replica's use of its host KV tier (engine/kv_host_tier.hpp; docs/engine.md "Host KV tier"): which blocks an
// admission loads from the host instead of recomputing, what the load costs, and the recency the lookup leaves.
//
// The rule (llmsim's, stated): a run of n blocks that follows the GPU hit and that the tier holds is loaded when
// copying it, host_transfer_time(n × block bytes per GPU), takes less than the cost model's time for a step that
// prefills only those n·B tokens after the cached context; otherwise they are recomputed. vLLM's connector always
// loads (it never compares); the rule changes the outcome only where the copy is slower than the compute — a small
// model on a slow link — and a 7B–70B model on PCIe 4 loads by one to two orders of magnitude.
//
// The time: vLLM loads asynchronously (the request waits in WAITING_FOR_REMOTE_KVS while other requests' steps run,
// the copy on its own CUDA stream) and schedules the request once its blocks have arrived. llmsim adds the copy to
// the step that admits the request, as it does a swap-in: the request waits for its blocks the same time, and the
// step's other requests wait with it (at most the copy time, milliseconds for thousands of tokens on PCIe 4).
#include "replica.hpp"

#include <algorithm>

namespace llmsim::engine::detail {

namespace {
/// Length of the run of `s`'s blocks from `first` (before `limit`) that `host` holds.
template <class KeyOf>
std::int64_t host_run(const KvHostTier& host, std::int64_t first, std::int64_t limit, KeyOf key_of) {
  std::int64_t k = first;
  while (k < limit && host.contains(key_of(k))) ++k;
  return k - first;
}
}  // namespace

std::int64_t Replica::host_hit(const Seq& s, std::int64_t first, std::int64_t limit) const {
  const std::int64_t n = host_run(host_, first, limit, [&](std::int64_t k) { return block_key(s, k); });
  if (n == 0) return 0;
  const std::int64_t bs = kv_.block_size();
  const double load_s = cost_->host_transfer_time(static_cast<double>(n) * cfg_.block_bytes);
  perf::BatchShape recompute;
  recompute.add_prefill(n * bs, first * bs, false);
  return load_s < cost_->iteration_time(recompute) ? n : 0;
}

void Replica::host_admitted(const Seq& s, std::int64_t first, std::int64_t loaded_blocks, bool consulted) {
  const std::int64_t bs = kv_.block_size();
  if (loaded_blocks > 0) {
    load_bytes_ += static_cast<double>(loaded_blocks) * cfg_.block_bytes;
    work_.host_load_bytes += static_cast<double>(loaded_blocks) * cfg_.replica_block_bytes;
    if (s.measured) work_.host_hit_tokens += static_cast<double>(loaded_blocks * bs);
  } else if (s.measured && consulted) {
    // Held but not loaded: the rule chose to recompute them (the limit as cached_tokens': never the last token).
    const std::int64_t limit = std::min((s.prefill_target - 1) / bs, s.input / bs);
    work_.host_recomputed_tokens += static_cast<double>(
        bs * host_run(host_, first, limit, [&](std::int64_t k) { return block_key(s, k); }));
  }
  // vLLM's lookup touches the request's stored blocks, last first (the first end most recent).
  for (std::int64_t k = s.input / bs - 1; k >= 0; --k) host_.touch(block_key(s, k));
}

void Replica::warm(const std::uint64_t* keys, std::int64_t n, std::int64_t prompt_blocks) {
  // The earlier run, as the tier saw it (workload.warm_cache; docs/engine.md "A warm prefix cache"): the request's
  // lookup touched its prompt's stored blocks, last first; the blocks it computed (those the GPU cache did not hold)
  // were written through, oldest evicted when full. Before t = 0: not counted in the run's stored bytes.
  if (host_.enabled())
    for (std::int64_t k = prompt_blocks - 1; k >= 0; --k) host_.touch(keys[k]);
  std::int64_t hit = 0;
  const std::int64_t taken = warm_request(kv_, keys, n, &hit);
  if (host_.enabled())
    for (std::int64_t k = hit; k < taken; ++k) host_.store(keys[k]);
}

}  // namespace llmsim::engine::detail
