// Private to perf: how one linear layer's GEMM runs (its path: weight bytes, tensor-core rate and efficiency curve,
// the format's kernel) and the kernels' output widths that set its wave term. The cost model's constants hold one
// path per kind of linear (cost_model_ops.hpp); the formulas that price them live there.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/perf/quant_kernels.hpp"

namespace llmsim::perf::cost_detail {

/// The output widths N of a GEMM op's kernels (perf/gemm_tiles.hpp): one kernel (n1), or two (n1, n2) with the first
/// doing `w1` of the FLOPs (gate_up and down: 2/3). n1 = 0: no grid known, no wave term.
struct GemmGrid {
  double n1 = 0, n2 = 0, w1 = 1;
};

/// Curve::at with the knots' logarithms computed once: the same expressions on the same values, so the
/// results are bit-identical, minus two std::log calls per lookup.
struct LogCurve {
  std::vector<double> x, y, lx;
  LogCurve() = default;
  explicit LogCurve(const Curve& c) : x(c.x), y(c.y) {
    for (double v : x) lx.push_back(std::log(v));
  }
  double at(double xv) const {
    if (x.empty()) return 1.0;
    if (x.size() == 1 || xv <= x.front()) return y.front();
    if (xv >= x.back()) return y.back();
    std::size_t i = 1;
    while (x[i] < xv) ++i;
    const double l0 = lx[i - 1], l1 = lx[i];
    const double w = (std::log(xv) - l0) / (l1 - l0);
    return y[i - 1] + w * (y[i] - y[i - 1]);
  }
};

/// One path a linear layer's GEMM runs: what a weight streams, the tensor-core rate and its efficiency, the format's
/// kernel multipliers, and the quantised kernel (perf/quant_kernels.hpp). The routed experts, the other MLPs and the
/// attention projections each have one (a format can keep attention or all but the experts 16-bit).
struct GemmPath {
  double bytes_per_param = 2;  ///< weight bytes streamed per parameter
  double peak = 0;             ///< tensor-core FLOP/s of the GEMM's dtype
  LogCurve eff;                ///< efficiency vs M on that dtype
  double q_c = 1, q_bw = 1;    ///< the format kernel's compute and weight-streaming multipliers
  bool in_format = false;      ///< the format's own kernel runs it (dequantisation and GEMV terms apply)
  QuantGemmKernel kernel = QuantGemmKernel::native;
  /// Rows from which a pre-Marlin kernel dequantises the whole weight and runs an fp16 GEMM instead.
  double dequant_min_rows = std::numeric_limits<double>::infinity();
  /// Fixed time per kernel beyond the profile's gemm_fixed_s (block-scaled FP8 linears: perf/block_fp8.hpp).
  double extra_fixed_s = 0;
};

}  // namespace llmsim::perf::cost_detail
