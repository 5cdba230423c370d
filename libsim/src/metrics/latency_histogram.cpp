#include "llmsim/metrics/latency_histogram.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmsim::metrics {

namespace {
constexpr double kLowMs = 1e-4;
constexpr double kHighMs = 1e9;
// ln(1e13) / ln(1.01) ≈ 3008: bins 1% wide.
constexpr unsigned kBins = 3008;
}  // namespace

LatencyHistogram::LatencyHistogram()
    : h_(boost::histogram::make_histogram_with(boost::histogram::dense_storage<double>(),
                                                Axis(kBins, kLowMs, kHighMs))),
      min_(std::numeric_limits<double>::infinity()),
      max_(-std::numeric_limits<double>::infinity()) {}

double LatencyHistogram::percentile(double q) const {
  double v = 0;
  percentiles(&q, &v, 1);
  return v;
}

void LatencyHistogram::percentiles(const double* qs, double* out, std::size_t n) const {
  // One pass over the bins for all of them: each q asks for the value below which q % of the weight lies,
  // interpolated geometrically inside its bin and clamped to the exact min/max. `qs` need not be sorted.
  for (std::size_t k = 0; k < n; ++k) out[k] = weight_ > 0 ? max_ : 0.0;
  if (weight_ <= 0) return;
  std::size_t remaining = 0;
  for (std::size_t k = 0; k < n; ++k) remaining += qs[k] < 100;
  if (remaining == 0) return;
  std::vector<char> done(n, 0);
  const auto& ax = h_.axis(0);
  double cum = 0;
  // Bin -1 is underflow, kBins is overflow.
  for (int i = -1; i <= static_cast<int>(kBins) && remaining > 0; ++i) {
    const double w = h_.at(i);
    if (w <= 0) continue;
    for (std::size_t k = 0; k < n; ++k) {
      if (done[k] || qs[k] >= 100) continue;
      const double target = qs[k] / 100.0 * weight_;
      if (cum + w < target) continue;
      double v;
      if (i < 0) {
        v = min_;
      } else if (i >= static_cast<int>(kBins)) {
        v = max_;
      } else {
        const double lo = ax.bin(i).lower(), hi = ax.bin(i).upper();
        v = std::clamp(lo * std::pow(hi / lo, (target - cum) / w), min_, max_);
      }
      out[k] = v;
      done[k] = 1;
      --remaining;
    }
    cum += w;
  }
}

double LatencyHistogram::stddev() const noexcept {
  if (weight_ <= 0) return 0.0;
  const double m = shifted_sum_ / weight_;
  return std::sqrt(std::max(0.0, shifted_sq_ / weight_ - m * m));
}

LatencyStats LatencyHistogram::stats(const std::vector<double>& extra_percentiles) const {
  LatencyStats s;
  s.count = static_cast<std::int64_t>(std::llround(weight_));
  if (weight_ <= 0) {
    for (double q : extra_percentiles) s.quantiles.emplace_back(q, 0.0);
    return s;
  }
  s.mean = mean();
  s.stddev = stddev();
  std::vector<double> qs = {50, 90, 95, 99};
  qs.insert(qs.end(), extra_percentiles.begin(), extra_percentiles.end());
  std::vector<double> v(qs.size());
  percentiles(qs.data(), v.data(), qs.size());
  s.p50 = v[0];
  s.p90 = v[1];
  s.p95 = v[2];
  s.p99 = v[3];
  s.max = max_;
  for (std::size_t k = 0; k < extra_percentiles.size(); ++k) s.quantiles.emplace_back(extra_percentiles[k], v[4 + k]);
  return s;
}

}  // namespace llmsim::metrics
