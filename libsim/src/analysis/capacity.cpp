#include "llmsim/analysis/capacity.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <variant>

#include <boost/math/distributions/students_t.hpp>

#include "llmsim/analysis/bisection.hpp"
#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/number.hpp"
#include "llmsim/core/rng.hpp"

namespace llmsim::analysis {

void CapacityOptions::validate(const std::string& path) const {
  Problems p;
  if (num_requests < 10) p.add(path + ".num_requests", "must be >= 10, got " + std::to_string(num_requests));
  if (warmup() < 0 || warmup() >= num_requests)
    p.add(path + ".warmup_requests", "must be in [0, num_requests), got " + std::to_string(warmup()));
  if (replications < 1 || replications > 1000)
    p.add(path + ".replications", "must be in [1, 1000], got " + std::to_string(replications));
  if (!(rel_tol > 0 && rel_tol < 1)) p.add(path + ".rel_tol", "must be in (0, 1), got " + format_given(rel_tol));
  if (max_evaluations < 2) p.add(path + ".max_evaluations", "must be >= 2, got " + std::to_string(max_evaluations));
  if (!(min_rate > 0) || !std::isfinite(min_rate))
    p.add(path + ".min_rate", "must be > 0, got " + format_given(min_rate));
  if (!(max_rate > min_rate) || !std::isfinite(max_rate))
    p.add(path + ".max_rate", "must be > min_rate, got " + format_given(max_rate));
  if (max_concurrency < 1) p.add(path + ".max_concurrency", "must be >= 1, got " + std::to_string(max_concurrency));
  if (!(give_up_below_qps >= 0) || !std::isfinite(give_up_below_qps))
    p.add(path + ".give_up_below_qps", "must be >= 0, got " + format_given(give_up_below_qps));
  p.throw_if_any();
}

double t95(int dof) {
  if (dof < 1) throw ConfigError("capacity.replications", "a confidence interval needs at least 2 replications");
  // Two-sided 95%: the 0.975 quantile of Student's t (Boost.Math, header-only in libboost-dev).
  return boost::math::quantile(boost::math::students_t_distribution<double>(static_cast<double>(dof)), 0.975);
}

namespace {

enum class LoadKind { open, closed };

LoadKind load_kind(const spec::Workload& w, const std::string& who = "a capacity search") {
  const auto classes = w.effective_classes();
  bool all_closed = true;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    if (std::holds_alternative<spec::TraceReplay>(classes[i].arrival))
      throw ConfigError("workload.arrival",
                        who + " varies the load, but trace replay fixes it (scale the trace with "
                              "time_scale and simulate instead)");
    if (std::holds_alternative<spec::OfflineArrivals>(classes[i].arrival))
      throw ConfigError("workload.arrival",
                        who + " varies the load, but an offline run puts every request at t = 0 (its "
                              "maximum throughput is `llmsim throughput`)");
    all_closed = all_closed && std::holds_alternative<spec::ClosedLoop>(classes[i].arrival);
  }
  if (all_closed) return LoadKind::closed;
  if (!spec::offered_rate(w))
    throw ConfigError("workload.arrival", who + " needs open-loop arrivals or a closed loop, not a mix");
  return LoadKind::open;
}

}  // namespace

void check_capacity_workload(const spec::Workload& workload, const std::string& who) { load_kind(workload, who); }

namespace {

// Percentile q of a latency: the SLO's percentiles are among `quantiles` (the collector adds them).
std::optional<double> percentile(const metrics::LatencyStats& l, double q) {
  for (const auto& [pq, v] : l.quantiles)
    if (pq == q) return v;
  if (q == 50) return l.p50;
  if (q == 90) return l.p90;
  if (q == 95) return l.p95;
  if (q == 99) return l.p99;
  return std::nullopt;
}

const metrics::LatencyStats& latency_of(spec::SloMetric m, const metrics::Summary& s, const metrics::ClassSummary* c) {
  switch (m) {
    case spec::SloMetric::ttft: return c ? c->ttft_ms : s.ttft_ms;
    case spec::SloMetric::tpot: return c ? c->tpot_ms : s.tpot_ms;
    case spec::SloMetric::e2e: return c ? c->e2e_ms : s.e2e_ms;
    case spec::SloMetric::itl: break;
  }
  return s.itl_ms;  // ITL is pooled over classes (docs/engine.md)
}

}  // namespace

std::optional<double> slo_target_value(const spec::SloTarget& t, const metrics::Summary& s,
                                       const metrics::ClassSummary* c) {
  const auto& l = latency_of(t.metric, s, c);
  if (l.count == 0) return std::nullopt;
  return percentile(l, t.percentile);
}

