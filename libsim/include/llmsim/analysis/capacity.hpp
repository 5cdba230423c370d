#pragma once
// Capacity: the largest load (open loop: arrival rate; closed loop: concurrency) at which the scenario's
// SLO holds, by bracketing and bisection on a fixed seed (common random numbers make the pass/fail test
// nearly monotone in the load), with a 95% confidence interval from independent replications.
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmsim/metrics/summary.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {

struct CapacityOptions {
  /// Requests per simulation (the scenario's num_requests when smaller) and warm-up requests excluded.
  /// 600 measured requests put ~30 samples above the P95: enough for a stable tail, cheap enough that a
  /// search of ~30 simulations takes well under 0.5 s (bench/bench_capacity.cpp).
  std::int64_t num_requests = 600;
  /// Unset: the scenario's rule for an unset workload.warmup_requests applied to num_requests
  /// (spec::default_warmup_requests: 60 of the default 600, 30 of 300), so every caller (CLI, Python, sweeps) that
  /// shortens the runs gets the same warm-up without restating the rule (issue 29: Python's capacity(num_requests=50)
  /// kept 60 and was refused, compare(num_requests=300) ran 60 against the CLI's 30).
  std::optional<std::int64_t> warmup_requests;
  std::int64_t warmup() const noexcept { return warmup_requests.value_or(spec::default_warmup_requests(num_requests)); }
  int replications = 5;           ///< independent seeds for the confidence interval (1 = no interval)
  double rel_tol = 0.03;          ///< bisection stops at this relative width
  int max_evaluations = 40;       ///< per replication
  double min_rate = 1e-3;         ///< open loop: below this req/s the SLO counts as never met
  double max_rate = 1e5;          ///< open loop: searching stops here
  int max_concurrency = 4096;     ///< closed loop: searching stops here
  /// Open loop: give up as soon as a rate below this has failed the SLO, since the answer would be below it too
  /// (found = false, gave_up = true): for a caller that only needs capacities above it (search's screening,
  /// docs/search.md). 0 = never; ignored for closed loops and with more than one replication (the median of
  /// several could still be above it).
  double give_up_below_qps = 0;
  /// Passed to every simulation of the search (engine::SimulationOptions::cancel): set, the search throws
  /// llmsim::Cancelled within one simulation's few thousand events.
  const std::atomic<bool>* cancel = nullptr;
  void validate(const std::string& path = "capacity") const;
};

struct CapacityResult {
  bool fits = true;
  /// Why it cannot run, or why no load meets the SLO: the lowest load tried and its failing targets
  /// (slo_failures()), e.g. "... at 0.001 req/s: ttft_ms.p95 = 4204 ms > 2000".
  std::string reason;
  /// No load could be judged against the SLO: even the lowest load's run stopped before its requests finished
  /// (the simulated-time limit, workload.horizon_s), so the reason names that limit, not the SLO.
  bool time_limited = false;
  bool closed_loop = false;
  /// Where the load was sized (spec::sizing_window): "" for the workload as given, else the daily profile's
  /// peak window — max_qps is then the peak arrival rate the deployment carries.
  std::string sized_at;
  bool found = false;             ///< some load met the SLO (max_qps > 0)
  bool hit_limit = false;         ///< the SLO still held at max_rate / max_concurrency
  /// Stopped early: a rate below options.give_up_below_qps failed, so the capacity is below it (found = false).
  bool gave_up = false;
  /// Largest arrival rate (req/s) meeting the SLO: the median over the replications of each seed's
  /// bisection result (closed loop: completed requests per second at max_concurrency). Repeatable: the
  /// replication seeds derive from the scenario's seed, so the same scenario gives the same number.
  double max_qps = 0;
  std::optional<int> max_concurrency;  ///< closed loop only
  /// 95% confidence interval of the mean capacity over the replications (Student t); equal to
  /// [max_qps, max_qps] with one replication.
  double ci95_lo = 0, ci95_hi = 0;
  std::vector<double> replications;    ///< capacity found with each seed (index 0 = the scenario's seed; 0 = none)
  int evaluations = 0;                 ///< simulations run, all replications together
  /// The median replication's run at max_qps (cost fields filled, rates steady-state for open loops);
  /// only when found.
  std::optional<metrics::Summary> at_capacity;
};

/// ConfigError (workload.arrival) unless a capacity search can vary the workload's load: trace replay and offline
/// arrivals fix it, and a mix of open- and closed-loop classes has no one load. `who` names the caller in the message
/// ("a capacity search"; compare and report say that they size every option by one). The one rule find_capacity and
/// compare apply, so a workload no option can be sized for is refused before anything runs, never a table of
/// "cannot run" rows for every card.
void check_capacity_workload(const spec::Workload& workload, const std::string& who = "a capacity search");

/// Searches the scenario's capacity. A configuration that does not fit returns fits = false with the
/// reason; an unstable or not-fitting run counts as failing the SLO, and the search's simulations stop as soon
/// as they are known to be unstable (SimulationOptions::stop_when_unstable). ConfigError for trace-replay and
/// offline workloads (their load is fixed) and for bad options. Deterministic.
CapacityResult find_capacity(const spec::ResolvedScenario& scenario, const CapacityOptions& options = {});

/// The scenario as the capacity search runs it: its sizing workload (spec::sizing_workload: a daily profile's
/// peak window), num_requests/warm-up capped by `options`, the load set to `load` (open loop: total arrival
/// rate; closed loop: concurrency), the seed replaced by `seed`.
spec::ResolvedScenario at_load(const spec::ResolvedScenario& scenario, double load, std::uint64_t seed,
                               const CapacityOptions& options);

/// The summary's rates (throughput.*, goodput_*) and cost per Mtok as the long-run rates of a stable open-loop
/// system: completions per second equal the offered rate, and tokens per request and the share meeting the
/// SLO are those of the steady-state window (first to last measured arrival: summary.steady_state), which the
/// drain tail does not dilute (the whole run's rates fall ~25% low for 600 requests with 30 s tails). Falls
/// back to the whole run's ratios when the window holds fewer than 10 departures. Unchanged when the run is
/// unstable or completed nothing.
metrics::Summary steady_state_rates(const metrics::Summary& summary, double offered_rate);

/// Users of a closed-loop workload (concurrency summed over its classes); nullopt unless every class is closed.
std::optional<int> closed_loop_users(const spec::Workload& workload);

/// The capacity search's verdict on one run: it fits, is stable, completed requests and met the SLO.
bool run_meets_slo(const metrics::Summary& summary);

/// Why a run misses its SLO, naming each failing target with its value, e.g.
/// "ttft_ms.p95 = 4204 ms > 2000; slo_attainment = 0.81 < 0.9" (tenant classes prefixed "class NAME: ");
/// also "does not fit: ...", "unstable: ..." or "no request completed". Empty when run_meets_slo().
std::string slo_failures(const spec::Scenario& scenario, const metrics::Summary& summary);

/// Whether the scenario sets a latency target to meet: its SLO or a tenant class's. Without one, a row that "meets the
/// SLO" only served its load stably, and no output says it met an SLO.
bool has_slo(const spec::Scenario& scenario);

/// The words for a verdict that meets_slo stands for: "meets the SLO" (plural: "meet the SLO"), or with no latency
/// target set "serves the load stably (no SLO set)" ("serve ..."). One rule for compare, report, search and Python.
std::string meets_slo_phrase(const spec::Scenario& scenario, bool plural = false);

/// The scenario with no queueing: one replica (a fleet or disaggregated deployment: one unit) at `options.min_rate`
/// req/s (a closed loop: one user), `options.num_requests` requests on the scenario's seed. When even that misses
/// the SLO: "the SLO is below one request's unloaded latency: alone on one replica (0.001 req/s, no queueing)
/// ttft_ms.p95 = 327 ms > 280, and more replicas cannot shorten ..." (slo_failures names the latency); nullopt
/// when it meets the SLO, does not fit, is unstable or completes nothing. Sizing says it when growing the fleet
/// did not reach the SLO, so that "not met at 44 replicas" does not read as "buy 45".
/// `alone`: the run of unloaded_run(scenario, options, closed_loop) when the caller has it (else it is run here).
std::optional<std::string> unloaded_slo_miss(const spec::ResolvedScenario& scenario, const CapacityOptions& options,
                                             bool closed_loop, const metrics::Summary* alone = nullptr);

/// The run unloaded_slo_miss judges: one replica (a fleet or disaggregated deployment: one unit) at options.min_rate
/// req/s (a closed loop: one user), the capped request count, on the scenario's seed — one request's own latency.
metrics::Summary unloaded_run(const spec::ResolvedScenario& scenario, const CapacityOptions& options, bool closed_loop);

/// One SLO target's value in a run: its percentile of class `c`'s distribution (ITL pooled over classes), else the
/// run's; nullopt when the run has no such latency. The one reading of a target (slo_failures, slo_headroom).
std::optional<double> slo_target_value(const spec::SloTarget& target, const metrics::Summary& summary,
                                       const metrics::ClassSummary* c = nullptr);

/// Student t quantile for a two-sided 95% interval with `dof` degrees of freedom (dof >= 1).
double t95(int dof);

}  // namespace llmsim::analysis
