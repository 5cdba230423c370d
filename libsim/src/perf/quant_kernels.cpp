// Which kernel a quantised linear runs, by release (spec::QuantKernels), GPU and format. The rules are vLLM's own
// (the quantization configs' override_quantization_method and apply paths); docs/cost-model.md "Quantised kernels by
// release" is the same table in prose.
#include "llmsim/perf/quant_kernels.hpp"

#include "llmsim/perf/hardware_profile.hpp"

namespace llmsim::perf {

std::string to_string(QuantGemmKernel k) {
  switch (k) {
    case QuantGemmKernel::native: return "native";
    case QuantGemmKernel::awq_gemm: return "awq_gemm";
    case QuantGemmKernel::exllama: return "exllama";
    case QuantGemmKernel::fp8_unfused_dq: return "fp8_unfused_dq";
  }
  return "native";
}

bool has_marlin_capability(const spec::GpuSpec& gpu) { return gpu.bf16_flops > 0; }

bool is_ada_fp8(const spec::GpuSpec& gpu) {
  return gpu.fp8_flops > 0 && !(gpu.fp4_flops > 0) && gpu_family(gpu) == GpuFamily::gddr;
}

QuantGemmPlan quant_gemm_plan(const spec::Quantization& q, const spec::GpuSpec& gpu) {
  QuantGemmPlan p;
  const spec::WeightFormat& f = q.weights;
  const spec::QuantKernels& k = q.kernels;
  if (f.weight_only && f.method == spec::QuantMethod::awq && (!k.awq_marlin || !has_marlin_capability(gpu))) {
    // AWQConfig's AWQLinearMethod.apply: awq_gemm below 256 tokens, awq_dequantize + torch.matmul from 256
    // (vllm#2566); before that change, awq_gemm at every M.
    p.kernel = QuantGemmKernel::awq_gemm;
    if (k.awq_dequant_large_m) p.dequant_min_rows = quant_kernel::kAwqDequantMinRows;
    p.why = k.awq_marlin ? "awq_gemm: Marlin needs compute capability 8.0" : "awq_gemm: vLLM before 0.5.3 (vllm#6612)";
    return p;
  }
  if (f.weight_only && f.method == spec::QuantMethod::gptq && (!k.gptq_marlin || !has_marlin_capability(gpu))) {
    // GPTQLinearMethod.apply -> ops.gptq_gemm with exllama: the quantised kernel up to 50 rows, reconstruct + cuBLAS
    // above.
    p.kernel = QuantGemmKernel::exllama;
    p.dequant_min_rows = quant_kernel::kExllamaMaxRows + 1;
    p.why = k.gptq_marlin ? "exllama: Marlin needs compute capability 8.0" : "exllama: vLLM before 0.4.2 (vllm#3922)";
    return p;
  }
  if (!f.weight_only && f.compute_dtype == spec::DType::fp8 && f.fp8_scales == spec::Fp8Scales::dynamic_token &&
      !k.ada_fp8_cutlass && is_ada_fp8(gpu)) {
    // apply_fp8_linear without cutlass_fp8_supported: torch._scaled_mm takes per-tensor scales only, so per-channel
    // weights / per-token activations take the unfused fallback (fp32 GEMM output, dequantised by element-wise ops).
    p.kernel = QuantGemmKernel::fp8_unfused_dq;
    p.why = "torch._scaled_mm with unfused dequantisation: the release's CUDA 12.1 wheel has no CUTLASS FP8 for sm89";
  }
  return p;
}

}  // namespace llmsim::perf