std::optional<int> closed_loop_users(const spec::Workload& w) {
  int n = 0;
  for (const auto& c : w.effective_classes()) {
    const auto* cl = std::get_if<spec::ClosedLoop>(&c.arrival);
    if (!cl) return std::nullopt;
    n += cl->concurrency;
  }
  return n;
}

bool run_meets_slo(const metrics::Summary& s) {
  return s.fits && !s.unstable && s.completed_requests > 0 && s.slo_met;
}

bool has_slo(const spec::Scenario& sc) {
  if (!sc.slo.empty()) return true;
  const auto classes = sc.workload.effective_classes();
  return std::any_of(classes.begin(), classes.end(), [](const spec::TenantClass& c) { return c.slo && !c.slo->empty(); });
}

std::string meets_slo_phrase(const spec::Scenario& sc, bool plural) {
  if (has_slo(sc)) return plural ? "meet the SLO" : "meets the SLO";
  return plural ? "serve the load stably (no SLO set)" : "serves the load stably (no SLO set)";
}

std::string slo_failures(const spec::Scenario& sc, const metrics::Summary& s) {
  if (!s.fits) return "does not fit: " + s.reason;
  if (s.unstable) return metrics::unstable_reason(s);  // labelled once (metrics::kUnstableLabel)
  if (s.completed_requests == 0) return "no request completed";
  std::string out;
  auto add = [&](const std::string& text) { out += (out.empty() ? "" : "; ") + text; };
  const auto classes = sc.workload.effective_classes();
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const spec::SloSpec& slo = classes[i].slo ? *classes[i].slo : sc.slo;
    // With several classes each is judged on its own distributions (summary.classes), as the collector does.
    const metrics::ClassSummary* c = i < s.classes.size() ? &s.classes[i] : nullptr;
    const std::string who = c ? "class " + c->name + ": " : "";
    for (const auto& t : slo.targets) {
      const auto v = slo_target_value(t, s, c);
      if (v && *v > t.max_ms)
        add(who + spec::to_string(t.metric) + ".p" + format_value(t.percentile) + " = " + format_fixed(*v, *v < 100 ? 1 : 0) +
            " ms > " + format_value(t.max_ms));
    }
    const double attainment = c ? c->slo_attainment : s.slo_attainment;
    if (slo.min_attainment && attainment < *slo.min_attainment)
      add(who + "slo_attainment = " + format_fixed(attainment, 3) + " < " + format_value(*slo.min_attainment));
  }
  if (out.empty() && !s.slo_met) out = "SLO not met";
  return out;
}

namespace {
constexpr std::int64_t kSessionSearchRequests = 20000;  ///< the most turns a session workload's search run keeps
}  // namespace

metrics::Summary steady_state_rates(const metrics::Summary& in, double offered_rate) {
  metrics::Summary s = in;
  // Sessions: the load is sessions/s; the requests it offers are their turns, at the measured turn arrival rate.
  if (in.sessions) offered_rate = in.offered.requests_per_s;
  if (in.unstable || !(offered_rate > 0)) return s;
  // The mix (tokens per request, share of requests meeting the SLO) comes from the steady-state window, which
  // ends at the last measured arrival and so is not diluted by the drain tail; with no such window (too few
  // requests) from the whole run. The rate itself is the offered one: a stable open loop completes what arrives.
  const bool steady = in.steady_state.window_s > 0 && in.steady_state.departures >= 10;
  const metrics::Throughput& from = steady ? in.steady_state.throughput : in.throughput;
  const double measured = from.requests_per_s;
  if (!(measured > 0)) return s;
  const double k = offered_rate / measured;
  s.throughput.requests_per_s = offered_rate;
  s.throughput.input_tokens_per_s = from.input_tokens_per_s * k;
  s.throughput.output_tokens_per_s = from.output_tokens_per_s * k;
  s.throughput.total_tokens_per_s = from.total_tokens_per_s * k;
  s.goodput_rps = (steady ? in.steady_state.goodput_rps : in.goodput_rps) * k;
  s.goodput_output_tps = (steady ? in.steady_state.goodput_output_tps : in.goodput_output_tps) * k;
  s.goodput_total_tps = (steady ? in.steady_state.goodput_total_tps : in.goodput_total_tps) * k;
  s.cost.per_mtok_output_slo = cost_per_mtok(s.cost.per_hour, s.goodput_output_tps).value_or(0.0);
  s.cost.per_mtok_total_slo = cost_per_mtok(s.cost.per_hour, s.goodput_total_tps).value_or(0.0);
  return s;
}

