#include "llmsim/analysis/autoscaled_bill.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <variant>

#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/analysis/row.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/number.hpp"

namespace llmsim::analysis {

namespace {

// Every Poisson class's rate × k (a daily profile multiplies these base rates, so its curve keeps its shape).
void scale_poisson(spec::Workload& w, double k) {
  auto scale = [&](spec::ArrivalSpec& a) {
    if (auto* p = std::get_if<spec::PoissonArrivals>(&a)) p->rate *= k;
  };
  if (w.classes.empty()) scale(w.arrival);
  for (auto& c : w.classes) scale(c.arrival);
}

// Hours at the precision their size needs, as simulate's fleet line prints them: a short run's 0.048 replica-hours
// read "0.0 replica-hours billed" beside a bill of thousands a month (a 0 presented as a result).
std::string hours_text(double h) {
  return h == 0 ? std::string("0") : format_fixed(h, h < 0.1 ? 4 : h < 10 ? 2 : 1);
}

// Why the autoscaled day missed the SLO, from the run that can tell: the same day with the autoscaler held at the
// fleet sized (min_replicas = serving: it never scales; failures, spares and seed as billed). Only when that run
// meets the SLO is the autoscaler's lag (replicas added after the load has risen) the cause. Before, the words said
// so whatever happened: a 1-replica fleet whose hot spare and replica were down at once (failures) read "the
// autoscaler adds replicas after the load has risen; the fleet held fixed at the peak meets it" (attack8).
std::string miss_cause(const spec::ResolvedScenario& r, int serving, const engine::SimulationOptions& sim) {
  const bool failures = !r.scenario.failures.empty();
  if (r.scenario.autoscaler->min_replicas >= serving)
    return "the autoscaler never scaled (min_replicas = max_replicas = " + std::to_string(serving) +
           "), so its lag is not the cause: the day misses it with the fleet sized for the peak held fixed" +
           (failures ? ", the scenario's failures included" : "");
  spec::ResolvedScenario held = r;
  held.scenario.autoscaler->min_replicas = serving;
  const metrics::Summary fixed = evaluate(held, sim).summary;
  if (fixed.fits && run_meets_slo(fixed))
    return "the autoscaler adds replicas after the load has risen: the same day with the fleet sized for the peak "
           "held fixed meets it";
  return "the same day with the fleet sized for the peak held fixed misses it too (" +
         slo_failures(held.scenario, fixed) + "): the autoscaler's lag is not the cause" +
         (failures ? " (the scenario's failures are in both runs)" : "");
}

}  // namespace

spec::ResolvedScenario autoscaled_bill_scenario(const spec::ResolvedScenario& s, int serving) {
  if (!s.scenario.autoscaler) throw ConfigError("autoscaler", "an autoscaled bill needs the scenario's autoscaler");
  if (serving < 1) throw ConfigError("replicas", "an autoscaled bill needs at least one serving replica, got " + std::to_string(serving));
  spec::ResolvedScenario r = s;
  auto& a = *r.scenario.autoscaler;
  a.max_replicas = serving;
  a.min_replicas = std::min(a.min_replicas, serving);
  auto& w = r.scenario.workload;
  if (!w.daily_profile.empty()) w.days = 1;
  // Sized for cost.target_qps (a peak rate with a daily profile): the day's load is scaled so its sized load is it.
  const double target = s.scenario.cost.target_qps;
  const auto own = spec::offered_rate(spec::sizing_workload(w));
  if (target > 0 && own && *own > 0 && std::fabs(target / *own - 1) > 1e-12) {
    if (w.daily_profile.empty()) w = spec::with_rate(w, target);
    else scale_poisson(w, target / *own);
  }
  return r;
}

std::optional<AutoscaledBill> autoscaled_bill(const spec::ResolvedScenario& s, int serving,
                                              const std::atomic<bool>* cancel) {
  if (!s.scenario.autoscaler || !s.fleet.empty() || !s.disagg_pools.empty()) return std::nullopt;
  const spec::ResolvedScenario r = autoscaled_bill_scenario(s, serving);
  engine::SimulationOptions sim;
  sim.cancel = cancel;
  const metrics::Summary sum = evaluate(r, sim).summary;
  if (!sum.fits) return std::nullopt;  // the deployment sized fits: only a bug gets here, and then no bill is better
  AutoscaledBill b;
  b.min_replicas = r.scenario.autoscaler->min_replicas;
  b.max_replicas = serving;
  b.spares = r.scenario.failures.spares;
  b.replica_hours = sum.fleet.replica_hours;
  b.period_hours = sum.cost.period_hours;
  b.peak_replicas = sum.fleet.peak_replicas;
  b.period_cost = sum.cost.period;
  b.monthly_cost = sum.cost.period_monthly;
  const double good_output = sum.goodput_output_tps * sum.duration_s, good_total = sum.goodput_total_tps * sum.duration_s;
  if (good_output > 0) b.cost_per_mtok_output = b.period_cost / good_output * 1e6;
  if (good_total > 0) b.cost_per_mtok_total = b.period_cost / good_total * 1e6;
  b.slo_attainment = sum.slo_attainment;
  b.slo_set = sum.slo_set;
  b.slo_met = run_meets_slo(sum);
  if (!b.slo_met) {
    b.reason = slo_failures(r.scenario, sum);
    b.miss_cause = miss_cause(r, serving, sim);
  }
  const auto& w = r.scenario.workload;
  const std::string run = !w.daily_profile.empty()
                              ? "the day's load curve simulated once (" + format_fixed(b.period_hours, 1) + " h; its other days repeat it)"
                              : "the scenario's load simulated for " + hours_text(b.period_hours) + " h (" +
                                    std::to_string(sum.completed_requests) + " requests measured)";
  b.basis = "autoscaled: " + run + ", the autoscaler scaling between " + std::to_string(b.min_replicas) + " and " +
            std::to_string(b.max_replicas) + " replicas (the fleet sized for the peak)" +
            (b.spares > 0 ? " plus " + std::to_string(b.spares) + " hot spare(s) held throughout" : "") +
            (r.scenario.failures.empty() ? "" : ", the scenario's failures included") + "; " +
            hours_text(b.replica_hours) + " replica-hours billed (at most " + std::to_string(b.peak_replicas) +
            " at once), scaled to " + format_value(s.scenario.cost.hours_per_month) + " h a month";
  if (!b.slo_met) b.basis += "; the autoscaled run misses the SLO (" + b.reason + ")";
  return b;
}

Json to_json(const std::optional<AutoscaledBill>& b) {
  auto opt = [](const std::optional<double>& v) { return v && std::isfinite(*v) ? Json(*v) : Json(nullptr); };
  const AutoscaledBill none;
  const AutoscaledBill& v = b ? *b : none;
  Json j = {{"min_replicas", v.min_replicas},   {"max_replicas", v.max_replicas},
            {"spares", v.spares},               {"replica_hours", v.replica_hours},
            {"period_hours", v.period_hours},   {"peak_replicas", v.peak_replicas},
            {"period_cost", v.period_cost},     {"monthly_cost", v.monthly_cost},
            {"cost_per_mtok_output", opt(v.cost_per_mtok_output)},
            {"cost_per_mtok_total", opt(v.cost_per_mtok_total)},
            // No SLO set: no attainment and no verdict (null), as in the run's own JSON.
            {"slo_attainment", v.slo_set ? Json(v.slo_attainment) : Json(nullptr)},
            {"slo_met", v.slo_set ? Json(v.slo_met) : Json(nullptr)},
            {"reason", v.reason},               {"miss_cause", v.miss_cause}};
  if (!b)  // every key present, null without a bill
    for (auto& value : j) value = nullptr;
  return j;
}

}  // namespace llmsim::analysis
