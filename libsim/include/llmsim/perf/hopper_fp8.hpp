#pragma once
// vLLM's FP8 W8A8 linears with per-tensor, per-channel or per-token scales on Hopper (issue 27, TP 8; docs/cost-model.md
// "FP8 scaled_mm on Hopper at decode sizes"). vLLM runs them as `apply_fp8_linear` / `Fp8LinearOp`: the activation is
// quantised (`scaled_fp8_quant`, a kernel of its own that the cost model prices with the other element-wise kernels),
// then `cutlass_scaled_mm` runs CUTLASS's sm90 TMA warp-specialised FP8 GEMM with the scales in its epilogue
// (csrc/quantization/cutlass_w8a8/scaled_mm_c3x*.cu, small-M configurations by M). At decode sizes that GEMM is a
// weight stream, and vLLM's own linear layer timed on an H100 under CUDA graphs streams FP8 weights with a larger
// fixed cost per call and a lower rate than its BF16 GEMM streams BF16 ones:
//
//   ai-dynamo/aiconfigurator, systems/data/h100_sxm/gemm/vllm/0.14.0/gemm_perf.parquet (collected with
//   collector/vllm/collect_gemm.py @3f82c6b20, 2026-01-29: `RowParallelLinear` with `Fp8Config(activation_scheme=
//   "static")` against the unquantised layer, six layers of separate weights per CUDA-graph replay), M 1-64, weights
//   of >= 8 MB, N and K 2048-16384: a least-squares line t = a + bytes / (3.10 TB/s x q) (3.10 TB/s = the H100
//   profile's GEMM stream, 0.925 x 3.35 TB/s) gives BF16 a = 4.6 us, q = 0.99 (1,616 shapes, median error 6.2 %) and
//   FP8 a = 15.0 us, q = 0.91 (1,280 shapes, median error 5.6 %) [D].
//
// Against the BF16 path (which llmsim prices as the Vidur fit, 6 us and 0.925 x peak: the table's BF16 line within
// 1.4 us), the FP8 call costs 10.3 us more and streams at 0.92 of its rate; the cost model already prices the input
// quantisation kernel (one CUDA-graph launch, 1.3 us, and its bytes), so the GEMM kernel takes 9 us beyond the
// profile's gemm_fixed_s and 0.92 of the weight stream. Block-scaled FP8 (perf/block_fp8.hpp), FP8 Marlin (no FP8
// tensor cores), Ada's CUTLASS 2.x kernels (perf/ada_fp8.hpp) and Blackwell are other kernels: untouched. Only the
// vLLM runtimes of 0.6 and later (`vllm-v0`, `vllm-v1`), whose FP8 linears run CUTLASS's sm90 kernel; SGLang's
// sgl-kernel FP8 GEMM (sglang#3047) and earlier vLLM releases are not measured here and keep the plain FP8 GEMM.
// By release: the same collector on vLLM 0.19.0 (systems/data/h100_sxm/gemm/vllm/0.19.0, 4,290 FP8 / 5,258 BF16
// shapes) gives FP8 a = 7.6 us, q = 0.97 against BF16 4.2 us, 0.92: 3.4 us more per call, less the quantisation
// kernel ~2 us, and no slower stream, i.e. the plain FP8 GEMM the cost model already prices. So the terms apply to
// releases before 0.15.0 (`spec::QuantKernels::sm90_fp8_slow_small_m`); 0.15-0.18 are unmeasured and, like a
// runtime named without a release, take the 0.19.0 reading (no terms).
// Above 64 tokens the same table has FP8 as slow as BF16 at 192-512 tokens (time ratio 1.04-1.08 for >= 64 MB
// weights): a compute-side loss this file does not price (docs/cost-model.md).
#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/gpu_spec.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::perf {

/// Multiplier on an FP8 linear's weight-stream rate (q_bw) and the extra fixed time per GEMM kernel (beyond the
/// profile's gemm_fixed_s) of vLLM's CUTLASS sm90 scaled_mm against the cost model's plain FP8 GEMM.
struct Sm90ScaledMmFactors {
  double bandwidth = 1.0;
  double extra_fixed_s = 0.0;
};

/// The factors for `format` (as it runs on the GPU: spec::format_for_gpu) of a checkpoint that is (or not)
/// block-scaled, on `gpu`, under `runtime` and the release's `kernels`: the constants below for the FP8 tensor path of
/// a per-tensor/channel/token checkpoint on a Hopper HBM part under vLLM V0 (0.6+) or V1 before 0.15.0; 1 and 0
/// otherwise.
Sm90ScaledMmFactors sm90_scaled_mm_factors(const spec::WeightFormat& format, bool block_scaled_checkpoint,
                                           const spec::GpuSpec& gpu, Runtime runtime,
                                           const spec::QuantKernels& kernels);

/// The two constants above (provenance "sm90_fp8.*").
inline constexpr double kSm90ScaledMmBandwidth = 0.92;
inline constexpr double kSm90ScaledMmExtraFixedS = 9e-6;

}  // namespace llmsim::perf
