// vLLM's block-scaled FP8 linear layers (docs/cost-model.md "Block-scaled FP8 linears"); provenance in
// perf/provenance.cpp.
#include "llmsim/perf/block_fp8.hpp"

namespace llmsim::perf {

BlockFp8LinearFactors block_fp8_linear_factors(const spec::WeightFormat& format, bool block_scaled_checkpoint,
                                               const spec::GpuSpec& gpu) {
  BlockFp8LinearFactors f;
  // The same condition as the block-FP8 fused MoE (perf/moe_kernels.cpp): the FP8 tensor path (not FP8 Marlin's
  // weight-only fallback on Ampere), and not Blackwell, whose block-scaled FP8 runs other kernels.
  const bool fp8_tensor_path = !format.weight_only && format.compute_dtype == spec::DType::fp8;
  if (block_scaled_checkpoint && fp8_tensor_path && gpu.tensor_peak(spec::DType::fp4) <= 0) {
    f.compute = kBlockFp8LinearCompute;
    f.bandwidth = kBlockFp8LinearBandwidth;
    f.extra_fixed_s = kBlockFp8LinearExtraFixedS;
    f.unfused_input_quant = true;
  }
  return f;
}

}  // namespace llmsim::perf
