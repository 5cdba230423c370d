#pragma once
// One row of `capacity`, `compare` and `sweep`: an option's identity, whether it fits, and its numbers.
// JSON names are a contract (DESIGN.md "Result format"): absent numbers are null, never 0.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmsim/analysis/autoscaled_bill.hpp"
#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/slo_headroom.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/metrics/summary.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {

struct Row {
  std::vector<std::pair<std::string, Json>> labels;  ///< sweep: grid path → value, in grid order
  std::string name;                                  ///< scenario name or option label ("2xrtx4090-24gb awq-int4")
  // Identity (resolved ids).
  std::string model, gpu, quant, kv_cache, policy;
  int num_gpus = 1, tp = 1, pp = 1, replicas = 1;    ///< num_gpus = tp × pp × replicas
  int max_num_seqs = 0, max_num_batched_tokens = 0;
  std::string interconnect;                          ///< what one replica's GPUs talk over ("" for one GPU)
  double params = 0;                                 ///< the model's parameters (for the quality caveat)
  // Money identity: what the GPU-hour was billed at, and in which currency.
  std::string currency = "USD";
  double price_per_gpu_hour = 0;
  bool price_is_placeholder = true;                  ///< the catalogue's rough market figure, not a price given

  bool fits = true;
  /// False when the scenario sets no latency target (has_slo): meets_slo and slo_met are then written as null with
  /// slo_met_note, never as met.
  bool slo_set = true;
  std::string reason;                                ///< why it cannot run (fits = false) or found no capacity
  /// Offered load (req/s) of `summary`: the scenario's rate in a sweep, max_qps in capacity/compare.
  std::optional<double> load_qps;
  /// The run the row's latency, goodput and cost numbers come from; absent when it does not fit.
  std::optional<metrics::Summary> summary;
  std::optional<CapacityResult> capacity;            ///< when a capacity search ran

  double target_qps = 0;                             ///< sizing_target_qps (0 = unknown)
  /// Where the fleet was sized (spec::sizing_window): "" for the workload as given, else the daily profile's peak.
  std::string sized_at;
  std::optional<int> target_concurrency;             ///< closed loop: the users the fleet is sized for
  /// Replicas of this deployment for the target (+ spare): enough serving replicas that one of them meets the
  /// SLO at its share of the target (see evaluate_row).
  std::optional<int> replicas_needed;
  std::optional<int> serving_replicas;               ///< of replicas_needed, those serving (the rest are spares)
  int replicas_added = 0;                            ///< serving replicas beyond ⌈target / capacity⌉ the SLO needed
  /// USD per month: for target_qps with replicas_needed when a capacity search ran (an autoscaled scenario: its
  /// autoscaled bill, below), else the scenario's deployment as given (an autoscaled run: its own bill).
  std::optional<double> monthly_cost;
  /// The sized fleet (replicas_needed) held all month: monthly_cost of a fixed deployment; with an autoscaler what
  /// the peak's fleet would cost without it. Capacity rows only.
  std::optional<double> fixed_monthly_cost;
  /// An autoscaled scenario's capacity row: the sized fleet's day (or run) simulated with the autoscaler scaling up to
  /// the serving replicas sized, billed for the replica-hours it held (analysis/autoscaled_bill.hpp); monthly_cost and
  /// cost_per_mtok_*_at_target are its.
  std::optional<AutoscaledBill> autoscaled_bill;
  /// What monthly_cost assumes, in words: the fixed fleet held all month, the autoscaled run's replica-hours, or the
  /// run as given. Every command that prints a bill prints it.
  std::string bill_basis;
  /// What a million SLO-meeting output (total) tokens cost at the user's load: the fleet's hourly cost (spares and
  /// extras included) over the tokens its serving replicas deliver at their share of the target. Capacity rows:
  /// that fleet; sweep rows: the run itself when it is at the target load (cost.target_qps unset).
  std::optional<double> cost_per_mtok_output_at_target, cost_per_mtok_total_at_target;
  /// The guides' multi-GPU scaling efficiency (compare, multi-GPU options): SLO-meeting output tokens/s of the N-GPU
  /// replica ÷ (N × that of one GPU of the same card, format and knobs), both at `scaling_concurrency` closed-loop
  /// users — the concurrency one GPU carries at its SLO capacity (analysis/scaling.hpp).
  std::optional<double> scaling_efficiency;
  std::optional<int> scaling_concurrency;
  /// Capacity per GPU against one GPU's: goodput at SLO capacity of N GPUs ÷ (N × that of 1 GPU), each at its own
  /// capacity (what compare showed as "scale eff" before; above 1 when one card is starved).
  std::optional<double> capacity_ratio_per_gpu;
  // Owned hardware (analysis/ownership.hpp), for the same fleet; null when it cannot be priced (owned_note says why).
  std::optional<double> purchase_price_per_gpu;
  bool purchase_price_is_placeholder = true;
  std::optional<double> owned_cost_per_gpu_hour;     ///< depreciation + energy + hosting, averaged over the fleet's GPUs
  std::optional<double> owned_monthly_cost;          ///< the fleet owned, priced like rental (ops overhead, extras)
  std::optional<double> owned_cost_per_mtok_output_at_target;
  std::optional<double> break_even_months;           ///< months after which buying has cost less than renting
  std::string owned_note;                            ///< why owned is null, or what it assumed
  std::string quality_caveat;                        ///< quantized formats: llmsim does not model quality (quality.hpp)
  /// Capacity rows: the SLO sits within the model's typical error of one request's unloaded latency, so the fleet is
  /// set by queueing noise (analysis/slo_headroom.hpp); "" otherwise.
  std::string slo_headroom_note;
  /// Capacity rows of several replicas whose tightest latency target has headroom h < 1 over one request's unloaded
  /// latency: the same sizing with every latency target 1 + h looser (its fewest serving replicas and their fixed
  /// bill; slo_headroom.hpp's knee). Null otherwise.
  std::optional<LooserSlo> looser_slo;
  /// The sized fleet's run at the target: its serving replicas behind the scenario's router at target_qps (closed
  /// loop: target_concurrency users), at_target_whole_fleet; a heterogeneous fleet or a disaggregated deployment
  /// is run as one unit at its share (target / serving units). Spares idle.
  std::optional<metrics::Summary> at_target;
  std::optional<double> at_target_load_qps;          ///< its offered rate (closed loop: completed req/s)
  std::optional<int> at_target_concurrency;          ///< closed loop: its users
  bool at_target_whole_fleet = false;                ///< at_target is the whole fleet (else one unit at its share)

