// vLLM's MXFP4 expert kernel choice and padded expert shape (memory/expert_layout.hpp); provenance in
// perf/provenance.cpp.
#include "llmsim/memory/expert_layout.hpp"

#include <cmath>

#include "llmsim/spec/gpu_family.hpp"

namespace llmsim::memory {

namespace {

double round_up(double x, double multiple) { return std::ceil(x / multiple) * multiple; }

bool is_mxfp4(const spec::WeightFormat& f) { return f.id.rfind("mxfp4", 0) == 0; }

}  // namespace

std::string to_string(Mxfp4MoeKernel k) {
  switch (k) {
    case Mxfp4MoeKernel::none: return "none";
    case Mxfp4MoeKernel::marlin: return "marlin";
    case Mxfp4MoeKernel::triton: return "triton_matmul_ogs";
    case Mxfp4MoeKernel::flashinfer: return "flashinfer";
  }
  return "none";
}

Mxfp4MoeKernel mxfp4_moe_kernel(const spec::WeightFormat& format, const spec::QuantKernels& kernels,
                                const spec::GpuSpec& gpu) {
  if (!is_mxfp4(format)) return Mxfp4MoeKernel::none;
  if (!format.weight_only) return Mxfp4MoeKernel::flashinfer;
  // get_mxfp4_backend: Marlin when `device_capability[0] < 9 or not has_triton_kernels()`; vllm#29339 keeps Triton
  // to sm90/sm100 (sm100 runs FlashInfer above). Hopper here: an HBM part with FP8 tensor cores and no FP4 ones
  // (not Ada, sm89: a GDDR card).
  const bool hopper = spec::gpu_family(gpu) == spec::GpuFamily::hopper_hbm;
  return hopper && kernels.mxfp4_hopper_triton ? Mxfp4MoeKernel::triton : Mxfp4MoeKernel::marlin;
}

ExpertLayout expert_layout(double hidden, double intermediate_per_gpu, Mxfp4MoeKernel kernel) {
  ExpertLayout e{hidden, intermediate_per_gpu};
  if (hidden <= 0 || intermediate_per_gpu <= 0) return e;
  switch (kernel) {
    case Mxfp4MoeKernel::none: break;
    case Mxfp4MoeKernel::marlin:
      // mxfp4.py, Mxfp4Backend.MARLIN: round_up(intermediate_size_per_partition, 128), round_up(hidden_size, 256).
      e.intermediate = round_up(intermediate_per_gpu, 128);
      e.hidden = round_up(hidden, 256);
      break;
    case Mxfp4MoeKernel::triton:
      // mxfp4.py, the CUDA `else` branch (Mxfp4Backend.TRITON): round_up(intermediate_size_per_partition, 64).
      e.intermediate = round_up(intermediate_per_gpu, 64);
      break;
    case Mxfp4MoeKernel::flashinfer:
      // mxfp4.py, SM100 FlashInfer MXFP4 backends: both round_up(..., 256).
      e.intermediate = round_up(intermediate_per_gpu, 256);
      e.hidden = round_up(hidden, 256);
      break;
  }
  return e;
}

}  // namespace llmsim::memory
