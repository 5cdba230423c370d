#pragma once
// Per-turn statistics of a session workload (workload.sessions): how much of each turn's prompt the prefix cache
// held and how long its first token took, by the turn's index in its session. Memory: one bucket per turn index up
// to kTurnBuckets (the last one gathers the rest), independent of the run's length.
#include <cstdint>
#include <vector>

#include "llmsim/metrics/latency_histogram.hpp"
#include "llmsim/metrics/summary.hpp"

namespace llmsim::metrics {

class SessionStats {
 public:
  /// Turn indices 0 .. kTurnBuckets − 2 get their own bucket; the last bucket holds every later turn.
  static constexpr int kTurnBuckets = 32;

  /// A measured turn that completed: its 0-based index, TTFT, prompt tokens and the prompt tokens its first
  /// admission found cached.
  void on_turn_completed(std::int32_t turn, double ttft_ms, std::int64_t input_tokens, std::int64_t cached_tokens);
  /// A measured turn that did not complete (timed out, failed, rejected).
  void on_turn_lost(std::int32_t turn);

  /// The summary's per-turn part (sessions counts and rates are the engine's to fill).
  std::vector<TurnSummary> by_turn() const;
  /// Σ cached ÷ Σ prompt tokens over the measured completed turns' first admissions (0 when none).
  double first_admission_hit_rate() const;

 private:
  struct Bucket {
    std::int64_t completed = 0, lost = 0;
    double input = 0, cached = 0;
    LatencyHistogram ttft;
  };
  Bucket& bucket(std::int32_t turn);
  std::vector<Bucket> buckets_;  ///< grown to the largest index seen (at most kTurnBuckets)
};

}  // namespace llmsim::metrics