spec::ResolvedScenario at_load(const spec::ResolvedScenario& scenario, double load, std::uint64_t seed,
                               const CapacityOptions& options) {
  spec::ResolvedScenario r = scenario;
  // Sizing counts replicas, so it measures a fixed deployment: an autoscaler would add replicas to the one measured
  // (capacity then grew with autoscaler.max_replicas). The fleet sized for the peak is what it may scale up to.
  r.scenario.autoscaler.reset();
  auto& w = r.scenario.workload;
  w = spec::with_rate(spec::sizing_workload(w), load);
  // A session workload reaches its steady state (sessions in progress, their histories in the cache) only after
  // several session lifetimes (turns × think time): a short search run measures the empty-cache transient and
  // overstates capacity. It keeps the scenario's own length (and warm-up) when that is longer.
  const bool sessions = w.sessions.has_value();
  w.num_requests = sessions ? std::max(std::min(w.num_requests, kSessionSearchRequests), options.num_requests)
                            : std::min(w.num_requests, options.num_requests);
  w.warmup_requests = sessions ? std::min(w.warmup_requests, w.num_requests - 1)
                               : std::min(w.warmup_requests, options.warmup());
  if (w.warmup_requests >= w.num_requests) w.warmup_requests = w.num_requests / 10;
  w.seed = seed;
  return r;
}

metrics::Summary unloaded_run(const spec::ResolvedScenario& scenario, const CapacityOptions& options, bool closed_loop) {
  const double idle = closed_loop ? 1.0 : options.min_rate;
  spec::ResolvedScenario r = at_load(scenario, idle, scenario.scenario.workload.seed, options);
  if (scenario.fleet.empty()) r.scenario.hardware.replicas = 1;
  engine::SimulationOptions sim;
  sim.cancel = options.cancel;
  return evaluate(r, sim).summary;
}

std::optional<std::string> unloaded_slo_miss(const spec::ResolvedScenario& scenario, const CapacityOptions& options,
                                             bool closed_loop, const metrics::Summary* alone_run) {
  const double idle = closed_loop ? 1.0 : options.min_rate;
  const bool unit = !scenario.fleet.empty() || !scenario.disagg_pools.empty();
  const metrics::Summary alone = alone_run ? *alone_run : unloaded_run(scenario, options, closed_loop);
  if (!alone.fits || alone.unstable || alone.completed_requests == 0 || run_meets_slo(alone)) return std::nullopt;
  return "the SLO is below one request's unloaded latency: alone on one " + std::string(unit ? "unit" : "replica") +
         " (" + format_value(idle) + (closed_loop ? " user" : " req/s") + ", no queueing) " +
         slo_failures(scenario.scenario, alone) +
         ", and more replicas cannot shorten one request's prefill or decode (relax the SLO, or pick a faster card, "
         "a lighter format or more tensor parallel)";
}

