#pragma once
// The fleet of deployment replicas (private to the engine): which are off, starting (paying a cold start,
// serving nothing), ready (the router's choices) or draining (finishing what they hold, taking nothing new), and
// the autoscaler that moves them. Decisions follow Kubernetes' Horizontal Pod Autoscaler: every interval_s,
// desired = ceil(metric ÷ per-replica target) clamped to [min, max], counting starting replicas as capacity on the
// way; a scale-down takes the highest recommendation of the last scale_down_delay_s (HPA's stabilisation window).
// The metric is the time-mean number of requests in the system over the interval (vLLM's num_requests_running +
// num_requests_waiting, what KEDA/HPA setups for vLLM scale on).
#include <cstdint>
#include <deque>
#include <vector>

#include "llmsim/spec/autoscaler.hpp"

namespace llmsim::engine::detail {

/// standby: a hot spare (billed, loaded, not routed to); failed: down until repaired (billed: the machine is held).
enum class GroupState : std::uint8_t { off, starting, ready, draining, failed, standby };

class Fleet {
 public:
  /// `groups` deployment replicas, the first `ready` of them serving at t = 0, the rest off.
  Fleet(std::int32_t groups, std::int32_t ready);
  GroupState state(std::int32_t g) const { return state_[static_cast<std::size_t>(g)]; }
  void set(std::int32_t g, GroupState s);
  /// One byte per group, 1 = the router may send it requests.
  const std::vector<char>& ready_mask() const noexcept { return ready_mask_; }
  /// The same groups as a list, ascending (the router scans only these).
  const std::vector<std::int32_t>& ready_list() const noexcept { return ready_list_; }
  std::int32_t ready() const noexcept { return ready_; }
  std::int32_t starting() const noexcept { return starting_; }
  /// Replicas paid for: every state but off (a failed machine is still held while it is repaired).
  std::int32_t billed() const noexcept { return size() - off_; }
  std::int32_t size() const noexcept { return static_cast<std::int32_t>(state_.size()); }

 private:
  std::vector<GroupState> state_;
  std::vector<char> ready_mask_;
  std::vector<std::int32_t> ready_list_;
  std::int32_t ready_ = 0, starting_ = 0, draining_ = 0, off_ = 0;
};

class Autoscaler {
 public:
  /// `slots_per_replica`: max_num_seqs × batches in flight (target_utilization's denominator).
  Autoscaler(const spec::AutoscalerSpec& spec, double scale_up_delay_s, double slots_per_replica);
  double interval_s() const noexcept { return spec_.interval_s; }
  double scale_up_delay_s() const noexcept { return delay_s_; }
  /// Requests in the system changed to `n` at `now_s` (time-mean metric).
  void on_in_system(double now_s, std::int64_t n);
  struct Actions {
    std::vector<std::int32_t> start;  ///< off → starting (the caller schedules their ready time)
    std::vector<std::int32_t> drain;  ///< ready → draining (or straight off when they hold nothing)
  };
  /// One evaluation at `now_s`; `outstanding(g)` = requests a group holds. Changes `fleet` and fills `out`.
  template <class Outstanding>
  void tick(double now_s, Fleet& fleet, Outstanding&& outstanding, Actions& out);
  /// The last evaluation's recommendation, and the highest of the scale-down window (what a scale-down may go to).
  std::int32_t last_recommendation() const noexcept { return window_.empty() ? 0 : window_.back().second; }
  std::int32_t window_max() const noexcept { return window_.empty() ? 0 : window_.front().second; }
  std::int64_t scale_ups() const noexcept { return ups_; }
  std::int64_t scale_downs() const noexcept { return downs_; }

 private:
  std::int32_t recommend(double now_s);
  spec::AutoscalerSpec spec_;
  double delay_s_, per_replica_;
  double last_s_ = 0, integral_ = 0, tick_start_s_ = 0;
  std::int64_t in_system_ = 0;
  /// Recent (time, recommendation) that may still be the window's maximum: times increasing, recommendations
  /// strictly decreasing from the front (the front is the maximum).
  std::deque<std::pair<double, std::int32_t>> window_;
  std::int64_t ups_ = 0, downs_ = 0;
};

template <class Outstanding>
void Autoscaler::tick(double now_s, Fleet& fleet, Outstanding&& outstanding, Actions& out) {
  out.start.clear();
  out.drain.clear();
  const std::int32_t want = recommend(now_s);
  // Stabilisation: scale down only to the highest recommendation of the window (its monotonic deque's front).
  const std::int32_t down_to = std::max(want, window_.front().second);
  const std::int32_t current = fleet.ready() + fleet.starting();
  if (want > current) {
    // A draining replica is still loaded: take it back first (no cold start), then start off ones.
    std::int32_t need = want - current;
    for (std::int32_t g = 0; g < fleet.size() && need > 0; ++g)
      if (fleet.state(g) == GroupState::draining) {
        fleet.set(g, GroupState::ready);
        --need;
      }
    for (std::int32_t g = 0; g < fleet.size() && need > 0; ++g)
      if (fleet.state(g) == GroupState::off) {
        fleet.set(g, GroupState::starting);
        out.start.push_back(g);
        --need;
        ++ups_;
      }
  } else if (down_to < current && fleet.starting() == 0) {
    // Drain the ready replicas holding the least work, highest index first on ties.
    std::int32_t excess = current - down_to;
    while (excess-- > 0) {
      std::int32_t pick = -1;
      std::int64_t least = 0;
      for (std::int32_t g = fleet.size() - 1; g >= 0; --g) {
        if (fleet.state(g) != GroupState::ready) continue;
        const std::int64_t o = outstanding(g);
        if (pick < 0 || o < least) {
          pick = g;
          least = o;
        }
      }
      if (pick < 0 || fleet.ready() <= std::max(0, spec_.min_replicas)) break;
      if (least == 0) {
        fleet.set(pick, GroupState::off);
      } else {
        fleet.set(pick, GroupState::draining);
        out.drain.push_back(pick);
      }
      ++downs_;
    }
  }
}

}  // namespace llmsim::engine::detail
