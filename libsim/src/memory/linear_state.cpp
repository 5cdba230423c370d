// vLLM V1's pages for linear-attention state; the rules are quoted in linear_state.hpp.
#include "linear_state.hpp"

#include "llmsim/memory/kv_layout.hpp"

#include <algorithm>
#include <cmath>

namespace llmsim::memory::detail {

namespace {
// HybridAttentionMambaModelConfig.verify_and_update_config (vllm/model_executor/models/config.py; later
// Platform._align_hybrid_block_size): with FlashAttention the attention block size is raised to a multiple of 16
// tokens whose page holds one layer's Mamba state (mamba_cache_mode "none"), and the Mamba page is padded to it.
constexpr int kKernelBlockAlignment = 16;
}  // namespace

namespace {
// One stage's pages: `linear` and `attention` layers of it on this GPU.
LinearStatePages stage_pages(int linear, int attention, double state_bytes_per_layer, double attn_bytes_per_token_layer,
                             double group_ratio) {
  LinearStatePages p;
  if (linear <= 0 || state_bytes_per_layer <= 0) return p;
  if (attention > 0 && attn_bytes_per_token_layer > 0) {
    const double align_page = kKernelBlockAlignment * attn_bytes_per_token_layer;
    p.page_bytes = std::ceil(state_bytes_per_layer / align_page) * align_page;
    // _get_kv_cache_groups_uniform_page_size: the release's rule (hybrid_kv_group_size, one with kv_layout's); each
    // type padded to whole groups.
    p.group_size = hybrid_kv_group_size(linear, attention, group_ratio);
  } else {
    p.page_bytes = state_bytes_per_layer;
    p.group_size = linear;
  }
  p.mamba_groups = (linear + p.group_size - 1) / p.group_size;
  return p;
}
}  // namespace

int largest_stage_linear_layers(const spec::ModelSpec& m, const spec::ParallelConfig& par) {
  int most = 0, begin = 0;
  for (const int n : spec::pp_stage_layers(m.num_layers, par)) {
    most = std::max(most, m.linear_attention_layers_in(begin, begin + n));
    begin += n;
  }
  return most;
}

LinearStatePages linear_state_pages(const spec::ModelSpec& m, const spec::ParallelConfig& par,
                                    double state_bytes_per_layer, double attn_bytes_per_token_layer,
                                    double group_ratio) {
  // Each stage holds its own linear and attention layers (the uneven split or VLLM_PP_LAYER_PARTITION, and which of
  // its layers are linear: ModelSpec::linear_attention_layers_in); the stage whose state takes most sizes the plan.
  LinearStatePages best;
  int begin = 0;
  for (const int n : spec::pp_stage_layers(m.num_layers, par)) {
    const int linear = m.linear_attention_layers_in(begin, begin + n);
    // Its cached layers: not n - linear, which would count Nemotron-H's MLP-only layers as attention ones.
    const LinearStatePages p = stage_pages(linear, m.attention_layers_in(begin, begin + n), state_bytes_per_layer,
                                           attn_bytes_per_token_layer, group_ratio);
    if (p.bytes_per_seq() > best.bytes_per_seq()) best = p;
    begin += n;
  }
  return best;
}

}  // namespace llmsim::memory::detail
