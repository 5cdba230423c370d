#pragma once
// The profile fields a fit to benchmark runs may move (run_fit.hpp): each a multiplier on the base profile's value
// or curve (per M range for GEMM efficiency), with bounds that keep the physics (no efficiency above 1). Private to
// calibration/fit; moved from run_fit.cpp.
#include <functional>
#include <string>
#include <vector>

#include "llmsim/analysis/bench_runs.hpp"
#include "llmsim/perf/hardware_profile.hpp"

namespace llmsim::calibration::detail {

struct Param {
  std::string field, kind;
  double base = 1;    ///< base value (kind "value") or 1 (a curve's multiplier)
  double lo = 0.05, hi = 20;  ///< multiplier bounds
  std::function<void(perf::HardwareProfile&, double)> apply;  ///< sets the field to base × multiplier
};

/// The candidate fields: those the cost model of these runs reads. `base` gets the points its GEMM curves are
/// fitted at (they change no value).
std::vector<Param> candidates(perf::HardwareProfile& base, const std::vector<analysis::BenchPredictor>& preds);

}  // namespace llmsim::calibration::detail
