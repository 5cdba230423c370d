#include "search_bound.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "llmsim/analysis/cost.hpp"
#include "llmsim/engine/replica_speed.hpp"

namespace llmsim::analysis::detail {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int64_t kMaxReplicas = 1'000'000'000;  // replicas_needed's own limit
}  // namespace

double replica_qps_bound(const spec::ResolvedScenario& rs, const perf::CostModel& cost, const memory::MemoryPlan& plan) {
  if (!rs.disagg_pools.empty()) return kInf;
  const auto& e = rs.scenario.engine;
  // Pipeline parallel: up to k batches in flight, one per virtual engine (docs/engine.md "Pipeline parallel"), each
  // with its own max_num_seqs and 1/k of the KV blocks; the stages overlap, so the replica serves at most k times
  // one virtual engine's rate.
  const int pp = std::max(1, rs.scenario.hardware.parallel.pp);
  const int batches = e.max_concurrent_batches == 0 ? pp : std::clamp(e.max_concurrent_batches, 1, pp);
  memory::MemoryPlan one = plan;
  one.kv_capacity_tokens = plan.kv_capacity_tokens / batches;
  const auto speed = engine::replica_speed(cost, one, e, engine::mean_lengths(rs.scenario.workload));
  const double spec_tokens = rs.speculation ? 1.0 + rs.speculation->config.num_speculative_tokens : 1.0;
  return speed.requests_per_s_bound * batches * spec_tokens;
}

std::optional<int> min_replicas(double target_qps, double qps_per_replica, double spare_fraction) {
  // No bound (+infinity): one replica, with its spares.
  return std::isinf(qps_per_replica) && qps_per_replica > 0 ? replicas_needed(1.0, 1.0, spare_fraction)
                                                              : replicas_needed(target_qps, qps_per_replica, spare_fraction);
}

double bill_at_capacity(const spec::ResolvedScenario& rs, double target_qps, double qps_per_replica) {
  const auto n = min_replicas(target_qps, qps_per_replica, rs.scenario.cost.spare_fraction);
  if (!n) return kInf;
  return units_hourly(rs, *n + rs.scenario.failures.spares) * rs.scenario.cost.hours_per_month;
}

double screen_threshold_qps(const spec::ResolvedScenario& rs, double target_qps, double max_bill) {
  if (!std::isfinite(max_bill) || !rs.disagg_pools.empty()) return 0;
  const double spare = rs.scenario.cost.spare_fraction;
  // The bill of a fleet sized from `estimate` replicas (evaluate_row's first estimate, spares added): nondecreasing.
  auto bill = [&](std::int64_t estimate) {
    const auto n = replicas_needed(static_cast<double>(estimate), 1.0, spare);
    return n ? units_hourly(rs, *n + rs.scenario.failures.spares) * rs.scenario.cost.hours_per_month : kInf;
  };
  if (over_cutoff(bill(1), max_bill)) return 0;  // over at any capacity: the bound should have pruned it
  // The smallest estimate E whose bill is over the cutoff: bill(lo) is not over, bill(hi) is.
  std::int64_t lo = 1, hi = 2;
  while (hi < kMaxReplicas && !over_cutoff(bill(hi), max_bill)) lo = hi, hi *= 2;
  if (hi >= kMaxReplicas) return 0;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (over_cutoff(bill(mid), max_bill) ? hi : lo) = mid;
  }
  // replicas_needed(target, q, 0) = ⌈target ÷ q × (1 − 1e-9)⌉ >= E exactly when q < target × (1 − 1e-9) ÷ (E − 1);
  // a hair lower so that rounding never screens a configuration whose bill is not over.
  return target_qps * (1 - 1e-9) / static_cast<double>(hi - 1) * (1 - 1e-12);
}

std::shared_ptr<const perf::CostModel> CostModelCache::get(const Json& scenario, const spec::ResolvedScenario& rs) {
  Json key = scenario;
  if (key.contains("engine") && key["engine"].is_object()) {
    key["engine"].erase("max_num_seqs");
    key["engine"].erase("max_num_batched_tokens");
  }
  const std::string text = key.dump();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (const auto it = models_.find(text); it != models_.end()) return it->second;
  }
  auto model = std::make_shared<const perf::CostModel>(perf::make_cost_model(rs));  // outside the lock: ~ms
  std::lock_guard<std::mutex> lock(mutex_);
  return models_.emplace(text, std::move(model)).first->second;  // a model built twice keeps the first
}

}  // namespace llmsim::analysis::detail
