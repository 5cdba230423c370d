#pragma once
// The least-squares problem of a run fit (run_fit.hpp) and its solver: relative residuals of the runs' predictions
// for log-multipliers on the candidate fields (run_fit_fields.hpp), a numeric Jacobian, and bounded
// Levenberg-Marquardt. Private to calibration/fit; moved from run_fit.cpp.
#include <vector>

#include <Eigen/Dense>

#include "run_fit_fields.hpp"

namespace llmsim::calibration::detail {

/// The problem: predictors of the runs and the free parameters.
struct Problem {
  const std::vector<analysis::BenchPredictor>* preds;
  std::vector<std::vector<double>> measured;  ///< per run
  perf::HardwareProfile base;
  std::vector<Param> params;
  /// The log-normal prior around the base (RunFitOptions::prior_scale = s): one more residual per parameter,
  /// (s / σ_j) · x_j, after the runs' rows.
  double prior_scale = 0;

  perf::HardwareProfile profile(const Eigen::VectorXd& x) const;
  /// Rows of the runs in `use`: their measured values (the residuals' first rows; the prior's follow).
  Eigen::Index data_rows(const std::vector<int>& use) const;
  /// Relative residuals of the runs in `use` (in order, all their values), then the prior's rows, for parameters x.
  Eigen::VectorXd residuals(const Eigen::VectorXd& x, const std::vector<int>& use) const;
  Eigen::MatrixXd jacobian(const Eigen::VectorXd& x, const Eigen::VectorXd& r0, const std::vector<int>& use) const;
  void clamp(Eigen::VectorXd& x) const;
};

/// Bounded Levenberg-Marquardt (projected steps, Marquardt's diagonal scaling) from x over the runs in `use`.
Eigen::VectorXd solve(const Problem& pb, Eigen::VectorXd x, const std::vector<int>& use, int max_iter, int* iterations);

}  // namespace llmsim::calibration::detail
