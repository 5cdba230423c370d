#include "llmsim/analysis/row.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/analysis/ownership.hpp"
#include "llmsim/analysis/quality.hpp"
#include "llmsim/analysis/slo_headroom.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/autoscaler.hpp"
#include "llmsim/spec/dtype.hpp"
#include "llmsim/spec/engine_config.hpp"

namespace llmsim::analysis {

bool Row::meets_slo() const {
  if (!fits) return false;
  // The bill's autoscaled day is what the row prices: when it misses the SLO (the autoscaler adds replicas after the
  // load has risen), the option as billed does not meet it, whatever the fixed fleet sized at the peak does.
  if (capacity) return capacity->found && !(autoscaled_bill && !autoscaled_bill->slo_met);
  return summary && summary->slo_met && !summary->unstable;
}

Row row_identity(const spec::ResolvedScenario& s) {
  Row row;
  const auto& hw = s.scenario.hardware;
  row.model = s.model.id;
  row.gpu = s.gpu.id;
  row.quant = s.quant.weights.id;
  row.kv_cache = std::string(spec::to_string(s.quant.kv_dtype));
  row.policy = spec::to_string(s.scenario.engine.policy);
  row.tp = hw.parallel.tp;
  row.pp = hw.parallel.pp;
  row.replicas = hw.replicas;
  row.num_gpus = spec::total_gpus(s);
  row.max_num_seqs = s.scenario.engine.max_num_seqs;
  row.max_num_batched_tokens = s.scenario.engine.max_num_batched_tokens;
  row.interconnect = s.interconnect;
  row.params = static_cast<double>(s.model.param_count());
  row.currency = s.scenario.cost.currency;
  row.slo_set = has_slo(s.scenario);
  row.price_per_gpu_hour = s.price_per_gpu_hour;
  row.price_is_placeholder = s.price_is_placeholder;
  row.purchase_price_per_gpu = s.purchase_price_per_gpu;
  row.purchase_price_is_placeholder = s.purchase_price_is_placeholder;
  row.quality_caveat = quality_caveat(row.quant, row.params);
  if (row.kv_cache != "fp16" && row.kv_cache != "bf16" && row.kv_cache != "auto")  // a lossy KV cache too
    row.quality_caveat += std::string(row.quality_caveat.empty() ? "" : "; ") + "KV cache " + row.kv_cache +
                          ": quality not modelled (quantized KV changes answers; check your own evals)";
  if (!s.disagg_pools.empty()) {  // one disaggregated deployment: "prefill card/decode card", both pools' GPUs
    const auto& p = s.disagg_pools[0];
    const auto& d = s.disagg_pools[1];
    row.gpu = p.gpu.id + "/" + d.gpu.id;
    row.tp = p.scenario.hardware.parallel.tp;
    row.pp = p.scenario.hardware.parallel.pp;
    row.replicas = 1;
    row.num_gpus = p.scenario.hardware.gpus_total() + d.scenario.hardware.gpus_total();
    row.interconnect = spec::to_string(s.scenario.disaggregation->link.kind);
    row.price_per_gpu_hour = gpus_hourly(s) / row.num_gpus;  // the mean over the pools' GPUs
    row.price_is_placeholder = p.price_is_placeholder || d.price_is_placeholder;
  }
  row.name = !s.scenario.name.empty() ? s.scenario.name
             : (row.num_gpus > 1 ? std::to_string(row.num_gpus) + "x" : std::string()) + row.gpu + " " + row.quant;
  const auto& w = s.scenario.workload;
  row.target_qps = sizing_target_qps(s.scenario);
  row.target_concurrency = closed_loop_users(w);
  return row;
}

double sizing_target_qps(const spec::Scenario& s) {
  if (s.cost.target_qps > 0) return s.cost.target_qps;
  return spec::offered_rate(spec::sizing_workload(s.workload)).value_or(0.0);
}

void check_fleet_target(const spec::Scenario& s) {
  if (const auto users = closed_loop_users(s.workload); users && s.cost.target_qps > 0)
    throw ConfigError("cost.target_qps", "a closed-loop workload is sized for its " + std::to_string(*users) +
                                             " users (workload.arrival.concurrency), not a request rate; got " +
                                             format_value(s.cost.target_qps));
}

namespace {

// One card type of the unit sized (the deployment's replica, a heterogeneous fleet's member, a disaggregated pool):
// its resolved scenario, its GPUs in one unit and how busy they were.
struct OwnedPart {
  const spec::ResolvedScenario* rs;
  int gpus;
  double busy;  // < 0: unknown
};

std::vector<OwnedPart> owned_parts(const spec::ResolvedScenario& s, const metrics::Summary* at, double busy) {
  std::vector<OwnedPart> parts;
  if (!s.fleet.empty()) {
    // Each member at the busy fraction the run measured on its own replicas (the fleet's, when none was measured).
    for (std::size_t k = 0; k < s.fleet.size(); ++k) {
      const auto& m = s.fleet[k];
      const bool measured = at && k < at->fleet_pools.size();
      parts.push_back({&m, m.scenario.hardware.gpus_total(), measured ? at->fleet_pools[k].busy_fraction : busy});
    }
  } else if (!s.disagg_pools.empty()) {
    for (std::size_t k = 0; k < s.disagg_pools.size(); ++k) {
      const auto& p = s.disagg_pools[k];
      const bool measured = at && at->disaggregation && k < at->disaggregation->pools.size();
      parts.push_back({&p, p.scenario.hardware.gpus_total(), measured ? at->disaggregation->pools[k].busy_fraction : busy});
    }
  } else {
    parts.push_back({&s, s.scenario.hardware.parallel.gpus(), busy});
  }
  return parts;
}

// Owning the units instead of renting them: `serving` units busy as the engine measured, the other `total - serving`
// idle spares; each card type at its own purchase price and board power; priced like rental (hourly_cost), per Mtok
// over the serving units' tokens. `at`: the run the busy fractions come from (a disaggregated pool's own), if any.
void price_owned(Row& row, const spec::ResolvedScenario& s, int serving, int total, double busy,
                 std::optional<double> output_tps_per_replica, const metrics::Summary* at = nullptr) {
  double loaded_hour = 0, idle_hour = 0, running_loaded = 0, running_idle = 0, purchase = 0, rent = 0;
  int unit_gpus = 0;
  std::vector<std::string> notes;
  for (const auto& part : owned_parts(s, at, busy)) {
    const spec::ResolvedScenario& m = *part.rs;
    std::string why;
    const bool busy_known = part.busy >= 0;
    const auto loaded = owned_gpu_hour(m, busy_known ? std::min(part.busy, 1.0) : 1.0, &why);
    if (!loaded) {
      row.owned_note = why;
      return;
    }
    const OwnedGpuHour idle = *owned_gpu_hour(m, 0.0);
    loaded_hour += part.gpus * loaded->total();
    idle_hour += part.gpus * idle.total();
    running_loaded += part.gpus * loaded->running();
    running_idle += part.gpus * idle.running();
    purchase += part.gpus * *m.purchase_price_per_gpu;
    rent += part.gpus * m.price_per_gpu_hour;
    unit_gpus += part.gpus;
    auto note = [&](const std::string& n) {
      if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
    };
    if (!busy_known) note("busy time unknown: energy at full board power");
    if (!loaded->idle_power_known) note("idle power of " + m.gpu.id + " unknown: idle priced at board power");
    if (m.purchase_price_is_placeholder) note("purchase price is a placeholder");
  }
  const auto& cost = s.scenario.cost;
  const double gpus = static_cast<double>(unit_gpus) * total;
  const double per_gpu = (serving * loaded_hour + (total - serving) * idle_hour) / gpus;
  const double running = (serving * running_loaded + (total - serving) * running_idle) / gpus;
  const double hourly = hourly_cost(per_gpu, unit_gpus * total, cost);
  row.owned_cost_per_gpu_hour = per_gpu;
  row.owned_monthly_cost = hourly * cost.hours_per_month;
  if (output_tps_per_replica) row.owned_cost_per_mtok_output_at_target = fleet_cost_per_mtok(hourly, serving, *output_tps_per_replica);
  // Per GPU, averaged over the card types (one type: its own price, rent and running cost).
  row.break_even_months = break_even_months(purchase / unit_gpus, rent / unit_gpus, running, cost.hours_per_month);
  if (!row.break_even_months) notes.push_back("renting costs no more than running an owned card: buying never pays back");
  for (const auto& n : notes) row.owned_note += (row.owned_note.empty() ? "" : "; ") + n;
}

// Sizing grows a fleet that misses the SLO up to this many times its first estimate, plus a few replicas.
constexpr double kGrowLimit = 4;
constexpr int kGrowExtra = 4;
// Requests of a verified fleet's run at most (its replicas each see about the capacity search's count).
constexpr std::int64_t kMaxVerifyRequests = 50'000;

void size_fleet(Row& row, const spec::ResolvedScenario& s, const CapacityResult& cap, const CapacityOptions& copt,
                bool bill_autoscaler) {
  const auto& cost = s.scenario.cost;
  const double target = cap.closed_loop ? row.target_concurrency.value_or(0) : row.target_qps;
  // The unit sized: one replica, or a heterogeneous fleet as a whole (its capacity is the mix's, not a replica's).
  const bool fleet = !s.fleet.empty();
  const double per_replica =
      (cap.closed_loop ? static_cast<double>(*cap.max_concurrency) : cap.max_qps) / (fleet ? 1 : s.scenario.hardware.replicas);
  if (!(target > 0)) return;
  const auto estimate = replicas_needed(target, per_replica, 0.0);
  if (!estimate)  // more replicas than a count holds: an answer of "null" would read as "nothing needed"
    throw ConfigError(cap.closed_loop ? "workload.arrival.concurrency" : "cost.target_qps",
                      format_value(target) + (cap.closed_loop ? " users" : " req/s") + " needs more than 1e9 replicas at " +
                          format_value(per_replica) + " per replica");
  // What is verified: a deployment of replicas is simulated whole — `serving` replicas behind the scenario's router
  // at the full target — so the fleet billed is the fleet checked. A heterogeneous fleet or a disaggregated
  // deployment (the unit copied is itself several engines) is checked as one unit at its share of the target.
  const bool whole = !fleet && s.disagg_pools.empty();
  const spec::Workload own = spec::sizing_workload(s.scenario.workload);
  auto share = [&](int serving) { return cap.closed_loop ? std::ceil(target / serving) : target / serving; };
  auto load_of = [&](int serving) { return whole ? target : share(serving); };
  CapacityOptions last_options = copt;  // the options of the last check run (for the unloaded run below)
  auto run = [&](int serving, double slo_factor = 1) {  // on the scenario's own seed
    CapacityOptions o = copt;
    // The check that decides the bill runs as long as the scenario's own run (the same requests and warm-up as
    // `simulate` at that load, so the two agree), and each replica of a verified fleet sees at least as many
    // requests as the one replica the search ran.
    o.num_requests = std::min(kMaxVerifyRequests, std::max({copt.num_requests * (whole ? serving : 1), own.num_requests,
                                                            copt.num_requests}));
    o.warmup_requests = own.warmup_requests;
    last_options = o;
    spec::ResolvedScenario r = at_load(s, load_of(serving), s.scenario.workload.seed, o);
    if (!fleet) r.scenario.hardware.replicas = whole ? serving : 1;
    if (slo_factor != 1) loosen_slo(r.scenario, slo_factor);
    engine::SimulationOptions sim;
    sim.cancel = copt.cancel;
    metrics::Summary summary = evaluate(r, sim).summary;
    return cap.closed_loop ? summary : steady_state_rates(summary, load_of(serving));
  };
  // Capacity comes from a noisy search (600-request P95s, the median of several seeds) and a fleet shares its load
  // unevenly, so ⌈target / capacity⌉ can miss the SLO. Then grow ~10% a step (at least one replica) until the
  // fleet meets it or reaches the limit (kGrowLimit × the estimate + kGrowExtra), which the row states.
  const int limit = static_cast<int>(std::min<double>(1e9, kGrowLimit * *estimate + kGrowExtra));
  int serving = *estimate;
  metrics::Summary at = run(serving);
  const metrics::Summary first = at;
  while (!run_meets_slo(at) && serving < limit) {
    serving = std::min(limit, std::max(serving + 1, static_cast<int>(std::ceil(serving * 1.1))));
    at = run(serving);
  }
  if (!run_meets_slo(at)) {  // the estimate stays, flagged; the limit is said
    row.reason = "the SLO is not met at the target by up to " + std::to_string(limit) + (whole ? " replicas" : " units") +
                 " (the sizing limit: " + format_value(kGrowLimit) + " x the estimate of " + std::to_string(*estimate) +
                 " + " + std::to_string(kGrowExtra) + "): " + slo_failures(s.scenario, at);
    // Growing cannot help when one request alone misses the SLO: say so, with that latency.
    if (at.fits && !at.unstable && at.completed_requests > 0)
      if (auto note = unloaded_slo_miss(s, last_options, cap.closed_loop)) row.reason += "; " + *note;
    serving = *estimate;
    at = first;
  }
  // cost.spare_fraction's spares, then the hot spares failures.spares holds beside them (billed, idle).
  auto billed_units = [&](int n) { return *replicas_needed(n, 1.0, cost.spare_fraction) + (fleet ? 0 : s.scenario.failures.spares); };
  row.replicas_needed = billed_units(serving);
  // A disaggregated deployment is the unit copied: its pools' GPUs at their prices, replicas_needed times.
  const double fleet_hourly = units_hourly(s, *row.replicas_needed);
  row.monthly_cost = fleet_hourly * cost.hours_per_month;
  // An SLO barely above one request's own latency sizes the fleet by queueing noise: said beside the fleet, with
  // what the same sizing gives when the tightest target's room to queue is doubled (every latency target 1 + h
  // looser; slo_headroom.hpp's knee). The fewest replicas meeting it: bisection on the same checked run, between
  // none and the fleet sized (which meets the looser SLO on the same seed).
  if (at.fits && !at.unstable && at.completed_requests > 0) {
    const metrics::Summary alone = unloaded_run(s, copt, cap.closed_loop);
    std::optional<LooserSlo> looser;
    // When no fleet up to the sizing limit met the SLO as set, the looser one is sized up to that limit (if the
    // limit meets it): "not met by up to 36; 10 % looser, 9 meet it" is the answer a buyer can act on.
    const bool met = row.reason.empty();
    const int from = met ? serving : limit;
    if (const auto h = tightest_slo_headroom(s, alone); h && from > 1 && h->headroom < 1) {
      LooserSlo l;
      l.factor = 1 + h->headroom;
      l.from_serving = from;
      l.from_met = met;
      if (met || run_meets_slo(run(from, l.factor))) {
        int lo = 0, hi = from;
        while (hi - lo > 1) {
          const int mid = lo + (hi - lo) / 2;
          (run_meets_slo(run(mid, l.factor)) ? hi : lo) = mid;
        }
        l.serving = hi;
        l.monthly_cost = units_hourly(s, billed_units(hi)) * cost.hours_per_month;
        looser = l;
        row.looser_slo = l;
      }
    }
    if (auto note = slo_headroom_note(s, alone, serving, at.busy_fraction, row.monthly_cost.value_or(0),
                                      looser ? &*looser : nullptr))
      row.slo_headroom_note = *note;
  }
  row.replicas_added = serving - *estimate;
  row.serving_replicas = serving;
  // Per serving unit: the whole fleet's tokens / serving, or the one unit's own.
  const double per_unit = whole ? 1.0 / serving : 1.0;
  if (at.fits) {
    row.cost_per_mtok_output_at_target = fleet_cost_per_mtok(fleet_hourly, serving, at.goodput_output_tps * per_unit);
    row.cost_per_mtok_total_at_target = fleet_cost_per_mtok(fleet_hourly, serving, at.goodput_total_tps * per_unit);
  }
  price_owned(row, s, serving, *row.replicas_needed, at.busy_fraction, at.goodput_output_tps * per_unit, &at);
  row.fixed_monthly_cost = row.monthly_cost;
  row.bill_basis = "fixed: " + std::to_string(*row.replicas_needed) + (whole ? " replica(s)" : " unit(s)") +
                   (*row.replicas_needed > serving ? " (" + std::to_string(serving) + " serving, the rest spare)" : "") +
                   " held all month (" + format_value(cost.hours_per_month) + " h)";
  // An autoscaler runs fewer replicas off the peak: the bill is then what it ran, simulated (autoscaled_bill.hpp).
  if (auto bill = bill_autoscaler ? autoscaled_bill(s, serving, copt.cancel) : std::nullopt) {
    row.monthly_cost = bill->monthly_cost;
    row.cost_per_mtok_output_at_target = bill->cost_per_mtok_output;
    row.cost_per_mtok_total_at_target = bill->cost_per_mtok_total;
    row.bill_basis = bill->basis + "; held fixed at the peak it would be " +
                     format_value(std::round(*row.fixed_monthly_cost)) + " " + cost.currency + "/month";
    if (!bill->slo_met && row.reason.empty())
      row.reason = "the autoscaled day billed misses the SLO (" + bill->reason + "): " + bill->miss_cause;
    row.autoscaled_bill = std::move(bill);
  } else if (s.scenario.autoscaler) {
    row.bill_basis += bill_autoscaler ? "; the autoscaler is not simulated for a unit of several engines (a fleet or disaggregated pools)"
                                      : "; the autoscaler, which would run fewer off the peak, is not billed here";
  }
  row.at_target_load_qps = cap.closed_loop ? at.throughput.requests_per_s : load_of(serving);
  if (cap.closed_loop) row.at_target_concurrency = static_cast<int>(load_of(serving));
  row.at_target_whole_fleet = whole;
  row.at_target = std::move(at);
}

}  // namespace

Row evaluate_row(const spec::ResolvedScenario& s, const RowOptions& options) {
  Row row = row_identity(s);
  if (!options.capacity) {
    engine::SimulationOptions sim;
    sim.cancel = options.cancel;
    auto result = evaluate(s, sim);
    if (!result.summary.fits) {
      row.fits = false;
      row.reason = result.summary.reason;
      return row;
    }
    row.load_qps = spec::offered_rate(s.scenario.workload);
    row.monthly_cost = result.summary.cost.monthly;
    row.bill_basis = result.summary.fleet.autoscaled ? "autoscaled: the run's own replica-hours, scaled to a month"
                                                     : "fixed: the deployment as given held all month";
    if (result.summary.unstable) row.reason = result.summary.reason;
    // The run is at the user's load when no other target is set: then its $/Mtok is the one at the target.
    const bool at_target = !(s.scenario.cost.target_qps > 0);
    const auto& sum = result.summary;
    if (at_target) {
      row.cost_per_mtok_output_at_target = cost_per_mtok(sum.cost.per_hour, sum.goodput_output_tps);
      row.cost_per_mtok_total_at_target = cost_per_mtok(sum.cost.per_hour, sum.goodput_total_tps);
    }
    const int replicas = s.scenario.hardware.replicas;
    price_owned(row, s, replicas, replicas, sum.busy_fraction,
                at_target ? std::optional<double>(sum.goodput_output_tps / replicas) : std::nullopt, &sum);
    row.summary = std::move(result.summary);
    return row;
  }

  check_fleet_target(s.scenario);
  CapacityOptions copt = options.capacity_options;
  if (options.cancel) copt.cancel = options.cancel;
  CapacityResult cap = find_capacity(s, copt);
  if (!cap.fits) {
    row.fits = false;
    row.reason = cap.reason;
    return row;
  }
  if (!cap.found) row.reason = cap.reason;
  row.sized_at = cap.sized_at;
  if (cap.found) {
    row.summary = cap.at_capacity;
    // The search ran without the autoscaler (capacity.cpp): the cold start quoted is the user's deployment's.
    row.summary->cost.cold_start_s = engine::cold_start_s(s);
    row.load_qps = cap.closed_loop ? row.summary->throughput.requests_per_s : cap.max_qps;
    size_fleet(row, s, cap, copt, options.bill_autoscaler);
  }
  row.capacity = std::move(cap);
  return row;
}

}  // namespace llmsim::analysis
