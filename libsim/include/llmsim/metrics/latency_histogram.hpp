#pragma once
// Streaming latency distribution: mean exactly, percentiles from a log-binned Boost.Histogram whose
// memory does not depend on the number of samples.
#include <bit>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

#include <boost/histogram.hpp>

#include "llmsim/metrics/summary.hpp"

namespace llmsim::metrics {

/// Values in milliseconds from 1e-4 ms to 1e9 ms in bins 1% wide (relative), plus under/overflow; within a
/// bin percentiles interpolate geometrically, so a percentile is within ~0.5% of the exact order statistic.
/// Values below the range (including 0) and above it are kept and reported through the exact min / max.
/// The exact moments of a weighted sample stream: count, sum, min, max and the spread (sums shifted by the first
/// sample: no division in the hot path, and exact when the spread is tiny against the mean, where plain
/// E[x²] − mean² cancels). Floating-point sums depend on their order: where samples come from several sources whose
/// interleaving is incidental (each engine replica's inter-token gaps), each source keeps its own and they are
/// merged in a fixed order (LatencyHistogram::merge_moments).
struct LatencyMoments {
  double sum = 0, weight = 0, shift = 0, shifted_sum = 0, shifted_sq = 0;
  double min = std::numeric_limits<double>::infinity(), max = -std::numeric_limits<double>::infinity();

  void add(double value_ms, double w) {
    sum += value_ms * w;
    if (weight <= 0) shift = value_ms;
    const double d = value_ms - shift;
    shifted_sum += d * w;
    shifted_sq += d * d * w;
    weight += w;
    if (value_ms < min) min = value_ms;
    if (value_ms > max) max = value_ms;
  }
  /// Adds another stream's moments (re-shifting its sums to this one's shift).
  void merge(const LatencyMoments& o);
};

class LatencyHistogram {
 public:
  LatencyHistogram();

  /// Adds `weight` samples of `value_ms` (weight > 0; e.g. one inter-token gap shared by many sequences).
  void add(double value_ms, double weight = 1.0) {
    add_to_bins(value_ms, weight);
    m_.add(value_ms, weight);
  }
  /// One of several sources of a histogram's samples (an engine replica): its own moments, merged with
  /// merge_moments() before the statistics are read, and the bin of its last sample (a replica's successive
  /// inter-token gaps differ by a fraction of a percent: the same bin, found without a lookup).
  struct Source {
    LatencyMoments moments;
    int bin = 0;
    double lo = 0, hi = 0;  ///< the range in which every value has `bin` (empty before the first sample)
  };
  /// The same samples into the bins here and into `source`'s moments. Bin counts are sums of whole weights, exact in
  /// any order.
  void add(double value_ms, double weight, Source& source) {
    if (!(value_ms >= source.lo && value_ms < source.hi)) source.bin = find_bin(value_ms, &source.lo, &source.hi);
    h_.begin()[source.bin + 1] += weight;
    source.moments.add(value_ms, weight);
  }
  void merge_moments(const LatencyMoments& moments) { m_.merge(moments); }

  double count() const noexcept { return m_.weight; }
  double mean() const noexcept { return m_.weight > 0 ? m_.sum / m_.weight : 0.0; }
  double max() const noexcept { return m_.weight > 0 ? m_.max : 0.0; }
  double min() const noexcept { return m_.weight > 0 ? m_.min : 0.0; }
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
  /// bin(value_ms), and a range [*lo, *hi) around it in which every value has that bin (empty when none is known).
  static int bin(double value_ms, double* lo, double* hi) noexcept;
  /// The keys' span table (a constant of the binning): per key (a double's bits >> kKeyShift) the bin of the span's
  /// lowest double, with kWholeSpan set when the whole span lies in that bin's certain range (most spans).
  struct SpanTable {
    std::uint64_t key_lo = 0, keys = 0;   ///< keys key_lo .. key_lo + keys − 1
    const std::uint16_t* first = nullptr;  ///< bin | kWholeSpan per key
    const double* lo = nullptr;            ///< bin i is certain for lo[i] <= x < hi[i] (bins() + 1 entries: the last
    const double* hi = nullptr;            ///< holds no value)
  };
  static constexpr int kKeyShift = 44;
  static constexpr std::uint16_t kWholeSpan = 0x8000;
  static SpanTable span_table() noexcept;
  /// bin(value_ms, lo, hi) from `spans`, inline: a whole span's entry, or for a span across an edge its first bin or
  /// the next, each within its certain range; axis_bin() for the rest. add() reads its histogram's copy of the table
  /// (no static guard per sample).
  static int lookup(const SpanTable& spans, double value_ms, double* lo, double* hi) noexcept {
    const std::uint64_t k = std::bit_cast<std::uint64_t>(value_ms) >> kKeyShift;
    if (k - spans.key_lo < spans.keys) {  // unsigned: below key_lo wraps around to a large number
      const std::uint16_t f = spans.first[k - spans.key_lo];
      const int i = f & ~kWholeSpan;
      if (f & kWholeSpan) {  // every double with this key is certain: the span's ends are the range
        *lo = std::bit_cast<double>(k << kKeyShift);
        *hi = std::bit_cast<double>((k + 1) << kKeyShift);
        return i;
      }
      for (int j = i; j <= i + 1; ++j) {
        if (value_ms >= spans.lo[j] && value_ms < spans.hi[j]) {
          *lo = spans.lo[j];
          *hi = spans.hi[j];
          return j;
        }
      }
    }
    // Within 1e-9 of a bin edge, or outside the table (negative, zero, NaN, beyond the range): Boost's own bin, and
    // no range to reuse.
    *lo = *hi = 0;
    return axis_bin(value_ms);
  }
  /// What add() uses: lookup() on this histogram's copy of the table.
  int find_bin(double value_ms, double* lo, double* hi) const noexcept { return lookup(spans_, value_ms, lo, hi); }
  /// Boost's own computation of the same bin (a log per call): the reference bin() is checked against.
  static int axis_bin(double value_ms) noexcept;
  static int bins() noexcept;

 private:
  using Axis = boost::histogram::axis::regular<double, boost::histogram::axis::transform::log>;
  using Hist = boost::histogram::histogram<std::tuple<Axis>, boost::histogram::dense_storage<double>>;
  void add_to_bins(double value_ms, double weight) {
    // The same bin (and the same += weight on it) as h_(value_ms, weight(w)), found without a log per sample.
    double lo = 0, hi = 0;
    h_.begin()[find_bin(value_ms, &lo, &hi) + 1] += weight;
  }
  SpanTable spans_ = span_table();
  Hist h_;
  LatencyMoments m_;
};

}  // namespace llmsim::metrics
