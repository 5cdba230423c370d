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
    // A fleet member, or the one deployment (a disaggregated deployment's prefill pool; its decode pool is
    // planned by Disaggregation).
    const spec::ResolvedScenario& m = fleet ? rs_.fleet[k] : disagg_ ? disagg_->prefill() : rs_;
    const std::string at = "hardware.fleet[" + std::to_string(k) + "]";
    const auto& e = m.scenario.engine;
    Pool& pool = pools_[k];
    pool.rs = &m;
    pool.plan = memory::plan_memory(m);  // with a speculative proposer's memory when the pool runs one
    const int pp = m.scenario.hardware.parallel.pp;
    const std::int32_t epg = e.max_concurrent_batches == 0 ? pp : std::min(e.max_concurrent_batches, pp);
    if (k == 0) engines_per_group_ = epg;
    else if (epg != engines_per_group_)  // the router and the fleet index engines as group × k + v
      throw ConfigError(at + ".pp", "every fleet member must run as many concurrent batches (pipeline stages) as "
                                    "the first (" + std::to_string(engines_per_group_) + "), got " + std::to_string(epg) +
                                    ": mixing pipeline depths in one fleet is not modelled");
    // vLLM V1 keeps one block of the pool as its null block (vllm/v1/core/block_pool.py).
    const std::int64_t reserved = e.policy == spec::SchedulerPolicy::vllm ? 1 : 0;
    const std::string unfit = disagg_ ? disagg_->unfit(pool.plan) : "";
    if (!unfit.empty() || !pool.plan.fits || pool.plan.kv_capacity_blocks / engines_per_group_ - reserved < 1) {
      auto& s = result_.summary;
      s.fits = false;
      s.reason = !unfit.empty() ? unfit : !pool.plan.reason.empty() ? pool.plan.reason
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
  for (auto& pool : pools_) {
    pool.first_engine = static_cast<std::int32_t>(replicas_.size());
    // A fleet member has its own replicas; a homogeneous deployment all `groups` (serving, standby, spares).
    const std::int32_t pool_groups = rs_.fleet.empty() ? groups : pool.rs->scenario.hardware.replicas;
    build_pool_replicas(*pool.rs, pool.plan, *pool.cost, pool_groups, disagg_ != nullptr);
  }
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

std::vector<RunFacts> Simulation::fleet_facts(double end_s) const {
  std::vector<RunFacts> out;
  for (std::size_t k = 0; k < pools_.size(); ++k) {
    const std::size_t first = static_cast<std::size_t>(pools_[k].first_engine);
    const std::size_t last = k + 1 < pools_.size() ? static_cast<std::size_t>(pools_[k + 1].first_engine) : replicas_.size();
    // The KV integrals at the window's start (none when nothing was measured) for the member's replicas.
    const std::span<const double> at_window = kv_integral_at_window_.size() >= last
                                                  ? std::span<const double>(kv_integral_at_window_).subspan(first, last - first)
                                                  : std::span<const double>();
    out.push_back(RunFacts{*pools_[k].rs, pools_[k].plan, std::span<const Replica>(replicas_).subspan(first, last - first),
                           engines_per_group_, at_window, peak_kv_fraction_, end_s});
  }
  return out;
}

}  // namespace llmsim::engine::detail
