#pragma once
// The discrete-event core: one queue with a total, documented order (time, phase, sequence number).
// The sequence counter belongs to the queue (one per simulation), so two simulations never interact.
#include <bit>
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
/// transfer ending (disaggregation) joins its decode replica's queue before idle replicas start at that time, and so
/// does a request an API server hands to its engine after its chat render (api_handoff, engine/api_render_loop.hpp).
enum class EventKind : std::uint8_t {
  iteration_done = 0, arrival = 1, kv_transfer_done = 2, api_handoff = 3, replica_start = 4, autoscale = 5,
  replica_ready = 6, replica_down = 7, replica_up = 8, timeout = 9
};

struct Event {
  double time_s = 0;
  std::uint64_t seq = 0;    ///< insertion counter: ties at equal (time, phase) run in scheduling order
  EventKind kind = EventKind::arrival;
  std::int32_t target = 0;  ///< replica (iteration_done, replica_start, fleet events) or arrival source (arrival)
};

class EventQueue {
 public:
  /// Events of `kind` are tracked by target, at most one pending per target in [0, targets): they can be moved
  /// (reschedule) or removed (cancel) in O(log n). Call before scheduling any.
  void track(EventKind kind, std::size_t targets) {
    LLMSIM_CHECK(size() == 0, "event tracking set up after events were scheduled");
    tracked_ = static_cast<int>(kind);
    pos_.assign(targets + 1, kNowhere);  // and one slot that untracked events write to (place() has no branch)
  }
  /// Schedules an event; `time_s` must not lie before the last popped event (InternalError otherwise).
  void schedule(double time_s, EventKind kind, std::int32_t target) {
    const Node n = make_node(time_s, kind, target);
    next_ = kUnknown;
    ++count_;
    if (is_tracked(n)) LLMSIM_CHECK(tracked_pos(target) == kNowhere, "a second pending event for a tracked target");
    if (static_cast<int>(kind) == side_kind_ && !side_full_) {
      side_ = n;
      side_full_ = true;
    } else {
      push(is_tracked(n) ? tracked_heap_ : heap_, n);
    }
  }
  /// Events of `kind` (not the tracked kind) wait in one slot beside the heap while it is free: a single source's next
  /// arrival is then scheduled and popped without heap work. The order of events is unchanged. Call before scheduling.
  void side(EventKind kind) {
    LLMSIM_CHECK(size() == 0 && static_cast<int>(kind) != tracked_, "the side slot set up late or for the tracked kind");
    side_kind_ = static_cast<int>(kind);
  }
  /// Moves the pending tracked event of `target` to `time_s` with a new sequence number (it then orders as if
  /// scheduled now); false when none is pending.
  bool reschedule(std::int32_t target, double time_s) {
    next_ = kUnknown;
    fill(tracked_heap_);
    const std::size_t i = tracked_pos(target);
    if (i == kNowhere) return false;
    const Node old = tracked_heap_.nodes[i];
    const Node n = make_node(time_s, static_cast<EventKind>(old.order_key >> kSeqBits), target);
    if (before(n, old)) sift_up(tracked_heap_, i, n);
    else sift_down(tracked_heap_, i, n);
    return true;
  }
  /// Removes the pending tracked event of `target`; false when none is pending.
  bool cancel(std::int32_t target) {
    Heap& h = tracked_heap_;
    next_ = kUnknown;
    fill(h);
    const std::size_t i = tracked_pos(target);
    if (i == kNowhere) return false;
    pos_[static_cast<std::size_t>(target)] = kNowhere;
    --count_;
    const Node last = h.nodes.back();
    h.nodes.pop_back();
    if (i < h.nodes.size()) {
      if (i > 0 && before(last, h.nodes[(i - 1) / kArity])) sift_up(h, i, last);
      else sift_down(h, i, last);
    }
    return true;
  }
  bool empty() const noexcept { return count_ == 0; }
  std::size_t size() const noexcept { return count_; }
  /// The next event (precondition: not empty).
  Event peek() { return to_event(first()); }
  /// Time of the next event (precondition: not empty).
  double peek_time() { return std::bit_cast<double>(first().time_key); }
  /// Removes and returns the next event; now() becomes its time. A heap event leaves its root empty (a hole) until
  /// the next call: an engine that schedules its next step right away fills it directly (schedule), anything else
  /// first moves the last node up (fill), as a plain pop would have.
  Event pop() {
    Heap* h = next_heap();
    next_ = kUnknown;
    --count_;
    Node top;
    if (!h) {
      top = side_;
      side_full_ = false;
    } else {
      top = h->nodes.front();
      pos_[top.slot] = kNowhere;
      h->hole = true;
    }
    const Event e = to_event(top);
    now_s_ = e.time_s;
    return e;
  }
  /// Time of the last popped event (0 before the first).
  double now() const noexcept { return now_s_; }
  void reserve(std::size_t n) { heap_.nodes.reserve(n); }

