#pragma once
// Layer 2: the GPU memory of vLLM's LoRA adapter slots (engine.enable_lora, max_loras, max_lora_rank).
#include <vector>

#include "llmsim/spec/deployment.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/model_spec.hpp"

namespace llmsim::memory {

/// One LoRA-wrapped linear as one GPU holds it: `slices` A panels of rank × `in` (one per packed checkpoint module:
/// qkv three, gate_up two) and B of `out` × rank, `out` the slices' outputs together on this GPU.
struct LoraLinear {
  double in = 0, out = 0;
  int slices = 1;
};

/// The wrapped linears of one layer on one GPU under tensor parallelism `tp`, by the part of the layer they sit in
/// (vllm/lora/layers: column-parallel linears keep A whole and B sharded, row-parallel ones A sharded and B whole).
/// The one list of shapes behind the slots' memory (here) and the kernels' time (perf/lora_kernels.hpp).
struct LoraLayerLinears {
  std::vector<LoraLinear> attention;   ///< an attention layer's (none on linear-attention mixers)
  std::vector<LoraLinear> dense_mlp;   ///< a dense-MLP layer's gated MLP
  std::vector<LoraLinear> expert;      ///< one routed expert of a MoE layer (FusedMoEWithLoRA)
  std::vector<LoraLinear> shared_mlp;  ///< a MoE layer's shared experts (a dense MLP of their own); empty without
};
LoraLayerLinears lora_linears(const spec::ModelSpec& model, int tp);

/// Parameters of one adapter of rank `rank` over `linears`: rank × Σ (slices × in + out).
double lora_params(const std::vector<LoraLinear>& linears, int rank);

/// Bytes one adapter slot of rank `rank` holds on one GPU (the most loaded pipeline stage): vLLM's
/// create_lora_weights allocates, per LoRA-capable linear and per packed slice, lora_a of rank × input and lora_b of
/// output × rank in lora_dtype (auto = the model's 16-bit dtype). Without fully_sharded_loras a column-parallel
/// linear (qkv, gate_up) keeps A whole and B sharded, a row-parallel one (o, down) A sharded and B whole. MoE layers
/// (FusedMoEWithLoRA) hold A and B per expert. Sources and what is left out: memory/lora_memory.cpp.
double lora_slot_bytes_per_gpu(const spec::ModelSpec& model, const spec::ParallelConfig& parallel, int rank);

/// What engine.enable_lora takes from each GPU before the KV cache is sized: max_loras slots of max_lora_rank
/// (0 when LoRA is off). vLLM allocates them when the model runner loads the model, before the profiling run, so
/// they come out of the KV pool.
double lora_bytes_per_gpu(const spec::ModelSpec& model, const spec::ParallelConfig& parallel,
                          const spec::EngineConfig& engine);

}  // namespace llmsim::memory
