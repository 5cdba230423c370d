#pragma once
// What vLLM's fused-MoE layer runs beyond the two expert GEMMs and their activation (issue 27, docs/cost-model.md
// "MoE kernels"): the expert weights as its MXFP4 kernels lay them out (padded), the kernel that sums each token's
// top-k expert outputs, and the kernels of one MoE layer. Every number here is read from vLLM's code; none is fitted.
#include <optional>
#include <string>

#include "llmsim/memory/expert_layout.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/gpu_spec.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::perf {

// The MXFP4 expert kernel vLLM picks and the padded expert shape it allocates live in the memory layer
// (memory/expert_layout.hpp: the memory plan holds the padded experts, this cost model streams and multiplies them).
using memory::ExpertLayout;
using memory::Mxfp4MoeKernel;
using memory::expert_layout;
using memory::mxfp4_moe_kernel;
using memory::to_string;

/// SGLang serves an MXFP4 checkpoint's experts (gpt-oss) on a card with neither FP4 nor Hopper's tensor cores (A100,
/// Ada, ...) on a path llmsim does not price; the reason, to be said to the user and to keep such a run's measurements
/// unscored (docs/trust.md), or nothing where llmsim prices the path. SGLang 0.5.x, server_args.py
/// `_handle_model_specific_adjustments`, branch `GptOssForCausalLM`: moe_runner_backend "flashinfer_mxfp4" on
/// Blackwell, else "triton_kernel" (ep_size 1, triton_kernels importable), and attention_backend "trtllm_mha" on sm100,
/// "fa3" on sm90, else "triton"; quantization/mxfp4.py runs MXFP4 experts through FlashInfer or triton_kernels'
/// matmul_ogs only (its `apply` refuses every other backend), whose make_default_matmul_mxfp4_w_layout keeps a
/// StridedLayout below sm90 (the weights upcast inside the kernel). vLLM runs FP4 Marlin there (get_mxfp4_backend:
/// Triton only on sm90-sm100), which is what this cost model prices, and its Triton attention model is vLLM's unified
/// kernel, not SGLang's Triton backend. On Hopper SGLang's path is the one llmsim prices (matmul_ogs, FA3 with sinks).
std::optional<std::string> sglang_mxfp4_unmodelled_path(const spec::WeightFormat& format, const spec::GpuSpec& gpu,
                                                        spec::Runtime runtime);

/// triton_kernels' matmul_ogs before vllm#30528 (vLLM 0.12.x): split_k = max(n_sms / grid_size, 1) exceeds 1 below
/// about 32 tokens ("split_k start to become greater than 1 when m become smaller than 32"), and a split-K matmul
/// writes fp32 partials. vllm#27523 measured the cost end to end: gpt-oss-120b `vllm bench latency` on an SM90 GPU,
/// TP 1, batch 8, 32 in / 128 out: 1.58 s on Triton against 1.17 s on Marlin. Priced as a multiplier on the
/// routed-expert GEMMs' time when an iteration has fewer than kTritonSplitKMaxTokens tokens.
inline constexpr double kTritonSplitKMaxTokens = 32;
/// The multiplier that makes this cost model's batch-8 decode step on an H100 (TP 1, vLLM 0.12's layout) 1.58 / 1.17
/// times its Marlin step (vLLM 0.11's) [D: solved on the cost model, tests/perf/test_moe_kernels.cpp].
inline constexpr double kTritonSplitKExpertFactor = 1.72;
/// The expert-GEMM time multiplier of `kernel` under `kernels` at `tokens` tokens in the iteration (1 but for split-K).
double moe_expert_time_factor(Mxfp4MoeKernel kernel, const spec::QuantKernels& kernels, double tokens);

/// Bytes the top-k combine moves per token of one MoE layer: vLLM's fused MoE writes each token's k expert outputs
/// (the down GEMM's rows) and `ops.moe_sum` reads them back and writes their sum (fused_moe.py, fused_marlin_moe.py),
/// in 16 bits: (k + 1) * hidden * 2. k = 1 needs no sum (0).
double moe_combine_bytes_per_token(double experts_per_token, double hidden);

