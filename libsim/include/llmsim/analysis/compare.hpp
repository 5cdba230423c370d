#pragma once
// Configuration search: GPU × count × parallelism × quantization × engine knobs for one model, workload and
// SLO. Each option gets a capacity search; the result names the cheapest option meeting the SLO and the
// Pareto frontier of cost against latency.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/parallel.hpp"
#include "llmsim/analysis/row.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {

enum class RankBy {
  monthly_cost,               ///< cheapest bill for the target load (replicas_needed × hourly × hours)
  cost_per_mtok,              ///< cheapest SLO-meeting output token at the target load (the fleet's)
  cost_per_mtok_at_capacity   ///< cheapest SLO-meeting output token with one replica at its capacity
};
std::string to_string(RankBy r);
RankBy parse_rank_by(const std::string& s, const std::string& path = "--rank-by");

struct CompareOptions {
  std::vector<std::string> gpus;               ///< GPU options (spec/gpu_option.hpp); empty = the scenario's deployment
  std::vector<std::string> quants;             ///< weight format ids; empty = the scenario's
  std::vector<std::string> policies;           ///< engine.policy values; empty = the scenario's
  std::vector<int> max_num_seqs;               ///< empty = the scenario's
  std::vector<int> max_num_batched_tokens;     ///< empty = the scenario's
  /// Price per GPU-hour by GPU id (cost.currency), overriding the catalogue placeholders. The base scenario's
  /// hardware.price_per_gpu_hour applies only to options on the base scenario's GPU.
  std::map<std::string, double> prices;
  /// Purchase price per card by GPU id (owned hardware), overriding the catalogue's; same rule as `prices`.
  std::map<std::string, double> purchase_prices;
  CapacityOptions capacity;
  RankBy rank_by = RankBy::monthly_cost;
  int jobs = 1;
  const spec::Catalog* catalog = nullptr;      ///< nullptr = spec::Catalog::builtin()
};

/// The --prices entry for `gpu`, if any.
std::optional<double> price_for(const std::map<std::string, double>& prices, const std::string& gpu);

struct CompareResult {
  std::vector<Row> rows;                 ///< option order: gpus × quants × policies × seqs × tokens
  double target_qps = 0;                 ///< open loop: the load (req/s) fleets are sized for
  std::string sized_at;                  ///< spec::sizing_window: "" or the daily profile's peak window
  std::optional<int> target_concurrency; ///< closed loop: the users fleets are sized for
  RankBy rank_by = RankBy::monthly_cost;
  /// Cheapest row meeting the SLO at capacity and, in its sized fleet, at the target (nullopt: none does). Rows
  /// indistinguishable from it (analysis/ranking.hpp: within the capacity CI at capacity, within 2% otherwise) are a
  /// tie, which goes to the lossless format, then the cheaper card, then the cheaper token at the target load.
  std::optional<std::size_t> winner;
  std::vector<std::size_t> tied;         ///< rows tied with the winner, the winner included (empty: no tie)
  std::string tie_note;                  ///< how the tie was broken ("" without one)
  /// Eligible options whose value lies within the model's own typical error of the winner's (their regimes' error
  /// bands, analysis/error_band.hpp, overlap): llmsim cannot rank them against the winner however narrow the
  /// simulation's noise. The winner is not listed; empty when none or when the bands are unknown.
  std::vector<std::size_t> within_model_error;
  std::string model_error_note;          ///< says so in words ("" when within_model_error is empty)
  std::vector<std::size_t> pareto;       ///< rows on the cost-vs-latency frontier, cheapest first
};

/// Runs the comparison. Unknown GPU ids or formats are ConfigError (before anything runs); an option
/// that cannot run (does not fit, or the model cannot be split that way) is a fits = false row with its
/// reason and no numbers. Each option runs with one replica; scaling_efficiency (analysis/scaling.hpp) and
/// capacity_ratio_per_gpu compare an N-GPU option with the 1-GPU option of the same card, format and knobs (run as
/// well when not listed).
CompareResult compare(const spec::Scenario& base, const CompareOptions& options, const Progress& progress = {});

/// Indices of the points not dominated in (cost, latency), both minimised, sorted by cost. Points with a
/// non-finite coordinate are ignored.
std::vector<std::size_t> pareto_frontier(const std::vector<std::pair<double, double>>& cost_latency);

Json to_json(const CompareResult& result);

}  // namespace llmsim::analysis
