// vLLM V1's pages for linear-attention state; the rules are quoted in linear_state.hpp.
#include "linear_state.hpp"

#include <algorithm>
#include <cmath>

namespace llmsim::memory::detail {

namespace {
// HybridAttentionMambaModelConfig.verify_and_update_config (vllm/model_executor/models/config.py; later
// Platform._align_hybrid_block_size): with FlashAttention the attention block size is raised to a multiple of 16
// tokens whose page holds one layer's Mamba state (mamba_cache_mode "none"), and the Mamba page is padded to it.
constexpr int kKernelBlockAlignment = 16;
}  // namespace

LinearStatePages linear_state_pages(const spec::ModelSpec& m, const spec::ParallelConfig& par,
                                    double state_bytes_per_layer, double attn_bytes_per_token_layer) {
  LinearStatePages p;
  const int pp = std::max(1, par.pp);
  const int linear = m.linear_attention_layers / pp, attention = m.kv_cache_layers() / pp;
  if (linear <= 0 || state_bytes_per_layer <= 0) return p;
  if (attention > 0 && attn_bytes_per_token_layer > 0) {
    const double align_page = kKernelBlockAlignment * attn_bytes_per_token_layer;
    p.page_bytes = std::ceil(state_bytes_per_layer / align_page) * align_page;
    // _get_kv_cache_groups_uniform_page_size: the smaller type's layer count, the larger one's when it is less
    // than 1.25× the smaller; each type padded to whole groups.
    const int lo = std::min(linear, attention), hi = std::max(linear, attention);
    p.group_size = hi < 1.25 * lo ? hi : lo;
  } else {
    p.page_bytes = state_bytes_per_layer;
    p.group_size = linear;
  }
  p.mamba_groups = (linear + p.group_size - 1) / p.group_size;
  return p;
}

}  // namespace llmsim::memory::detail
