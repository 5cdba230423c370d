// The deployment's pools (Simulation's part, see simulation.hpp): one per heterogeneous-fleet member
// (hardware.fleet), or the single homogeneous deployment — each with its memory plan, cost model and replicas — and
// the speed-aware routers' per-replica weights from them (docs/fleets.md).
#include "llmsim/engine/replica_speed.hpp"
#include "simulation.hpp"

namespace llmsim::engine::detail {

bool Simulation::plan_pools() {
  const bool fleet = !rs_.fleet.empty();
  const std::size_t n = fleet ? rs_.fleet.size() : 1;
  pools_.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const spec::ResolvedScenario& m = fleet ? rs_.fleet[k] : rs_;
    const std::string at = "hardware.fleet[" + std::to_string(k) + "]";
    const auto& e = m.scenario.engine;
    Pool& pool = pools_[k];
    pool.rs = &m;
    pool.plan = memory::plan_memory(m.model, m.quant, m.gpu, m.scenario.hardware.parallel, e, m.max_model_len);
    const int pp = m.scenario.hardware.parallel.pp;
    const std::int32_t epg = e.max_concurrent_batches == 0 ? pp : std::min(e.max_concurrent_batches, pp);
    if (k == 0) engines_per_group_ = epg;
    else if (epg != engines_per_group_)  // the router and the fleet index engines as group × k + v
      throw ConfigError(at + ".pp", "every fleet member must run as many concurrent batches (pipeline stages) as "
                                    "the first (" + std::to_string(engines_per_group_) + "), got " + std::to_string(epg) +
                                    ": mixing pipeline depths in one fleet is not modelled");
    // vLLM V1 keeps one block of the pool as its null block (vllm/v1/core/block_pool.py).
    const std::int64_t reserved = e.policy == spec::SchedulerPolicy::vllm ? 1 : 0;
    if (!pool.plan.fits || pool.plan.kv_capacity_blocks / engines_per_group_ - reserved < 1) {
      auto& s = result_.summary;
      s.fits = false;
      s.reason = !pool.plan.reason.empty() ? pool.plan.reason
                 : engines_per_group_ == 1 ? "no room for a single KV block"
                                           : "no room for a KV block in each of the " +
                                                 std::to_string(engines_per_group_) + " concurrent batches";
      if (fleet) s.reason = at + " (" + m.scenario.hardware.gpu + "): " + s.reason;
      s.slo_met = false;
      return false;
    }
    pool.cost = std::make_unique<perf::CostModel>(perf::make_cost_model(m));
  }
  return true;
}

void Simulation::build_replicas(std::int32_t groups) {
  replicas_.reserve(static_cast<std::size_t>(groups * engines_per_group_));
  for (auto& pool : pools_) {
    const auto& hw = pool.rs->scenario.hardware;
    const auto& e = pool.rs->scenario.engine;
    ReplicaConfig cfg;
    cfg.policy = e.policy;
    cfg.max_num_seqs = e.max_num_seqs;
    cfg.max_num_batched_tokens = e.max_num_batched_tokens;
    // Static batching re-runs a preempted request in a later batch, so it always recomputes.
    cfg.swap = e.preemption == spec::PreemptionMode::swap && e.policy != spec::SchedulerPolicy::static_batching;
    cfg.block_bytes = pool.plan.kv_bytes_per_token_per_gpu * e.block_size;
    cfg.prefix_caching = e.prefix_caching();
    cfg.hash_block_tokens = driver_->hash_block_tokens();
    // Under pipeline parallel each virtual engine schedules its own requests in 1/k of the KV and swap space.
    const std::int64_t reserved = e.policy == spec::SchedulerPolicy::vllm ? 1 : 0;
    const std::int64_t kv_blocks = pool.plan.kv_capacity_blocks / engines_per_group_ - reserved;
    // Swap space is bounded by validation (<= 1e6 GiB); the block count saturates rather than overflow.
    const double host = cfg.block_bytes > 0 ? e.swap_space_gb * kGiB / cfg.block_bytes / engines_per_group_ : 0;
    const auto host_blocks = static_cast<std::int64_t>(std::min(host, 4e18));
    pool.first_engine = static_cast<std::int32_t>(replicas_.size());
    // A fleet member has its own replicas; a homogeneous deployment all `groups` (serving, standby, spares).
    const std::int32_t pool_groups = rs_.fleet.empty() ? groups : hw.replicas;
    for (int i = 0; i < pool_groups; ++i) {
      const auto r = static_cast<std::int32_t>(pipelines_.size());
      pipelines_.emplace_back(hw.parallel.pp);
      for (int v = 0; v < engines_per_group_; ++v)
        replicas_.emplace_back(r, v, cfg, KvBlockManager(kv_blocks, e.block_size, e.watermark_or_default(), host_blocks),
                               *pool.cost, pool_, *collector_);
    }
  }
  start_pending_.assign(replicas_.size(), 0);
}

void Simulation::set_router_speeds() {
  const auto policy = rs_.scenario.hardware.router;
  if (policy != spec::RouterPolicy::weighted_least_outstanding && policy != spec::RouterPolicy::shortest_expected_delay)
    return;
  const MeanLengths len = mean_lengths(rs_.scenario.workload);
  std::vector<double> weight, rate;
  for (const auto& pool : pools_) {
    const ReplicaSpeed sp = replica_speed(*pool.cost, pool.plan, pool.rs->scenario.engine, len);
    const std::size_t groups = rs_.fleet.empty() ? pipelines_.size() : static_cast<std::size_t>(pool.rs->scenario.hardware.replicas);
    weight.insert(weight.end(), groups, sp.decode_tokens_per_s);
    rate.insert(rate.end(), groups, sp.requests_per_s);
  }
  router_->set_speeds(std::move(weight), std::move(rate));
}

}  // namespace llmsim::engine::detail
