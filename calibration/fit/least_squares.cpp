#include "least_squares.hpp"

#include <cmath>
#include <string>

#include <Eigen/Dense>

#include "llmsim/core/error.hpp"

namespace llmsim::calibration {

LinearFit relative_least_squares(const std::vector<std::vector<double>>& rows, const std::vector<double>& y) {
  LLMSIM_CHECK(!rows.empty() && rows.size() == y.size(), "least squares needs one target per row");
  const auto cols = static_cast<Eigen::Index>(rows.front().size());
  LLMSIM_CHECK(cols > 0 && static_cast<Eigen::Index>(rows.size()) >= cols, "least squares is underdetermined");
  Eigen::MatrixXd a(static_cast<Eigen::Index>(rows.size()), cols);
  Eigen::VectorXd rhs(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    LLMSIM_CHECK(static_cast<Eigen::Index>(rows[i].size()) == cols, "least squares rows differ in length");
    LLMSIM_CHECK(y[i] > 0 && std::isfinite(y[i]), "least squares target must be positive");
    // Dividing each row by its target turns absolute into relative error.
    for (Eigen::Index j = 0; j < cols; ++j) a(static_cast<Eigen::Index>(i), j) = rows[i][static_cast<std::size_t>(j)] / y[i];
    rhs(static_cast<Eigen::Index>(i)) = 1.0;
  }
  const Eigen::VectorXd x = a.colPivHouseholderQr().solve(rhs);
  LinearFit fit;
  fit.coef.assign(x.data(), x.data() + x.size());
  const Eigen::VectorXd r = a * x - rhs;
  fit.rel_residuals.assign(r.data(), r.data() + r.size());
  return fit;
}

AffineRateFit fit_affine_rate(const std::vector<double>& x, const std::vector<double>& t) {
  LLMSIM_CHECK(!x.empty() && x.size() == t.size(), "affine fit needs matching, non-empty data");
  AffineRateFit out;
  bool distinct = false;
  for (double v : x) distinct = distinct || v != x.front();
  if (x.size() >= 2 && distinct) {
    std::vector<std::vector<double>> rows;
    for (double v : x) rows.push_back({1.0, v});
    const auto f = relative_least_squares(rows, t);
    if (f.coef[0] >= 0 && f.coef[1] > 0) {
      out.a = f.coef[0];
      out.b = 1.0 / f.coef[1];
      out.intercept_fitted = true;
      out.rel_residuals = f.rel_residuals;
      return out;
    }
  }
  std::vector<std::vector<double>> rows;
  for (double v : x) rows.push_back({v});
  const auto f = relative_least_squares(rows, t);
  LLMSIM_CHECK(f.coef[0] > 0, "rate fit gave a non-positive slope");
  out.b = 1.0 / f.coef[0];
  out.rel_residuals = f.rel_residuals;
  return out;
}

ResidualSummary summarize_residuals(const std::vector<double>& rel) {
  ResidualSummary s;
  s.n = static_cast<int>(rel.size());
  double sq = 0;
  for (double r : rel) {
    sq += r * r;
    s.max_abs = std::max(s.max_abs, std::fabs(r));
  }
  s.rms = s.n ? std::sqrt(sq / s.n) : 0;
  return s;
}

}  // namespace llmsim::calibration
