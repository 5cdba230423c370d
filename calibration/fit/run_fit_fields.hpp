#pragma once
// The profile fields a fit to benchmark runs may move (run_fit.hpp): each a multiplier on the base profile's value
// or curve (per M range for GEMM efficiency), with bounds that keep the physics (no efficiency above 1). Private to
// calibration/fit; moved from run_fit.cpp.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmsim/analysis/bench_runs.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "run_fit.hpp"

namespace llmsim::calibration::detail {

struct Param {
  Param(std::string f, std::string k, double b, double l, double h,
        std::function<void(perf::HardwareProfile&, double)> a = {})
      : field(std::move(f)), kind(std::move(k)), base(b), lo(l), hi(h), apply(std::move(a)) {}
  std::string field, kind;
  double base = 1;    ///< base value (kind "value") or 1 (a curve's multiplier)
  double lo = 0.05, hi = 20;  ///< multiplier bounds
  std::function<void(perf::HardwareProfile&, double)> apply;  ///< sets the field to base × multiplier
  /// GEMM compute efficiency: the M range (lo_m, hi_m] of its dtype's curve this multiplier scales (dtype set), so
  /// that ranges the runs cannot tell apart can be fitted as one (merge_ranges).
  std::optional<spec::DType> curve_dtype;
  double lo_m = 0, hi_m = 0;
  /// σ of the field's log-normal prior (run_fit.hpp): a kernel's efficiency or rate, or a host/latency cost.
  double prior_sigma = kPriorSigmaHost;
  /// What the runtime adds to the field and the runs see with it (kind "value"): the multiplier scales the sum, so
  /// that the field is (base + offset) × multiplier − offset and its prior is one on the whole cost. 0: the field alone.
  double offset = 0;
};

/// The candidate fields: those the cost model of these runs reads. `base` gets the points its GEMM curves are
/// fitted at (they change no value).
std::vector<Param> candidates(perf::HardwareProfile& base, const std::vector<analysis::BenchPredictor>& preds);

/// The GEMM compute efficiency of a dtype is one mechanism (the tensor cores at the card's clock) at every M: its
/// M ranges are fitted apart only where at least `min_runs` runs pin each one (`strong[j]`: the runs that move
/// param j by RunFitOptions::separable_sensitivity per e-fold). Every other range, touched weakly or not at all, shares the multiplier of
/// the nearest range that is pinned (no pinned range: one multiplier for the whole curve), so that what the small
/// runs measure (e.g. 512-token prefill chunks) also prices the M they did not reach (decode at batch 32-64), instead
/// of the prior. Other params pass through. `notes` gets one line per merged group.
std::vector<Param> merge_ranges(const std::vector<Param>& params, const std::vector<int>& strong, int min_runs,
                                double separable_sensitivity, const perf::HardwareProfile& base,
                                std::vector<std::string>& notes);

}  // namespace llmsim::calibration::detail
