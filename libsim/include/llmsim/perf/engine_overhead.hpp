#pragma once
// The serving runtime's fixed costs around the GPU work of one iteration (docs/cost-model.md, "Overheads" and
// "Runtimes"): which kernels replay from CUDA graphs and which launch eagerly, whether eager launches hide behind the
// GPU's work, and the CPU time (scheduling, input preparation, sampling bookkeeping) serialized with the GPU.
#include <cstdint>

#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/perf/runtime.hpp"

namespace llmsim::perf {

class EngineOverheadModel {
 public:
  EngineOverheadModel() = default;
  /// `world_size`: the GPUs of one replica (TP × PP); above 1 the runtime's multiprocess executor terms apply. `tp`:
  /// the tensor-parallel degree; above 1 an eager forward's host time per layer includes its all-reduces' Python
  /// (perf/eager_host.hpp).
  EngineOverheadModel(const HardwareProfile& profile, Runtime runtime, bool cuda_graphs, int world_size = 1,
                      int tp = 1);

  /// Launch time of an iteration with `kernels` kernels of which `attention_kernels` are attention kernels,
  /// `tokens` scheduled tokens, and no prefill when `decode_only`, for a step whose kernels keep the GPU busy for
  /// `gpu_busy_s`. Graph replays cost graph_launch_s per kernel. Eager launches cost kernel_launch_s each — unless
  /// the runtime's host runs ahead of the GPU, when only the GPU's own gap between kernels (graph_launch_s) shows,
  /// or the part of the host's enqueue time the GPU's work does not cover, whichever is larger. A runtime whose
  /// Python forward runs ahead of the GPU (eager_host_per_layer_s, perf/eager_host.hpp) pays, on a step without a
  /// graph, at least the host's enqueue time of its `layers` beyond the GPU's work.
  /// `longest_context`: the longest decode sequence's cached tokens (BatchShape::decode_max_context), which under
  /// vLLM V0 decides whether a decode-only batch replays its graph (eager_decode_context).
  double launch_s(double kernels, double attention_kernels, std::int64_t tokens, bool decode_only,
                  double gpu_busy_s, double layers = 0, std::int64_t longest_context = 0) const;
  /// True when launch_s depends on gpu_busy_s (the caller then sums the GPU work first).
  bool launch_depends_on_gpu() const noexcept {
    return traits_.host_runs_ahead || traits_.eager_host_per_layer_s > 0;
  }
  /// CPU time serialized with the GPU for `seqs` sequences in the batch.
  double cpu_s(double seqs) const { return per_iter_s_ + per_seq_s_ * seqs; }
  /// Host seconds to enqueue the Python forward of `layers` decoder layers of a step that replays no graph (`tokens`
  /// scheduled, decode-only when `decode_only`), for a runtime whose eager host time is priced per layer
  /// (eager_host_per_layer_s, perf/eager_host.hpp); 0 for a step that replays a graph and for other runtimes. The
  /// same condition as launch_s's wait on the host.
  double eager_enqueue_s(std::int64_t tokens, bool decode_only, double layers,
                         std::int64_t longest_context = 0) const;
  /// A copy whose CPU time grows by `extra_s` more per sequence (host work the serving path adds to each step,
  /// perf/served_step_host.hpp).
  EngineOverheadModel with_extra_per_seq_s(double extra_s) const {
    EngineOverheadModel m = *this;
    m.per_seq_s_ += extra_s;
    return m;
  }
  /// A copy whose decode-only graphs (GraphMode::decode_only) replay decode batches of up to `n` sequences: SGLang's
  /// cuda_graph_max_bs for the scenario's release, card and TP (spec::sglang_cuda_graph_max_bs). n >= 1.
  EngineOverheadModel with_max_graph_batch(int n) const {
    EngineOverheadModel m = *this;
    m.traits_.max_graph_batch = n;
    return m;
  }
  /// Whether a step of `tokens` scheduled tokens (decode-only when `decode_only`) replays any kernel from a graph:
  /// then its launch term never waits on a per-layer eager host time (launch_s).
  bool replays_graph(std::int64_t tokens, bool decode_only, std::int64_t longest_context = 0) const {
    return graph_kernels(1.0, 0.0, tokens, decode_only, longest_context) > 0;
  }
  /// The cached tokens from which one decode sequence makes a decode-only step run without its CUDA graph (vLLM V0:
  /// a sequence of context + 1 tokens longer than max_seq_len_to_capture, RuntimeTraits::max_graph_seq_len); 0 when
  /// no length does (other runtimes, or no graphs at all).
  std::int64_t eager_decode_context() const noexcept {
    return cuda_graphs_ && traits_.graphs == GraphMode::vllm_v0 ? traits_.max_graph_seq_len : 0;
  }
  Runtime runtime() const noexcept { return runtime_; }
  const RuntimeTraits& traits() const noexcept { return traits_; }

 private:
  Runtime runtime_ = Runtime::vllm_v1;
  RuntimeTraits traits_;
  bool cuda_graphs_ = true;
  int tp_ = 1;
  double eager_s_ = 0, graph_s_ = 0, per_iter_s_ = 0, per_seq_s_ = 0;
  /// Fraction of `kernels` that replay from a graph for this batch (the rest launch eagerly).
  double graph_kernels(double kernels, double attention_kernels, std::int64_t tokens, bool decode_only,
                       std::int64_t longest_context) const;
};

}  // namespace llmsim::perf
