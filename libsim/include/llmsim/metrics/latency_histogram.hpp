#pragma once
// Streaming latency distribution: mean exactly, percentiles from a log-binned Boost.Histogram whose
// memory does not depend on the number of samples.
#include <tuple>
#include <vector>

#include <boost/histogram.hpp>

#include "llmsim/metrics/summary.hpp"

namespace llmsim::metrics {

/// Values in milliseconds from 1e-4 ms to 1e9 ms in bins 1% wide (relative), plus under/overflow; within a
/// bin percentiles interpolate geometrically, so a percentile is within ~0.5% of the exact order statistic.
/// Values below the range (including 0) and above it are kept and reported through the exact min / max.
class LatencyHistogram {
 public:
  LatencyHistogram();

  /// Adds `weight` samples of `value_ms` (weight > 0; e.g. one inter-token gap shared by many sequences).
  void add(double value_ms, double weight = 1.0) {
    // The same bin (and the same += weight on it) as h_(value_ms, weight(w)), found without a log per sample.
    h_.begin()[bin(value_ms) + 1] += weight;
    sum_ += value_ms * weight;
    // Variance from sums shifted by the first sample (no division in the hot path; the shift keeps it
    // exact when the spread is tiny against the mean, where plain E[x²] − mean² cancels).
    if (weight_ <= 0) shift_ = value_ms;
    const double d = value_ms - shift_;
    shifted_sum_ += d * weight;
    shifted_sq_ += d * d * weight;
    weight_ += weight;
    if (value_ms < min_) min_ = value_ms;
    if (value_ms > max_) max_ = value_ms;
  }

  double count() const noexcept { return weight_; }
  double mean() const noexcept { return weight_ > 0 ? sum_ / weight_ : 0.0; }
  double max() const noexcept { return weight_ > 0 ? max_ : 0.0; }
  double min() const noexcept { return weight_ > 0 ? min_ : 0.0; }
  /// Population standard deviation (numpy's default, as vLLM's benchmark reports std_*_ms); 0 when empty.
  double stddev() const noexcept;
  /// The q-th percentile, q in (0, 100]; 0 when empty.
  double percentile(double q) const;
  /// out[k] = percentile(qs[k]) for k < n, in one pass over the bins.
  void percentiles(const double* qs, double* out, std::size_t n) const;
  /// mean/p50/p90/p95/p99/max/count plus the extra percentiles asked for.
  LatencyStats stats(const std::vector<double>& extra_percentiles = {}) const;

  /// The bin Boost's log axis gives `value_ms` (-1 underflow, bins() overflow and NaN), as axis().index() computes
  /// it, but from a table for values not within 1e-9 of a bin edge: the hot path (every decode step adds an
  /// inter-token gap) pays two comparisons instead of a log. Equal to axis_bin() for every double (tested).
  static int bin(double value_ms) noexcept;
  /// Boost's own computation of the same bin (a log per call): the reference bin() is checked against.
  static int axis_bin(double value_ms) noexcept;
  static int bins() noexcept;

 private:
  using Axis = boost::histogram::axis::regular<double, boost::histogram::axis::transform::log>;
  using Hist = boost::histogram::histogram<std::tuple<Axis>, boost::histogram::dense_storage<double>>;
  Hist h_;
  double sum_ = 0, weight_ = 0, shift_ = 0, shifted_sum_ = 0, shifted_sq_ = 0;
  double min_, max_;
};

}  // namespace llmsim::metrics