/// Multipliers on the routed-expert GEMMs' compute rate (q_c) and weight-stream rate (q_bw) of the kernel vLLM runs.
struct MoeGemmFactors {
  double compute = 1.0;
  double bandwidth = 1.0;
};

/// Block-scaled FP8 experts (DeepSeek-V3/R1, Qwen3-FP8: `weight_block_size` [128, 128]) run vLLM's Triton fused-MoE
/// kernel with per-block scales applied to the accumulator every 128 of K (`fused_moe_kernel`, use_fp8_w8a8 with
/// block_shape) on GPUs with FP8 tensor cores and no FP4 ones (Hopper, Ada): vLLM's own `benchmark_moe.py` on an H100
/// (vllm#24700, Qwen3-30B-A3B-FP8, 1 to 4096 tokens) times it at 0.15 of the dense FP8 GEMM rate at large M and 0.75
/// of its weight stream at small M [D: least squares in log time over the 18 batch sizes, median error 5.5 %]. Any
/// other format, checkpoint or GPU: 1, 1. `format` is the format as it runs on the GPU (spec::format_for_gpu).
/// vLLM's Marlin MoE kernel on Hopper (weight-only 4-bit experts: GPTQ/AWQ int4 through `fused_marlin_moe`, and
/// gpt-oss's MXFP4 on FP4 Marlin while `mxfp4_kernel` is Marlin): the kernel is Ampere's `mma.sync` design with no
/// `wgmma` path, and aiconfigurator's H100 SXM table of vLLM 0.14.0's `fused_marlin_moe` (GPTQ int4, six MoE shapes,
/// 1-16384 tokens, `collector/vllm/collect_moe.py`) puts it at kMarlinMoeHopperCompute of the 4-bit Marlin compute
/// rate this cost model gives dense W4A16 (docs/cost-model.md "MoE kernels"). Its weight stream at decode sizes is
/// the dense Marlin one already (within 15 % at 8-256 tokens), so only q_c moves. Ampere (where `mma.sync` is the
/// native tensor path), Ada (not measured), Blackwell and Triton's `matmul_ogs`: no factor.
/// On Ampere the Marlin MoE kernel (int4 GPTQ/AWQ, and FP8 checkpoints' weight-only experts) takes
/// kMarlinMoeAmpereCompute. FP4 Marlin (MXFP4/NVFP4 experts) takes kFp4MarlinMoeCompute on top of the card's factor.
/// Any other format, checkpoint or GPU: 1, 1. `format` is the format as it runs on the GPU (spec::format_for_gpu);
/// `mxfp4_kernel` is mxfp4_moe_kernel's answer for it.
/// Block-scaled FP8 under a release with spec::QuantKernels::block_fp8_moe_slow (vLLM before 0.14.0) takes vllm#24700's
/// factors above; later releases and SGLang take kBlockFp8MoeCompute / kBlockFp8MoeBandwidth (aiconfigurator's vLLM
/// 0.14.0 tables of six MoE shapes on the H100 and H200; docs/cost-model.md "MoE kernels").
MoeGemmFactors moe_gemm_factors(const spec::WeightFormat& format, bool block_scaled_checkpoint,
                                const spec::GpuSpec& gpu, Mxfp4MoeKernel mxfp4_kernel = Mxfp4MoeKernel::none,
                                bool block_fp8_moe_slow = false);

/// vLLM 0.14.0's block-FP8 Triton fused MoE (aiconfigurator systems/data/{h100_sxm,h200_sxm}/moe/vllm/0.14.0,
/// `fused_experts` with block_shape [128, 128], balanced routing, CUDA graphs): 0.36 of the FP8 GEMM rate and 0.82 of
/// its weight stream [D: least squares in log time over six shapes x two GPUs x 128-16384 tokens, median error 4.6 %,
/// largest 14 %; tests/perf/test_moe_kernels.cpp]. vLLM 0.19.0's table reads the same within 2 %.
inline constexpr double kBlockFp8MoeCompute = 0.36;
inline constexpr double kBlockFp8MoeBandwidth = 0.82;
/// vllm#24700's reading (releases before 0.14.0): see moe_gemm_factors.
inline constexpr double kBlockFp8MoeSlowCompute = 0.15;
inline constexpr double kBlockFp8MoeSlowBandwidth = 0.75;

