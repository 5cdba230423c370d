#pragma once
// How vLLM lays out one GPU's KV cache (docs/cost-model.md, "KV cache layout"). Layers of one attention type share a
// block table; a model with full and sliding-window layers (Gemma-2/3) has its layers split into KV-cache groups of
// equal size, the last group of a type padded (vllm/v1/core/kv_cache_utils.py, _get_kv_cache_groups_uniform_page_size);
// all groups draw blocks of the same size from one pool, and a sliding group frees the blocks that leave its window
// (SlidingWindowManager). MLA keeps one latent per token that every tensor-parallel rank holds whole.
#include <array>
#include <cstdint>
#include <vector>

#include "llmsim/spec/deployment.hpp"
#include "llmsim/spec/model_spec.hpp"

namespace llmsim::memory {

struct KvLayout {
  double bytes_per_token_layer = 0;  ///< K+V (MLA: the latent) of one token in one layer on this GPU
  int layers = 0;                    ///< attention layers (with a cache of their own) on the most loaded stage
  int window = 0;                    ///< sliding window of the sliding groups (0 = none)
  int group_size = 0;                ///< tensors of the most loaded stage: the most layers one KV-cache group has on
                                     ///< it (padding included; the group size itself when pp = 1: hybrid_kv_groups)
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
  /// Pool blocks one running sequence holds in vLLM V1 when `computed` tokens are in its cache and `new_tokens` more
  /// are scheduled (a prefill chunk, or a decode step's 1): every full group a block per block_size tokens of
  /// computed + new, every sliding group only the blocks from the one holding token computed − window + 1 on, as
  /// KVCacheManager.allocate_slots first calls remove_skipped_blocks(request, num_computed_tokens) and then allocates
  /// for the new tokens (vllm/v1/core/single_type_kv_cache_manager.py, SlidingWindowManager: last_useful_token =
  /// num_computed_tokens − sliding_window + 1, blocks [0, last_useful_token // block_size) freed). A decoder far past
  /// the window holds cdiv(window, block) or one more block per sliding group, whatever its length. Never more than
  /// blocks_for(computed + new_tokens, block_size, new_tokens); the same as it inside the window.
  std::int64_t blocks_held(std::int64_t computed, std::int64_t new_tokens, int block_size) const noexcept;
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

/// Layer types of vLLM V1's hybrid KV-cache manager: full attention, sliding-window attention, linear-attention state.
enum KvType { kv_full = 0, kv_sliding = 1, kv_linear = 2 };
using KvTypeCounts = std::array<int, 3>;  ///< layers of each KvType

/// vLLM V1's KV-cache groups of a hybrid model and the tensors one pipeline stage allocates for them.
struct KvGroups {
  KvTypeCounts groups{};  ///< groups of each type; every request holds a block table in each
  int tensors = 0;        ///< on the most loaded stage: the most layers one group has there (a pool block is a page in
                          ///< each tensor, padding included)
  int total() const noexcept { return groups[0] + groups[1] + groups[2]; }
};

/// The groups of the layer types held per pipeline stage (`stages[s][type]`, stages in order). `whole_model` (vLLM
/// from 0.11.0, spec::kv_groups_whole_model): the group size is decided on the whole model's counts
/// (hybrid_kv_group_size), each type's layers are dealt round-robin into its cdiv(count, size) groups
/// (`layers[i::num_groups]`), and a stage's tensors are the most layers one group has there: a stage holding c layers
/// of a type in n groups gives that type cdiv(c, n) (its layers of the type are consecutive in the type's order).
/// Otherwise each stage groups its own layers (get_kv_cache_config per worker) and the stage with most pages per
/// token is returned. One type present: one group of all its layers.
KvGroups hybrid_kv_groups(const std::vector<KvTypeCounts>& stages, double max_ratio, bool whole_model);

/// The layout of the most loaded pipeline stage. `hybrid_manager` false (vLLM V0, or
/// --disable-hybrid-kv-cache-manager) gives every layer full-context KV, as those engines allocate it; true also
/// counts linear-attention layers into the groups (their state is blocks of the same pool: linear_state.hpp).
/// `group_ratio`: the release's grouping threshold (spec::hybrid_kv_group_ratio; 1.5 = today's vLLM);
/// `whole_model`: groups decided on the whole model (spec::kv_groups_whole_model; true = today's vLLM).
/// `mla_entries_aligned`: vLLM V0's CacheEngine of 0.7.2-0.7.x pads an MLA entry to a multiple of 256 bytes in the
/// 16-bit model dtype (`align_to_256bytes`, vllm#12676: 576 -> 640 elements) and counts blocks at that size
/// (`get_cache_block_size`), each element in the cache dtype (spec::mla_kv_entries_aligned).
KvLayout kv_layout(const spec::ModelSpec& model, const spec::ParallelConfig& parallel, double kv_bytes_per_element,
                   bool hybrid_manager, double group_ratio = 1.5, bool whole_model = true,
                   bool mla_entries_aligned = false);

/// Layers of each KvType on each pipeline stage (vLLM's split, VLLM_PP_LAYER_PARTITION included): the layers that own
/// a KV cache (Gemma-4's KV-shared ones do not), split into sliding and full by the model's share of each, and the
/// linear-attention layers by the model's interval (ModelSpec::linear_attention_layers_in). Counts are differences of
/// running totals, so they add up to the model's. `sliding` false counts sliding layers as full; `linear` false leaves
/// the linear ones out.
std::vector<KvTypeCounts> kv_stage_counts(const spec::ModelSpec& model, const spec::ParallelConfig& parallel,
                                          bool sliding, bool linear);

}  // namespace llmsim::memory

namespace llmsim::memory {

/// KV bytes of a sequence's first `tokens` tokens over the whole model (every layer and KV head; MLA: the latent)
/// at `bytes_per_element`: what moving its KV cache to another replica moves (disaggregated prefill/decode).
/// Sliding-window layers hold only their last `sliding_window` tokens. 0 for tokens <= 0.
double kv_bytes_of_context(const spec::ModelSpec& model, double bytes_per_element, std::int64_t tokens);

}  // namespace llmsim::memory
