#pragma once
// The stages of one pipeline-parallel replica as a flow shop (private to the engine). An iteration spends
// latency/pp on each stage in turn; it enters a stage when it left the previous one and the stage is free of
// the iteration ahead of it. With one batch in flight nothing ever waits; with one batch per stage (virtual
// engines) the stages overlap and a replica runs up to pp iterations at once.
#include <algorithm>
#include <vector>

namespace llmsim::engine::detail {

class Pipeline {
 public:
  explicit Pipeline(int stages) : free_s_(static_cast<std::size_t>(std::max(stages, 1)), 0.0) {}

  struct Pass {
    double entry_s, exit_s;
  };
  /// Books the stages for an iteration ready at `ready_s` whose unobstructed pass takes `latency_s`.
  /// Calls come in order of `ready_s` (the event loop's order), so the stages serve iterations FIFO.
  Pass pass(double ready_s, double latency_s) {
    const double per_stage = latency_s / static_cast<double>(free_s_.size());
    double t = ready_s, entry = ready_s;
    for (std::size_t k = 0; k < free_s_.size(); ++k) {
      const double start = std::max(t, free_s_[k]);
      if (k == 0) entry = start;
      t = start + per_stage;
      free_s_[k] = t;
    }
    return {entry, t};
  }

 private:
  std::vector<double> free_s_;  ///< when each stage finishes the last iteration booked on it
};

}  // namespace llmsim::engine::detail