/// The compute-rate multiplier of vLLM's Marlin MoE kernel on Hopper [D: least squares in log time of this cost
/// model's routed-expert op against aiconfigurator's vLLM 0.14.0 H100 `fused_marlin_moe` times at 2048-16384 tokens,
/// six shapes; tests/perf/test_moe_kernels.cpp].
inline constexpr double kMarlinMoeHopperCompute = 0.49;

/// The compute-rate multiplier of the same Marlin MoE kernel on Ampere (sm80/86: BF16 tensor cores, no FP8 ones), where
/// it runs GPTQ/AWQ int4 experts and, from vLLM 0.10 (Fp8MoEMethod.use_marlin below compute capability 8.9), the
/// experts of an FP8 checkpoint (per-tensor or 128 x 128 block scales, fused_marlin_moe with float8_e4m3fn weights):
/// aiconfigurator's A100 SXM table of SGLang 0.5.10's port of the kernel (`sglang_marlin_moe`, int4, balanced routing;
/// its H100 twin matches vLLM 0.14.0's `vllm_marlin_moe` within 8 % at the same shapes) reads 0.74-0.88 of this cost
/// model's dense-Marlin rate at 2048-16384 tokens [D: geometric mean over three shapes x four sizes;
/// tests/perf/test_moe_kernels.cpp]. FP4 Marlin (MXFP4/NVFP4 experts) takes it too, times kFp4MarlinMoeCompute.
inline constexpr double kMarlinMoeAmpereCompute = 0.79;

/// FP4 Marlin MoE (MXFP4 experts on vLLM's FP4 Marlin: gpt-oss on Hopper through vLLM 0.11 and on Ampere/Ada in every
/// release; NVFP4 experts without FP4 tensor cores) against the int4 Marlin MoE whose measured rate sets the card's
/// factor (kMarlinMoeHopperCompute, kMarlinMoeAmpereCompute): the same `fused_marlin_moe` kernel template, but its FP4
/// E2M1 weights dequantise through a longer bit-manipulation sequence than int4's magic-number trick and take a scale
/// per 32 (MXFP4) or 16 (NVFP4) weights instead of per 128. aiconfigurator's H100 SXM tables of vLLM 0.24.0 time both in
/// one release (`moe_perf.parquet`: kernel_source vllm_compressedtensorsw4a4mxfp4moe_marlin_marlinexperts_situ_as_silu,
/// w4a16_mxfp4, 3584 x 3072, E 896, top 16, TP 1; and vllm_compressedtensorswna16marlinmoe_marlin_marlinexperts,
/// int4_wo, 7168 x 2048, E 384, top 8, TP 1; balanced routing): over this cost model's time for each, FP4 reads slower
/// than int4 by the factor below at 2048-16384 tokens [D: geometric mean of the per-size ratio of ratios;
/// tests/perf/test_moe_kernels.cpp], and alike at 32-512 tokens (the weight stream: no factor there). Applied as a
/// multiplier on the card's Marlin MoE compute factor on Hopper (measured there) and on Ampere (the same kernel; the
/// A100's CUDA-core to tensor-core rate, 19.5 to 312 TF, is the H100's 67 to 989 within 10 %, so dequantisation weighs
/// alike).
inline constexpr double kFp4MarlinMoeCompute = 0.80;

/// Kernels of one MoE layer besides gate_up, activation and down: the router GEMM, the top-k selection
/// (`topk_softmax`), `moe_align_block_size` (sorting tokens by expert) and the combine (`moe_sum`).
inline constexpr int kMoeExtraKernelsPerLayer = 4;

}  // namespace llmsim::perf
