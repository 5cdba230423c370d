#include "llmsim/metrics/latency_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace llmsim::metrics {

namespace {
constexpr double kLowMs = 1e-4;
constexpr double kHighMs = 1e9;
// ln(1e13) / ln(1.01) ≈ 3008: bins 1% wide.
constexpr unsigned kBins = 3008;

// The bin without a log. Boost's log axis computes int((log(x) − m) / D · kBins) for m = log(1e-4),
// D = log(1e9) − m. For x at least a relative 1e-9 inside the edges e_i = axis.value(i) (within ~1e-14 of the exact
// edges), the exact (ln x − m) / D · kBins lies ≥ 1e-9 · kBins / D ≈ 1e-7 from any integer, while the computed one
// differs from it by < 1e-11 (glibc's log is within 0.52 ULP, then one subtraction, division and product): so the
// computed bin is i, for any correctly-rounded-to-a-few-ULP log. Values closer to an edge, outside the range, zero,
// negative or NaN take Boost's own computation.
constexpr double kEdgeMargin = 1e-9;
// A double's sign, exponent and top 8 mantissa bits: spans of at most 2^-8 ≈ 0.4 % relative, inside a 1 % bin
// or across one edge, so a span's first bin or the next is the one.
constexpr int kKeyShift = LatencyHistogram::kKeyShift;
constexpr std::uint16_t kWholeSpan = LatencyHistogram::kWholeSpan;  // bins < 4096 fit the low bits
static_assert(kBins < kWholeSpan);

std::uint64_t key_of(double v) noexcept { return std::bit_cast<std::uint64_t>(v) >> kKeyShift; }

struct BinTable {
  std::uint64_t key_lo = 0, key_hi = 0;  // keys of the range's ends (positive doubles: keys increase with value)
  // Per key in [key_lo, key_hi]: the bin of the span's lowest double, with kWholeSpan set when every double of the
  // span lies in that bin's certain range (then no range check is needed: most spans, as a bin holds 2-3 spans).
  std::vector<std::uint16_t> first;
  std::vector<double> lo, hi;            // bin i is certain for lo[i] <= x < hi[i]; entry kBins holds no value
};

using Axis = boost::histogram::axis::regular<double, boost::histogram::axis::transform::log>;

const Axis& axis() {
  static const Axis a(kBins, kLowMs, kHighMs);
  return a;
}

// Immutable after its one (thread-safe) initialisation: a constant of the binning, shared by every histogram.
const BinTable& bin_table() {
  static const BinTable t = [] {
    BinTable b;
    const Axis& ax = axis();
    b.lo.assign(kBins + 1, std::numeric_limits<double>::infinity());  // the last span's "next bin": no value
    b.hi.assign(kBins + 1, -std::numeric_limits<double>::infinity());
    for (unsigned i = 0; i < kBins; ++i) {
      b.lo[i] = ax.value(i) * (1 + kEdgeMargin);
      b.hi[i] = ax.value(i + 1) * (1 - kEdgeMargin);
    }
    b.key_lo = key_of(kLowMs);
    b.key_hi = key_of(kHighMs);
    b.first.resize(static_cast<std::size_t>(b.key_hi - b.key_lo + 1));
    for (std::uint64_t k = b.key_lo; k <= b.key_hi; ++k) {
      const int i = std::clamp(ax.index(std::bit_cast<double>(k << kKeyShift)), 0, int(kBins) - 1);
      const double span_lo = std::bit_cast<double>(k << kKeyShift);
      const double span_hi = std::bit_cast<double>(((k + 1) << kKeyShift) - 1);  // the span's largest double
      const auto u = static_cast<std::size_t>(i);
      const bool whole = b.lo[u] <= span_lo && span_hi < b.hi[u];
      b.first[static_cast<std::size_t>(k - b.key_lo)] = static_cast<std::uint16_t>(i | (whole ? kWholeSpan : 0));
    }
    return b;
  }();
  return t;
}

}  // namespace

int LatencyHistogram::bins() noexcept { return static_cast<int>(kBins); }

LatencyHistogram::SpanTable LatencyHistogram::span_table() noexcept {
  const BinTable& t = bin_table();
  return SpanTable{t.key_lo, t.key_hi - t.key_lo + 1, t.first.data(), t.lo.data(), t.hi.data()};
}

int LatencyHistogram::axis_bin(double value_ms) noexcept { return axis().index(value_ms); }

int LatencyHistogram::bin(double value_ms) noexcept {
  double lo = 0, hi = 0;
  return bin(value_ms, &lo, &hi);
}

int LatencyHistogram::bin(double value_ms, double* lo, double* hi) noexcept {
  static const SpanTable spans = span_table();
  return lookup(spans, value_ms, lo, hi);
}

LatencyHistogram::LatencyHistogram()
    : h_(boost::histogram::make_histogram_with(boost::histogram::dense_storage<double>(),
                                                Axis(kBins, kLowMs, kHighMs))) {}

void LatencyMoments::merge(const LatencyMoments& o) {
  if (o.weight <= 0) return;
  if (weight <= 0) {
    *this = o;
    return;
  }
  // Σ(x − s)w = Σ(x − s_o)w + (s_o − s)W_o;  Σ(x − s)²w = Σ(x − s_o)²w + 2(s_o − s)Σ(x − s_o)w + (s_o − s)²W_o.
  const double delta = o.shift - shift;
  shifted_sq += o.shifted_sq + 2 * delta * o.shifted_sum + delta * delta * o.weight;
  shifted_sum += o.shifted_sum + delta * o.weight;
  sum += o.sum;
  weight += o.weight;
  min = std::min(min, o.min);
  max = std::max(max, o.max);
}

double LatencyHistogram::percentile(double q) const {
  double v = 0;
  percentiles(&q, &v, 1);
  return v;
}

void LatencyHistogram::percentiles(const double* qs, double* out, std::size_t n) const {
  // One pass over the bins for all of them: each q asks for the value below which q % of the weight lies,
  // interpolated geometrically inside its bin and clamped to the exact min/max. `qs` need not be sorted.
  for (std::size_t k = 0; k < n; ++k) out[k] = m_.weight > 0 ? m_.max : 0.0;
  if (m_.weight <= 0) return;
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
      const double target = qs[k] / 100.0 * m_.weight;
      if (cum + w < target) continue;
      double v;
      if (i < 0) {
        v = m_.min;
      } else if (i >= static_cast<int>(kBins)) {
        v = m_.max;
      } else {
        const double lo = ax.bin(i).lower(), hi = ax.bin(i).upper();
        v = std::clamp(lo * std::pow(hi / lo, (target - cum) / w), m_.min, m_.max);
      }
      out[k] = v;
      done[k] = 1;
      --remaining;
    }
    cum += w;
  }
}

double LatencyHistogram::stddev() const noexcept {
  if (m_.weight <= 0) return 0.0;
  const double m = m_.shifted_sum / m_.weight;
  return std::sqrt(std::max(0.0, m_.shifted_sq / m_.weight - m * m));
}

LatencyStats LatencyHistogram::stats(const std::vector<double>& extra_percentiles) const {
  LatencyStats s;
  s.count = static_cast<std::int64_t>(std::llround(m_.weight));
  if (m_.weight <= 0) {
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
  s.max = m_.max;
  for (std::size_t k = 0; k < extra_percentiles.size(); ++k) s.quantiles.emplace_back(extra_percentiles[k], v[4 + k]);
  return s;
}

}  // namespace llmsim::metrics
