// Graph/eager launch rules and serialized CPU time per runtime; sources in docs/cost-model.md.
#include "llmsim/perf/engine_overhead.hpp"

#include <algorithm>

#include "llmsim/perf/eager_host.hpp"

namespace llmsim::perf {

namespace {
// vLLM V0 captures decode-only batch sizes 1, 2, 4, 8, ... up to max_num_seqs padded, at most 256 in 0.5.x
// (serving-engines.md §1.7).
constexpr std::int64_t kV0MaxGraphBatch = 256;
// vLLM V1 capture sizes 1, 2, 4, then multiples of 8 up to 512 (min(2 × max_num_seqs, 512) since #20628):
// larger batches run without graphs (serving-engines.md §2.5).
constexpr std::int64_t kV1MaxGraphTokens = 512;
}  // namespace

EngineOverheadModel::EngineOverheadModel(const HardwareProfile& profile, Runtime runtime, bool cuda_graphs,
                                         int world_size, int tp)
    : runtime_(runtime),
      traits_(runtime_traits(runtime)),
      cuda_graphs_(cuda_graphs && traits_.graphs != GraphMode::none),
      tp_(tp),
      eager_s_(profile.kernel_launch_s),
      graph_s_(profile.graph_launch_s) {
  switch (traits_.cpu) {
    case CpuCost::profile_v1:
      per_iter_s_ = profile.cpu_overhead_per_iter_s;
      per_seq_s_ = profile.cpu_overhead_per_seq_s;
      break;
    case CpuCost::profile_v0:
      per_iter_s_ = profile.v0_cpu_overhead_per_iter_s;
      per_seq_s_ = profile.v0_cpu_overhead_per_seq_s;
      break;
    case CpuCost::fixed:
      per_iter_s_ = traits_.cpu_per_iter_s;
      per_seq_s_ = traits_.cpu_per_seq_s;
      break;
  }
  per_seq_s_ += traits_.sync_output_per_seq_s;
  if (world_size > 1) {
    // The multiprocess executor's per-step pickling (runtime.cpp): one writer, workers reading in parallel, so the
    // same at any world size above one.
    per_iter_s_ += traits_.multiproc_per_iter_s;
    per_seq_s_ += traits_.multiproc_per_seq_s;
  }
}

double EngineOverheadModel::graph_kernels(double kernels, double attention_kernels, std::int64_t tokens,
                                          bool decode_only, std::int64_t longest_context) const {
  if (!cuda_graphs_) return 0;
  switch (traits_.graphs) {
    case GraphMode::vllm_v0:
      // _use_captured_graph: decode-only, a captured batch size, and every sequence (context + the token decoded) no
      // longer than max_seq_len_to_capture (runtime.cpp).
      return decode_only && tokens <= kV0MaxGraphBatch &&
                     !(traits_.max_graph_seq_len > 0 && longest_context + 1 > traits_.max_graph_seq_len)
                 ? kernels
                 : 0;
    case GraphMode::vllm_v1:
      if (tokens > kV1MaxGraphTokens) return 0;
      // Piecewise graphs leave attention outside (launched eagerly between the pieces); pure decode replays full
      // graphs (FULL_AND_PIECEWISE, vLLM 0.11, #25444).
      return decode_only ? kernels : kernels - attention_kernels;
    case GraphMode::decode_only: return decode_only && tokens <= traits_.max_graph_batch ? kernels : 0;
    case GraphMode::none: return 0;
  }
  return 0;
}

double EngineOverheadModel::launch_s(double kernels, double attention_kernels, std::int64_t tokens, bool decode_only,
                                     double gpu_busy_s, double layers, std::int64_t longest_context) const {
  const double graphed = graph_kernels(kernels, attention_kernels, tokens, decode_only, longest_context);
  const double eager = kernels - graphed;
  if (!traits_.host_runs_ahead) {
    const double launches = graphed * graph_s_ + eager * eager_s_;
    // A step with no graph at all: the Python forward runs ahead of the GPU, which waits where it is the longer.
    if (graphed > 0 || !(traits_.eager_host_per_layer_s > 0)) return launches;
    return eager_host_launch_s(launches, eager_forward_host_s(traits_, layers, tp_), gpu_busy_s);
  }
  // The host enqueues while the GPU works: the GPU still pays its own gap per kernel, and waits for the host only
  // where enqueueing the eager kernels takes longer than the GPU's work.
  return std::max(kernels * graph_s_, graphed * graph_s_ + eager * eager_s_ - gpu_busy_s);
}

double EngineOverheadModel::eager_enqueue_s(std::int64_t tokens, bool decode_only, double layers,
                                            std::int64_t longest_context) const {
  if (traits_.host_runs_ahead || !(traits_.eager_host_per_layer_s > 0)) return 0;
  if (graph_kernels(1.0, 0.0, tokens, decode_only, longest_context) > 0) return 0;
  return eager_forward_host_s(traits_, layers, tp_);
}

}  // namespace llmsim::perf
