#pragma once
// What vLLM's worker charges beside the weights when it sizes the KV cache (docs/cost-model.md, "Memory plan"):
// the activation peak of its profiling run, the memory that appears outside PyTorch during that run, and what
// lives in the (1 − gpu_memory_utilization) headroom (CUDA context, communicators, CUDA graphs). Private to the
// memory layer.
#include "llmsim/spec/deployment.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/gpu_spec.hpp"
#include "llmsim/spec/model_spec.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::memory::detail {

/// vLLM's fused MoE walks a step's tokens in chunks of VLLM_FUSED_MOE_CHUNK_SIZE, its intermediate caches sized for
/// one chunk: the envs.py default 32768 in the 0.7.x trees (perf::constant_provenance "memory.profile_run.fused_moe_chunk").
inline constexpr int kFusedMoeChunkTokens = 32768;

struct EngineMemory {
  bool v0 = false;              ///< vLLM V0 accounting (engine.policy "vllm-v0"), else V1
  /// SGLang's accounting (runtime sglang): KV = total × mem_fraction_static − weights − what is in use at start
  /// (context, communicators); activations and graphs live in the rest, unprofiled (activation stays 0).
  bool sglang = false;
  /// Sliding-window layers keep only their window (vLLM V1's hybrid KV-cache manager; SGLang's hybrid SWA pool for the
  /// architectures that get one in its releases): false where every layer caches every token.
  bool windowed_kv = false;
  /// The release's KV-cache grouping threshold (spec::hybrid_kv_group_ratio: 0 before vLLM 0.12.0, 1.25 to 0.17.x,
  /// 1.5 from 0.18.0 and with no release): kv_layout's sliding groups and linear_state_pages' state groups.
  double kv_group_ratio = 1.5;
  /// Whether the release decides the KV-cache groups on the whole model and projects them onto each pipeline stage
  /// (spec::kv_groups_whole_model: vLLM 0.11.0 on, vllm#23974) rather than on each stage's own layers.
  bool kv_groups_whole_model = true;
  double activation = 0;        ///< torch allocator peak increase of the profiling run (forward and sampler)
  double non_torch = 0;         ///< memory allocated outside PyTorch during that run (NCCL's lazy buffers)
  double comm_init = 0;         ///< NCCL communicators + custom all-reduce IPC buffers, set up at start
  double context = 0;           ///< CUDA context and the kernel images loaded at start
  double cuda_graphs = 0;       ///< captured after the KV cache is sized, in the headroom
  /// MLA's absorbed decode weights kept beside the raw ones (spec::mla_absorbed_weights: vLLM 0.7.1-0.7.x): weights,
  /// in vLLM's "model weights take", charged before the KV cache is sized.
  double mla_absorbed_weights = 0;
  /// V0's CacheEngine pads each MLA cache entry to 256 bytes in the model dtype (spec::mla_kv_entries_aligned: vLLM
  /// 0.7.2-0.7.x): the number of blocks is counted at the padded size.
  bool mla_kv_entries_aligned = false;
  /// Charged against total × gpu_memory_utilization (V0 also charges comm_init; V1 takes its snapshot after it).
  double in_budget() const {
    if (sglang) return context + comm_init + non_torch;
    return activation + non_torch + (v0 ? comm_init : 0.0);
  }
  /// Needed in the headroom total × (1 − util) (V1: context, communicators, graphs; V0: context, graphs; SGLang:
  /// graphs).
  double in_headroom() const {
    if (sglang) return cuda_graphs;
    return context + cuda_graphs + (v0 ? 0.0 : comm_init);
  }
};

EngineMemory engine_memory(const spec::ModelSpec& model, const spec::GpuSpec& gpu, const spec::ParallelConfig& par,
                           const spec::EngineConfig& engine, const spec::WeightFormat& weights);

/// Bytes on one GPU of MLA's absorbed decode weights where the release keeps them (spec::mla_absorbed_weights), else 0:
/// per MLA layer of the largest pipeline stage, W_Q_UK (q_lora_rank — the hidden size without a q LoRA — × heads/tp ×
/// kv_lora_rank) and W_UV_O (heads/tp × kv_lora_rank × hidden) in FP8 for an FP8 checkpoint (16-bit otherwise),
/// W_QR (q_lora_rank × heads/tp × qk_rope_head_dim) and the dequantised kv_b_proj that W_UK / W_UV view
/// (kv_lora_rank × heads/tp × (qk_nope + v)) in 16 bits.
double mla_absorbed_weight_bytes(const spec::ModelSpec& model, const spec::ParallelConfig& par,
                                 const spec::EngineConfig& engine, const spec::WeightFormat& weights);

}  // namespace llmsim::memory::detail
