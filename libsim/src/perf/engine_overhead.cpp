// Graph/eager launch rules and serialized CPU time per engine generation; sources in docs/cost-model.md.
#include "llmsim/perf/engine_overhead.hpp"

namespace llmsim::perf {

namespace {
// vLLM V0 captures decode-only batch sizes 1, 2, 4, 8, ... up to max_num_seqs padded, at most 256 in 0.5.x
// (serving-engines.md §1.7).
constexpr std::int64_t kV0MaxGraphBatch = 256;
// vLLM V1 capture sizes 1, 2, 4, then multiples of 8 up to 512 (min(2 × max_num_seqs, 512) since #20628):
// larger batches run without graphs (serving-engines.md §2.5).
constexpr std::int64_t kV1MaxGraphTokens = 512;
}  // namespace

EngineOverheadModel::EngineOverheadModel(const HardwareProfile& profile, EngineGeneration engine, bool cuda_graphs)
    : engine_(engine), cuda_graphs_(cuda_graphs), eager_s_(profile.kernel_launch_s), graph_s_(profile.graph_launch_s) {
  if (engine == EngineGeneration::vllm_v0) {
    per_iter_s_ = profile.v0_cpu_overhead_per_iter_s;
    per_seq_s_ = profile.v0_cpu_overhead_per_seq_s;
  } else {
    per_iter_s_ = profile.cpu_overhead_per_iter_s;
    per_seq_s_ = profile.cpu_overhead_per_seq_s;
  }
}

double EngineOverheadModel::launch_s(double kernels, double attention_kernels, std::int64_t tokens,
                                     bool decode_only) const {
  if (!cuda_graphs_) return kernels * eager_s_;
  if (engine_ == EngineGeneration::vllm_v0) {
    const bool graph = decode_only && tokens <= kV0MaxGraphBatch;
    return kernels * (graph ? graph_s_ : eager_s_);
  }
  if (tokens > kV1MaxGraphTokens) return kernels * eager_s_;
  // Piecewise graphs leave attention outside (launched eagerly between the pieces); pure decode replays full
  // graphs (FULL_AND_PIECEWISE, vLLM 0.11, #25444).
  const double eager = decode_only ? 0.0 : attention_kernels;
  return (kernels - eager) * graph_s_ + eager * eager_s_;
}

}  // namespace llmsim::perf
