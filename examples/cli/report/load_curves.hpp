#pragma once
// Latency against offered load for each option of a comparison, for the report's latency-vs-load plot: each option's
// own deployment (the scenario compare ran for it) simulated at fractions of its SLO capacity, up to and past
// saturation, through analysis::run_sweep. Loads where the queue grew without bound are kept as `unstable` points:
// their percentiles measure the run's length, not a latency, and the plot marks them instead of drawing them.
#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "llmsim/analysis/compare.hpp"
#include "llmsim/analysis/parallel.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::cli::report {

struct LoadPoint {
  double load = 0;         ///< offered req/s (closed loop: concurrent users)
  bool unstable = false;   ///< the queue grew without bound at this load
  double ttft_p95_ms = 0, tpot_p95_ms = 0;
};

struct LoadCurve {
  std::size_t row = 0;               ///< index into CompareResult::rows
  std::vector<LoadPoint> points;     ///< ascending load
  std::string note;                  ///< why there is no curve ("" when there is one)
};

/// Load multiples of each option's capacity the curves visit: dense below capacity, three loads past it.
const std::vector<double>& load_fractions();

/// The scenario compare ran for `row` (its card, count, split, format and knobs on `base`, priced as compare
/// priced it). ConfigError when it cannot be rebuilt.
spec::Scenario option_scenario(const spec::Scenario& base, const analysis::Row& row,
                               const analysis::CompareOptions& options);

/// One curve per fitting row (in row order). Each simulation uses the comparison's requests per run. An option
/// without a capacity (no load met the SLO) is visited at fractions of the target load instead. `cancel` stops
/// it (llmsim::Cancelled).
std::vector<LoadCurve> load_curves(const spec::Scenario& base, const analysis::CompareResult& result,
                                   const analysis::CompareOptions& options, const std::atomic<bool>* cancel,
                                   const analysis::Progress& progress = {});

}  // namespace llmsim::cli::report
