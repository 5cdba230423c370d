#pragma once
// The linear layers of a block-scaled FP8 checkpoint (DeepSeek-V3/R1, Qwen3-FP8: `weight_block_size` [128, 128]) as
// vLLM runs them (issue 27, docs/cost-model.md "Block-scaled FP8 linears"). Not the routed experts: those run the
// fused-MoE kernel (perf/moe_kernels.hpp).
//
// vLLM's Fp8LinearMethod with block quantisation calls `apply_w8a8_block_fp8_linear` (model_executor/layers/
// quantization/utils/fp8_utils.py, 0.7-0.10): the activation is quantised per token and 128-wide group by a Triton
// kernel of its own (`per_token_group_quant_fp8`, not fused into the RMSNorm or SiLU×mul that produces it), then a
// GEMM that applies a scale per 128 × 128 weight block and per activation group inside its K loop — vLLM's CUTLASS
// sm90 blockwise kernel where both weight dims are multiples of 128, else Triton's `w8a8_block_fp8_matmul`. Per-tensor
// and per-channel FP8 (a bf16 checkpoint quantised on load, `fp8-dynamic` checkpoints) run cuBLAS/CUTLASS's scaled_mm
// instead, at the dense FP8 rate the profile's curves carry.
#include "llmsim/spec/gpu_spec.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::perf {

/// Multipliers on a block-FP8 linear's compute rate (q_c) and weight-stream rate (q_bw), and the extra fixed time per
/// GEMM kernel (on top of the profile's gemm_fixed_s), against the per-tensor FP8 GEMM of the cost model.
struct BlockFp8LinearFactors {
  double compute = 1.0;
  double bandwidth = 1.0;
  double extra_fixed_s = 0.0;
  /// The activation's per-token-group quantisation is a kernel of its own (never fused into its producer).
  bool unfused_input_quant = false;
};

/// vLLM's block-FP8 linear kernels on GPUs with FP8 tensor cores and no FP4 ones (Hopper; Ada assumed alike): the
/// kernel times sglang#5820 published for vLLM's `cutlass_scaled_mm` with block scales (April 2025, the kernel of
/// vLLM 0.8; "test time interval", 24 DeepSeek-V3 shapes, 1 to 4096 tokens; H200 as the author's #3893) fit this cost
/// model's GEMM roofline with 0.82 of the FP8 compute rate, 0.52 of the weight stream and 7 us more per kernel
/// [D: least squares in log time, median error 13 %]: a 3-15 MB decode GEMM takes 14-21 us where a per-tensor FP8 one
/// streams in 6-10 us. Any other format, checkpoint or GPU: 1, 1, 0, false. `format` is the format as it runs on the
/// GPU (spec::format_for_gpu).
BlockFp8LinearFactors block_fp8_linear_factors(const spec::WeightFormat& format, bool block_scaled_checkpoint,
                                               const spec::GpuSpec& gpu);

/// The three constants above (provenance "block_fp8.*").
inline constexpr double kBlockFp8LinearCompute = 0.82;
inline constexpr double kBlockFp8LinearBandwidth = 0.52;
inline constexpr double kBlockFp8LinearExtraFixedS = 7e-6;

}  // namespace llmsim::perf
