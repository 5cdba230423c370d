#pragma once
// The longest context in a replica's decode set, without touching every decoder each step (private to the engine;
// docs/engine.md "The longest context"). vLLM V0 replays a decode step's CUDA graph only while every sequence fits
// max_seq_len_to_capture (perf::CostModel::eager_decode_context), so a step needs the longest context of its batch.
// Every decoder grows by the same tokens per step: a decoder that joined at token clock k0 with ctx0 cached tokens
// holds ctx0 + (k − k0) at clock k, so its origin ctx0 − k0 orders the decoders for good, and the longest context is
// the largest live origin plus the clock. The origins sit in a max-heap with lazy deletion (as the finish heap):
// O(log n) per decoder that joins, an entry that left dropped when it reaches the top, and the heap rebuilt from its
// live entries when the dead ones outnumber them (amortised O(1) per leave). A replica keeps it only when its cost
// model has such a limit (V0 runtimes with graphs), so no other engine pays for it.
#include <algorithm>
#include <cstdint>
#include <vector>

namespace llmsim::engine::detail {

class LongestContext {
 public:
  /// A decoder `seq` (its heap stamp `stamp`) joins with origin ctx0 − k0. `live` (see max_origin) is used to drop
  /// dead entries when they outnumber `decoders` (the decode set's size after the join).
  template <class Live>
  void push(std::int64_t origin, std::int32_t seq, std::uint32_t stamp, std::int64_t decoders, const Live& live) {
    if (static_cast<std::int64_t>(heap_.size()) > 2 * decoders + 64) {
      heap_.erase(std::remove_if(heap_.begin(), heap_.end(), [&](const Entry& e) { return !live(e.seq, e.stamp); }),
                  heap_.end());
      std::make_heap(heap_.begin(), heap_.end());
    }
    heap_.push_back(Entry{origin, seq, stamp});
    std::push_heap(heap_.begin(), heap_.end());
  }
  /// The largest origin among the live decoders (`live(seq, stamp)`: the entry's decoder is still in the set it
  /// joined); dead entries on top are dropped. Requires at least one live decoder.
  template <class Live>
  std::int64_t max_origin(const Live& live) {
    while (!heap_.empty() && !live(heap_.front().seq, heap_.front().stamp)) {
      std::pop_heap(heap_.begin(), heap_.end());
      heap_.pop_back();
    }
    return heap_.empty() ? 0 : heap_.front().origin;
  }
  std::size_t entries() const noexcept { return heap_.size(); }

 private:
  struct Entry {
    std::int64_t origin;
    std::int32_t seq;
    std::uint32_t stamp;
    bool operator<(const Entry& o) const { return origin != o.origin ? origin < o.origin : seq < o.seq; }
  };
  std::vector<Entry> heap_;
};

}  // namespace llmsim::engine::detail
