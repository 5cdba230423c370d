#pragma once
// The discrete-event core: one queue with a total, documented order (time, phase, sequence number).
// The sequence counter belongs to the queue (one per simulation), so two simulations never interact.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "llmsim/core/error.hpp"

namespace llmsim::engine {

/// Phase breaks ties at equal times: an iteration that ends at t frees its slots before a request arriving
/// at t is routed, and an idle replica starts work at t only after every request arriving at t has joined
/// its queue (so simultaneous arrivals share a batch); among equal (time, phase) the earlier-scheduled
/// event runs first. Fleet events come last at a time: the autoscaler's evaluation (autoscale), a started
/// replica becoming ready (replica_ready), a replica failing and coming back (replica_down, replica_up), then the
/// client-timeout timer (timeout): a request whose last token comes at its deadline finished in time. A KV
/// transfer ending (disaggregation) joins its decode replica's queue before idle replicas start at that time.
enum class EventKind : std::uint8_t {
  iteration_done = 0, arrival = 1, kv_transfer_done = 2, replica_start = 3, autoscale = 4, replica_ready = 5,
  replica_down = 6, replica_up = 7, timeout = 8
};

struct Event {
  double time_s = 0;
  std::uint64_t seq = 0;    ///< insertion counter: ties at equal (time, phase) run in scheduling order
  EventKind kind = EventKind::arrival;
  std::int32_t target = 0;  ///< replica (iteration_done, replica_start, fleet events) or arrival source (arrival)
};

class EventQueue {
 public:
  /// Schedules an event; `time_s` must not lie before the last popped event (InternalError otherwise).
  void schedule(double time_s, EventKind kind, std::int32_t target) {
    LLMSIM_CHECK(time_s >= now_s_, "event scheduled in the past");
    heap_.push_back(Event{time_s, next_seq_++, kind, target});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  bool empty() const noexcept { return heap_.empty(); }
  std::size_t size() const noexcept { return heap_.size(); }
  /// The next event (precondition: not empty).
  const Event& peek() const {
    LLMSIM_CHECK(!heap_.empty(), "peek on an empty event queue");
    return heap_.front();
  }
  /// Removes and returns the next event; now() becomes its time.
  Event pop() {
    LLMSIM_CHECK(!heap_.empty(), "pop on an empty event queue");
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    Event e = heap_.back();
    heap_.pop_back();
    now_s_ = e.time_s;
    return e;
  }
  /// Time of the last popped event (0 before the first).
  double now() const noexcept { return now_s_; }
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  // std heap functions build a max-heap; "later" puts the earliest (time, phase, seq) on top. A function
  // object (not a function pointer) so the heap operations inline the comparison.
  struct Later {
    bool operator()(const Event& a, const Event& b) const noexcept {
      if (a.time_s != b.time_s) return a.time_s > b.time_s;
      if (a.kind != b.kind) return a.kind > b.kind;
      return a.seq > b.seq;
    }
  };
  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
  double now_s_ = 0;
};

}  // namespace llmsim::engine
