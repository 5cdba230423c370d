#pragma once
// What a fleet cost and delivered hour by hour: replicas billed (starting, serving, draining) and ready, the
// requests that arrived, finished, met the SLO, failed or timed out in each hour. Filled by the engine for every
// run (a fixed fleet bills all its replicas all the time), so fixed and autoscaled fleets compare field by field.
#include <cstdint>
#include <vector>

namespace llmsim::metrics {

/// One bucket of the per-hour table (an hour; wider on runs longer than kMaxFleetBuckets hours).
struct FleetHour {
  double start_s = 0, end_s = 0;
  std::int64_t arrivals = 0, completed = 0, good = 0, failed = 0, timed_out = 0;
  std::int64_t rejected = 0;   ///< of the arrivals, never entered (longer than the KV cache / max_model_len)
  double replicas_billed = 0;  ///< time-mean replicas paid for (starting + ready + draining)
  double replicas_ready = 0;   ///< time-mean replicas taking requests
  /// good ÷ (completed + failed + timed_out); < 0 when nothing ended in the hour (JSON null).
  double slo_attainment() const;
};

struct FleetSummary {
  bool autoscaled = false;
  double replica_hours = 0;        ///< billed: from a replica's start (cold start included) until it is stopped
  double ready_replica_hours = 0;  ///< of those, taking requests
  double idle_replica_hours = 0;   ///< billed with no iteration running (cold starts included)
  std::int64_t scale_ups = 0, scale_downs = 0;
  std::int64_t peak_replicas = 0;  ///< most replicas billed at once
  double scale_up_delay_s = 0;     ///< start to ready of an added replica (0 for a fixed fleet)
  std::int64_t failures = 0;       ///< replica failures (outages) during the run
  std::vector<FleetHour> hours;
};

inline constexpr std::size_t kMaxFleetBuckets = 2048;

/// Accumulates the table in O(1) per event (O(buckets crossed) per fleet change); memory bounded by
/// kMaxFleetBuckets (adjacent buckets merge and the width doubles beyond it).
class FleetMeter {
 public:
  void on_arrival(double t) { ++at(t).arrivals; }
  void on_finish(double t, bool good) {
    Bucket& b = at(t);
    ++b.completed;
    b.good += good;
  }
  void on_failed(double t);
  void on_timed_out(double t);
  void on_rejected(double t) { ++at(t).rejected; }
  /// The billed and ready replica counts change at `t` (called before the change takes effect is not needed:
  /// the meter integrates the previous counts up to t, then holds the new ones).
  void on_fleet(double t, std::int64_t billed, std::int64_t ready);
  /// The table until `end_s`; busy_replica_s = Σ seconds replicas ran iterations (for the idle hours).
  FleetSummary summarize(double end_s, double busy_replica_s) const;

 private:
  struct Bucket {
    std::int64_t arrivals = 0, completed = 0, good = 0, failed = 0, timed_out = 0, rejected = 0;
    double billed_s = 0, ready_s = 0;
  };
  /// The bucket of time t: the last one found when t lies in its range (inline: every arrival and completion asks),
  /// else find(t).
  Bucket& at(double t) {
    if (t >= cached_lo_ && t < cached_hi_) return buckets_[cached_];
    return find(t);
  }
  Bucket& find(double t);  ///< sizes or widens the table as needed, and caches the bucket's range
  std::vector<Bucket> buckets_;
  double width_s_ = 3600;
  /// The last bucket found and the exact range of times that floor(t / width_s_) maps to it (every arrival and
  /// completion asks: a compare instead of a division and a floor).
  std::size_t cached_ = 0;
  double cached_lo_ = 0, cached_hi_ = -1;
  double last_t_ = 0;
  std::int64_t billed_ = 0, ready_ = 0, peak_ = 0;
  double billed_total_s_ = 0, ready_total_s_ = 0;
};

}  // namespace llmsim::metrics
