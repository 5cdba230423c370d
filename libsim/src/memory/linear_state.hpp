#pragma once
// How vLLM V1's hybrid KV-cache manager holds a linear-attention layer's state (Qwen3-Next, Qwen3.5's gated
// DeltaNet): as blocks of the one KV pool (MambaSpec, mamba_cache_mode "none": one block per request and mamba
// group), allocated when a request is scheduled and freed with it — nothing is reserved for max_num_seqs up front.
// Private to the memory layer; docs/cost-model.md "Linear attention".
#include "llmsim/spec/deployment.hpp"
#include "llmsim/spec/model_spec.hpp"

namespace llmsim::memory::detail {

struct LinearStatePages {
  int group_size = 0;       ///< layers per KV-cache group (kv_cache_utils._get_kv_cache_groups_uniform_page_size)
  int mamba_groups = 0;     ///< groups of linear-attention layers: a request holds one block in each
  double page_bytes = 0;    ///< one layer's page: the state padded to the attention page at vLLM's raised block size
  /// vLLM's pool block (a page in each of group_size tensors): what "Mamba cache blocks" counts.
  double vllm_block_bytes() const noexcept { return page_bytes * group_size; }
  /// What one running request's state takes from the pool.
  double bytes_per_seq() const noexcept { return vllm_block_bytes() * mamba_groups; }
};

/// The state pages one request holds on the most loaded pipeline stage, from each stage's own linear and attention
/// layers (its layers by the split, VLLM_PP_LAYER_PARTITION included; which of them are linear by the model's
/// interval), not the model's divided by pp. `whole_model` (vLLM from 0.11.0, spec::kv_groups_whole_model): the
/// groups are the whole model's, projected onto the stages (memory::hybrid_kv_groups); else each stage's own.
/// `state_bytes_per_layer`: one layer's state on one GPU; `attn_bytes_per_token_layer`: one attention layer's K+V of
/// one token on one GPU; `group_ratio`: the release's grouping threshold (spec::hybrid_kv_group_ratio). All zero
/// without linear layers.
LinearStatePages linear_state_pages(const spec::ModelSpec& model, const spec::ParallelConfig& parallel,
                                    double state_bytes_per_layer, double attn_bytes_per_token_layer,
                                    double group_ratio = 1.5, bool whole_model = true);
/// vLLM V1's attention block size for a hybrid model served with prefix caching, in tokens: a prefix-cache hit is
/// whole blocks of it (vllm#40696: "only fully completed blocks are cached", 528 tokens for Qwen3.5-4B).
/// HybridAttentionMambaModelConfig.verify_and_update_config (vllm/model_executor/models/config.py; later
/// Platform._align_hybrid_block_size): the tokens of attention K/V one layer's state fills,
/// cdiv(mamba_page, attn_page_1_token), rounded up to a multiple of the Mamba-2 SSD kernel's chunk (lcm(chunk, 16),
/// `mamba_chunk` > 0: Mamba-2's "all" mode, vllm#25752) or of the kernel alignment, 16 (`mamba_chunk` 0: gated
/// DeltaNet's "align" mode, vllm#30877). `state_bytes_per_layer`: one layer's state on one GPU;
/// `attn_bytes_per_token_layer`: one attention layer's K+V of one token on one GPU. 0 when either is 0.
int hybrid_prefix_block_tokens(double state_bytes_per_layer, double attn_bytes_per_token_layer, int mamba_chunk);

/// Linear-attention layers on the stage that holds most of them (what an up-front state reservation per sequence
/// is sized by: vLLM V0's MambaCacheManager, SGLang's pool).
int largest_stage_linear_layers(const spec::ModelSpec& model, const spec::ParallelConfig& parallel);

}  // namespace llmsim::memory::detail
