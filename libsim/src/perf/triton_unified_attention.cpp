// vLLM's Triton unified attention kernel as it prefills (llmsim/perf/triton_unified_attention.hpp).
#include "llmsim/perf/triton_unified_attention.hpp"

#include "llmsim/perf/hardware_profile.hpp"

namespace llmsim::perf {

bool vllm_triton_unified_prefill(const spec::ModelSpec& m, const spec::GpuSpec& gpu, spec::Runtime runtime) {
  // gpt-oss is the one family read here whose attention carries learned sinks (spec/hf_config_parts.cpp).
  const bool sinks = m.model_type == "gpt_oss";
  return sinks && runtime == spec::Runtime::vllm_v1 && !hopper_class(gpu_family(gpu));
}

int triton_unified_block_q(int query_heads_per_kv) {
  const int q = query_heads_per_kv > 0 ? query_heads_per_kv : 1;
  int block_m = kTritonUnifiedBlockM;
  while (block_m < q) block_m *= 2;
  return block_m / q;
}

double triton_unified_l2_bytes_per_pair(double kv_heads, double head_dim, double kv_bytes, int query_heads_per_kv) {
  return kv_heads * 2.0 * head_dim * kv_bytes / triton_unified_block_q(query_heads_per_kv);
}

}  // namespace llmsim::perf
