// vLLM's CUTLASS sm90 FP8 linears at decode sizes (docs/cost-model.md "FP8 scaled_mm on Hopper at decode sizes");
// the constants and their source in perf/hopper_fp8.hpp and perf/provenance.cpp.
#include "llmsim/perf/hopper_fp8.hpp"

#include "llmsim/perf/hardware_profile.hpp"

namespace llmsim::perf {

Sm90ScaledMmFactors sm90_scaled_mm_factors(const spec::WeightFormat& format, bool block_scaled_checkpoint,
                                           const spec::GpuSpec& gpu, Runtime runtime,
                                           const spec::QuantKernels& kernels) {
  Sm90ScaledMmFactors f;
  const bool fp8_tensor_path = !format.weight_only && format.compute_dtype == spec::DType::fp8;
  const bool vllm_cutlass_sm90 = runtime == Runtime::vllm_v0 || runtime == Runtime::vllm_v1;
  if (fp8_tensor_path && !block_scaled_checkpoint && gpu_family(gpu) == GpuFamily::hopper_hbm && vllm_cutlass_sm90 &&
      kernels.sm90_fp8_slow_small_m) {
    f.bandwidth = kSm90ScaledMmBandwidth;
    f.extra_fixed_s = kSm90ScaledMmExtraFixedS;
  }
  return f;
}

}  // namespace llmsim::perf
