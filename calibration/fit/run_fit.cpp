// Fitting a profile to benchmark runs. Parameters are log-multipliers on the base profile's values (a curve is
// scaled as a whole, or per M range), so every field is dimensionless and positive; bounds are box constraints on
// them (an efficiency's multiplier stops where its largest point reaches 1). Residuals are relative errors of the
// runs' measured values, so a 10 ms TTFT and a 30 s batch latency weigh the same.
#include "run_fit.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <thread>

#include <Eigen/Dense>

#include "llmsim/core/error.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/runtime.hpp"

namespace llmsim::calibration {

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

struct Param {
  std::string field, kind;
  double base = 1;    ///< base value (kind "value") or 1 (a curve's multiplier)
  double lo = 0.05, hi = 20;  ///< multiplier bounds
  std::function<void(perf::HardwareProfile&, double)> apply;  ///< sets the field to base × multiplier
};

/// Multiplies the curve points whose x lies in (lo_m, hi_m] (efficiency curves), keeping them positive.
void scale_points(perf::Curve& c, const perf::Curve& base, double lo_m, double hi_m, double s) {
  for (std::size_t i = 0; i < c.x.size(); ++i)
    if (base.x[i] > lo_m && base.x[i] <= hi_m) c.y[i] = base.y[i] * s;
}

double max_in(const perf::Curve& c, double lo_m, double hi_m) {
  double m = 0;
  for (std::size_t i = 0; i < c.x.size(); ++i)
    if (c.x[i] > lo_m && c.x[i] <= hi_m) m = std::max(m, c.y[i]);
  return m;
}

/// The M ranges fitted apart, and the points a curve gets at them (kGrid) so that each range has its own.
constexpr double kRanges[][2] = {{0, 128}, {128, 1024}, {1024, INFINITY}};
constexpr double kGrid[] = {1, 16, 128, 512, 1024, 4096, 16384};

/// The same curve with points added at kGrid: a point on a piecewise-linear (in log M) curve changes no value, so
/// the base profile predicts exactly as before, and a one-point (constant) prior gets points in every M range.
perf::Curve with_range_points(const perf::Curve& c) {
  std::map<double, double> pts;
  for (std::size_t i = 0; i < c.x.size(); ++i) pts[c.x[i]] = c.y[i];
  for (double x : kGrid)
    if (!pts.count(x)) pts[x] = c.at(x);
  perf::Curve out;
  for (const auto& [x, y] : pts) {
    out.x.push_back(x);
    out.y.push_back(y);
  }
  return out;
}

std::string m_range(double lo, double hi) {
  auto n = [](double v) { return std::to_string(static_cast<long long>(v)); };
  if (lo <= 0) return "[M<=" + n(hi) + "]";
  if (std::isinf(hi)) return "[M>" + n(lo) + "]";
  return "[" + n(lo) + "<M<=" + n(hi) + "]";
}

/// The candidate fields: those the cost model of these runs reads.
std::vector<Param> candidates(perf::HardwareProfile& base, const std::vector<analysis::BenchPredictor>& preds) {
  std::vector<Param> out;
  std::set<spec::DType> dtypes;
  bool v1 = false, v0 = false, tp = false;
  for (const auto& p : preds) {
    const auto& rs = p.resolved();
    const perf::CostModel cm(rs.model, rs.quant, rs.gpu, base, rs.scenario.hardware.parallel, true, 0,
                             perf::runtime_of(rs.scenario.engine));
    dtypes.insert(cm.gemm_dtype());
    const auto cpu = perf::runtime_traits(perf::runtime_of(rs.scenario.engine)).cpu;
    v1 = v1 || cpu == perf::CpuCost::profile_v1;
    v0 = v0 || cpu == perf::CpuCost::profile_v0;
    tp = tp || rs.scenario.hardware.parallel.tp > 1;
  }
  const perf::HardwareProfile b = base;
  auto eff = [&](const std::string& field, double value, double perf::HardwareProfile::*member) {
    Param q{field, "value", value, 0.05, 1.0 / value, {}};
    q.apply = [member, value](perf::HardwareProfile& p, double s) { p.*member = value * s; };
    out.push_back(q);
  };
  auto time = [&](const std::string& field, double value, double perf::HardwareProfile::*member) {
    if (!(value > 0)) return;
    Param q{field, "value", value, 0.01, 100, {}};
    q.apply = [member, value](perf::HardwareProfile& p, double s) { p.*member = value * s; };
    out.push_back(q);
  };
  if (!b.gemm_bw_eff_vs_m.empty()) {
    const perf::Curve c = b.gemm_bw_eff_vs_m;
    Param q{"gemm_bw_eff_vs_m", "scale", 1, 0.05, 1.0 / max_in(c, 0, INFINITY), {}};
    q.apply = [c](perf::HardwareProfile& p, double s) { scale_points(p.gemm_bw_eff_vs_m, c, 0, INFINITY, s); };
    out.push_back(q);
  }
  for (spec::DType d : dtypes) {
    if (!base.gemm_eff_vs_m.count(d)) {
      // The cost model reads fp16's curve for a dtype without one: the fit gives this dtype its own.
      if (!base.gemm_eff_vs_m.count(spec::DType::fp16)) continue;
      base.gemm_eff_vs_m[d] = base.gemm_eff_vs_m.at(spec::DType::fp16);
    }
    base.gemm_eff_vs_m[d] = with_range_points(base.gemm_eff_vs_m.at(d));
    const perf::Curve c = base.gemm_eff_vs_m.at(d);
    for (const auto& r : kRanges) {
      const double lo = r[0], hi = r[1], top = max_in(c, lo, hi);
      if (!(top > 0)) continue;
      Param q{"gemm_eff_vs_m." + std::string(spec::to_string(d)) + m_range(lo, hi), "scale", 1, 0.05, 1.0 / top, {}};
      q.apply = [c, d, lo, hi](perf::HardwareProfile& p, double s) { scale_points(p.gemm_eff_vs_m[d], c, lo, hi, s); };
      out.push_back(q);
    }
  }
  eff("attn_decode_bw_efficiency", b.attn_decode_bw_efficiency, &perf::HardwareProfile::attn_decode_bw_efficiency);
  // Decode attention streams K/V at min(e·BW, running CTAs · r_cta): which of the two binds depends on the batch, so
  // both are candidates and the runs say which they constrain.
  time("attn_decode_cta_bandwidth", b.attn_decode_cta_bandwidth, &perf::HardwareProfile::attn_decode_cta_bandwidth);
  eff("attn_prefill_efficiency", b.attn_prefill_efficiency, &perf::HardwareProfile::attn_prefill_efficiency);
  if (v1) {
    time("cpu_overhead_per_iter_s", b.cpu_overhead_per_iter_s, &perf::HardwareProfile::cpu_overhead_per_iter_s);
    time("cpu_overhead_per_seq_s", b.cpu_overhead_per_seq_s, &perf::HardwareProfile::cpu_overhead_per_seq_s);
  }
  if (v0) {
    time("v0_cpu_overhead_per_iter_s", b.v0_cpu_overhead_per_iter_s, &perf::HardwareProfile::v0_cpu_overhead_per_iter_s);
    time("v0_cpu_overhead_per_seq_s", b.v0_cpu_overhead_per_seq_s, &perf::HardwareProfile::v0_cpu_overhead_per_seq_s);
  }
  if (tp) {
    time("custom_allreduce_latency_s", b.custom_allreduce_latency_s, &perf::HardwareProfile::custom_allreduce_latency_s);
    time("link_latency_s", b.link_latency_s, &perf::HardwareProfile::link_latency_s);
  }
  return out;
}

/// The problem: predictors of the runs and the free parameters.
struct Problem {
  const std::vector<analysis::BenchPredictor>* preds;
  std::vector<std::vector<double>> measured;  ///< per run
  perf::HardwareProfile base;
  std::vector<Param> params;

