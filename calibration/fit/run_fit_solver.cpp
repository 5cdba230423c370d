// The run fit's least-squares problem and solver (run_fit_solver.hpp).
#include "run_fit_solver.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include "llmsim/core/error.hpp"

namespace llmsim::calibration::detail {

using Eigen::MatrixXd;
using Eigen::VectorXd;

perf::HardwareProfile Problem::profile(const VectorXd& x) const {
  perf::HardwareProfile p = base;
  for (std::size_t j = 0; j < params.size(); ++j) params[j].apply(p, std::exp(x[static_cast<Eigen::Index>(j)]));
  return p;
}

Eigen::Index Problem::data_rows(const std::vector<int>& use) const {
  Eigen::Index n = 0;
  for (int k : use) n += static_cast<Eigen::Index>(measured[static_cast<std::size_t>(k)].size());
  return n;
}

std::size_t Problem::key_of(const perf::HardwareProfile& p) const {
  return cache->profiles.emplace(perf::to_json(p).dump(), cache->profiles.size()).first->second;
}

bool Problem::within_guard(const VectorXd& x) const {
  if (!guard) return true;
  const perf::HardwareProfile p = profile(x);
  return guard->allows(p, key_of(p));
}

std::vector<std::vector<double>> Problem::predictions(const VectorXd& x, const std::vector<int>& use) const {
  const perf::HardwareProfile p = profile(x);
  const std::size_t key = key_of(p);
  if (cache->by_run.size() < measured.size()) cache->by_run.resize(measured.size());
  // The runs are independent predictions (each its own cost model or simulation): spread over threads; those made
  // before with this profile come from the cache.
  std::vector<std::vector<double>> preds_of(use.size());
  std::vector<std::size_t> todo;
  for (std::size_t u = 0; u < use.size(); ++u) {
    const auto k = static_cast<std::size_t>(use[u]);
    {
      const auto hit = cache->by_run[k].find(key);
      if (hit != cache->by_run[k].end()) {
        preds_of[u] = hit->second;
        ++cache->hits;
        continue;
      }
      ++cache->misses;
    }
    todo.push_back(u);
  }
  auto work = [&](std::size_t first, std::size_t step) {
    for (std::size_t t = first; t < todo.size(); t += step) {
      const std::size_t u = todo[t];
      const auto k = static_cast<std::size_t>(use[u]);
      try {
        preds_of[u] = (*preds)[k].predict(p);
      } catch (const ConfigError&) {
        preds_of[u].assign(measured[k].size(), std::nan(""));
      }
    }
  };
  const std::size_t n = std::min<std::size_t>(todo.size(), std::max(1u, std::thread::hardware_concurrency()));
  if (n <= 1) {
    work(0, 1);
  } else {
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < n; ++t) pool.emplace_back(work, t, n);
    work(0, n);
    for (auto& th : pool) th.join();
  }
  for (std::size_t u : todo) cache->by_run[static_cast<std::size_t>(use[u])].emplace(key, preds_of[u]);
  return preds_of;
}

std::vector<double> Problem::predict(const VectorXd& x, int k) const { return predictions(x, {k}).front(); }

VectorXd Problem::residuals_of(const std::vector<std::vector<double>>& preds_of, const VectorXd& x,
                               const std::vector<int>& use) const {
  std::vector<double> r;
  for (std::size_t u = 0; u < use.size(); ++u) {
    const auto k = static_cast<std::size_t>(use[u]);
    for (std::size_t i = 0; i < preds_of[u].size(); ++i) {
      const double e = preds_of[u][i] / measured[k][i] - 1.0;
      r.push_back(std::isfinite(e) ? e : 1e3);  // a prediction that fails is far off, not a crash
    }
  }
  if (prior_scale > 0)
    for (Eigen::Index j = 0; j < x.size(); ++j)
      r.push_back(prior_scale / params[static_cast<std::size_t>(j)].prior_sigma * x[j]);
  return Eigen::Map<VectorXd>(r.data(), static_cast<Eigen::Index>(r.size()));
}

VectorXd Problem::residuals(const VectorXd& x, const std::vector<int>& use) const {
  return residuals_of(predictions(x, use), x, use);
}

bool Problem::simulated(int k) const {
  const auto& run = (*preds)[static_cast<std::size_t>(k)].run();
  return run.serve || run.kind == spec::BenchKind::vllm_throughput;
}

