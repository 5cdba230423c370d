#pragma once
// The least-squares problem of a run fit (run_fit.hpp) and its solver: relative residuals of the runs' predictions
// for log-multipliers on the candidate fields (run_fit_fields.hpp), a numeric Jacobian, and bounded
// Levenberg-Marquardt. Private to calibration/fit; moved from run_fit.cpp.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <Eigen/Dense>

#include "run_fit_capacity.hpp"
#include "run_fit_fields.hpp"

namespace llmsim::calibration::detail {

/// The runs' predictions already made, per run, keyed by the profile they were made with (its JSON text, which is
/// what a serving run's simulation reads: the same text is the same prediction, bit for bit, since every simulation
/// is seeded). A fit evaluates the same profiles again and again: every solve starts at the base, its first Jacobian
/// perturbs each field from there, and the leave-one-out refits, the prior's plain fit and `--fields auto`'s trials
/// all start there too; a run's prediction at such a profile is made once. Shared by the fits of one fit_runs call.
struct PredictionCache {
  std::unordered_map<std::string, std::size_t> profiles;  ///< each profile's text once: its number
  std::vector<std::unordered_map<std::size_t, std::vector<double>>> by_run;  ///< indexed like Problem::measured
  long hits = 0, misses = 0;
  /// The capacity guard of these runs (made once, by the first fit of the call), or null: none applies.
  std::unique_ptr<CapacityGuard> guard;
  bool guard_made = false;
  std::vector<std::string> guard_notes;
};

/// The problem: predictors of the runs and the free parameters.
struct Problem {
  const std::vector<analysis::BenchPredictor>* preds;
  std::shared_ptr<PredictionCache> cache;  ///< never null (fit_runs makes one per call)
  /// The capacity guard (run_fit_capacity.hpp), when the runs all ran below capacity: solve() takes no step that
  /// moves the predicted capacity beyond it.
  CapacityGuard* guard = nullptr;
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
  /// The predictions of the runs in `use` for parameters x, in order (NaN for a run that cannot be priced).
  std::vector<std::vector<double>> predictions(const Eigen::VectorXd& x, const std::vector<int>& use) const;
  /// Whether parameters x keep the predicted capacity within the guard (always, without one).
  bool within_guard(const Eigen::VectorXd& x) const;
  /// The profile's number in the cache (its JSON text interned).
  std::size_t key_of(const perf::HardwareProfile& p) const;
  /// The predictions of run k for parameters x (through the cache).
  std::vector<double> predict(const Eigen::VectorXd& x, int k) const;
  /// residuals() from predictions already made (`preds_of`, in `use`'s order) at parameters x.
  Eigen::VectorXd residuals_of(const std::vector<std::vector<double>>& preds_of, const Eigen::VectorXd& x,
                               const std::vector<int>& use) const;
  /// Whether run k is predicted by a simulation (a serving run, `bench throughput`), not the cost model alone.
  bool simulated(int k) const;
  /// Forward differences of the residuals at x (r0 = residuals(x, use)): kStepModel for the cost model's runs,
  /// kStepSimulated for simulated ones.
  Eigen::MatrixXd jacobian(const Eigen::VectorXd& x, const Eigen::VectorXd& r0, const std::vector<int>& use) const;
  void clamp(Eigen::VectorXd& x) const;
};

/// How a solve ended: its iterations (accepted steps, each one Jacobian) and why it stopped.
struct SolveStats {
  int iterations = 0;
  /// "converged" (a step lowered the cost by less than kConvergedChi2 of one value's residual variance),
  /// "no_step" (no step lowers the cost: at a minimum or a bound), "precision" (the cost or the step at the limit of
  /// the arithmetic), "limit" (max_iter steps taken, still falling).
  std::string stop = "limit";
};

/// Bounded Levenberg-Marquardt (projected steps, Marquardt's diagonal scaling) from x over the runs in `use`. It stops
/// once an accepted step lowers the cost (the sum of squared residuals, the prior's rows included) by less than
/// kConvergedChi2 times the variance of one measured value about the current fit (the runs' rows' sum of squares over
/// their n − p degrees of freedom), and the linear model at the step's start promised no more than that beyond it (a
/// full Gauss-Newton step's gain, g' (J'J)^-1 g): what is left to gain is far below what the runs can resolve
/// (Numerical Recipes, 15.5: stop when chi2 falls by less than 0.01). The promise keeps a short step of a large lambda,
/// after refused ones, from passing for convergence: it gains little where much is left.
Eigen::VectorXd solve(const Problem& pb, Eigen::VectorXd x, const std::vector<int>& use, int max_iter,
                      SolveStats* stats);

}  // namespace llmsim::calibration::detail
