#include "llmsim/perf/sparse_mla.hpp"

#include "llmsim/perf/hardware_profile.hpp"

namespace llmsim::perf {

bool vllm_flashmla_sparse(const spec::ModelSpec& m, const spec::GpuSpec& gpu, spec::Runtime runtime) {
  return m.is_mla() && m.index_topk > 0 && runtime == spec::Runtime::vllm_v1 && hopper_class(gpu_family(gpu));
}

int flashmla_sparse_padded_heads(int heads, const spec::GpuSpec& gpu) {
  const int tile = gpu_family(gpu) == GpuFamily::blackwell_hbm ? kSparseMlaHeadTileSm100 : kSparseMlaHeadTileSm90;
  if (heads <= 0) return tile;
  return (heads + tile - 1) / tile * tile;  // vLLM pads a divisor of the tile to it; the kernel needs a multiple
}

double flashmla_sparse_efficiency(const spec::GpuSpec& gpu) {
  return gpu_family(gpu) == GpuFamily::blackwell_hbm ? 1450.0 / 2250.0 : 640.0 / 989.4;
}

double sparse_mla_flops_per_token(int padded_heads, int topk, double qk_dim, double v_dim) {
  return 2.0 * padded_heads * static_cast<double>(topk) * (qk_dim + v_dim);
}

}  // namespace llmsim::perf
