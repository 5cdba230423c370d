#pragma once
// Client timeouts (workload.timeout_s; private to the engine): the engine-side deadlines of the requests in flight.
// The client gives up timeout_s after it sent a request, on its own clock: a response reaches it the serving path
// (perf/serving_path.hpp: a fixed part and the prompt's tokenisation) after the engine produced it, so the engine
// must be done by arrival + timeout_s - path(prompt). That path differs per request (longer prompts take longer to
// tokenise), so the deadlines do not arrive sorted: a min-heap holds them, and one live timer event, at the earliest
// deadline (`armed_s_`), drives them. A timer armed earlier by a newer, shorter deadline leaves the older event
// stale: expire() recognises it (it fires before the armed time) and does nothing. O(log n) per request, nothing per
// iteration; with timeout_s = 0 none of this exists. Entries of requests that finished before their deadline are not
// removed: expire() meets them once and the caller skips them (the slot is free or holds another request, told apart
// by the request id).
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <vector>

#include "llmsim/perf/serving_path.hpp"

namespace llmsim::engine::detail {

class Timeouts {
 public:
  Timeouts(double timeout_s, perf::ServingPath path) : timeout_s_(timeout_s), path_(path) {}

  /// Request `id` in slot `seq`, of `prompt_tokens`, arrived at `arrival_s`. Returns its engine-side deadline when
  /// it is earlier than the armed timer (or none is armed): the caller schedules a timer event there.
  std::optional<double> watch(std::int32_t seq, std::int64_t id, double arrival_s, std::int64_t prompt_tokens) {
    const double deadline = arrival_s + std::max(0.0, timeout_s_ - path_.latency_s(prompt_tokens));
    heap_.push(Entry{deadline, order_++, id, seq});
    if (deadline >= armed_s_) return std::nullopt;
    armed_s_ = deadline;
    return deadline;
  }

  /// At a timer event (`now_s`): calls `expired(seq, id)` for every entry whose deadline has passed, earliest first,
  /// and returns the next deadline (the timer's next time), or nullopt when none is left or the event was stale.
  template <class F>
  std::optional<double> expire(double now_s, F&& expired) {
    if (now_s < armed_s_) return std::nullopt;  // superseded by an earlier timer that has already run
    while (!heap_.empty() && heap_.top().deadline_s <= now_s) {
      const Entry e = heap_.top();
      heap_.pop();
      expired(e.seq, e.id);
    }
    armed_s_ = heap_.empty() ? kNever : heap_.top().deadline_s;
    if (heap_.empty()) return std::nullopt;
    return armed_s_;
  }

  /// Forgets every entry (the caller knows they are all stale: nothing is in the system); a pending timer event
  /// becomes stale.
  void clear() noexcept {
    heap_ = {};
    armed_s_ = kNever;
  }
  /// The client's timeout (workload.timeout_s).
  double timeout_s() const noexcept { return timeout_s_; }

 private:
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  struct Entry {
    double deadline_s;
    std::uint64_t order;  // arrival order: ties expire first come, first served
    std::int64_t id;
    std::int32_t seq;
    bool operator>(const Entry& o) const noexcept {
      return deadline_s != o.deadline_s ? deadline_s > o.deadline_s : order > o.order;
    }
  };
  double timeout_s_;
  perf::ServingPath path_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  std::uint64_t order_ = 0;
  double armed_s_ = kNever;
};

}  // namespace llmsim::engine::detail
