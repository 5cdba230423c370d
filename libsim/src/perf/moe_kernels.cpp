// vLLM's fused-MoE layer beyond the expert GEMMs (docs/cost-model.md "MoE kernels"); provenance in perf/provenance.cpp.
#include "llmsim/perf/moe_kernels.hpp"

#include <cmath>

#include "llmsim/perf/quant_kernels.hpp"

namespace llmsim::perf {

namespace {

bool is_mxfp4(const spec::WeightFormat& f) { return f.id.rfind("mxfp4", 0) == 0; }

}  // namespace

std::optional<std::string> sglang_mxfp4_unmodelled_path(const spec::WeightFormat& format, const spec::GpuSpec& gpu,
                                                        spec::Runtime runtime) {
  if (runtime != spec::Runtime::sglang || !is_mxfp4(format)) return std::nullopt;
  const bool hopper = gpu.fp8_flops > 0 && !(gpu.fp4_flops > 0) && !is_ada_fp8(gpu);
  if (hopper || gpu.fp4_flops > 0) return std::nullopt;
  return "SGLang serves the MXFP4 experts (" + format.id + ") on " + gpu.id +
         " through triton_kernels' matmul_ogs with the weights upcast inside the kernel (StridedLayout below sm90) and "
         "attention through its Triton backend (server_args.py, GptOssForCausalLM: moe_runner_backend "
         "'triton_kernel', attention_backend 'triton' below sm90): a path llmsim does not model (it prices vLLM's FP4 "
         "Marlin MoE there, which vLLM runs on this card), so the prediction is not validated for this run";
}

double moe_expert_time_factor(Mxfp4MoeKernel kernel, const spec::QuantKernels& kernels, double tokens) {
  if (kernel == Mxfp4MoeKernel::triton && kernels.mxfp4_triton_split_k && tokens < kTritonSplitKMaxTokens)
    return kTritonSplitKExpertFactor;
  return 1.0;
}

MoeGemmFactors moe_gemm_factors(const spec::WeightFormat& format, bool block_scaled_checkpoint,
                                const spec::GpuSpec& gpu, Mxfp4MoeKernel mxfp4_kernel, bool block_fp8_moe_slow) {
  MoeGemmFactors f;
  const bool fp8_tensor_path = !format.weight_only && format.compute_dtype == spec::DType::fp8;
  if (block_scaled_checkpoint && fp8_tensor_path && gpu.tensor_peak(spec::DType::fp4) <= 0) {
    // vllm#24700 (H100 80GB HBM3, benchmark_moe.py, Qwen3-30B-A3B-FP8 TP 1, "Main" kernel times 44.5 us at 1 token
    // ... 273.7 us at 128 ... 1647.6 us at 4096) before 0.14.0; aiconfigurator's vLLM 0.14.0 tables from it.
    f.compute = block_fp8_moe_slow ? kBlockFp8MoeSlowCompute : kBlockFp8MoeCompute;
    f.bandwidth = block_fp8_moe_slow ? kBlockFp8MoeSlowBandwidth : kBlockFp8MoeBandwidth;
  }
  // The 4-bit weight-only formats that dequantise with Marlin's bit tricks run their experts through the Marlin MoE
  // kernel (fused_marlin_moe: GPTQ/AWQ MoE methods, FP4 Marlin for MXFP4/NVFP4 without FP4 tensor cores), unless an
  // MXFP4 checkpoint's release runs triton_kernels' matmul_ogs on Hopper.
  const bool marlin_moe = format.weight_only && format.dequant_alu_ops_per_weight > 0 && format.bits_per_weight < 5 &&
                          (is_mxfp4(format) ? mxfp4_kernel == Mxfp4MoeKernel::marlin
                                            : mxfp4_kernel == Mxfp4MoeKernel::none);
  const bool hopper = gpu.fp8_flops > 0 && !(gpu.fp4_flops > 0) && !is_ada_fp8(gpu);
  // FP4 Marlin (MXFP4/NVFP4 experts: the same Marlin MoE kernel with FP4 E2M1 weights and a scale per 16/32) computes
  // slower than the int4 variant that set the card's factor: kFp4MarlinMoeCompute on top of it.
  const bool fp4_marlin_moe = marlin_moe && format.id.find("fp4") != std::string::npos;
  const double fp4 = fp4_marlin_moe ? kFp4MarlinMoeCompute : 1.0;
  if (marlin_moe && hopper) f.compute = kMarlinMoeHopperCompute * fp4;
  // Ampere (BF16 tensor cores, no FP8 ones): vLLM's Fp8MoEMethod sets use_marlin below compute capability 8.9 and runs
  // an FP8 checkpoint's experts (block-scaled or not) through fused_marlin_moe with float8_e4m3fn weights, the same
  // kernel as GPTQ/AWQ int4's; both take the kernel's measured A100 rate, and FP4 Marlin (MXFP4/NVFP4) with its FP4
  // factor on top.
  const bool ampere = has_marlin_capability(gpu) && !(gpu.fp8_flops > 0);
  const bool fp8_marlin_moe = format.weight_only && format.id.rfind("fp8", 0) == 0;
  const bool int_marlin_moe =
      marlin_moe && mxfp4_kernel == Mxfp4MoeKernel::none && format.id.find("fp4") == std::string::npos;
  if (ampere && (fp8_marlin_moe || int_marlin_moe || fp4_marlin_moe)) f.compute = kMarlinMoeAmpereCompute * fp4;
  return f;
}

double moe_combine_bytes_per_token(double experts_per_token, double hidden) {
  if (experts_per_token <= 1) return 0.0;
  return (experts_per_token + 1) * hidden * 2.0;
}

}  // namespace llmsim::perf
