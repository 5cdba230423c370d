#pragma once
// Layer 3: the time vLLM's LoRA kernels add to an engine step (engine.enable_lora; docs/cost-model.md "LoRA
// adapters"). The shapes are the memory plan's (memory/lora_memory.hpp: one list of wrapped linears for both).
//
// vLLM runs, after every LoRA-wrapped linear's base GEMM (vllm/lora/layers/base_linear.py apply), a shrink
// (buffer = x · Aᵀ · scale into an fp32 buffer of slices × tokens × rank, zeroed first) and an expand
// (y += buffer · Bᵀ): punica_gpu.add_lora_linear. V1 runs Triton's lora_shrink / lora_expand (vllm#13096; CUDA-graph
// compatible: the grid covers max_loras + 1 adapter ids and the kernels read which tokens each adapter takes from
// token_indices_sorted_by_lora_ids, so V1 need not sort the batch by adapter); V0 from 0.6 the Triton SGMV
// (prefill) / BGMV (decode) kernels (vllm#5036) over a batch sorted by adapter, and 0.3-0.5 Punica's CUDA BGMV
// (arXiv:2310.18547). Both run at max_lora_rank whatever the adapters' own rank (the stacked buffers are padded:
// vLLM's docs/features/lora.md "max_lora_rank"), and read the A and B of each adapter the step's tokens use. With
// ranks of 8-512 beside hidden sizes of thousands both are skinny GEMMs: a kernel's fixed time (measured), plus
// the bytes they move at the HBM rate, against their FLOPs at the 16-bit tensor rate.
#include "llmsim/spec/model_spec.hpp"

namespace llmsim::perf {

/// What one shrink or expand kernel takes at decode sizes, where its bytes are negligible: vLLM's profile of its
/// qkv_proj _lora_expand_kernel under CUDA graphs (vllm#32425, gpt-oss-20b, rank 16, <= 16 sequences: 14 µs
/// before that PR's block_n heuristic, 10 µs after; the PR finds the expand the slower of the two).
inline constexpr double kLoraKernelFixedS = 10e-6;

/// vLLM's LoRA kernels over one step's layers on one GPU (tensor-parallel shard; every layer, as the cost model
/// prices all layers on the critical path), for adapters padded to `rank` in the model's 16-bit dtype.
struct LoraStepTerms {
  double kernels = 0;          ///< shrink + expand per wrapped linear (V0: per slice) and layer, kLoraKernelFixedS each
  double launches = 0;         ///< those plus the shrink buffer's zeroing per linear: what an eager step launches
  double adapter_bytes = 0;    ///< one adapter's A and B (read once per adapter the step uses)
  double bytes_per_token = 0;  ///< the input read, the fp32 buffer zeroed, written and read, the output read and written
  double flops_per_token = 0;  ///< 2 × rank × (slices × in + out) per linear
};

/// The terms of `model` under tensor parallelism `tp` at `rank`: attention linears on the attention layers, the
/// gated MLP on the dense layers, the shared experts on the MoE layers. `per_slice`: vLLM V0's GPU wrapper, which
/// launches a shrink and an expand (and zeroes a buffer) per packed slice (punica_gpu.add_shrink / add_expand loop
/// over the slices: "TODO fuse these kernels"; 0.3-0.5's _apply_lora_packed_nslice likewise), so qkv costs 6
/// kernels and gate_up 4; V1's lora_shrink / lora_expand take every slice in one launch (grid axis 1). The routed
/// experts' LoRA (FusedMoEWithLoRA's fused_moe_lora kernels) is not priced: their slots' memory is
/// (memory/lora_memory.hpp).
LoraStepTerms lora_step_terms(const spec::ModelSpec& model, int tp, int rank, bool per_slice = false);

}  // namespace llmsim::perf
