#pragma once
// The stages of one pipeline-parallel replica as a flow shop (private to the engine). An iteration spends its
// stage's share of the latency on each stage in turn — the stage's layers over the model's (vLLM's split,
// spec::pp_stage_layers; latency/pp when pp divides the layers), so an uneven split's largest stage paces the
// pipeline —; it enters a stage when it left the previous one and the stage is free of the iteration ahead of it. With one batch in flight nothing ever waits; with one batch per stage (virtual
// engines) the stages overlap and a replica runs up to pp iterations at once.
#include <algorithm>
#include <vector>

namespace llmsim::engine::detail {

class Pipeline {
 public:
  /// `stage_layers`: the layers of each stage, first to last (empty or all zero: one stage).
  explicit Pipeline(const std::vector<int>& stage_layers) {
    double total = 0;
    for (int n : stage_layers) total += std::max(n, 0);
    for (int n : stage_layers)
      if (total > 0) share_.push_back(std::max(n, 0) / total);
    if (share_.empty()) share_.push_back(1.0);
    free_s_.assign(share_.size(), 0.0);
  }

  struct Pass {
    double entry_s, exit_s;
  };
  /// Books the stages for an iteration ready at `ready_s` whose unobstructed pass takes `latency_s`.
  /// Calls come in order of `ready_s` (the event loop's order), so the stages serve iterations FIFO.
  Pass pass(double ready_s, double latency_s) {
    double t = ready_s, entry = ready_s;
    for (std::size_t k = 0; k < free_s_.size(); ++k) {
      const double start = std::max(t, free_s_[k]);
      if (k == 0) entry = start;
      t = start + latency_s * share_[k];
      free_s_[k] = t;
    }
    return {entry, t};
  }

 private:
  std::vector<double> share_;   ///< each stage's fraction of an iteration's latency (its layers' share)
  std::vector<double> free_s_;  ///< when each stage finishes the last iteration booked on it
};

}  // namespace llmsim::engine::detail
