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

std::int64_t KvLayout::blocks_held(std::int64_t computed, std::int64_t new_tokens, int block_size) const noexcept {
  const std::int64_t end = std::max<std::int64_t>(0, computed) + std::max<std::int64_t>(0, new_tokens);
  if (end <= 0 || block_size <= 0) return 0;
  const std::int64_t full = cdiv(end, std::int64_t{block_size} * full_block_scale);
  const std::int64_t sliding_block = std::int64_t{block_size} * sliding_block_scale;
  std::int64_t sliding = cdiv(end, sliding_block);
  // remove_skipped_blocks: the blocks wholly before the first token the next query still attends to are freed.
  if (window > 0) sliding -= std::max<std::int64_t>(0, computed - window + 1) / sliding_block;
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

KvGroups hybrid_kv_groups(const std::vector<KvTypeCounts>& stages, double max_ratio, bool whole_model) {
  // _get_kv_cache_groups_uniform_page_size on the given counts: the group size (one type: all its layers), and each
  // type padded to whole groups.
  auto grouped = [&](const KvTypeCounts& n) {
    KvGroups g;
    int types = 0, lo = 0, hi = 0;
    for (const int c : n) {
      if (c <= 0) continue;
      lo = types == 0 ? c : std::min(lo, c);
      hi = std::max(hi, c);
      ++types;
    }
    if (types == 0) return g;
    const int size = types == 1 ? hi : hybrid_kv_group_size(lo, hi, max_ratio);
    for (std::size_t t = 0; t < n.size(); ++t) g.groups[t] = n[t] > 0 ? static_cast<int>(cdiv(n[t], size)) : 0;
    return g;
  };
  // A stage's tensors: the most layers one group has there (round-robin dealing: cdiv(c, groups) of a type's c).
  auto tensors = [](const KvGroups& g, const KvTypeCounts& c) {
    int most = 0;
    for (std::size_t t = 0; t < c.size(); ++t)
      if (g.groups[t] > 0) most = std::max(most, static_cast<int>(cdiv(c[t], g.groups[t])));
    return most;
  };
  if (whole_model) {
    KvTypeCounts totals{};
    for (const auto& s : stages)
      for (std::size_t t = 0; t < s.size(); ++t) totals[t] += s[t];
    KvGroups g = grouped(totals);
    for (const auto& s : stages) g.tensors = std::max(g.tensors, tensors(g, s));
    return g;
  }
  KvGroups best;
  for (const auto& s : stages) {
    KvGroups g = grouped(s);
    g.tensors = tensors(g, s);
    if (static_cast<std::int64_t>(g.tensors) * g.total() > static_cast<std::int64_t>(best.tensors) * best.total())
      best = g;
  }
  return best;
}

std::vector<KvTypeCounts> kv_stage_counts(const spec::ModelSpec& m, const spec::ParallelConfig& par, bool sliding,
                                          bool linear) {
  // Linear-attention layers (Qwen3-Next) hold no per-token KV: only the attention layers, at the model's interval.
  // Gemma-4's KV-shared layers (E2B/E4B) have no cache spec of their own in vLLM (kv_sharing_target_layer_name): they
  // are the model's last (E2B's 20 of 35: over pp 2 its first stage, layers 0-17, holds all 15 caches), the owners
  // spread through the rest. Sliding layers are spread through the owners (Gemma: every other, or 5 of 6).
  const int owners = m.kv_cache_layers();
  const int region = m.num_layers - m.kv_shared_layers;  // where the owners are
  const bool periodic = m.has_linear_attention() && m.kv_shared_layers == 0;
  const int sliding_total = sliding && m.has_sliding_window() ? std::max(0, m.kv_sliding_layers()) : 0;
  // Running totals over layers [0, x).
  auto owners_before = [&](int x) -> int {
    if (periodic) return m.attention_layers_in(0, x);
    if (region <= 0) return 0;
    return static_cast<int>(static_cast<std::int64_t>(owners) * std::min(x, region) / region);
  };
  auto sliding_before = [&](int x) -> int {
    return owners > 0 ? static_cast<int>(static_cast<std::int64_t>(sliding_total) * owners_before(x) / owners) : 0;
  };
  auto linear_before = [&](int x) -> int { return linear ? m.linear_attention_layers_in(0, x) : 0; };
  std::vector<KvTypeCounts> out;
  int begin = 0;
  for (const int n : spec::pp_stage_layers(m.num_layers, par)) {
    const int end = begin + n;
    const int own = owners_before(end) - owners_before(begin);
    const int slide = sliding_before(end) - sliding_before(begin);
    out.push_back(KvTypeCounts{own - slide, slide, linear_before(end) - linear_before(begin)});
    begin = end;
  }
  return out;
}

KvLayout kv_layout(const spec::ModelSpec& m, const spec::ParallelConfig& par, double kv_bytes_per_element,
                   bool hybrid_manager, double group_ratio, bool whole_model, bool mla_entries_aligned) {
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
  // Each stage's layers of each type (kv_stage_counts); the hybrid manager also groups the linear layers, whose state
  // pages share the pool (so their groups' layer counts can set a stage's tensors).
  const std::vector<KvTypeCounts> stages = kv_stage_counts(m, par, hybrid_manager, hybrid_manager);
  k.layers = 0;
  for (const auto& s : stages) k.layers = std::max(k.layers, s[kv_full] + s[kv_sliding]);
  // vLLM's groups (hybrid_kv_groups): decided on the whole model and projected onto the stages from 0.11.0
  // (vllm#23974), on each stage's own layers before.
  const KvGroups g = hybrid_kv_groups(stages, group_ratio, whole_model);
  k.full_groups = g.groups[kv_full];
  k.sliding_groups = g.groups[kv_sliding];
  k.group_size = k.groups() > 0 ? g.tensors : 0;
  k.window = k.sliding_groups > 0 ? m.sliding_window : 0;
  const bool both = k.full_groups > 0 && k.sliding_groups > 0;
  k.full_block_scale = both ? full_scale : 1;
  k.sliding_block_scale = both ? sliding_scale : 1;
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
