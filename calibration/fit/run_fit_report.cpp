// The report of a fit from benchmark runs (run_fit.hpp): its JSON, and the leave-one-run-out error a fitted profile
// records for the error band of the predictions made with it (analysis/error_band.hpp).
#include <algorithm>
#include <cmath>

#include "llmsim/core/number.hpp"
#include "run_fit.hpp"
#include "run_fit_capacity.hpp"

namespace llmsim::calibration {

perf::HardwareProfile::CrossValidatedError cross_validated_error(const std::vector<double>& rel_errors, int runs) {
  perf::HardwareProfile::CrossValidatedError e;
  e.runs = runs;
  e.values = static_cast<int>(rel_errors.size());
  if (rel_errors.empty()) return e;
  // numpy's linear-interpolation percentile, as the validation report's bands (make error-bands) use.
  auto pct = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const double rank = q / 100.0 * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(rank));
    const auto hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
  };
  std::vector<double> abs;
  for (double x : rel_errors) abs.push_back(std::abs(x));
  e.median_abs = pct(abs, 50);
  e.p90_abs = pct(abs, 90);
  e.signed_median = pct(rel_errors, 50);
  return e;
}

Json to_json(const RunFitReport& r) {
  Json fields = Json::array();
  for (const auto& f : r.fields)
    fields.push_back({{"field", f.field}, {"kind", f.value_kind}, {"base", f.base}, {"fitted", f.fitted},
                      {"lower", f.lower}, {"upper", f.upper}, {"at_bound", f.at_bound}, {"runs", f.runs},
                      {"rel_std_error", f.std_error}, {"prior_sigma_log", f.prior_sigma}, {"data_share", f.data_share}});
  Json pairs = Json::array();
  for (const auto& c : r.correlated) pairs.push_back({{"a", c.a}, {"b", c.b}, {"correlation", c.correlation}});
  Json runs = Json::array();
  for (const auto& x : r.runs) {
    Json j{{"run", x.run}, {"keys", x.keys}, {"measured", x.measured}, {"before", x.before}, {"after", x.after},
           {"error_before", x.error_before}, {"error_after", x.error_after}};
    if (r.cross_validated) {
      j["cross_validated"] = x.cross_validated;
      j["error_cv"] = x.error_cv;
    }
    runs.push_back(j);
  }
  // The capacity guard (run_fit_capacity.hpp): null when it did not apply.
  Json guard;
  if (!r.capacity_probe.empty())
    guard = {{"probe", r.capacity_probe}, {"max_move", detail::kCapacityGuard},
             {"output_tokens_per_s_base", r.capacity_base}, {"output_tokens_per_s_fitted", r.capacity_fitted},
             {"steps_refused", r.capacity_refused}};
  return Json{{"gpu_id", r.profile.gpu_id},
              {"runtime", r.profile.runtime},
              {"engine_version", r.profile.engine_version},
              {"fields", fields},
              {"unconstrained", r.unconstrained},
              {"correlated", pairs},
              {"runs", runs},
              {"summary",
               {{"rms_before", r.rms_before}, {"rms_after", r.rms_after},
                {"rms_cross_validated", r.cross_validated ? Json(r.rms_cv) : Json()},
                {"median_run_error_before", r.median_before}, {"median_run_error_after", r.median_after},
                {"median_run_error_cross_validated", r.cross_validated ? Json(r.median_cv) : Json()}}},
              {"prior",
               {{"kind", r.prior_scale > 0 ? "log-normal around the base profile" : "none"},
                {"residual_scale", r.prior_scale},
                {"sigma_log_kernel", kPriorSigmaKernel},
                {"sigma_log_host", kPriorSigmaHost}}},
              {"capacity_guard", guard},
              {"iterations", r.iterations},
              {"convergence",
               {{"iterations", r.iterations},
                {"stopped_by", r.stopped_by},
                {"rule", "a step lowers the cost by less than " + format_fixed(kConvergedChi2, 2) +
                             " of one value's residual variance (Numerical Recipes 15.5)"},
                {"prior_fit_iterations", r.prior_fit_iterations},
                {"prior_fit_stopped_by", r.prior_fit_stopped_by.empty() ? Json() : Json(r.prior_fit_stopped_by)},
                {"cross_validation_iterations_max", r.cross_validated ? Json(r.cv_iterations_max) : Json()},
                {"cross_validation_at_limit", r.cross_validated ? Json(r.cv_at_limit) : Json()}}},
              {"notes", r.notes}};
}

}  // namespace llmsim::calibration
