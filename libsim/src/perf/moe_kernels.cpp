// vLLM's fused-MoE layer beyond the expert GEMMs (docs/cost-model.md "MoE kernels"); provenance in perf/provenance.cpp.
#include "llmsim/perf/moe_kernels.hpp"

#include <cmath>

namespace llmsim::perf {

namespace {

double round_up(double x, double multiple) { return std::ceil(x / multiple) * multiple; }

bool is_mxfp4(const spec::WeightFormat& f) { return f.id.rfind("mxfp4", 0) == 0; }

}  // namespace

ExpertLayout expert_layout(double hidden, double intermediate_per_gpu, const spec::WeightFormat& format) {
  ExpertLayout e{hidden, intermediate_per_gpu};
  if (!is_mxfp4(format) || hidden <= 0 || intermediate_per_gpu <= 0) return e;
  if (format.weight_only) {
    // mxfp4.py, Mxfp4Backend.MARLIN: round_up(intermediate_size_per_partition, 128), round_up(hidden_size, 256).
    e.intermediate = round_up(intermediate_per_gpu, 128);
    e.hidden = round_up(hidden, 256);
  } else {
    // mxfp4.py, SM100 FlashInfer MXFP4 backends: both round_up(..., 256).
    e.intermediate = round_up(intermediate_per_gpu, 256);
    e.hidden = round_up(hidden, 256);
  }
  return e;
}

double moe_combine_bytes_per_token(double experts_per_token, double hidden) {
  if (experts_per_token <= 1) return 0.0;
  return (experts_per_token + 1) * hidden * 2.0;
}

}  // namespace llmsim::perf
