#pragma once
// The serving engine's fixed costs around the GPU work of one iteration (docs/cost-model.md, "Overheads"):
// which kernels replay from CUDA graphs and which launch eagerly, and the CPU time (scheduling, input
// preparation, sampling bookkeeping) serialized with the GPU — for vLLM V1 (the default) and V0.
#include <cstdint>

#include "llmsim/perf/decode_attention.hpp"
#include "llmsim/perf/hardware_profile.hpp"

namespace llmsim::perf {

class EngineOverheadModel {
 public:
  EngineOverheadModel() = default;
  EngineOverheadModel(const HardwareProfile& profile, EngineGeneration engine, bool cuda_graphs);

  /// Launch time of an iteration with `kernels` kernels of which `attention_kernels` are attention kernels,
  /// `tokens` scheduled tokens, and no prefill when `decode_only`.
  /// vLLM V0 replays graphs for decode-only batches of up to 256 sequences; V1 replays piecewise graphs (all but
  /// attention) for any batch of up to 512 tokens and full graphs (attention included) for decode-only ones.
  double launch_s(double kernels, double attention_kernels, std::int64_t tokens, bool decode_only) const;
  /// CPU time serialized with the GPU for `seqs` sequences in the batch.
  double cpu_s(double seqs) const { return per_iter_s_ + per_seq_s_ * seqs; }
  EngineGeneration engine() const noexcept { return engine_; }

 private:
  EngineGeneration engine_ = EngineGeneration::vllm_v1;
  bool cuda_graphs_ = true;
  double eager_s_ = 0, graph_s_ = 0, per_iter_s_ = 0, per_seq_s_ = 0;
};

}  // namespace llmsim::perf
