#pragma once
// `llmsim search`: the cheapest deployments that meet the scenario's SLO at a target load. The deployment space is
// data — axes of scenario JSON paths and their candidate values — enumerated as a cartesian product, pruned before
// simulating (resolve errors, memory fit, an analytic throughput bound → minimum replicas → a monthly-cost lower
// bound against the budget and, branch-and-bound, against the cheapest configuration found so far), then each
// survivor's capacity is searched and its fleet sized for the target (evaluate_row). Output: the Pareto front of
// monthly cost vs P95 TTFT vs P95 TPOT at the target, and the winner with its reasons. docs/search.md.
#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/parallel.hpp"
#include "llmsim/core/json_view.hpp"

namespace llmsim::spec {
class Catalog;
}

namespace llmsim::analysis {

/// One dimension of the space: a dotted scenario path (as in a sweep grid: "hardware.gpu", "quant.weights",
/// "engine.max_num_seqs", any field set_json_path accepts, so later sections such as "disaggregation.*" or
/// "engine.speculative" work as axes once the scenario knows them) and the values to try.
struct SearchAxis {
  std::string path;
  std::vector<Json> values;
};

/// The default axes: hardware.gpu over `gpus` (GPU options; empty = a default list of cards × 1, 2, 4, 8 GPUs as
/// tensor parallel, and 2 and 4 as pipeline parallel), engine.max_num_seqs (64..512) and
/// engine.max_num_batched_tokens (2048..16384; in vLLM V1 also the chunked-prefill chunk size). No format axes:
/// lossy weight or KV formats are searched only when an axis (or the base scenario's quant) asks for them.
std::vector<SearchAxis> default_search_axes(const std::vector<std::string>& gpus = {});

/// The default axes for the base scenario `base`: default_search_axes(gpus), except that a disaggregated base
/// (whose cards are its pools') gets the pools' split in place of the card axis — disaggregation.prefill.replicas
/// {1, 2} and disaggregation.decode.replicas {1, 2, 3, 4} (and the base's own counts): the unit search replicates.
/// ConfigError naming --gpus when `gpus` is given for a disaggregated base (it would be ignored).
std::vector<SearchAxis> default_search_axes_for(const Json& base, const std::vector<std::string>& gpus = {});

/// Whether two scenario fields overlap: equal, or one a section holding the other ("workload.arrival" holds
/// "workload.arrival.rate"). The one comparison of a sweep's --set against its grid axes and a search's.
bool fields_overlap(const std::string& a, const std::string& b);

/// The axes a search runs once the fields the caller set on top of the scenario file are known (`sets`: --set,
/// --vllm-args / --sglang-args, Python keyword overrides and vllm_args=). Before, an axis silently overrode them:
/// `--vllm-args "... --max-num-seqs 32"` or `--set hardware.tp=2` searched 64..512 and 1..8 GPUs anyway. A default
/// axis (its path not in `given`, the paths of the axes the caller gave: --axis, axes=) over a field set is dropped
/// and `notes` says the set value is kept; the card axis (hardware.gpu, which writes the split) with hardware.tp /
/// pp set, and an axis the caller gave over a field set, are refused (ConfigError naming both), as a sweep refuses
/// --set on a grid axis. One rule for the CLI and Python.
std::vector<SearchAxis> search_axes_for_sets(std::vector<SearchAxis> axes, const std::vector<std::string>& given,
                                             const std::vector<std::pair<std::string, Json>>& sets,
                                             std::vector<std::string>& notes);

/// The axes of a search whose `given` axes replace the defaults (the CLI's --axis): the default hardware.gpu axis
/// over `gpus` stays first unless the cards are placed already — by a given axis (hardware.gpu, a pool's
/// disaggregation.prefill/decode.gpu, hardware.fleet) or by the base scenario `base` itself (its cards in
/// disaggregation or hardware.fleet, where hardware.gpu is not used). A disaggregated base keeps the pools' split
/// axes (default_search_axes_for) unless an axis sizes or places a pool itself. One rule for every face.
std::vector<SearchAxis> with_default_gpu_axis(std::vector<SearchAxis> given, const std::vector<std::string>& gpus,
                                              const Json& base);

struct SearchOptions {
  double target_qps = 0;                    ///< req/s the fleet must carry within the SLO (> 0)
  std::optional<double> budget_per_month;   ///< configurations whose monthly bill would exceed it are dropped
  std::vector<SearchAxis> axes;             ///< empty = default_search_axes_for(base)
  /// First pass, per surviving configuration: a cheaper capacity search (fewer requests, one seed).
  CapacityOptions screen = [] {
    CapacityOptions c;
    c.num_requests = 300;
    c.warmup_requests = 30;
    c.replications = 1;
    c.rel_tol = 0.05;
    return c;
  }();
  /// The front is re-checked at these settings (the capacity defaults but 3 seeds) and re-assembled.
  CapacityOptions final_check = [] {
    CapacityOptions c;
    c.replications = 3;
    return c;
  }();
  /// The front's cost window: members' bills are within this × the cheapest feasible bill. Branch-and-bound: a
  /// configuration whose cost lower bound exceeds this × the cheapest feasible bill found so far is not simulated,
  /// and one whose capacity search shows its bill over it is screened out (it could not be the winner, nor a front
  /// member). 1 = the winner only.
  double front_cost_ratio = 2.0;
  int wave = 32;   ///< configurations simulated between bound updates (fixed: the result does not depend on jobs)
  int jobs = 1;    ///< threads
  const std::atomic<bool>* cancel = nullptr;
  Progress progress;  ///< (simulated so far, surviving the static pruning)
  void validate(const std::string& path = "search") const;
};

/// A configuration that survived the static pruning, with everything a worker needs to evaluate it.
struct SearchCandidate {
  std::int64_t index = 0;                               ///< position in the enumeration (cartesian, last axis fastest)
  std::vector<std::pair<std::string, Json>> point;      ///< axis path → value
  Json scenario;                                         ///< the full scenario, cost.target_qps set
  std::string name;                                      ///< "2xa100-80gb-sxm awq-int4 kv=fp8 seqs=128 mnbt=8192"
  int gpus_per_replica = 1;
  double price_per_gpu_hour = 0;
  double qps_bound_per_replica = 0;                      ///< replica_speed().requests_per_s_bound
  int min_replicas = 1;                                  ///< ⌈target ÷ bound⌉
  double monthly_lower_bound = 0;                        ///< the bill of min_replicas (hourly_cost × hours/month)
};

/// One candidate's capacity and its fleet at the target.
struct SearchEvaluation {
  std::int64_t index = -1;
  bool fits = true;
  bool meets_slo = false;        ///< capacity found and the sized fleet meets the SLO at its share of the target
  /// Its capacity search gave up early: a rate below what a bill under the cutoff needs failed the SLO, so the
  /// configuration can be neither the winner nor in the front's cost window (meets_slo = false; docs/search.md).
  bool screened = false;
  std::string reason;            ///< why not
  bool time_limited = false;     ///< its runs stopped at the simulated-time limit (CapacityResult::time_limited)
  double capacity_qps = 0;       ///< per replica
  int replicas = 0;              ///< for the target (row.replicas_needed)
  double monthly_cost = 0;
  double ttft_p95_ms = 0, tpot_p95_ms = 0;  ///< one replica at its share of the target
  std::optional<double> cost_per_mtok_output;
  std::string quality_caveat;    ///< lossy weight or KV formats: llmsim does not model quality (Row::quality_caveat)
  std::string slo_headroom_note; ///< the SLO barely above one request's unloaded latency (Row::slo_headroom_note)
};

struct SearchPlan {
  std::vector<SearchCandidate> candidates;  ///< sorted by monthly_lower_bound, then index
  std::int64_t enumerated = 0, invalid = 0, pruned_memory = 0, pruned_budget = 0;
  std::vector<std::string> invalid_examples;  ///< the first few reasons (resolve errors)
};

struct SearchFrontMember {
  SearchCandidate candidate;
  SearchEvaluation evaluation;  ///< at final_check settings
};

struct SearchResult {
  double target_qps = 0;
  std::optional<double> budget_per_month;
  /// simulated: candidates whose capacity search ran (screened ones included: they gave up after a few runs).
  std::int64_t enumerated = 0, invalid = 0, pruned_memory = 0, pruned_budget = 0, pruned_bound = 0, simulated = 0,
               screened = 0, feasible = 0, rechecked = 0;
  std::vector<SearchFrontMember> front;   ///< by monthly cost, then P95 TTFT
  /// into front: the cheapest, by compare's rule (analysis/ranking.hpp): bills within the noise tie, and a tie goes
  /// to the lossless format, then the cheaper card, then the lower bill, then the lower P95 TTFT
  std::optional<std::size_t> winner;
  std::vector<std::size_t> tied;          ///< into front: the members tied with the winner, it included (empty: none)
  std::string tie_note;                   ///< how the tie was broken ("" without one); also in reasons
  std::vector<std::string> reasons;       ///< why the winner won, what the runner-up lacks
  std::string currency = "USD";
};

/// Enumerates the axes over `base` (a scenario JSON object) and prunes statically. ConfigError for bad options,
/// an empty axis or a path that is not a scenario field (naming search.axes[i]). Runs on options.jobs threads;
/// the plan does not depend on them.
SearchPlan plan_search(const Json& base, const SearchOptions& options, const spec::Catalog& catalog);

/// Capacity search (`capacity` options) and fleet sizing of one candidate (what a Dask worker runs). With a finite
/// `max_bill` (the wave's search_cutoff) the capacity search gives up, screened = true, as soon as a failing rate
/// shows the bill would exceed it (CapacityOptions::give_up_below_qps; one replication only).
SearchEvaluation evaluate_candidate(const SearchCandidate& candidate, const CapacityOptions& capacity,
                                    const spec::Catalog& catalog, const std::atomic<bool>* cancel = nullptr,
                                    double max_bill = std::numeric_limits<double>::infinity());

/// Branch-and-bound's cutoff given the evaluations so far: front_cost_ratio × the cheapest feasible bill, at most
/// the budget (+infinity before any). A configuration whose bill is over it is neither the winner nor in the front.
double search_cutoff(const std::vector<std::optional<SearchEvaluation>>& done, const SearchOptions& options);

/// Branch-and-bound: positions (into plan.candidates) to simulate next given the evaluations so far
/// (`done[i]` for position i, in order); empty when the search is complete. Their evaluations take the
/// search_cutoff of the same `done` as max_bill.
std::vector<std::size_t> next_wave(const SearchPlan& plan, const std::vector<std::optional<SearchEvaluation>>& done,
                                   const SearchOptions& options);

/// Positions of the Pareto front (cost, P95 TTFT, P95 TPOT; all lower-is-better) among feasible evaluations whose
/// bill is within front_cost_ratio of the cheapest.
std::vector<std::size_t> pareto_positions(const std::vector<std::optional<SearchEvaluation>>& done,
                                          const SearchOptions& options);

/// The result from the first-pass evaluations and the front's re-checks (`final_evals[i]` for position
/// pareto_positions(first)[i]).
SearchResult assemble_search(const SearchPlan& plan, const std::vector<std::optional<SearchEvaluation>>& first,
                             const std::vector<SearchEvaluation>& final_evals, const SearchOptions& options);

/// The whole search on threads: plan, waves, re-check, assemble. Deterministic for any options.jobs.
SearchResult search(const Json& base, const SearchOptions& options, const spec::Catalog& catalog);

Json to_json(const SearchCandidate& c);
SearchCandidate candidate_from_json(const JsonView& v);
Json to_json(const SearchEvaluation& e);
SearchEvaluation evaluation_from_json(const JsonView& v);
Json to_json(const SearchResult& r);
/// Options from JSON (keys: target_qps, budget_per_month, axes [[path, [values]], ...] in order, jobs, wave,
/// front_cost_ratio, screen/final_check {num_requests, warmup_requests, replications, rel_tol}).
SearchOptions search_options_from_json(const JsonView& v);
/// Axes as that JSON: [[path, [values]], ...].
Json to_json(const std::vector<SearchAxis>& axes);

}  // namespace llmsim::analysis