  perf::HardwareProfile profile(const VectorXd& x) const {
    perf::HardwareProfile p = base;
    for (std::size_t j = 0; j < params.size(); ++j) params[j].apply(p, std::exp(x[static_cast<Eigen::Index>(j)]));
    return p;
  }
  /// Relative residuals of the runs in `use` (in order, all their values), for parameters x.
  VectorXd residuals(const VectorXd& x, const std::vector<int>& use) const {
    const perf::HardwareProfile p = profile(x);
    // The runs are independent predictions (each its own cost model or simulation): spread over threads.
    std::vector<std::vector<double>> preds_of(use.size());
    auto work = [&](std::size_t first, std::size_t step) {
      for (std::size_t u = first; u < use.size(); u += step) {
        const auto k = static_cast<std::size_t>(use[u]);
        try {
          preds_of[u] = (*preds)[k].predict(p);
        } catch (const ConfigError&) {
          preds_of[u].assign(measured[k].size(), std::nan(""));
        }
      }
    };
    const std::size_t n = std::min<std::size_t>(use.size(), std::max(1u, std::thread::hardware_concurrency()));
    if (n <= 1) {
      work(0, 1);
    } else {
      std::vector<std::thread> pool;
      for (std::size_t t = 1; t < n; ++t) pool.emplace_back(work, t, n);
      work(0, n);
      for (auto& th : pool) th.join();
    }
    std::vector<double> r;
    for (std::size_t u = 0; u < use.size(); ++u) {
      const auto k = static_cast<std::size_t>(use[u]);
      for (std::size_t i = 0; i < preds_of[u].size(); ++i) {
        const double e = preds_of[u][i] / measured[k][i] - 1.0;
        r.push_back(std::isfinite(e) ? e : 1e3);  // a prediction that fails is far off, not a crash
      }
    }
    return Eigen::Map<VectorXd>(r.data(), static_cast<Eigen::Index>(r.size()));
  }
  MatrixXd jacobian(const VectorXd& x, const VectorXd& r0, const std::vector<int>& use) const {
    MatrixXd J(r0.size(), x.size());
    for (Eigen::Index j = 0; j < x.size(); ++j) {
      constexpr double h = 2e-3;
      VectorXd xh = x;
      const double hi = std::log(params[static_cast<std::size_t>(j)].hi);
      const double step = x[j] + h > hi ? -h : h;
      xh[j] += step;
      J.col(j) = (residuals(xh, use) - r0) / step;
    }
    return J;
  }
  void clamp(VectorXd& x) const {
    for (std::size_t j = 0; j < params.size(); ++j) {
      const auto jj = static_cast<Eigen::Index>(j);
      x[jj] = std::clamp(x[jj], std::log(params[j].lo), std::log(params[j].hi));
    }
  }
};

/// Bounded Levenberg-Marquardt (projected steps, Marquardt's diagonal scaling).
VectorXd solve(const Problem& pb, VectorXd x, const std::vector<int>& use, int max_iter, int* iterations) {
  pb.clamp(x);
  VectorXd r = pb.residuals(x, use);
  double cost = r.squaredNorm(), lambda = 1e-3;
  int it = 0;
  for (; it < max_iter; ++it) {
    const MatrixXd J = pb.jacobian(x, r, use);
    const MatrixXd A = J.transpose() * J;
    const VectorXd g = J.transpose() * r;
    bool improved = false;
    while (lambda < 1e7) {
      MatrixXd B = A;
      for (Eigen::Index j = 0; j < B.rows(); ++j) B(j, j) += lambda * std::max(A(j, j), 1e-12) + 1e-14;
      VectorXd xn = x - B.ldlt().solve(g);
      pb.clamp(xn);
      const VectorXd rn = pb.residuals(xn, use);
      const double cn = rn.squaredNorm();
      if (cn < cost) {
        const double gain = cost - cn;
        const double step = (xn - x).norm();
        x = xn;
        r = rn;
        cost = cn;
        lambda = std::max(lambda / 3, 1e-9);
        improved = true;
        // Converged: the cost no longer falls by a part in 10^9, or the step is below 10^-7 in log value.
        if (gain < 1e-9 * (cost + gain) || step < 1e-7) it = max_iter;
        break;
      }
      lambda *= 4;
    }
    if (!improved) break;
  }
  if (iterations) *iterations = it;
  return x;
}

/// Levenberg-Marquardt iterations of each leave-one-out refit (warm-started at the full fit).
constexpr int kCvIterations = 4;

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

}  // namespace