 private:
  // Two 4-ary min-heaps of packed keys, popped as one queue (the least of their roots and the side slot's event): the
  // tracked kind's events (a replica's next step end, one per replica: a single replica's is scheduled and popped
  // without sinking below the many arrivals waiting behind it, as sessions' next turns do) and the rest. (time, phase,
  // seq) is the pair (time's bits, phase << 56 | seq), compared as one 128-bit unsigned number (times are >= 0, whose
  // IEEE bit patterns order as the values). Shallower than a binary heap and compared without branches on the three
  // fields: the engine pops an event per step.
  static constexpr std::size_t kArity = 4;
  static constexpr int kSeqBits = 56;
  static constexpr std::uint64_t kSeqLimit = std::uint64_t{1} << kSeqBits;
  static constexpr std::size_t kNowhere = ~std::size_t{0};
  struct Node {
    std::uint64_t time_key;
    std::uint64_t order_key;  ///< phase << kSeqBits | seq
    std::int32_t target;
    std::uint32_t slot;       ///< its entry in pos_: the target's when tracked, else the last (written, never read)
  };
  __extension__ using U128 = unsigned __int128;
  static bool before(const Node& a, const Node& b) noexcept {
    return ((static_cast<U128>(a.time_key) << 64) | a.order_key) < ((static_cast<U128>(b.time_key) << 64) | b.order_key);
  }
  static Event to_event(const Node& n) noexcept {
    return Event{std::bit_cast<double>(n.time_key), n.order_key & (kSeqLimit - 1),
                 static_cast<EventKind>(n.order_key >> kSeqBits), n.target};
  }
  Node make_node(double time_s, EventKind kind, std::int32_t target) {
    LLMSIM_CHECK(time_s >= now_s_, "event scheduled in the past");
    LLMSIM_CHECK(next_seq_ < kSeqLimit, "event sequence numbers exhausted");
    const double t = time_s + 0.0;  // -0.0 -> +0.0: the key's bit order is the value order for t >= 0
    const auto slot = static_cast<int>(kind) == tracked_ ? static_cast<std::uint32_t>(target)
                                                         : static_cast<std::uint32_t>(pos_.size() - 1);
    return Node{std::bit_cast<std::uint64_t>(t), (static_cast<std::uint64_t>(kind) << kSeqBits) | next_seq_++, target, slot};
  }
  bool is_tracked(const Node& n) const noexcept { return static_cast<int>(n.order_key >> kSeqBits) == tracked_; }
  std::size_t tracked_pos(std::int32_t target) const {
    LLMSIM_CHECK(tracked_ >= 0 && target >= 0 && static_cast<std::size_t>(target) + 1 < pos_.size(),
                 "rescheduling an event that is not tracked");
    return pos_[static_cast<std::size_t>(target)];
  }
  /// A heap whose root a pop may have left empty (a hole) until the next schedule into it or the next other call.
  struct Heap {
    std::vector<Node> nodes;
    bool hole = false;
  };
  /// Where the next event waits, the holes filled: a heap, or null for the side slot (InternalError when empty). Kept
  /// until the queue changes, so a pop after peek_time chooses once.
  Heap* next_heap() {
    if (next_ == kUnknown) {
      fill();
      LLMSIM_CHECK(!empty(), "the next event of an empty event queue");
      const Heap* h = first_heap();
      next_ = side_full_ && (!h || before(side_, h->nodes.front())) ? kSide : h == &heap_ ? kMain : kTracked;
    }
    return next_ == kSide ? nullptr : next_ == kMain ? &heap_ : &tracked_heap_;
  }
  const Node& first() {
    const Heap* h = next_heap();
    return h ? h->nodes.front() : side_;
  }
  /// The heap whose root comes first (null when both are empty); precondition: no hole.
  Heap* first_heap() noexcept {
    if (tracked_heap_.nodes.empty()) return heap_.nodes.empty() ? nullptr : &heap_;
    if (heap_.nodes.empty()) return &tracked_heap_;
    return before(tracked_heap_.nodes.front(), heap_.nodes.front()) ? &tracked_heap_ : &heap_;
  }
  void fill() {
    fill(heap_);
    fill(tracked_heap_);
  }
  /// Closes a hole left by pop: the last node takes the root and sinks.
  void fill(Heap& h) {
    if (!h.hole) return;
    h.hole = false;
    const Node last = h.nodes.back();
    h.nodes.pop_back();
    if (!h.nodes.empty()) sift_down(h, 0, last);
  }
  void push(Heap& h, const Node& n) {
    if (h.hole) {  // the last pop left the root empty: the new event takes it and sinks (one pass, not two)
      h.hole = false;
      sift_down(h, 0, n);
    } else {
      h.nodes.push_back(n);
      sift_up(h, h.nodes.size() - 1, n);
    }
  }
  void place(Heap& h, std::size_t i, const Node& n) {
    h.nodes[i] = n;
    pos_[n.slot] = i;
  }
  void sift_up(Heap& h, std::size_t i, const Node& n) {
    auto& v = h.nodes;
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!before(n, v[parent])) break;
      place(h, i, v[parent]);
      i = parent;
    }
    place(h, i, n);
  }
  void sift_down(Heap& h, std::size_t i, const Node& n) {
    auto& v = h.nodes;
    const std::size_t size = v.size();
    for (;;) {
      const std::size_t first = kArity * i + 1;
      std::size_t best = first;
      if (first + kArity <= size) {  // four children (the common case): the least of two pairs' least, no loop
        const std::size_t a = before(v[first + 1], v[first]) ? first + 1 : first;
        const std::size_t b = before(v[first + 3], v[first + 2]) ? first + 3 : first + 2;
        best = before(v[b], v[a]) ? b : a;
      } else {
        if (first >= size) break;
        for (std::size_t c = first + 1; c < size; ++c)
          if (before(v[c], v[best])) best = c;
      }
      if (!before(v[best], n)) break;
      place(h, i, v[best]);
      i = best;
    }
    place(h, i, n);
  }
  Heap heap_;          ///< every kind but the tracked one (and the side slot's)
  Heap tracked_heap_;  ///< the tracked kind
  std::vector<std::size_t> pos_ = std::vector<std::size_t>(1, kNowhere);  ///< per target: its tracked event's index in
                                                                          ///< tracked_heap_ (kNowhere: none); then the
                                                                          ///< untracked slot
  int tracked_ = -1;              ///< the tracked kind (-1: none)
  int side_kind_ = -1;            ///< the kind that may wait in the side slot (-1: none)
  bool side_full_ = false;
  /// next_heap()'s answer, kept until the queue changes.
  enum : std::uint8_t { kUnknown, kSide, kMain, kTracked } next_ = kUnknown;
  Node side_{};
  std::size_t count_ = 0;  ///< events pending (the heaps' nodes but their holes, and the side slot's)
  std::uint64_t next_seq_ = 0;
  double now_s_ = 0;
};

}  // namespace llmsim::engine
