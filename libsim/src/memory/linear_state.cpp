// vLLM V1's pages for linear-attention state; the rules are quoted in linear_state.hpp.
#include "linear_state.hpp"

#include "llmsim/memory/kv_layout.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace llmsim::memory::detail {

namespace {
// HybridAttentionMambaModelConfig.verify_and_update_config (vllm/model_executor/models/config.py; later
// Platform._align_hybrid_block_size): with FlashAttention the attention block size is raised to a multiple of 16
// tokens whose page holds one layer's Mamba state (mamba_cache_mode "none"), and the Mamba page is padded to it.
constexpr int kKernelBlockAlignment = 16;
}  // namespace

namespace {
// The pages of the stages in `stages` grouped together (hybrid_kv_groups): one layer's state padded to the attention
// page at vLLM's raised block size when the model has attention layers.
LinearStatePages grouped_pages(const std::vector<KvTypeCounts>& stages, double state_bytes_per_layer,
                               double attn_bytes_per_token_layer, double group_ratio, bool whole_model) {
  LinearStatePages p;
  if (state_bytes_per_layer <= 0) return p;
  const KvGroups g = hybrid_kv_groups(stages, group_ratio, whole_model);
  if (g.groups[kv_linear] == 0) return p;
  const bool attention = g.groups[kv_full] + g.groups[kv_sliding] > 0;
  if (attention && attn_bytes_per_token_layer > 0) {
    const double align_page = kKernelBlockAlignment * attn_bytes_per_token_layer;
    p.page_bytes = std::ceil(state_bytes_per_layer / align_page) * align_page;
  } else {
    p.page_bytes = state_bytes_per_layer;
  }
  p.group_size = g.tensors;
  p.mamba_groups = g.groups[kv_linear];
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
                                    double group_ratio, bool whole_model) {
  // Each stage's linear and attention layers (the uneven split or VLLM_PP_LAYER_PARTITION, which of its layers are
  // linear by the model's interval: kv_stage_counts, kv_layout's). From vLLM 0.11.0 the groups are the whole model's,
  // projected onto the stages (a request holds a block in each of the model's linear groups; a block is a page in each
  // of the most loaded stage's tensors); before, each stage grouped its own layers and the stage whose state takes
  // most sizes the plan.
  const std::vector<KvTypeCounts> stages = kv_stage_counts(m, par, true, true);
  if (whole_model) return grouped_pages(stages, state_bytes_per_layer, attn_bytes_per_token_layer, group_ratio, true);
  LinearStatePages best;
  for (const auto& s : stages) {
    const LinearStatePages p =
        grouped_pages({s}, state_bytes_per_layer, attn_bytes_per_token_layer, group_ratio, false);
    if (p.bytes_per_seq() > best.bytes_per_seq()) best = p;
  }
  return best;
}

int hybrid_prefix_block_tokens(double state_bytes_per_layer, double attn_bytes_per_token_layer, int mamba_chunk) {
  if (!(state_bytes_per_layer > 0) || !(attn_bytes_per_token_layer > 0)) return 0;
  const double tokens = std::ceil(state_bytes_per_layer / attn_bytes_per_token_layer);  // attn_tokens_per_mamba_state
  const int unit = mamba_chunk > 0 ? std::lcm(mamba_chunk, kKernelBlockAlignment) : kKernelBlockAlignment;
  return static_cast<int>(std::ceil(tokens / unit)) * unit;
}

}  // namespace llmsim::memory::detail