std::vector<std::vector<double>> predict_runs(const std::vector<analysis::BenchRun>& runs,
                                              const perf::HardwareProfile& profile) {
  std::vector<std::vector<double>> out;
  for (const auto& r : runs) out.push_back(analysis::BenchPredictor(r).predict(profile));
  return out;
}

namespace {

/// fields = {"auto"}: forward selection over groups of fields (a curve's M ranges are one group) by the
/// leave-one-run-out RMS error: start from no field (the base profile's error), add the group that lowers it most,
/// stop when none lowers it by 1 % of itself. The runs judge which fields they can carry; the report says which.
RunFitReport fit_runs_auto(const std::vector<analysis::BenchRun>& runs, const spec::GpuSpec& gpu,
                           const perf::HardwareProfile& base, const RunFitOptions& o) {
  RunFitOptions all = o;
  all.fields.clear();
  all.cross_validate = false;
  all.min_runs_per_field = 1;
  all.max_iterations = 1;
  // Every constrained candidate, once, to know the groups.
  std::vector<std::string> groups;
  {
    RunFitReport probe;
    try {
      probe = fit_runs(runs, gpu, base, all);
    } catch (const ConfigError&) {
    }
    for (const auto& f : probe.fields) {
      const std::string g = f.field.substr(0, f.field.find('['));
      if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
    }
  }
  if (groups.empty()) return fit_runs(runs, gpu, base, all);  // throws the reason no field is constrained
  std::vector<std::string> chosen, path;
  double best = INFINITY;
  RunFitReport best_rep;
  bool have = false;
  while (true) {
    std::string pick;
    RunFitReport pick_rep;
    double pick_cv = INFINITY;
    for (const auto& g : groups) {
      if (std::find(chosen.begin(), chosen.end(), g) != chosen.end()) continue;
      RunFitOptions t = o;
      t.fields = chosen;
      t.fields.push_back(g);
      t.cross_validate = true;
      try {
        RunFitReport r = fit_runs(runs, gpu, base, t);
        if (!have) best = std::min(best, r.rms_before);  // no field fitted: the base profile's error
        if (r.rms_cv < pick_cv) {
          pick_cv = r.rms_cv;
          pick = g;
          pick_rep = std::move(r);
        }
      } catch (const ConfigError&) {
        // too few runs for this group with the others: not a candidate
      }
    }
    if (pick.empty() || !(pick_cv < 0.99 * best)) break;
    chosen.push_back(pick);
    path.push_back(pick + " (leave-one-out RMS " + std::to_string(pick_cv) + ")");
    best = pick_cv;
    best_rep = std::move(pick_rep);
    have = true;
  }
  if (!have) {
    throw ConfigError("fields", "auto: no field lowers the leave-one-run-out error of the base profile (RMS " +
                                    std::to_string(best) + "): these runs cannot improve it");
  }
  std::string p;
  for (const auto& x : path) p += (p.empty() ? "" : ", then ") + x;
  best_rep.notes.insert(best_rep.notes.begin(), "fields chosen by leave-one-run-out error (from " +
                                                    std::to_string(best_rep.rms_before) + " with none): " + p);
  return best_rep;
}

}  // namespace

