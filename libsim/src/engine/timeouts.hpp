#pragma once
// Client timeouts (workload.timeout_s; private to the engine): the deadlines of the requests in flight, in
// arrival order. Every request gets the same timeout and arrivals are processed in time order, so the deadlines
// arrive sorted: a FIFO holds them and one timer event — at the earliest deadline — is all the event queue ever
// carries (O(1) per request, nothing per iteration; with timeout_s = 0 none of this exists). Entries of requests
// that finished before their deadline are not removed: expire() meets them once and the caller skips them (the
// slot is free or holds another request, told apart by the request id).
#include <cstdint>
#include <optional>
#include <vector>

namespace llmsim::engine::detail {

class Timeouts {
 public:
  explicit Timeouts(double timeout_s) : timeout_s_(timeout_s) {}

  /// Request `id` in slot `seq` arrived at `arrival_s` (never before an earlier call's). Returns its deadline
  /// when the FIFO was empty: the caller schedules the timer there.
  std::optional<double> watch(std::int32_t seq, std::int64_t id, double arrival_s) {
    const bool was_empty = head_ == fifo_.size();
    if (was_empty && head_ > 0) {  // drained: reuse the buffer from its start
      fifo_.clear();
      head_ = 0;
    }
    fifo_.push_back(Entry{arrival_s + timeout_s_, id, seq});
    if (was_empty) return fifo_.back().deadline_s;
    return std::nullopt;
  }

  /// At the timer (`now_s`): calls `expired(seq, id)` for every entry whose deadline has passed, in arrival order,
  /// and returns the next deadline (the timer's next time), or nullopt when none is left.
  template <class F>
  std::optional<double> expire(double now_s, F&& expired) {
    while (head_ < fifo_.size() && fifo_[head_].deadline_s <= now_s) {
      const Entry e = fifo_[head_++];
      expired(e.seq, e.id);
    }
    if (head_ == fifo_.size()) return std::nullopt;
    if (head_ > 4096 && head_ * 2 > fifo_.size()) {  // compact: memory follows the requests within one timeout
      fifo_.erase(fifo_.begin(), fifo_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    return fifo_[head_].deadline_s;
  }

  /// Forgets every entry (the caller knows they are all stale: nothing is in the system).
  void clear() noexcept {
    fifo_.clear();
    head_ = 0;
  }
  double timeout_s() const noexcept { return timeout_s_; }

 private:
  struct Entry {
    double deadline_s;
    std::int64_t id;
    std::int32_t seq;
  };
  double timeout_s_;
  std::vector<Entry> fifo_;
  std::size_t head_ = 0;
};

}  // namespace llmsim::engine::detail
