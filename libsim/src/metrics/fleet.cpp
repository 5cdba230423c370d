#include "llmsim/metrics/fleet.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmsim::metrics {

double FleetHour::slo_attainment() const {
  const auto ended = completed + failed + timed_out;
  return ended > 0 ? static_cast<double>(good) / static_cast<double>(ended) : -1.0;
}

namespace {

/// The smallest t with floor(t / w) >= k (k >= 1): floor(t / w) does not decrease as t grows, so the boundary is found
/// from k·w by a few steps of one ULP.
double first_time_of(std::size_t k, double w) {
  const auto target = static_cast<double>(k);
  double b = target * w;
  while (std::floor(b / w) < target) b = std::nextafter(b, std::numeric_limits<double>::infinity());
  for (double p = std::nextafter(b, 0.0); p > 0 && std::floor(p / w) >= target; p = std::nextafter(p, 0.0)) b = p;
  return b;
}

}  // namespace

FleetMeter::Bucket& FleetMeter::find(double t) {
  // Only here do the buckets change (grow, or merge in pairs), and the cached range is set anew below.
  auto i = static_cast<std::size_t>(std::max(0.0, std::floor(t / width_s_)));
  while (i >= kMaxFleetBuckets) {  // merge pairs: the width doubles, memory stays bounded
    std::vector<Bucket> merged((buckets_.size() + 1) / 2);
    for (std::size_t k = 0; k < buckets_.size(); ++k) {
      auto& m = merged[k / 2];
      const auto& b = buckets_[k];
      m.arrivals += b.arrivals;
      m.completed += b.completed;
      m.good += b.good;
      m.failed += b.failed;
      m.timed_out += b.timed_out;
      m.rejected += b.rejected;
      m.billed_s += b.billed_s;
      m.ready_s += b.ready_s;
    }
    buckets_.swap(merged);
    width_s_ *= 2;
    i = static_cast<std::size_t>(std::floor(t / width_s_));
  }
  if (i >= buckets_.size()) buckets_.resize(i + 1);
  // Times in [lo, hi) map to bucket i at this width (i = 0 also takes negative times, through the max above).
  cached_ = i;
  cached_lo_ = i == 0 ? -std::numeric_limits<double>::infinity() : first_time_of(i, width_s_);
  cached_hi_ = first_time_of(i + 1, width_s_);
  return buckets_[i];
}

void FleetMeter::on_failed(double t) { ++at(t).failed; }
void FleetMeter::on_timed_out(double t) { ++at(t).timed_out; }

void FleetMeter::on_fleet(double t, std::int64_t billed, std::int64_t ready) {
  // Spread the counts held since last_t_ over the buckets they cover.
  at(t);  // sizes (and, if needed, widens) the table first
  double from = last_t_;
  while (from < t) {
    const auto i = static_cast<std::size_t>(std::floor(from / width_s_));
    const double to = std::min(t, (static_cast<double>(i) + 1) * width_s_);
    auto& b = buckets_[std::min(i, buckets_.size() - 1)];
    b.billed_s += static_cast<double>(billed_) * (to - from);
    b.ready_s += static_cast<double>(ready_) * (to - from);
    if (to <= from) break;  // guards against rounding at a boundary
    from = to;
  }
  billed_total_s_ += static_cast<double>(billed_) * std::max(0.0, t - last_t_);
  ready_total_s_ += static_cast<double>(ready_) * std::max(0.0, t - last_t_);
  last_t_ = std::max(last_t_, t);
  billed_ = billed;
  ready_ = ready;
  peak_ = std::max(peak_, billed);
}

FleetSummary FleetMeter::summarize(double end_s, double busy_replica_s) const {
  FleetMeter m = *this;
  m.on_fleet(std::max(end_s, last_t_), billed_, ready_);
  FleetSummary f;
  f.replica_hours = m.billed_total_s_ / 3600;
  f.ready_replica_hours = m.ready_total_s_ / 3600;
  f.idle_replica_hours = std::max(0.0, m.billed_total_s_ - busy_replica_s) / 3600;
  f.peak_replicas = m.peak_;
  const double end = std::max(end_s, last_t_);
  for (std::size_t i = 0; i < m.buckets_.size(); ++i) {
    const auto& b = m.buckets_[i];
    FleetHour h;
    h.start_s = static_cast<double>(i) * m.width_s_;
    h.end_s = std::min(end, h.start_s + m.width_s_);
    if (h.end_s <= h.start_s && i > 0) break;
    h.arrivals = b.arrivals;
    h.completed = b.completed;
    h.good = b.good;
    h.failed = b.failed;
    h.timed_out = b.timed_out;
    h.rejected = b.rejected;
    const double span = h.end_s - h.start_s;
    h.replicas_billed = span > 0 ? b.billed_s / span : static_cast<double>(m.billed_);
    h.replicas_ready = span > 0 ? b.ready_s / span : static_cast<double>(m.ready_);
    f.hours.push_back(h);
  }
  return f;
}

}  // namespace llmsim::metrics