MatrixXd Problem::jacobian(const VectorXd& x, const VectorXd& r0, const std::vector<int>& use) const {
  // Forward differences, each run with the step its prediction's accuracy asks for (Numerical Recipes 5.7: h ~
  // sqrt(the function's fractional accuracy)): the cost model's static batches are smooth to rounding and the
  // tables' interpolation (kStepModel), a simulated run's TTFT moves by ~1 % where a step's end crosses an arrival
  // (kStepSimulated). The runs of each kind are predicted at their own step.
  std::vector<int> smooth, sim;
  for (int k : use) (simulated(k) ? sim : smooth).push_back(k);
  MatrixXd J(r0.size(), x.size());
  for (Eigen::Index j = 0; j < x.size(); ++j) {
    const double hi = std::log(params[static_cast<std::size_t>(j)].hi);
    auto shifted = [&](double h) {
      VectorXd xh = x;
      xh[j] += x[j] + h > hi ? -h : h;
      return xh;
    };
    const VectorXd xs = shifted(kStepModel), xl = shifted(kStepSimulated);
    std::vector<std::vector<double>> at_s, at_l;
    if (!smooth.empty()) at_s = predictions(xs, smooth);
    if (!sim.empty()) at_l = predictions(xl, sim);
    // Back in `use`'s order, each run's values divided by its own step.
    std::vector<std::vector<double>> preds_of(use.size());
    std::vector<double> step_of(use.size());
    std::size_t is = 0, il = 0;
    for (std::size_t u = 0; u < use.size(); ++u) {
      const bool s = simulated(use[u]);
      preds_of[u] = s ? at_l[il++] : at_s[is++];
      step_of[u] = s ? xl[j] - x[j] : xs[j] - x[j];
    }
    const VectorXd rh = residuals_of(preds_of, xs, use);
    Eigen::Index row = 0;
    for (std::size_t u = 0; u < use.size(); ++u)
      for (std::size_t i = 0; i < preds_of[u].size(); ++i, ++row) J(row, j) = (rh[row] - r0[row]) / step_of[u];
    // The prior's rows are linear in x: their derivative is exact.
    for (; row < r0.size(); ++row) J(row, j) = (rh[row] - r0[row]) / (xs[j] - x[j]);
  }
  return J;
}

void Problem::clamp(VectorXd& x) const {
  for (std::size_t j = 0; j < params.size(); ++j) {
    const auto jj = static_cast<Eigen::Index>(j);
    x[jj] = std::clamp(x[jj], std::log(params[j].lo), std::log(params[j].hi));
  }
}

