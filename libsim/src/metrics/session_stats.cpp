#include "llmsim/metrics/session_stats.hpp"

#include <algorithm>

namespace llmsim::metrics {

SessionStats::Bucket& SessionStats::bucket(std::int32_t turn) {
  const auto b = static_cast<std::size_t>(std::clamp(turn, 0, kTurnBuckets - 1));
  if (buckets_.size() <= b) buckets_.resize(b + 1);
  return buckets_[b];
}

void SessionStats::on_turn_completed(std::int32_t turn, double ttft_ms, std::int64_t input_tokens,
                                     std::int64_t cached_tokens) {
  Bucket& b = bucket(turn);
  ++b.completed;
  b.input += static_cast<double>(input_tokens);
  b.cached += static_cast<double>(std::max<std::int64_t>(0, cached_tokens));
  b.ttft.add(ttft_ms);
}

void SessionStats::on_turn_lost(std::int32_t turn) { ++bucket(turn).lost; }

std::vector<TurnSummary> SessionStats::by_turn() const {
  std::vector<TurnSummary> out;
  for (std::size_t k = 0; k < buckets_.size(); ++k) {
    const Bucket& b = buckets_[k];
    TurnSummary t;
    t.turn = static_cast<std::int32_t>(k) + 1;  // 1-based, as a user counts turns
    t.and_later = static_cast<int>(k) == kTurnBuckets - 1;
    t.completed = b.completed;
    t.lost = b.lost;
    t.mean_input_tokens = b.completed > 0 ? b.input / static_cast<double>(b.completed) : 0;
    t.prefix_hit_rate = b.input > 0 ? b.cached / b.input : 0;
    t.ttft_ms = b.ttft.stats();
    out.push_back(std::move(t));
  }
  return out;
}

double SessionStats::first_admission_hit_rate() const {
  double in = 0, hit = 0;
  for (const auto& b : buckets_) {
    in += b.input;
    hit += b.cached;
  }
  return in > 0 ? hit / in : 0;
}

}  // namespace llmsim::metrics
