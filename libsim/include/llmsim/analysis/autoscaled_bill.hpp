#pragma once
// The bill of an autoscaled deployment that sizing chose (issue 29): sizing (capacity, compare, report, search) finds
// the replicas the peak needs with the autoscaler off; an autoscaler runs fewer off the peak. The bill then prices what
// the autoscaler would run: the scenario's load — its whole day with a daily profile — simulated with the scenario's
// autoscaler scaling between its min_replicas and the serving replicas sized at the peak, billed for the
// replica-hours it held (starting, serving, draining, hot spares, failed: summary.fleet.replica_hours) by the one
// billing rule, cost_summary(). docs/analysis.md "Sizing sizes what `simulate` would run".
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {

struct AutoscaledBill {
  int min_replicas = 0, max_replicas = 0;  ///< the autoscaler as simulated (max = the serving replicas sized)
  int spares = 0;                          ///< failures.spares, billed all the time (in replica_hours)
  double replica_hours = 0;                ///< billed over the simulated period (summary.fleet.replica_hours)
  double period_hours = 0;                 ///< the simulated period (cost.period_hours)
  std::int64_t peak_replicas = 0;          ///< most replicas billed at once
  double period_cost = 0;                  ///< the run's bill (cost.period)
  double monthly_cost = 0;                 ///< period_cost × hours_per_month ÷ period_hours (cost.period_monthly)
  std::optional<double> cost_per_mtok_output, cost_per_mtok_total;  ///< the bill over the run's SLO-meeting tokens
  double slo_attainment = 0;
  bool slo_met = false;                    ///< the run met the scenario's SLO and was stable
  bool slo_set = true;                     ///< the scenario sets a latency target; false: JSON attainment/slo_met null
  std::string reason;                      ///< why not (slo_failures), "" when it met it (JSON "reason")
  /// When it missed: whether the autoscaler is the cause, from the same day held at the fleet sized (it meets the
  /// SLO: the scale-up lag is; it misses too: not), in words; "" when it met it (JSON "miss_cause")
  std::string miss_cause;
  std::string basis;                       ///< what the bill assumes, in words (printed by every command)
};

/// The scenario the bill simulates: `scenario` with its autoscaler scaling between min(min_replicas, serving) and
/// `serving`; its workload as given except that a daily profile runs one day (the month is that day's bill scaled by
/// cost.hours_per_month; its other days repeat the curve) and that cost.target_qps, when set, scales the open-loop
/// rates so the sized load is that target (at a daily profile's peak). Requires scenario.scenario.autoscaler.
spec::ResolvedScenario autoscaled_bill_scenario(const spec::ResolvedScenario& scenario, int serving);

/// Simulates autoscaled_bill_scenario() and bills it (cost_summary: replica-hours × GPUs per replica × price, ops
/// overhead and extras). nullopt when the scenario has no autoscaler, or is a unit of several engines (a
/// heterogeneous fleet or a disaggregated deployment, which sizing copies whole). `cancel`: as
/// engine::SimulationOptions::cancel.
std::optional<AutoscaledBill> autoscaled_bill(const spec::ResolvedScenario& scenario, int serving,
                                              const std::atomic<bool>* cancel = nullptr);

/// The bill as the row's JSON object: every key present, null without a bill.
Json to_json(const std::optional<AutoscaledBill>& bill);

}  // namespace llmsim::analysis
