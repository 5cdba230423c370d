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
  if (weight_ <= 0) return 0.0;
  if (q >= 100) return max_;
  const double target = q / 100.0 * weight_;
  const auto& ax = h_.axis(0);
  double cum = 0;
  // Bin -1 is underflow, kBins is overflow.
  for (int i = -1; i <= static_cast<int>(kBins); ++i) {
    const double w = h_.at(i);
    if (w <= 0) continue;
    if (cum + w >= target) {
      if (i < 0) return min_;
      if (i >= static_cast<int>(kBins)) return max_;
      const double lo = ax.bin(i).lower(), hi = ax.bin(i).upper();
      const double frac = (target - cum) / w;
      double v = lo * std::pow(hi / lo, frac);
      if (v < min_) v = min_;
      if (v > max_) v = max_;
      return v;
    }
    cum += w;
  }
  return max_;
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
  s.p50 = percentile(50);
  s.p90 = percentile(90);
  s.p95 = percentile(95);
  s.p99 = percentile(99);
  s.max = max_;
  for (double q : extra_percentiles) s.quantiles.emplace_back(q, percentile(q));
  return s;
}

}  // namespace llmsim::metrics
