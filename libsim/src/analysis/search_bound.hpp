#pragma once
// search's pruning rules (private to analysis; docs/search.md "Pipeline"): the per-replica throughput bound, the
// bill a capacity implies, the capacity below which a configuration's bill exceeds the branch-and-bound cutoff
// (the screening threshold handed to the capacity search), and a cache of cost models shared by configurations
// that differ only in engine limits the cost model does not read.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "llmsim/core/json_view.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis::detail {

/// Whether a base scenario is disaggregated: its pools' cards and split are what the search places (search_axes.cpp).
bool is_disaggregated(const Json& base);

/// Requests per second one replica (one deployment unit) cannot exceed within any SLO: the cost model's
/// analytic bound (engine::replica_speed().requests_per_s_bound) of one batch with its share of the KV pool × the
/// batches a pipeline-parallel replica runs at once (engine.max_concurrent_batches, 0 = pp: its stages overlap, each
/// virtual engine holding 1/k of the KV blocks) × (k + 1) under speculative decoding (a step emits at most k + 1
/// tokens per sequence).
/// +infinity for a disaggregated deployment (no bound: it is simulated).
double replica_qps_bound(const spec::ResolvedScenario& rs, const perf::CostModel& cost, const memory::MemoryPlan& plan);

/// replicas_needed(target, qps, spare), or one replica (with its spares) when qps is +infinity (no bound).
std::optional<int> min_replicas(double target_qps, double qps_per_replica, double spare_fraction);

/// The monthly bill evaluate_row gives a scenario (hardware.replicas = 1) whose capacity per replica is
/// `qps_per_replica`, before the fleet grows for the SLO (which only adds): units_hourly(replicas_needed(target,
/// qps, spare)) × hours_per_month. +infinity when no count of replicas is enough.
double bill_at_capacity(const spec::ResolvedScenario& rs, double target_qps, double qps_per_replica);

/// True when `bill` exceeds `cutoff` by more than rounding: the one comparison the branch-and-bound, the
/// screening and the front's cost window use, so a configuration exactly at the cutoff is never dropped.
inline bool over_cutoff(double bill, double cutoff) { return bill > cutoff * (1 + 1e-9); }

/// The capacity per replica below which the configuration's bill is over_cutoff(`max_bill`): a capacity search
/// may give up once a rate below it fails (CapacityOptions::give_up_below_qps). 0 when the cutoff is infinite
/// or the deployment is disaggregated (no screening).
double screen_threshold_qps(const spec::ResolvedScenario& rs, double target_qps, double max_bill);

/// Cost models by everything make_cost_model reads, i.e. the scenario without engine.max_num_seqs and
/// engine.max_num_batched_tokens (the cost model prices a batch, not the limits that form it). Building one costs
/// ~100x more than the rest of a candidate's static pruning. Thread-safe.
class CostModelCache {
 public:
  std::shared_ptr<const perf::CostModel> get(const Json& scenario, const spec::ResolvedScenario& rs);

 private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const perf::CostModel>> models_;
};

}  // namespace llmsim::analysis::detail
