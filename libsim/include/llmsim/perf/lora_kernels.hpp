#pragma once
// Layer 3: the time vLLM's LoRA kernels add to an engine step (engine.enable_lora; docs/cost-model.md "LoRA").
//
// vLLM V1 runs, for every LoRA-wrapped linear of every layer, a shrink kernel (x · Aᵀ into an fp32 buffer of rank
// columns per slice) and an expand kernel (buffer · Bᵀ added into the base layer's output): Triton's lora_shrink /
// lora_expand (vllm/lora/ops/triton_ops, vllm#13096, CUDA-graph compatible), called from punica_gpu.add_lora_linear
// after the base GEMM (vllm/lora/layers/base_linear.py apply). Both run at max_lora_rank whatever the adapters' own
// rank (the stacked buffers are padded: vLLM docs/features/lora.md "Configuring max_lora_rank", vllm#22782), and
// read the A and B of each adapter the batch uses. With ranks of 8-512 beside hidden sizes of thousands both are
// memory-bound GEMVs-by-panel: their time is a kernel's fixed cost plus the bytes they move at the HBM rate.
#include <cstdint>

#include "llmsim/spec/model_spec.hpp"

namespace llmsim::perf {

/// Per layer on one GPU (its tensor-parallel shard of q, KV and the MLP), for adapters of rank `rank` in 16-bit.
struct LoraLayerTerms {
  double kernels = 0;             ///< shrink + expand per wrapped linear (qkv, o, gate_up, down): 8
  double adapter_bytes = 0;       ///< one adapter's A and B over those linears (read once per adapter in the batch)
  double bytes_per_token = 0;     ///< the input read by shrink, the fp32 buffer written and read, the output updated
  double flops_per_token = 0;     ///< 2 × rank × (in + out) per linear and slice
};

/// The terms of a dense layer (attention and gated MLP) of `model` under `tp`. MLA attention is taken at its
/// prefill shape (q heads × head dim); MoE layers' routed experts (FusedMoEWithLoRA) are not priced here.
LoraLayerTerms lora_layer_terms(const spec::ModelSpec& model, int tp, int rank, bool with_mlp);

}  // namespace llmsim::perf
