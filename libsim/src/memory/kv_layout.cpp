// vLLM's KV-cache groups and what one sequence holds in them; the rules are quoted in kv_layout.hpp and
// docs/cost-model.md ("KV cache layout").
#include "llmsim/memory/kv_layout.hpp"

#include <algorithm>
#include <cmath>

namespace llmsim::memory {

namespace {
std::int64_t cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
}  // namespace

std::int64_t KvLayout::blocks_for(std::int64_t context, int block_size, std::int64_t chunk) const noexcept {
  if (context <= 0 || block_size <= 0) return 0;
  const std::int64_t full = cdiv(context, std::int64_t{block_size} * full_block_scale);
  const std::int64_t sliding_block = std::int64_t{block_size} * sliding_block_scale;
  std::int64_t sliding = cdiv(context, sliding_block);
  if (window > 0)
    sliding = std::min(sliding, cdiv(std::min<std::int64_t>(window - 1 + chunk, context), sliding_block) + 1);
  return full_groups * full + sliding_groups * sliding;
}

std::int64_t KvLayout::longest_context(std::int64_t pool_blocks, int block_size, std::int64_t chunk,
                                       std::int64_t limit) const noexcept {
  if (groups() == 0 || block_size <= 0 || blocks_for(1, block_size, chunk) > pool_blocks) return 0;
  // blocks_for is non-decreasing in the context: bisect on it.
  std::int64_t lo = 1, hi = limit;
  if (blocks_for(hi, block_size, chunk) <= pool_blocks) return hi;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (blocks_for(mid, block_size, chunk) <= pool_blocks ? lo : hi) = mid;
  }
  return lo;
}

int hybrid_kv_group_size(int a, int b, double max_ratio) noexcept {
  const int lo = std::min(a, b), hi = std::max(a, b);
  if (lo < 1) return 0;
  // Python's float comparison: 13 < 12 * 1.25 holds, 4 < 3 * 1.25 does (3.75: no), 17 < 12 * 1.5 holds.
  return max_ratio > 0 && hi < max_ratio * lo ? hi : lo;
}

