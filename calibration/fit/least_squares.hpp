#pragma once
// Small least-squares helpers for the calibration fit (Eigen stays inside the .cpp).
#include <vector>

namespace llmsim::calibration {

/// Solution of a linear model y ≈ Σ_j coef_j · x_j fitted in *relative* error: it minimises
/// Σ_i ((Σ_j A_ij coef_j − y_i) / y_i)², so a 3 µs point and a 30 ms point weigh the same.
struct LinearFit {
  std::vector<double> coef;
  std::vector<double> rel_residuals;  ///< (predicted − measured) / measured, per row
};

/// rows: one vector of regressors per observation (all the same length, ≥ 1); y > 0.
/// Solved by column-pivoting Householder QR. InternalError on inconsistent sizes or an empty system;
/// the caller ensures at least as many rows as columns.
LinearFit relative_least_squares(const std::vector<std::vector<double>>& rows, const std::vector<double>& y);

/// Fits T(x) = a + x / b (fixed cost a ≥ 0, rate b > 0) to (x, T) in relative error. With one point, or
/// when the intercept comes out negative, fits T = x / b (a = 0) instead and says so in `intercept_fitted`.
struct AffineRateFit {
  double a = 0;     ///< fixed cost, same unit as T
  double b = 0;     ///< rate: x per unit of T
  bool intercept_fitted = false;
  std::vector<double> rel_residuals;
};
AffineRateFit fit_affine_rate(const std::vector<double>& x, const std::vector<double>& t);

/// Summary of relative residuals: root mean square and largest magnitude.
struct ResidualSummary {
  int n = 0;
  double rms = 0;
  double max_abs = 0;
};
ResidualSummary summarize_residuals(const std::vector<double>& rel);

}  // namespace llmsim::calibration
