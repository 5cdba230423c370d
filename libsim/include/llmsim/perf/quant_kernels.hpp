#pragma once
// The kernel a quantised linear layer runs, by engine release × GPU × format × M (issue 27): vLLM's pre-Marlin AWQ
// and GPTQ kernels, and FP8 W8A8 through torch._scaled_mm where the release's wheel has no CUTLASS FP8 for Ada. Each
// path is priced from what its code does (the weight bytes it streams, the dequantisation and CUDA-core instructions
// it issues, the extra kernels and passes over activations) by the cost model's roofline; the facts below are read
// from the kernels' code (docs/cost-model.md "Quantised kernels by release"; provenance in perf/provenance.cpp).
#include <limits>
#include <string>

#include "llmsim/spec/gpu_spec.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::perf {

enum class QuantGemmKernel {
  native,          ///< the format's current path (Marlin-class weight-only, CUTLASS W8A8, cuBLAS 16-bit, GGUF)
  awq_gemm,        ///< pre-Marlin AWQ: awq_gemm (16-row tiles, split-K 8 + a sum) or dequantise + fp16 GEMM
  exllama,         ///< pre-Marlin GPTQ: exllama's CUDA-core kernel (8-row blocks) or reconstruct + fp16 GEMM
  fp8_unfused_dq,  ///< FP8 via torch._scaled_mm with per-channel/per-token scales: fp32 output, dequantised after
};

std::string to_string(QuantGemmKernel k);

namespace quant_kernel {
// vLLM's awq_gemm (csrc/quantization/awq/gemm_kernels.cu, gemm_forward_4bit_cuda_m16nXk32): each CTA multiplies 16
// rows of M by a 128-column slice of one split-K part, dequantising its 32 x 128 weight tile into shared memory on
// every K step, so the weights are dequantised once per 16 rows; the 8 split-K parts (pack_factor passed as
// split_k_iters) write fp16 partial outputs [8, M, N] that `_out_feats.sum(0)` adds in a kernel of its own.
inline constexpr double kAwqTileRows = 16;
inline constexpr double kAwqSplitK = 8;
/// awq.py's FP16_MATMUL_HEURISTIC_CONDITION (vllm#2566): from 256 tokens ops.awq_dequantize writes the whole fp16
/// weight and torch.matmul runs the GEMM.
inline constexpr double kAwqDequantMinRows = 256;
/// awq_dequantize's dequantize_weights: per 8 weights the weight and zero unpacking (2 x 9), the scale load, 4 sub +
/// 4 mul.f16x2 and a 16-byte store: ~30 per 8 [D: counted from the source].
inline constexpr double kAwqDequantOpsPerWeight = 3.75;
/// dequantize_weights ends in `for (i < 8) *(C_ptr2 + i) = B_shared[i]`: eight scalar 16-bit stores per thread (nvcc
/// cannot prove the half* output 16-byte aligned, so the PTX is 8 x st.global.u16), so each 32-byte sector of the fp16
/// weight it writes reaches the L2 as 8 partial-sector requests (the 2 lanes that share a sector coalesce), not 1.
inline constexpr double kAwqDequantStoresPerSector = 8;
// vLLM's GPTQ kernels (csrc/quantization/gptq/q_gemm.cu, from exllamav2): gemm_half_q_half_cuda runs the quantised
// kernel up to MAX_Q_GEMM_ROWS = 50 rows, in blocks of BLOCK_M_SIZE_MAX = 8 rows that each dequantise their weights
// (in registers: the K-slice of a block is 128 rows, re-read from L2), and computes on CUDA cores (half2 FMAs);
// above 50 rows reconstruct_exllama writes the fp16 weight and cuBLAS runs the GEMM.
inline constexpr double kExllamaBlockRows = 8;
inline constexpr double kExllamaMaxRows = 50;
/// Instructions per weight per 8-row block: dequant_4bit_8_gptq's 4 lop3 + a shift + 4 half2 adds/FMAs per 8
/// weights, plus a 16-byte load per 32: 9/8 + 1/32 [D: counted from the source].
inline constexpr double kExllamaOpsPerWeight = 9.0 / 8 + 1.0 / 32;
/// Instructions per weight per row of M: dot22_8_f's 4 hfma2, 2 half->float conversions, an add, the scale FMA and
/// a shared-memory load of the activations, per 8 weights [D: counted from the source].
inline constexpr double kExllamaOpsPerWeightRow = 9.0 / 8;
/// reconstruct_exllama: the unpacking above, 4 hmul2 by the scales and 2 four-half stores per 8 weights [D].
inline constexpr double kExllamaReconstructOpsPerWeight = 9.0 / 8 + 1.0 / 32 + 0.5 + 0.25;
/// apply_fp8_linear's unfused fallback (w8a8_utils.py, torch._scaled_mm without per-channel scales): the GEMM writes
/// fp32 (4 bytes per output element instead of 2), then `output * x_scale` and `* weight_scale.t()` each read and
/// write fp32, and `.to(input.dtype)` reads fp32 and writes 16 bits: three element-wise kernels.
inline constexpr double kFp8UnfusedExtraGemmOutBytes = 2;
inline constexpr double kFp8UnfusedKernels = 3;
/// Marlin's q_c on Hopper/Blackwell (cost_model_setup applies it in place of spec::kMarlinComputeEfficiency): the
/// former 0.7 (the IST-DASLab kernel on an A100, vllm#2497), kept because Marlin's mma.sync reaches a smaller share of
/// those cards' wgmma peak and no public large-M figure on them was found.
inline constexpr double kMarlinHopperComputeEfficiency = 0.7;
}  // namespace quant_kernel

/// The kernel of a format's linears on `gpu` under the release's kernels, with the rows (M) from which the
/// pre-Marlin kernels dequantise the whole weight and run an fp16 GEMM instead (infinity = never).
struct QuantGemmPlan {
  QuantGemmKernel kernel = QuantGemmKernel::native;
  double dequant_min_rows = std::numeric_limits<double>::infinity();
  std::string why;  ///< which rule chose it ("vLLM before 0.5.3 runs AWQ on awq_gemm"), for notes
};

/// Compute capability >= 8.0 (Marlin's floor, MARLIN_MIN_CAPABILITY / marlin kernels' sm_80 instructions), read as a
/// BF16 tensor path, which NVIDIA cards have from Ampere (sm_80/86) on and not before.
bool has_marlin_capability(const spec::GpuSpec& gpu);
/// Compute capability 8.9 (Ada): FP8 tensor cores on a GDDR card without FP4 ones (sm_120 Blackwell GeForce has both).
bool is_ada_fp8(const spec::GpuSpec& gpu);

/// The plan for `q.weights` (after spec::format_for_gpu) on `gpu` under `q.kernels`. Never throws.
QuantGemmPlan quant_gemm_plan(const spec::Quantization& q, const spec::GpuSpec& gpu);

}  // namespace llmsim::perf