  /// The row's SLO verdict: fits, and (capacity rows) some load met the SLO and, with an autoscaled bill, the billed
  /// day met it too (`reason` says when it did not), (others) summary.slo_met.
  bool meets_slo() const;
};

struct RowOptions {
  bool capacity = false;            ///< run a capacity search (else one simulation at the scenario's load)
  CapacityOptions capacity_options;
  /// An autoscaled scenario's capacity row bills the sized fleet's autoscaled run (autoscaled_bill.hpp); false bills
  /// the fleet held all month, saying so in bill_basis (search: its bounds and screening price fixed fleets).
  bool bill_autoscaler = true;
  /// Passed to every simulation the row runs (engine::SimulationOptions::cancel): set, evaluate_row throws
  /// llmsim::Cancelled promptly.
  const std::atomic<bool>* cancel = nullptr;
};

/// The load a fleet is sized for: cost.target_qps, else the offered rate of the sizing workload
/// (spec::sizing_workload: a daily profile's peak, not its mean); 0 when unknown (closed loop, trace, offline).
double sizing_target_qps(const spec::Scenario& scenario);

/// Identity fields of a row from a resolved scenario (no simulation).
Row row_identity(const spec::ResolvedScenario& scenario);

/// Simulates (and with options.capacity, searches capacity and sizes the fleet for the target load: open loop
/// target_qps, closed loop the workload's users). Sizing starts at ⌈target / capacity per replica⌉ serving
/// replicas and simulates that fleet whole, with its router, at the target; while it misses the SLO the fleet
/// grows ~10% a step (at least one replica) up to 4 × the estimate + 4; when no size meets it the first count
/// stays, at_target shows the miss and reason states the limit.
/// A configuration that does not fit gives fits = false with the reason and no numbers. ConfigError as
/// check_fleet_target().
Row evaluate_row(const spec::ResolvedScenario& scenario, const RowOptions& options = {});

/// ConfigError when a closed-loop scenario sets cost.target_qps: its fleet is sized for its users, not a rate.
void check_fleet_target(const spec::Scenario& scenario);

/// The row as a JSON object with every contract field present (null where there is no number).
Json to_json(const Row& row);

/// The row flattened to columns for CSV and `--fail-if`: nested objects joined with '.', the CI as
/// max_qps_ci95_lo/_hi, grid labels first under their dotted paths (a row column of the same name, such as
/// "model", gives way to the label). Same columns for every row with the same labels.
std::vector<std::pair<std::string, Json>> flatten(const Row& row);

/// Column names flatten() produces for rows with these grid label paths.
std::vector<std::string> row_columns(const std::vector<std::string>& label_paths = {});

}  // namespace llmsim::analysis