KvLayout kv_layout(const spec::ModelSpec& m, const spec::ParallelConfig& par, double kv_bytes_per_element,
                   bool hybrid_manager, double group_ratio, bool mla_entries_aligned) {
  KvLayout k;
  const int tp = std::max(1, par.tp);
  // Per layer on one GPU: KV heads are sharded over tp (replicated when tp exceeds them); MLA's latent is one
  // "head" (MLAAttentionSpec, num_kv_heads 1) that every rank stores whole.
  double elements = m.is_mla() ? static_cast<double>(m.kv_elements_per_token_per_layer())
                               : 2.0 * std::max(1, m.num_kv_heads / tp) * m.head_dim;
  // vllm#12676's align_to_256bytes(entry, model dtype): 256-byte multiples of 2-byte elements.
  if (m.is_mla() && mla_entries_aligned) elements = std::ceil(elements / 128.0) * 128.0;
  // DeepSeek-V3.2's indexer keeps its own FP8 key per token and layer beside the latent (same block table).
  k.bytes_per_token_layer = elements * kv_bytes_per_element + m.indexer_kv_bytes_per_token_per_layer();
  // Gemma-4: the full layers' own shape; the page is the larger type's, the smaller type's blocks hold more tokens
  // when the ratio is whole (vLLM refuses other ratios; llmsim then charges the larger page per block_size tokens).
  int full_scale = 1, sliding_scale = 1;
  if (m.has_full_layer_shape() && !m.is_mla()) {
    const double full =
        2.0 * std::max(1, m.full_layer_kv_heads() / tp) * m.full_layer_head_dim() * kv_bytes_per_element;
    const double larger = std::max(full, k.bytes_per_token_layer), smaller = std::min(full, k.bytes_per_token_layer);
    const double ratio = larger / smaller;
    const int whole = static_cast<int>(std::lround(ratio));
    if (whole >= 1 && std::abs(ratio - whole) < 1e-9)
      (full < k.bytes_per_token_layer ? full_scale : sliding_scale) = whole;
    k.bytes_per_token_layer = larger;
  }
  // Linear-attention layers (Qwen3-Next) hold no per-token KV: only the attention layers, spread through the model.
  // Gemma-4's KV-shared layers (E2B/E4B) have no cache spec of their own in vLLM (kv_sharing_target_layer_name): they
  // read an earlier layer's.
  const int owners = m.kv_cache_layers();
  // The stage holding the most: vLLM splits the layers as spec::pp_stage_layers says, the KV-shared ones are the
  // model's last (Gemma-4 E2B's 20 of 35: over pp 2 its first stage, layers 0-17, holds all 15 caches), and the
  // owners are spread through the rest (Qwen3-Next's attention layers among its linear ones): a stage holds its
  // share of the owners in its range.
  const int region = m.num_layers - m.kv_shared_layers;  // where the owners are
  k.layers = 0;
  int begin = 0;
  for (const int n : spec::pp_stage_layers(m.num_layers, par)) {
    const int in_region = std::max(0, std::min(begin + n, region) - begin);
    if (m.has_linear_attention() && m.kv_shared_layers == 0)  // which of the stage's layers are attention ones
      k.layers = std::max(k.layers, m.attention_layers_in(begin, begin + n));
    else if (region > 0)
      k.layers = std::max(k.layers, static_cast<int>(static_cast<std::int64_t>(owners) * in_region / region));
    begin += n;
  }
  // Sliding layers are spread through the model (Gemma: every other, or 5 of 6), so a stage holds its share.
  const int sliding = hybrid_manager && m.has_sliding_window() && owners > 0
                          ? static_cast<int>(static_cast<std::int64_t>(m.kv_sliding_layers()) * k.layers / owners)
                          : 0;
  const int full = k.layers - sliding;
  k.full_block_scale = full > 0 && sliding > 0 ? full_scale : 1;
  k.sliding_block_scale = full > 0 && sliding > 0 ? sliding_scale : 1;
  if (sliding == 0 || full == 0) {
    // One attention type: one group of every layer (a model whose layers all slide keeps only the window).
    k.group_size = k.layers;
    k.full_groups = full > 0 ? 1 : 0;
    k.sliding_groups = sliding > 0 ? 1 : 0;
    k.window = sliding > 0 ? m.sliding_window : 0;
    return k;
  }
  // _get_kv_cache_groups_uniform_page_size: the group size is the smaller type's layer count, or the larger one's
  // when it is less than the release's ratio times the smaller (hybrid_kv_group_size); each type is padded to whole
  // groups.
  k.group_size = hybrid_kv_group_size(full, sliding, group_ratio);
  k.full_groups = static_cast<int>(cdiv(full, k.group_size));
  k.sliding_groups = static_cast<int>(cdiv(sliding, k.group_size));
  k.window = m.sliding_window;
  return k;
}

}  // namespace llmsim::memory

namespace llmsim::memory {

double kv_bytes_of_context(const spec::ModelSpec& model, double bytes_per_element, std::int64_t tokens) {
  if (tokens <= 0) return 0;
  const double all_layers = model.kv_bytes_per_token(bytes_per_element);
  const auto n = static_cast<double>(tokens);
  if (!model.has_sliding_window() || model.attention_layers() <= 0) return all_layers * n;
  // Per layer of each type (Gemma-4's full layers have their own shape; other models: the same bytes).
  const double indexer = model.indexer_kv_bytes_per_token_per_layer();
  const double b = bytes_per_element;
  const double sliding_layer = static_cast<double>(model.kv_elements_per_token_per_layer()) * b + indexer;
  const double full_layer = static_cast<double>(model.full_kv_elements_per_token_per_layer()) * b + indexer;
  const double sliding = std::min<double>(n, model.sliding_window);
  return full_layer * model.kv_full_layers() * n + sliding_layer * model.kv_sliding_layers() * sliding;
}

}  // namespace llmsim::memory
