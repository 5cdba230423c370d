#pragma once
// FP8 W8A8 linear layers on Ada (sm89: L40S, L4, L20, RTX 4090) as the engines run them today (issue 27,
// docs/cost-model.md "FP8 GEMMs on Ada"). Provenance in perf/provenance.cpp ("ada_fp8.*").
//
// Ada has no wgmma: its FP8 GEMMs are mma.sync kernels. vLLM from 0.7 runs them through CUTLASS 2.x
// (`cutlass_scaled_mm` -> csrc/quantization/cutlass_w8a8/scaled_mm_c2x_sm89_fp8_dispatch.cuh: 128x128x64 or 256x128x64
// tiles, 3-5 stages above 256 tokens); SGLang through its own sm89 CUTLASS kernel (sgl-kernel `fp8_scaled_mm`,
// sglang#3047). sglang#6756 ("L40S FP8 Benchresult", "Main (with L40S)") times both on an L40S with triton's do_bench,
// which flushes the L2 before every call, as a served model's weights are never L2-resident (8 GB of Llama-3.1-8B
// against a 96 MB L2): on Llama-3.1-8B's qkv (N 6144) and o (N 4096) shapes, K 4096, vLLM's kernel reads 86 / 128 /
// 171 / 204 / 261 TF and 79 / 125 / 177 / 245 / 294 TF at 128 / 256 / 512 / 1024 / 2048 tokens — 0.36-0.40 of the 733
// TF FP8 peak at 2048, about the card's FP16 GEMM rate — and SGLang's 1.2-1.4x that. This cost model's FP8 curve (the
// GDDR FP16 prior x H100's FP8/BF16 ratio 0.88 x the L40S's sustained clock) gives 0.67 at full waves. sglang#3047
// cross-checks on an L40 (300 W; FP8 at 362 TF, half the L40S's): vLLM's kernel 154 TF at 2048 x 6144 x 4096 = 0.43
// of that card's peak, SGLang's 1.8x it.
//
// Not the same measurement: vllm#6677's kernel table (vLLM's w8a8_benchmarks, 1 s of back-to-back calls without an L2
// flush) reads the same vLLM kernel at 367 TF at 512 x 12288 x 4096 on an L40S — about what this cost model gives
// without the factor. Its inputs stay in the L2 (its 1-token rows stream the 50 MB weight at 3.3 TB/s, 3.8x the card's
// DRAM bandwidth), which a served model's weights never do; why that doubles a compute-bound GEMM's rate is not known
// (power: GDDR6 traffic draws from the same 350 W), so a per-size run on an L40S with the weights streamed from DRAM
// (calibration/'s GEMM benchmark) would settle it. torch._scaled_mm (cuBLASLt, vLLM before 0.7 on Ada) has only that
// L2-resident timing (within -7...+8 % of CUTLASS's at 128-512 tokens) and keeps the curve.
//
// So a W8A8 FP8 linear on sm89 under these kernels computes at a measured fraction of the rate the profile's FP8 curve
// gives, per kernel: fitted through this cost model's own GEMM roofline (compute and weight-stream terms, fixed cost)
// to that table's compute-bound points (512-2048 tokens), least squares in log time, as block_fp8's factors were.
// Weight streaming (decode at small batch) keeps its rate: the factor is on the compute rate (q_c) only.
#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/gpu_spec.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::perf {

/// Multiplier on a W8A8 FP8 linear's compute rate (q_c) on an sm89 card: kAdaFp8VllmCutlassCompute under a vLLM
/// runtime whose release runs CUTLASS on Ada (`kernels.ada_fp8_cutlass`, 0.7+), kAdaFp8SglangCompute under SGLang;
/// 1 for torch._scaled_mm (vLLM before 0.7), any other runtime (unmeasured), format or GPU. `format` is the format as
/// it runs on the GPU (spec::format_for_gpu).
double ada_fp8_gemm_compute_factor(const spec::WeightFormat& format, const spec::QuantKernels& kernels,
                                   const spec::GpuSpec& gpu, Runtime runtime);

/// [D] sglang#6756's L40S table, vLLM column (qkv 171 / 204 / 261 TF, o 177 / 245 / 294 TF at 512 / 1024 / 2048
/// tokens), fitted through this cost model's L40S FP8 qkv / o GEMMs: 0.51, residuals -16 / -11 / +11 % (qkv) and
/// -16 / +8 / +26 % (o), median |error| 13.5 % (a plain ratio of rates, median 0.58, leaves 512-1024 tokens 20 %
/// fast: the weight stream and fixed cost absorb part of a compute factor there).
inline constexpr double kAdaFp8VllmCutlassCompute = 0.51;
/// [D] the same table's SGLang column (qkv 206 / 319 / 362 TF at 512 / 1024 / 2048 tokens, o 193 / 277 TF at 512 /
/// 1024; its o row at 2048 is not published), fitted the same way: 0.65, residuals -15 / +13 / +23 %, -22 / 0 %.
inline constexpr double kAdaFp8SglangCompute = 0.65;

}  // namespace llmsim::perf
