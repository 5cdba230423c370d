// FP8 W8A8 linears on Ada (docs/cost-model.md "FP8 GEMMs on Ada"); the constants and their sources in
// perf/ada_fp8.hpp and perf/provenance.cpp.
#include "llmsim/perf/ada_fp8.hpp"

#include "llmsim/perf/quant_kernels.hpp"

namespace llmsim::perf {

double ada_fp8_gemm_compute_factor(const spec::WeightFormat& format, const spec::QuantKernels& kernels,
                                   const spec::GpuSpec& gpu, Runtime runtime) {
  // The FP8 tensor path (not a weight-only fallback) on an sm89 card: FP8 tensor cores, GDDR, no FP4 ones.
  if (format.weight_only || format.compute_dtype != spec::DType::fp8 || !is_ada_fp8(gpu)) return 1.0;
  switch (runtime) {
    case Runtime::vllm_v1:
    case Runtime::vllm_v0:
    case Runtime::vllm_v0_sync:
    case Runtime::vllm_v0_paged: return kernels.ada_fp8_cutlass ? kAdaFp8VllmCutlassCompute : 1.0;
    case Runtime::sglang: return kAdaFp8SglangCompute;
    case Runtime::lmdeploy_turbomind:
    case Runtime::gpt_fast:
    case Runtime::llama_cpp: return 1.0;
  }
  return 1.0;
}

}  // namespace llmsim::perf
