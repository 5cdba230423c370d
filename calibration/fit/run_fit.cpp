// Fitting a profile to benchmark runs. Parameters are log-multipliers on the base profile's values (a curve is
// scaled as a whole, or per M range), so every field is dimensionless and positive; bounds are box constraints on
// them (an efficiency's multiplier stops where its largest point reaches 1). Residuals are relative errors of the
// runs' measured values, so a 10 ms TTFT and a 30 s batch latency weigh the same. The candidate fields are in
// run_fit_fields.cpp, the least-squares problem and its solver in run_fit_solver.cpp; this file runs the fit, the
// automatic field selection and the leave-one-run-out check.
#include "run_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <set>

#include <Eigen/Dense>

#include "llmsim/core/error.hpp"
#include "llmsim/core/number.hpp"
#include "run_fit_fields.hpp"
#include "run_fit_solver.hpp"

namespace llmsim::calibration {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using detail::candidates;
using detail::Param;
using detail::Problem;
using detail::solve;

double rms(const std::vector<double>& pred, const std::vector<double>& meas) {
  double s = 0;
  for (std::size_t i = 0; i < pred.size(); ++i) s += std::pow(pred[i] / meas[i] - 1, 2);
  return pred.empty() ? 0 : std::sqrt(s / static_cast<double>(pred.size()));
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The runs' predictors, once every run is known to be one llmsim can price on `gpu`, all on one runtime. ConfigError
/// naming the run and the field otherwise (memory, lengths, TP: the predictor's own; another GPU or runtime: here).
std::vector<analysis::BenchPredictor> predictors(const std::vector<analysis::BenchRun>& runs, const spec::GpuSpec& gpu) {
  std::vector<analysis::BenchPredictor> preds;
  preds.reserve(runs.size());
  for (const auto& r : runs) {
    preds.emplace_back(r);  // ConfigError naming the run when it cannot run (memory, lengths, TP)
    const auto& rs = preds.back().resolved();
    const std::string parent = rs.gpu.id.substr(0, rs.gpu.id.find(':'));
    if (rs.gpu.id != gpu.id && parent != gpu.id)
      throw ConfigError(r.name + ".gpu", "the run is on '" + rs.gpu.id + "' but the profile is fitted for '" + gpu.id +
                                             "': a profile describes one card; fit each card from its own runs");
    if (r.runtime != runs.front().runtime)
      throw ConfigError(r.name + ".runtime", "the run is on runtime '" + spec::to_string(r.runtime) + "' but " +
                                                 runs.front().name + " on '" + spec::to_string(runs.front().runtime) +
                                                 "': a profile fitted from runs prices one runtime; fit them apart");
  }
  return preds;
}

}  // namespace

std::vector<std::vector<double>> predict_runs(const std::vector<analysis::BenchRun>& runs,
                                              const perf::HardwareProfile& profile) {
  std::vector<std::vector<double>> out;
  for (const auto& r : runs) out.push_back(analysis::BenchPredictor(r).predict(profile));
  return out;
}

namespace {

/// How much of a fit fit_runs_with computes. report: all of it. rank: what `--fields auto` ranks a candidate group by
/// and nothing else, i.e. rms_before and rms_cv (and median_before, median_cv, prior_scale, runs[k].before and
/// .cross_validated): the prior's plain fit, which sets s, and the leave-one-out refits, which read only s and the
/// start, never the fit of all runs. That fit, its Jacobian, standard errors, fields and fitted profile are left
/// out: `--fields auto` needs them for its chosen groups only, and fits those once more at `report` (issue 30:
/// every candidate was fitted in full, a fifth of the H200 run fit's CPU). The values are the same either way: every
/// prediction is a deterministic function of the run and the profile's text (PredictionCache), whichever fit made it.
enum class FitDepth { report, rank };

RunFitReport fit_runs_with(const std::vector<analysis::BenchRun>& runs, const spec::GpuSpec& gpu,
                           const perf::HardwareProfile& base, const RunFitOptions& o,
                           const std::shared_ptr<detail::PredictionCache>& cache, FitDepth depth = FitDepth::report);

/// fields = {"auto"}: forward selection over groups of fields (a curve's M ranges are one group) by the
/// leave-one-run-out RMS error: start from no field (the base profile's error), add the group that lowers it most,
/// stop when none lowers it by 1 % of itself. The runs judge which fields they can carry; the report says which.
RunFitReport fit_runs_auto(const std::vector<analysis::BenchRun>& runs, const spec::GpuSpec& gpu,
                           const perf::HardwareProfile& base, const RunFitOptions& o,
                           const std::shared_ptr<detail::PredictionCache>& cache) {
  RunFitOptions all = o;
  all.fields.clear();
  all.cross_validate = false;
  all.min_runs_per_field = 1;
  all.max_iterations = 1;
  // Every constrained candidate, once, to know the groups.
  std::vector<std::string> groups;
  auto add_group = [&](const std::string& field) {
    const std::string g = field.substr(0, field.find('['));
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
  };
  {
    // Runs llmsim cannot price, or on another GPU or runtime: that error first, as it is.
    const std::vector<analysis::BenchPredictor> preds = predictors(runs, gpu);
    try {
      for (const auto& f : fit_runs_with(runs, gpu, base, all, cache).fields) add_group(f.field);
    } catch (const ConfigError&) {
      // Fewer measured values than all the constrained fields together (three serving runs, say): every candidate
      // group is tried on its own below, where one the runs do not constrain is not a candidate.
      perf::HardwareProfile b = base;
      for (const auto& q : candidates(b, preds)) add_group(q.field);
    }
  }
  if (groups.empty()) return fit_runs_with(runs, gpu, base, all, cache);  // throws the reason no field is constrained
  std::string first_error;
  std::vector<std::string> chosen, path;
  double best = INFINITY;
  bool have = false;
  while (true) {
    std::string pick;
    double pick_cv = INFINITY;
    for (const auto& g : groups) {
      if (std::find(chosen.begin(), chosen.end(), g) != chosen.end()) continue;
      RunFitOptions t = o;
      t.fields = chosen;
      t.fields.push_back(g);
      t.cross_validate = true;
      try {
        const RunFitReport r = fit_runs_with(runs, gpu, base, t, cache, FitDepth::rank);
        if (!have) best = std::min(best, r.rms_before);  // no field fitted: the base profile's error
        if (r.rms_cv < pick_cv) {
          pick_cv = r.rms_cv;
          pick = g;
        }
      } catch (const ConfigError& e) {
        // too few runs for this group with the others: not a candidate
        if (first_error.empty()) first_error = t.fields.back() + ": " + e.what();
      }
    }
    if (pick.empty() || !(pick_cv < 0.99 * best)) break;
    chosen.push_back(pick);
    path.push_back(pick + " (leave-one-out RMS " + std::to_string(pick_cv) + ")");
    best = pick_cv;
    have = true;
  }
  if (!have && !std::isfinite(best))
    throw ConfigError("fields", "auto: no group of fields can be fitted to these runs (" + first_error + ")");
  if (!have) {
    throw ConfigError("fields", "auto: no field lowers the leave-one-run-out error of the base profile (RMS " +
                                    std::to_string(best) + "): these runs cannot improve it");
  }
  // The chosen groups fitted in full: the report the ranking would have kept (its plain fit and leave-one-out refits
  // are the cache's already; the fit of all runs and its Jacobian are what this adds).
  RunFitOptions t = o;
  t.fields = chosen;
  t.cross_validate = true;
  RunFitReport best_rep = fit_runs_with(runs, gpu, base, t, cache, FitDepth::report);
  std::string p;
  for (const auto& x : path) p += (p.empty() ? "" : ", then ") + x;
  best_rep.notes.insert(best_rep.notes.begin(), "fields chosen by leave-one-run-out error (from " +
                                                    std::to_string(best_rep.rms_before) + " with none): " + p);
  return best_rep;
}

RunFitReport fit_runs_with(const std::vector<analysis::BenchRun>& runs, const spec::GpuSpec& gpu,
                           const perf::HardwareProfile& base, const RunFitOptions& o,
                           const std::shared_ptr<detail::PredictionCache>& cache, FitDepth depth) {
  if (runs.empty()) throw ConfigError("runs", "no runs: nothing to fit");
  if (!(o.prior_scale >= 0) || !std::isfinite(o.prior_scale))
    throw ConfigError("--prior-scale (Python prior_scale=)",
                      "the prior's scale must be a finite number >= 0 (0: no prior), got " + format_given(o.prior_scale));
  // Below 1 a field no run constrains would be fitted on nothing, and no iteration is no fit.
  if (o.min_runs_per_field < 1)
    throw ConfigError("min_runs_per_field", "must be at least 1 (a field needs a run that constrains it), not " +
                                                std::to_string(o.min_runs_per_field));
  if (o.max_iterations < 1)
    throw ConfigError("max_iterations", "must be at least 1, not " + std::to_string(o.max_iterations));
  if (o.fields.size() == 1 && o.fields.front() == "auto") return fit_runs_auto(runs, gpu, base, o, cache);
  const std::vector<analysis::BenchPredictor> preds = predictors(runs, gpu);
  Problem pb;
  pb.preds = &preds;
  pb.cache = cache;
  if (!cache->guard_made) {
    cache->guard = detail::CapacityGuard::of(runs, cache->guard_notes, o.capacity_guard);
    cache->guard_made = true;
  }

  pb.base = base;
  pb.prior_scale = o.prior_scale;
  for (const auto& r : runs) {
    std::vector<double> m;
    for (const auto& v : r.measured) m.push_back(v.value);
    pb.measured.push_back(std::move(m));
  }
  RunFitReport rep;
  std::vector<Param> all = candidates(pb.base, preds);
  if (!o.fields.empty()) {
    std::vector<Param> chosen;
    for (auto& q : all) {
      const bool wanted = std::any_of(o.fields.begin(), o.fields.end(),
                                      [&](const std::string& f) { return q.field.rfind(f, 0) == 0; });
      if (wanted) chosen.push_back(std::move(q));
      else rep.notes.push_back(q.field + " not fitted (not among the fields asked for), kept from the base");
    }
    for (const auto& f : o.fields)
      if (!std::any_of(chosen.begin(), chosen.end(), [&](const Param& q) { return q.field.rfind(f, 0) == 0; }))
        throw ConfigError("fields", "'" + f + "' names no candidate field of these runs");
    all = std::move(chosen);
  }
  std::vector<int> every(runs.size());
  std::iota(every.begin(), every.end(), 0);

  // Which fields the runs constrain: d log T / d log field at the base, per run (`names`: the runs that move it by
  // min_sensitivity per e-fold; `strong`: how many move it by separable_sensitivity).
  struct Reach {
    std::vector<std::string> names;
    int strong = 0;
  };
  auto reach = [&](const std::vector<Param>& ps) {
    pb.params = ps;
    VectorXd xs = VectorXd::Zero(static_cast<Eigen::Index>(ps.size()));
    pb.clamp(xs);
    const VectorXd r0 = pb.residuals(xs, every);
    const MatrixXd J0 = pb.jacobian(xs, r0, every);
    std::vector<Reach> out(ps.size());
    for (std::size_t j = 0; j < ps.size(); ++j) {
      Eigen::Index row = 0;
      for (std::size_t k = 0; k < runs.size(); ++k) {
        double s = 0;
        for (std::size_t i = 0; i < pb.measured[k].size(); ++i, ++row)
          s = std::max(s, std::abs(J0(row, static_cast<Eigen::Index>(j)) / (1 + r0[row])));
        if (s >= o.min_sensitivity) out[j].names.push_back(runs[k].name);
        if (s >= o.separable_sensitivity) ++out[j].strong;
      }
    }
    return out;
  };
  std::vector<Reach> reached = reach(all);
  {
    // GEMM compute ranges the runs cannot pin apart are fitted as one multiplier (run_fit_fields.hpp).
    std::vector<int> strong;
    for (const auto& r : reached) strong.push_back(r.strong);
    std::vector<Param> merged = detail::merge_ranges(all, strong, o.min_runs_per_field,
                                                               o.separable_sensitivity, pb.base, rep.notes);
    if (merged.size() != all.size()) {
      all = std::move(merged);
      reached = reach(all);
    }
  }
  std::vector<Param> kept;
  std::vector<int> kept_runs;
  for (std::size_t j = 0; j < all.size(); ++j) {
    const std::vector<std::string>& names = reached[j].names;
    const int n = static_cast<int>(names.size());
    if (n == 0) {
      rep.unconstrained.push_back(all[j].field);
      continue;
    }
    if (n < o.min_runs_per_field) {
      throw ConfigError(all[j].field, "too few runs for this field: only " + names.front() + " constrains it (" +
                                          std::to_string(o.min_runs_per_field) + " needed, so that leaving one run out "
                                          "still fits it); add runs that exercise it or remove that run");
    }
    kept.push_back(all[j]);
    kept_runs.push_back(n);
  }
  if (kept.empty()) {
    throw ConfigError("runs", "no profile field is constrained by these runs (each field changes no prediction by "
                              "more than " + std::to_string(o.min_sensitivity) + " per e-fold): nothing to fit");
  }
  // As many measured values as fields, also with any one run left out (the cross-validation refits).
  std::size_t values = 0, most = 0;
  for (const auto& m : pb.measured) {
    values += m.size();
    most = std::max(most, m.size());
  }
  if (runs.size() < 2 || values - (o.cross_validate ? most : 0) < kept.size()) {
    std::string f;
    for (const auto& p : kept) f += (f.empty() ? "" : ", ") + p.field;
    throw ConfigError("runs", "too few runs: " + std::to_string(runs.size()) + " runs (" + std::to_string(values) +
                                  " measured values) for " + std::to_string(kept.size()) + " constrained fields (" + f +
                                  "); the fit needs as many values as fields, with any one run left out");
  }
  pb.params = kept;
  const Eigen::Index p = static_cast<Eigen::Index>(kept.size());
  VectorXd start = VectorXd::Zero(p);
  const int refused_before = cache->guard ? cache->guard->refused() : 0;
  if (cache->guard) {
    pb.guard = cache->guard.get();
    const perf::HardwareProfile b0 = pb.profile(start);
    pb.guard->set_base(b0, pb.key_of(b0));
    rep.notes.insert(rep.notes.end(), cache->guard_notes.begin(), cache->guard_notes.end());
  }
  // The prior's s is the error a measured value keeps whatever the profile: at most o.prior_scale (the card-to-card
  // scatter), and no more than these runs' own scatter about their best plain fit (RMS with n − p degrees of
  // freedom). Runs a profile reproduces exactly (llmsim's own files) then need no prior and get none; noisy or
  // mis-modelled ones get it at their noise, capped. The leave-one-out refits keep this s.
  double s = o.prior_scale;
  if (s > 0) {
    pb.prior_scale = 0;
    detail::SolveStats plain;
    const VectorXd x0 = solve(pb, start, every, o.max_iterations, &plain);
    rep.prior_fit_iterations = plain.iterations;
    rep.prior_fit_stopped_by = plain.stop;
    const VectorXd r0 = pb.residuals(x0, every);
    const double dof = std::max<double>(1.0, static_cast<double>(r0.size() - p));
    const double scatter = std::sqrt(r0.squaredNorm() / dof);
    rep.notes.push_back("prior: log-normal around the base profile, s = " + format_fixed(100 * std::min(s, scatter), 2) +
                        " % (" + (scatter < s ? "these runs' scatter about their best plain fit" :
                                                "the card-to-card scatter; the runs' own is " +
                                                    format_fixed(100 * scatter, 1) + " %") +
                        "), sigma " + format_fixed(kPriorSigmaKernel, 2) + " for kernels, ln 2 for host costs");
    s = std::min(s, scatter);
    pb.prior_scale = s;
  }
  // The fit of all runs, and what the report says of its fields (FitDepth::rank stops before them: x stays at the
  // start, which nothing it computes reads).
  VectorXd x = start;
  if (depth == FitDepth::report) {
    detail::SolveStats main_fit;
    x = solve(pb, start, every, o.max_iterations, &main_fit);
    rep.iterations = main_fit.iterations;
    rep.stopped_by = main_fit.stop;
    if (main_fit.stop == "limit")
      rep.notes.push_back("the fit stopped at max_iterations (" + std::to_string(o.max_iterations) +
                          ") with its cost still falling: not converged");
    rep.profile = pb.profile(x);

    // Standard errors and correlations from the Jacobian at the solution: which fields the runs can tell apart is for
    // the runs' rows alone to say (the prior's rows would separate every pair); the standard errors include the prior.
    const Eigen::Index nd = pb.data_rows(every);
    const VectorXd r_all = pb.residuals(x, every);
    const VectorXd r = r_all.head(nd);
    const MatrixXd J = pb.jacobian(x, r_all, every).topRows(nd);
    const MatrixXd A = J.transpose() * J;
    // The prior's rows: (s / σ_j)² on the diagonal of the normal equations.
    VectorXd w2(p);
    for (Eigen::Index j = 0; j < p; ++j)
      w2[j] = std::pow(s / kept[static_cast<std::size_t>(j)].prior_sigma, 2);
    Eigen::SelfAdjointEigenSolver<MatrixXd> eig(A);
    const double top = eig.eigenvalues().maxCoeff();
    MatrixXd cov = MatrixXd::Zero(p, p);
    for (Eigen::Index k = 0; k < p; ++k) {
      const double l = eig.eigenvalues()[k];
      const VectorXd v = eig.eigenvectors().col(k);
      if (l > 1e-10 * top) {
        cov += v * v.transpose() / l;
      } else {
        // A direction the runs do not see: the fields in it are inseparable (only their combination is fitted).
        for (Eigen::Index a = 0; a < p; ++a)
          for (Eigen::Index b = a + 1; b < p; ++b)
            if (std::abs(v[a]) > 0.3 && std::abs(v[b]) > 0.3)
              rep.correlated.push_back({kept[static_cast<std::size_t>(a)].field,
                                        kept[static_cast<std::size_t>(b)].field, v[a] * v[b] > 0 ? -1.0 : 1.0});
      }
    }
    const double dof = std::max<double>(1.0, static_cast<double>(r.size() - p));
    const double sigma2 = r.squaredNorm() / dof;
    // With the prior the normal equations are A + diag(w²): invertible, and its inverse is the posterior covariance.
    const MatrixXd post = s > 0 ? MatrixXd((A + MatrixXd(w2.asDiagonal())).inverse()) : cov;
    for (Eigen::Index a = 0; a < p; ++a) {
      for (Eigen::Index b = a + 1; b < p; ++b) {
        const double c = cov(a, b) / std::sqrt(std::max(cov(a, a) * cov(b, b), 1e-300));
        const bool listed = std::any_of(rep.correlated.begin(), rep.correlated.end(), [&](const FieldPair& q) {
          return q.a == kept[static_cast<std::size_t>(a)].field && q.b == kept[static_cast<std::size_t>(b)].field;
        });
        if (std::abs(c) >= 0.95 && !listed)
          rep.correlated.push_back(
              {kept[static_cast<std::size_t>(a)].field, kept[static_cast<std::size_t>(b)].field, c});
      }
    }
    for (Eigen::Index j = 0; j < p; ++j) {
      const Param& q = kept[static_cast<std::size_t>(j)];
      RunFitField f;
      f.field = q.field;
      f.value_kind = q.kind;
      f.base = q.base;
      // A field with an offset (Param::offset): its own value, the multiplier applying to it and the offset together.
      f.fitted = (q.base + q.offset) * std::exp(x[j]) - q.offset;
      f.lower = (q.base + q.offset) * q.lo - q.offset;
      f.upper = (q.base + q.offset) * q.hi - q.offset;
      f.at_bound = std::abs(x[j] - std::log(q.lo)) < 1e-6 || std::abs(x[j] - std::log(q.hi)) < 1e-6;
      f.runs = kept_runs[static_cast<std::size_t>(j)];
      f.std_error = std::sqrt(std::max(0.0, sigma2 * post(j, j)));
      f.prior_sigma = q.prior_sigma;
      f.data_share = s > 0 ? A(j, j) / (A(j, j) + w2[j]) : 1.0;
      rep.fields.push_back(f);
      if (f.at_bound) rep.notes.push_back(q.field + " stopped at its bound (" + std::to_string(f.fitted) + ")");
      if (f.data_share < 0.5)
        rep.notes.push_back(q.field + ": the runs weigh " + format_fixed(100 * f.data_share, 0) +
                            " % of its estimate, the prior the rest: it stays near the base (x" +
                            format_fixed(f.fitted / f.base, 3) + ")");
    }
  }

  // Per run: before (the base profile), after, and left out of the fit.
  std::vector<double> all_b, all_a, all_cv, run_b, run_a, run_cv;
  const perf::HardwareProfile base_profile = pb.profile(VectorXd::Zero(p));
  for (std::size_t k = 0; k < runs.size(); ++k) {
    RunFitRow row;
    row.run = runs[k].name;
    for (const auto& v : runs[k].measured) row.keys.push_back(v.key);
    row.measured = pb.measured[k];
    row.before = pb.predict(VectorXd::Zero(p), static_cast<int>(k));  // the base (with its curves' range points)
    if (depth == FitDepth::report) row.after = pb.predict(x, static_cast<int>(k));
    if (o.cross_validate) {
      std::vector<int> rest;
      for (int i : every)
        if (i != static_cast<int>(k)) rest.push_back(i);
      // A full refit from where the full fit started (the base profile, the prior's centre), with its iteration
      // limit: starting at the full fit's solution would carry the left-out run into the refit (the problem is not
      // convex, and a few iterations from there stay near it), so the error would flatter the profile.
      detail::SolveStats refit;
      const VectorXd xk = solve(pb, start, rest, o.max_iterations, &refit);
      rep.cv_iterations_max = std::max(rep.cv_iterations_max, refit.iterations);
      rep.cv_at_limit += refit.stop == "limit" ? 1 : 0;
      row.cross_validated = pb.predict(xk, static_cast<int>(k));
      row.error_cv = rms(row.cross_validated, row.measured);
    }
    row.error_before = rms(row.before, row.measured);
    row.error_after = rms(row.after, row.measured);
    for (std::size_t i = 0; i < row.measured.size(); ++i) {
      all_b.push_back(row.before[i] / row.measured[i] - 1);
      if (depth == FitDepth::report) all_a.push_back(row.after[i] / row.measured[i] - 1);
      if (o.cross_validate) all_cv.push_back(row.cross_validated[i] / row.measured[i] - 1);
    }
    run_b.push_back(row.error_before);
    run_a.push_back(row.error_after);
    run_cv.push_back(row.error_cv);
    rep.runs.push_back(std::move(row));
  }
  auto vrms = [](const std::vector<double>& v) {
    double s = 0;
    for (double e : v) s += e * e;
    return v.empty() ? 0.0 : std::sqrt(s / static_cast<double>(v.size()));
  };
  rep.rms_before = vrms(all_b);
  rep.rms_after = vrms(all_a);
  rep.rms_cv = vrms(all_cv);
  rep.median_before = median(run_b);
  rep.median_after = median(run_a);
  rep.median_cv = median(run_cv);
  rep.cross_validated = o.cross_validate;
  rep.prior_scale = s;
  if (depth == FitDepth::rank) return rep;  // what the ranking reads: rms_before and rms_cv
  (void)base_profile;
  if (pb.guard) {
    rep.capacity_probe = pb.guard->probe_name();
    rep.capacity_base = pb.guard->base_capacity();
    rep.capacity_fitted = pb.guard->capacity(rep.profile, pb.key_of(rep.profile));
    rep.capacity_refused = pb.guard->refused() - refused_before;
    if (rep.capacity_refused > 0)
      rep.notes.push_back("capacity guard held: " + std::to_string(rep.capacity_refused) +
                          " steps refused (leave-one-out refits included); predicted capacity " +
                          format_fixed(rep.capacity_base, 0) + " -> " + format_fixed(rep.capacity_fitted, 0) +
                          " output tokens/s");
  }
  if (o.cross_validate) rep.profile.cross_validated_error = cross_validated_error(all_cv, static_cast<int>(runs.size()));

  std::set<std::string> versions;
  for (const auto& r : runs)
    if (!r.engine_version.empty()) versions.insert(r.engine + " " + r.engine_version);
  std::string ver;
  for (const auto& v : versions) ver += (ver.empty() ? "" : ", ") + v;
  rep.profile.runtime = spec::to_string(runs.front().runtime);
  rep.profile.engine_version = ver;
  rep.profile.source = "fitted by llmsim calibrate-fit --runs from " + std::to_string(runs.size()) + " runs (" +
                       rep.profile.runtime + (ver.empty() ? "" : ", " + ver) + ") on " + base.source;
  rep.profile.validate("fitted profile");
  return rep;
}

}  // namespace

RunFitReport fit_runs(const std::vector<analysis::BenchRun>& runs, const spec::GpuSpec& gpu,
                      const perf::HardwareProfile& base, const RunFitOptions& o) {
  auto cache = std::make_shared<detail::PredictionCache>();
  // `--capacity-guard on` without a probe is an error of that switch, not of a field group that `--fields auto` would
  // then skip: the guard made here, once the runs are known to be priceable (their own errors first).
  if (o.capacity_guard == CapacityGuardMode::on && !runs.empty()) {
    (void)predictors(runs, gpu);
    cache->guard = detail::CapacityGuard::of(runs, cache->guard_notes, o.capacity_guard);
    cache->guard_made = true;
  }
  return fit_runs_with(runs, gpu, base, o, cache);
}

}  // namespace llmsim::calibration