RunFitReport fit_runs(const std::vector<analysis::BenchRun>& runs, const spec::GpuSpec& gpu,
                      const perf::HardwareProfile& base, const RunFitOptions& o) {
  if (runs.empty()) throw ConfigError("runs", "no runs: nothing to fit");
  if (o.fields.size() == 1 && o.fields.front() == "auto") return fit_runs_auto(runs, gpu, base, o);
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
  Problem pb;
  pb.preds = &preds;
  pb.base = base;
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

  // Which fields the runs constrain: d log T / d log field at the base, per run.
  pb.params = all;
  const VectorXd x0 = VectorXd::Zero(static_cast<Eigen::Index>(all.size()));
  VectorXd xs = x0;
  pb.clamp(xs);
  const VectorXd r0 = pb.residuals(xs, every);
  const MatrixXd J0 = pb.jacobian(xs, r0, every);
  std::vector<Param> kept;
  std::vector<int> kept_runs;
  for (std::size_t j = 0; j < all.size(); ++j) {
    int n = 0;
    std::vector<std::string> names;
    Eigen::Index row = 0;
    for (std::size_t k = 0; k < runs.size(); ++k) {
      double s = 0;
      for (std::size_t i = 0; i < pb.measured[k].size(); ++i, ++row)
        s = std::max(s, std::abs(J0(row, static_cast<Eigen::Index>(j)) / (1 + r0[row])));
      if (s >= o.min_sensitivity) {
        ++n;
        names.push_back(runs[k].name);
      }
    }
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
  const VectorXd x = solve(pb, start, every, o.max_iterations, &rep.iterations);
  rep.profile = pb.profile(x);

  // Standard errors and correlations from the Jacobian at the solution.
  const VectorXd r = pb.residuals(x, every);
  const MatrixXd J = pb.jacobian(x, r, every);
  const MatrixXd A = J.transpose() * J;
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
            rep.correlated.push_back({kept[static_cast<std::size_t>(a)].field, kept[static_cast<std::size_t>(b)].field,
                                      v[a] * v[b] > 0 ? -1.0 : 1.0});
    }
  }
  const double dof = std::max<double>(1.0, static_cast<double>(r.size() - p));
  const double sigma2 = r.squaredNorm() / dof;
  for (Eigen::Index a = 0; a < p; ++a) {
    for (Eigen::Index b = a + 1; b < p; ++b) {
      const double c = cov(a, b) / std::sqrt(std::max(cov(a, a) * cov(b, b), 1e-300));
      const bool listed = std::any_of(rep.correlated.begin(), rep.correlated.end(), [&](const FieldPair& q) {
        return q.a == kept[static_cast<std::size_t>(a)].field && q.b == kept[static_cast<std::size_t>(b)].field;
      });
      if (std::abs(c) >= 0.95 && !listed)
        rep.correlated.push_back({kept[static_cast<std::size_t>(a)].field, kept[static_cast<std::size_t>(b)].field, c});
    }
  }
  for (Eigen::Index j = 0; j < p; ++j) {
    const Param& q = kept[static_cast<std::size_t>(j)];
    RunFitField f;
    f.field = q.field;
    f.value_kind = q.kind;
    f.base = q.base;
    f.fitted = q.base * std::exp(x[j]);
    f.lower = q.base * q.lo;
    f.upper = q.base * q.hi;
    f.at_bound = std::abs(x[j] - std::log(q.lo)) < 1e-6 || std::abs(x[j] - std::log(q.hi)) < 1e-6;
    f.runs = kept_runs[static_cast<std::size_t>(j)];
    f.std_error = std::sqrt(std::max(0.0, sigma2 * cov(j, j)));
    rep.fields.push_back(f);
    if (f.at_bound) rep.notes.push_back(q.field + " stopped at its bound (" + std::to_string(f.fitted) + ")");
  }

  // Per run: before (the base profile), after, and left out of the fit.
  std::vector<double> all_b, all_a, all_cv, run_b, run_a, run_cv;
  const perf::HardwareProfile base_profile = pb.profile(VectorXd::Zero(p));
  for (std::size_t k = 0; k < runs.size(); ++k) {
    RunFitRow row;
    row.run = runs[k].name;
    for (const auto& v : runs[k].measured) row.keys.push_back(v.key);
    row.measured = pb.measured[k];
    row.before = preds[k].predict(base);
    row.after = preds[k].predict(rep.profile);
    if (o.cross_validate) {
      std::vector<int> rest;
      for (int i : every)
        if (i != static_cast<int>(k)) rest.push_back(i);
      // Warm start at the full fit, where the subset's own optimum is near: a few iterations (kCvIterations) find
      // it without the cost of n full fits.
      const VectorXd xk = solve(pb, x, rest, std::min(o.max_iterations, kCvIterations), nullptr);
      row.cross_validated = preds[k].predict(pb.profile(xk));
      row.error_cv = rms(row.cross_validated, row.measured);
    }
    row.error_before = rms(row.before, row.measured);
    row.error_after = rms(row.after, row.measured);
    for (std::size_t i = 0; i < row.measured.size(); ++i) {
      all_b.push_back(row.before[i] / row.measured[i] - 1);
      all_a.push_back(row.after[i] / row.measured[i] - 1);
      if (o.cross_validate) all_cv.push_back(row.cross_validated[i] / row.measured[i] - 1);
    }
    run_b.push_back(row.error_before);
    run_a.push_back(row.error_after);
    run_cv.push_back(row.error_cv);
    rep.runs.push_back(std::move(row));
  }
  (void)base_profile;
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

}  // namespace llmsim::calibration