VectorXd solve(const Problem& pb, VectorXd x, const std::vector<int>& use, int max_iter, SolveStats* stats) {
  pb.clamp(x);
  VectorXd r = pb.residuals(x, use);
  const Eigen::Index nd = pb.data_rows(use);
  const double dof = std::max<double>(1.0, static_cast<double>(nd - x.size()));
  double cost = r.squaredNorm(), lambda = 1e-3;
  SolveStats st;
  // Geodesic acceleration (Transtrum & Sethna 2012) where every run is priced by the cost model alone: a simulated
  // run's values jump by ~1e-3 between step boundaries, which a second difference turns into noise.
  const bool accelerate = std::none_of(use.begin(), use.end(), [&](int k) { return pb.simulated(k); });
  while (st.iterations < max_iter) {
    const MatrixXd J = pb.jacobian(x, r, use);
    const MatrixXd Afull = J.transpose() * J;
    const VectorXd gfull = J.transpose() * r;
    // The free fields: all but those at a bound that the cost's descent (-g) pushes beyond it. Those are held where
    // they are, and the step is the reduced problem's over the others (an active set: Moré & Toraldo 1989, Kanzow,
    // Yamashita & Fukushima 2004). A step solved over every field and then clamped is not the minimiser of the model
    // over the box: the fields that are not clamped move as if the clamped ones had moved too, every first trial
    // fails, and a field at its bound made the static batches' plain fit crawl for all its iterations.
    std::vector<Eigen::Index> free;
    for (Eigen::Index j = 0; j < x.size(); ++j) {
      const auto& q = pb.params[static_cast<std::size_t>(j)];
      const bool at_lo = x[j] <= std::log(q.lo) + 1e-12, at_hi = x[j] >= std::log(q.hi) - 1e-12;
      if (!((at_lo && gfull[j] > 0) || (at_hi && gfull[j] < 0))) free.push_back(j);
    }
    if (free.empty()) {  // every field at a bound the cost presses it against: a minimum within the box
      st.stop = "converged";
      break;
    }
    const auto nf = static_cast<Eigen::Index>(free.size());
    MatrixXd A(nf, nf);
    VectorXd g(nf);
    for (Eigen::Index a = 0; a < nf; ++a) {
      g[a] = gfull[free[static_cast<std::size_t>(a)]];
      for (Eigen::Index b = 0; b < nf; ++b) A(a, b) = Afull(free[static_cast<std::size_t>(a)], free[static_cast<std::size_t>(b)]);
    }
    // What a full Gauss-Newton step over the free fields could gain by the linear model at x:
    // |r|^2 - min |r + J_F d|^2 = g_F' A_FF^-1 g_F.
    MatrixXd A0 = A;
    for (Eigen::Index j = 0; j < A0.rows(); ++j) A0(j, j) += 1e-12 * std::max(A(j, j), 1e-12) + 1e-14;
    const double promised = g.dot(A0.ldlt().solve(g));
    MatrixXd JF(J.rows(), nf);
    for (Eigen::Index a = 0; a < nf; ++a) JF.col(a) = J.col(free[static_cast<std::size_t>(a)]);
    bool improved = false;
    while (lambda < 1e7) {
      MatrixXd B = A;
      for (Eigen::Index j = 0; j < B.rows(); ++j) B(j, j) += lambda * std::max(A(j, j), 1e-12) + 1e-14;
      const auto Bf = B.ldlt();
      VectorXd dx = -Bf.solve(g);  // the velocity v of Transtrum & Sethna: the Levenberg-Marquardt step
      if (accelerate) {
        // Geodesic acceleration: the residuals' second derivative along v, r''_v, by a finite difference, and the
        // step's second-order part a = -B^-1 J' r''_v; the step is v + a/2 where 2|a|/|v| <= kGeodesicAlpha (the
        // quadratic term small, norms scaled by diag(J'J) as the damping is), v alone otherwise (Transtrum & Sethna
        // refuse the trial there and raise lambda: on the static batches' first, long steps that took the plain fit 8
        // iterations instead of 3 to reach the valley). Along a curved valley the straight step v overshoots its
        // floor and lambda grows; v + a/2 bends with it. Also when the shift h·v leaves the box: v alone.
        const double vmax = dx.cwiseAbs().maxCoeff();
        if (!(vmax > 0)) break;  // no descent direction left: no step lowers the cost
        const double t = std::max(kGeodesicH * vmax, kGeodesicMinStep);
        const VectorXd u = dx / vmax;
        VectorXd xh = x;
        bool inside = true;
        for (Eigen::Index a = 0; a < nf; ++a) {
          const auto f = free[static_cast<std::size_t>(a)];
          xh[f] += t * u[a];
          const auto& q = pb.params[static_cast<std::size_t>(f)];
          inside = inside && xh[f] >= std::log(q.lo) && xh[f] <= std::log(q.hi);
        }
        if (inside) {
          const VectorXd rh = pb.residuals(xh, use);
          const VectorXd rpp = (2.0 / (t * t)) * (rh - r - t * (JF * u)) * (vmax * vmax);
          const VectorXd acc = -Bf.solve(JF.transpose() * rpp);
          auto scaled = [&](const VectorXd& y) {
            double n2 = 0;
            for (Eigen::Index a = 0; a < nf; ++a) n2 += std::max(A(a, a), 1e-12) * y[a] * y[a];
            return std::sqrt(n2);
          };
          if (2 * scaled(acc) <= kGeodesicAlpha * scaled(dx)) dx += 0.5 * acc;
        }
      }
      VectorXd xn = x;
      for (Eigen::Index a = 0; a < nf; ++a) xn[free[static_cast<std::size_t>(a)]] += dx[a];
      pb.clamp(xn);
      const VectorXd rn = pb.residuals(xn, use);
      const double cn = rn.squaredNorm();
      // A step that lowers the cost is taken unless it moves the predicted capacity beyond the guard
      // (run_fit_capacity.hpp): then it is refused like a step that does not lower the cost.
      if (cn < cost && pb.within_guard(xn)) {
        const double gain = cost - cn;
        const double step = (xn - x).norm();
        x = xn;
        r = rn;
        cost = cn;
        lambda = std::max(lambda / 3, 1e-9);
        improved = true;
        ++st.iterations;
        // One measured value's residual variance about the fit now: the scale of what the runs can resolve.
        const double variance = r.head(nd).squaredNorm() / dof;
        // Converged: this step gained less than the tolerance and the linear model promised no more than that beyond
        // it (a short step of a large lambda after refused ones gains little without being at a minimum).
        if (gain < kConvergedChi2 * variance && promised - gain < kConvergedChi2 * variance) st.stop = "converged";
        else if (gain < 1e-9 * (cost + gain) || step < 1e-7) st.stop = "precision";
        break;
      }
      lambda *= 4;
    }
    if (!improved) st.stop = "no_step";
    if (!improved || st.stop != "limit") break;
  }
  if (stats) *stats = st;
  return x;
}

}  // namespace llmsim::calibration::detail
