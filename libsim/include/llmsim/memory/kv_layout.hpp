#pragma once
// How vLLM lays out one GPU's KV cache (docs/cost-model.md, "KV cache layout"). Layers of one attention type share a
// block table; a model with full and sliding-window layers (Gemma-2/3) has its layers split into KV-cache groups of
// equal size, the last group of a type padded (vllm/v1/core/kv_cache_utils.py, _get_kv_cache_groups_uniform_page_size);
// all groups draw blocks of the same size from one pool, and a sliding group frees the blocks that leave its window
// (SlidingWindowManager). MLA keeps one latent per token that every tensor-parallel rank holds whole.
#include <cstdint>

#include "llmsim/spec/deployment.hpp"
#include "llmsim/spec/model_spec.hpp"

namespace llmsim::memory {

struct KvLayout {
  double bytes_per_token_layer = 0;  ///< K+V (MLA: the latent) of one token in one layer on this GPU
  int layers = 0;                    ///< attention layers on this GPU's pipeline stage
  int window = 0;                    ///< sliding window of the sliding groups (0 = none)
  int group_size = 0;                ///< layers per KV-cache group (padding included)
  int full_groups = 0;               ///< groups of full-attention layers
  int sliding_groups = 0;            ///< groups of sliding-window layers
  // Gemma-4's full layers cache fewer bytes per token than its sliding ones (num_global_key_value_heads ×
  // global_head_dim vs num_key_value_heads × head_dim): vLLM gives every group the same page size and scales the
  // block_size of the smaller type up by the ratio (vllm/v1/core/kv_cache_utils.py, unify_kv_cache_spec_page_size),
  // so a block of that type holds ratio × block_size tokens. bytes_per_token_layer is the larger type's.
  int full_block_scale = 1;          ///< tokens per full-attention block, in block_size units
  int sliding_block_scale = 1;       ///< tokens per sliding-window block, in block_size units

  int groups() const noexcept { return full_groups + sliding_groups; }
  /// Groups a token costs a block-slot in when every group holds it (a scaled group: 1 / its scale).
  double groups_per_token() const noexcept {
    return static_cast<double>(full_groups) / full_block_scale +
           static_cast<double>(sliding_groups) / sliding_block_scale;
  }
  /// Bytes of one pool block: a page of `block_size` tokens for each layer of a group.
  double pool_block_bytes(int block_size) const noexcept { return bytes_per_token_layer * group_size * block_size; }
  /// Bytes a token costs when every group holds it (all tokens inside the window): vLLM's "GPU KV cache size: N
  /// tokens" counts the pool this way (num_blocks // groups × block_size).
  double bytes_per_token_all_groups() const noexcept { return bytes_per_token_layer * group_size * groups_per_token(); }
  /// Pool blocks one sequence of `context` tokens holds: a block per block_size tokens in every full group, and in
  /// every sliding group only those still inside the window, window − 1 + `chunk` tokens plus one (vLLM's
  /// SlidingWindowSpec.max_memory_usage_bytes with chunk = max_num_batched_tokens).
  std::int64_t blocks_for(std::int64_t context, int block_size, std::int64_t chunk) const noexcept;
  /// The longest context one sequence can reach in `pool_blocks` blocks (0 when not even one token fits; capped at
  /// `limit` when sliding groups alone make length free).
  std::int64_t longest_context(std::int64_t pool_blocks, int block_size, std::int64_t chunk,
                               std::int64_t limit) const noexcept;
};

/// vLLM V1's layers per KV-cache group for two attention types of `a` and `b` layers
/// (`_get_kv_cache_groups_uniform_page_size`): the smaller count, or the larger when it is less than `max_ratio` times
/// the smaller (0: never; the ratio by release is spec::hybrid_kv_group_ratio). The one rule for sliding-window
/// groups (kv_layout) and linear-attention state groups (linear_state_pages). 0 when either count is < 1.
int hybrid_kv_group_size(int a, int b, double max_ratio) noexcept;

/// The layout of the most loaded pipeline stage. `hybrid_manager` false (vLLM V0, or
/// --disable-hybrid-kv-cache-manager) gives every layer full-context KV, as those engines allocate it.
/// `group_ratio`: the release's grouping threshold (spec::hybrid_kv_group_ratio; 1.5 = today's vLLM).
/// `mla_entries_aligned`: vLLM V0's CacheEngine of 0.7.2-0.7.x pads an MLA entry to a multiple of 256 bytes in the
/// 16-bit model dtype (`align_to_256bytes`, vllm#12676: 576 -> 640 elements) and counts blocks at that size
/// (`get_cache_block_size`), each element in the cache dtype (spec::mla_kv_entries_aligned).
KvLayout kv_layout(const spec::ModelSpec& model, const spec::ParallelConfig& parallel, double kv_bytes_per_element,
                   bool hybrid_manager, double group_ratio = 1.5, bool mla_entries_aligned = false);

}  // namespace llmsim::memory

namespace llmsim::memory {

/// KV bytes of a sequence's first `tokens` tokens over the whole model (every layer and KV head; MLA: the latent)
/// at `bytes_per_element`: what moving its KV cache to another replica moves (disaggregated prefill/decode).
/// Sliding-window layers hold only their last `sliding_window` tokens. 0 for tokens <= 0.
double kv_bytes_of_context(const spec::ModelSpec& model, double bytes_per_element, std::int64_t tokens);

}  // namespace llmsim::memory
