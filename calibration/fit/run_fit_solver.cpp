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

VectorXd Problem::residuals(const VectorXd& x, const std::vector<int>& use) const {
  const std::vector<std::vector<double>> preds_of = predictions(x, use);
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

MatrixXd Problem::jacobian(const VectorXd& x, const VectorXd& r0, const std::vector<int>& use) const {
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
  while (st.iterations < max_iter) {
    const MatrixXd J = pb.jacobian(x, r, use);
    const MatrixXd A = J.transpose() * J;
    const VectorXd g = J.transpose() * r;
    // What a full Gauss-Newton step could gain by the linear model at x: |r|^2 - min |r + J d|^2 = g' A^-1 g.
    MatrixXd A0 = A;
    for (Eigen::Index j = 0; j < A0.rows(); ++j) A0(j, j) += 1e-12 * std::max(A(j, j), 1e-12) + 1e-14;
    const double promised = g.dot(A0.ldlt().solve(g));
    bool improved = false;
    while (lambda < 1e7) {
      MatrixXd B = A;
      for (Eigen::Index j = 0; j < B.rows(); ++j) B(j, j) += lambda * std::max(A(j, j), 1e-12) + 1e-14;
      VectorXd xn = x - B.ldlt().solve(g);
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