CapacityResult find_capacity(const spec::ResolvedScenario& scenario, const CapacityOptions& options) {
  options.validate();
  CapacityResult out;
  const auto kind = load_kind(scenario.scenario.workload);
  out.closed_loop = kind == LoadKind::closed;
  out.sized_at = spec::sizing_window(scenario.scenario.workload);
  if (scenario.scenario.autoscaler)
    out.sized_at += std::string(out.sized_at.empty() ? "" : "; ") + "fixed replicas (the autoscaler off: it may scale up to the fleet sized)";

  SearchLimits limits;
  limits.rel_tol = options.rel_tol;
  limits.max_evaluations = options.max_evaluations;
  limits.integer = out.closed_loop;
  limits.min_x = out.closed_loop ? 1.0 : options.min_rate;
  limits.max_x = out.closed_loop ? static_cast<double>(options.max_concurrency) : options.max_rate;
  // One replication: its answer is the result. With more, the median could still come out above it.
  if (!out.closed_loop && options.replications == 1) limits.give_up_below = options.give_up_below_qps;
  const double start = out.closed_loop ? std::max(1, *closed_loop_users(scenario.scenario.workload))
                                       : std::max(spec::offered_rate(spec::sizing_workload(scenario.scenario.workload)).value_or(1.0),
                                                  limits.min_x);

  const std::uint64_t seed0 = scenario.scenario.workload.seed;
  struct Replication {
    bool found = false, hit_max = false;
    double load = 0, qps = 0;
    std::optional<metrics::Summary> summary;  // the run at `load`
    double lowest_fail = 0;                   // the lowest load tried that failed, and its run
    std::optional<metrics::Summary> lowest_fail_summary;
  };
  std::vector<Replication> reps;
  for (int rep = 0; rep < options.replications; ++rep) {
    const std::uint64_t seed = rep == 0 ? seed0 : derive_seed(seed0, "capacity-replication", rep);
    std::optional<metrics::Summary> last_pass;
    Replication r;
    bool not_fitting = false;
    // An unstable run fails the SLO whatever happens after the overload shows, so the search stops such runs
    // there (the one place the engine's early stop is used; every other run goes to its end).
    engine::SimulationOptions sim;
    sim.stop_when_unstable = true;
    sim.cancel = options.cancel;
    auto test = [&](double load) {
      auto result = evaluate(at_load(scenario, load, seed, options), sim);
      if (!result.summary.fits) {
        not_fitting = true;
        out.reason = result.summary.reason;
        return false;
      }
      const bool ok = run_meets_slo(result.summary);
      if (ok) {
        last_pass = std::move(result.summary);  // the pass point only grows, so this is the run at it
      } else if (!r.lowest_fail_summary || load < r.lowest_fail) {
        r.lowest_fail = load;  // kept to say why no load meets the SLO
        r.lowest_fail_summary = std::move(result.summary);
      }
      return ok;
    };
    SearchLimits lim = limits;
    double from = start;
    if (rep > 0 && reps.front().found) {
      from = reps.front().load;  // later replications start at the first one's answer
      lim.growth = 1.25;
    }
    const BisectionResult s = search_max_passing(test, from, lim);
    out.evaluations += s.evaluations;
    if (not_fitting) {  // memory does not depend on the load: one such run settles it
      out.fits = false;
      return out;
    }
    if (s.gave_up) {  // this seed's answer is below the rate asked for; the caller needs no more
      out.gave_up = true;
      out.reason = "the SLO fails at " + format_value(s.fail) + " req/s, below the " +
                   format_value(options.give_up_below_qps) + " req/s asked for (give_up_below_qps)";
      return out;
    }
    r.found = s.found;
    r.hit_max = s.hit_max;
    if (s.found) {
      r.load = s.pass;
      r.qps = out.closed_loop ? last_pass->throughput.requests_per_s : s.pass;
      r.summary = out.closed_loop ? *last_pass : steady_state_rates(*last_pass, s.pass);
    }
    reps.push_back(std::move(r));
  }

  // The point estimate is the median replication (lower median for an even count): robust to one unlucky
  // seed, and its run met the SLO at exactly that load, so the latencies reported there are real.
  std::vector<std::size_t> order(reps.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return reps[a].qps < reps[b].qps; });
  const Replication& median = reps[order[(order.size() - 1) / 2]];
  for (const auto& r : reps) {
    out.replications.push_back(r.qps);
    out.hit_limit = out.hit_limit || r.hit_max;
  }
  if (!median.found) {
    out.found = false;
    const double low = median.lowest_fail_summary ? median.lowest_fail : limits.min_x;
    const auto& failed = median.lowest_fail_summary;
    const double horizon = scenario.scenario.workload.horizon_s;
    if (failed && failed->fits && !failed->unstable &&
        (!failed->complete || (failed->completed_requests == 0 && horizon > 0))) {
      // The run was cut by the simulated-time limit (requests unfinished, or none arrived and finished within it),
      // not judged: blaming the SLO would send the user to the wrong knob.
      out.time_limited = true;
      out.reason = "no load could be judged: even at " + format_value(low) +
                   (out.closed_loop ? " concurrent user(s)" : " req/s") + " the run " +
                   (failed->complete ? "completed no request within workload.horizon_s = " + format_value(horizon) + " s"
                                     : failed->reason) +
                   " (the simulated-time limit: raise workload.horizon_s; the SLO was not what failed)";
      return out;
    }
    out.reason = "the SLO is not met even at the lowest load tried (" + format_value(low) +
                 (out.closed_loop ? " concurrent user(s)" : " req/s") + (reps.size() > 1 ? ", most of the seeds" : "") +
                 ")" +
                 (median.lowest_fail_summary ? ": " + slo_failures(scenario.scenario, *median.lowest_fail_summary) : "");
    // At the search's floor requests meet no queue: the SLO is below one request's unloaded latency, which more
    // replicas cannot shorten (a sizing answer of "more replicas" would never come).
    if (failed && failed->fits && !failed->unstable && failed->completed_requests > 0 && low <= limits.min_x * (1 + 1e-9))
      out.reason += " (requests one at a time: the SLO is below one request's unloaded latency, and more replicas "
                    "cannot shorten one request's prefill or decode; relax the SLO, or pick a faster card, a lighter "
                    "format or more tensor parallel)";
    return out;
  }
  out.found = true;
  out.max_qps = median.qps;
  out.at_capacity = median.summary;
  if (out.closed_loop) out.max_concurrency = static_cast<int>(median.load);

  const auto n = static_cast<double>(out.replications.size());
  double mean = 0;
  for (double v : out.replications) mean += v / n;
  if (out.replications.size() < 2) {
    out.ci95_lo = out.ci95_hi = out.max_qps;
  } else {
    double ss = 0;
    for (double v : out.replications) ss += (v - mean) * (v - mean);
    const double half = t95(static_cast<int>(n) - 1) * std::sqrt(ss / (n - 1) / n);
    out.ci95_lo = std::max(0.0, mean - half);
    out.ci95_hi = mean + half;
  }
  return out;
}

}  // namespace llmsim::analysis
