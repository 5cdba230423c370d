#pragma once
// Architecture of a decoder-only transformer, read from a Hugging Face config.json. Families llmsim sizes
// correctly are listed in hf_config.cpp (docs/cost-model.md, "Model families"); any other architecture, or a key
// of a known family that could change the size and is not understood, is a ConfigError naming the key.
#include <cstdint>
#include <string>
#include <vector>

#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::spec {

struct ModelSpec {
  std::string id;                  ///< catalogue id or file name
  std::string architecture;        ///< HF "architectures"[0] or model_type, informational
  std::string model_type;          ///< HF model_type ("" for a config that names none: read as a Llama-style decoder)
  int hidden_size = 0;
  int num_layers = 0;              ///< num_hidden_layers (decoder layers that run; MTP layers not included)
  int num_heads = 0;               ///< num_attention_heads
  int num_kv_heads = 0;            ///< num_key_value_heads (defaults to num_heads; MLA: the heads of its prefill MHA)
  int head_dim = 0;                ///< query/key head dimension (defaults to hidden_size / num_heads; MLA: nope + rope)
  int intermediate_size = 0;       ///< dense MLP width (MoE models: of their dense layers; Mixtral: per expert)
  int vocab_size = 0;
  int max_position_embeddings = 0;
  bool tie_word_embeddings = false;
  bool attention_bias = false;     ///< QKV bias (Qwen2)
  bool qk_norm = false;            ///< per-head RMSNorm of q and k (Qwen3, Gemma-3): 2 × head_dim weights per layer
  int norms_per_layer = 2;         ///< RMSNorms of hidden_size per layer (Gemma-2/3: 4, pre/post attention and MLP)
  std::int64_t bias_params_per_layer = 0;  ///< biases beyond q/k/v (Llama attention_bias on o_proj, mlp_bias;
                                           ///< gpt-oss: o_proj bias and one attention-sink logit per head)
  bool attention_output_gate = false;  ///< q_proj also emits a sigmoid gate per head (Qwen3-Next): q width doubled

  // Mixture of experts.
  int num_experts = 0;             ///< routed experts (num_local_experts / num_experts / n_routed_experts); 0 = dense
  int experts_per_token = 0;       ///< num_experts_per_tok
  int moe_intermediate_size = 0;   ///< width of one routed expert (0 = intermediate_size, as Mixtral)
  int shared_expert_intermediate_size = 0;  ///< all shared experts of a MoE layer together (DeepSeek, Qwen2-MoE)
  bool shared_expert_gate = false; ///< Qwen2-MoE's sigmoid gate of the shared expert (hidden → 1)
  int dense_layers = 0;            ///< layers of a MoE model with a dense MLP of intermediate_size instead of experts
  std::int64_t moe_bias_params = 0;  ///< per MoE layer, 16-bit: expert and router biases (gpt-oss)

  // Multi-head latent attention (DeepSeek-V2/V3): the KV cache holds kv_lora_rank + qk_rope_head_dim per token.
  int q_lora_rank = 0;             ///< 0 = q projected directly from the hidden state
  int kv_lora_rank = 0;            ///< > 0 marks an MLA model
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;              ///< MLA value head dimension (other models: head_dim)

  // Sliding-window attention (Mistral v0.1: every layer; Gemma-2: every other layer; Gemma-3: 5 of 6).
  int sliding_window = 0;          ///< tokens a sliding layer attends to; 0 = none
  int sliding_layers = 0;          ///< layers that use it (the others attend to the whole context)
  // Gemma-4: the full-attention layers have their own shape (global_head_dim, num_global_key_value_heads) and, with
  // attention_k_eq_v, no v_proj in the checkpoint: vLLM loads k_proj's weights into both the K and V slots of its
  // fused qkv_proj (gemma4.py, Gemma4Attention) and caches K and V as any layer does.
  int full_head_dim = 0;           ///< head_dim of the full-attention layers; 0 = head_dim
  int full_kv_heads = 0;           ///< KV heads of the full-attention layers; 0 = num_kv_heads
  bool full_k_eq_v = false;        ///< full-attention layers' checkpoint has no v_proj (vLLM still holds a V slot)
  // Gemma-4 E2B/E4B (vllm/model_executor/models/gemma4.py, Gemma4Model and Gemma4DecoderLayer): per-layer input
  // embeddings (PLE): a vocab_size_per_layer_input × (layers × per_layer_input_size) table that every token looks up
  // once, a per_layer_model_projection (hidden → layers × per_layer_input_size) and, per layer, a gate (hidden → size),
  // a projection back (size → hidden) and an RMSNorm; all on the GPU. KV sharing: the last num_kv_shared_layers
  // layers attend over the cache of the last earlier layer of their type and keep none of their own; with
  // use_double_wide_mlp their MLP is 2 × intermediate_size wide.
  int per_layer_input_size = 0;    ///< hidden_size_per_layer_input; 0 = no PLE
  int per_layer_input_vocab = 0;   ///< vocab_size_per_layer_input
  int kv_shared_layers = 0;        ///< num_kv_shared_layers: attention layers without a KV cache of their own
  int kv_shared_full_layers = 0;   ///< of them, full-attention layers (the rest slide)
  int double_wide_mlp_layers = 0;  ///< layers whose dense MLP is 2 × intermediate_size

  // DeepSeek-V3.2's sparse-attention indexer (DSA): per layer wq_b (q_lora_rank -> index heads × dim), wk, k_norm
  // and weights_proj; its own FP8 key cache of index_head_dim + a 4-byte scale per 128 per token and layer.
  int index_n_heads = 0;
  int index_head_dim = 0;          ///< 0 = no indexer
  int index_topk = 0;              ///< tokens each query attends to after the indexer's selection

  // Hybrid linear attention (Qwen3-Next's gated DeltaNet): these layers keep a fixed-size state per sequence (a
  // causal-conv window and a heads × key_dim × value_dim recurrent matrix) instead of K/V per token.
  int linear_attention_layers = 0; ///< of num_layers; the rest are attention layers (full or sliding)
  int linear_num_key_heads = 0;
  int linear_num_value_heads = 0;
  int linear_key_head_dim = 0;
  int linear_value_head_dim = 0;
  int linear_conv_kernel_dim = 0;
  /// Bytes per element of the recurrent (temporal) state; 0 = the model dtype's, as the conv window always is. Qwen3.5
  /// writes mamba_ssm_dtype "float32" and vLLM keeps that state in FP32 (models/config.py,
  /// Qwen3_5ForConditionalGenerationConfig: mamba_ssm_cache_dtype "auto" takes the config's mamba_ssm_dtype).
  double linear_ssm_state_bytes = 0;
  // Mamba-2 mixers (Nemotron-H, vLLM's MambaMixer2) as linear-attention layers, the fields mapped so that the state
  // formulas above hold unchanged (mamba_utils' mamba2_state_shape: conv (kernel − 1) × (heads × head_dim + 2 × groups
  // × state), temporal heads × head_dim × state): linear_num_key_heads = n_groups, linear_key_head_dim =
  // ssm_state_size, linear_num_value_heads = mamba_num_heads, linear_value_head_dim = mamba_head_dim,
  // linear_conv_kernel_dim = conv_kernel.
  bool linear_mamba2 = false;
  bool linear_conv_bias = false;   ///< conv1d has a bias (Mamba-2: use_conv_bias)
  int linear_chunk_size = 0;       ///< tokens per chunk of the chunked prefill scan (Mamba-2: chunk_size); 0 = 64

  // Nemotron-H (hybrid_override_pattern): a layer is ONE block, a mixer (Mamba-2 'M', attention '*') or an MLP ('-'
  // dense, 'E' MoE), never both. 0 for the decoder layers of every other family (a mixer and an MLP each).
  int mixer_free_layers = 0;       ///< layers that are an MLP or a MoE only
  int mlp_free_layers = 0;         ///< layers that are a mixer only
  bool rotary = true;              ///< attention applies rotary embeddings (Nemotron-H's does not: no positions)
  int mlp_matrices = 3;            ///< weight matrices of an MLP or expert: 3 gated (gate, up, down), 2 plain (up, down:
                                   ///< Nemotron-H's relu²)

  int mtp_layers = 0;              ///< num_nextn_predict_layers: multi-token-prediction modules, not loaded by vLLM
                                   ///< unless speculative decoding runs them (not counted in the sizes below)
  std::int64_t mtp_params = 0;     ///< their parameters as the checkpoint stores them (DeepSeek-V3: ~14 B)
  std::int64_t vision_params = 0;  ///< vision tower + projector of a multimodal checkpoint (loaded, 16-bit; text
                                   ///< requests never run it)
  std::int64_t audio_params = 0;   ///< audio tower + projector (Gemma-4 E2B/E4B; loaded, 16-bit, never run for text)
  CheckpointQuantization quantization;  ///< from quantization_config; format "" = 16-bit checkpoint
  std::vector<std::string> notes;  ///< what llmsim assumed while reading the config (shown with the model)
  Json source;                     ///< the config it was read from (null for a spec built in code)

  bool is_moe() const noexcept { return num_experts > 1; }
  bool is_mla() const noexcept { return kv_lora_rank > 0; }
  bool has_sliding_window() const noexcept { return sliding_window > 0 && sliding_layers > 0; }
  int expert_intermediate_size() const noexcept { return moe_intermediate_size > 0 ? moe_intermediate_size : intermediate_size; }
  int moe_layers() const noexcept { return is_moe() ? num_layers - dense_layers - mlp_free_layers : 0; }
  /// Layers with a dense MLP: MoE models' dense_layers; dense models' every layer but Nemotron-H's mixer-only ones.
  int dense_mlp_layers() const noexcept { return is_moe() ? dense_layers : num_layers - mlp_free_layers; }
  bool has_linear_attention() const noexcept { return linear_attention_layers > 0; }
  /// Layers with a per-token K/V (or MLA latent) cache: every layer but the linear-attention (and Nemotron-H's
  /// MLP-only) ones.
  int attention_layers() const noexcept { return num_layers - linear_attention_layers - mixer_free_layers; }
  /// Input projection width of one linear-attention layer (hidden -> this): gated DeltaNet's q, k, v, z + b, a;
  /// Mamba-2's x, z, B, C, dt (2 × heads × head_dim + 2 × groups × state + heads).
  std::int64_t linear_in_proj_width() const;
  /// Linear-attention layers among layers [begin, end): Qwen3-Next / Qwen3.5 place an attention layer every
  /// full_attention_interval-th layer (layer i is attention when (i + 1) % interval == 0, HF's
  /// Qwen3NextConfig.layer_types), the interval being num_layers / attention layers; when that is not whole, the
  /// range's share (floor) of the linear layers. What a pipeline stage holds (memory::kv_layout, linear_state_pages).
  int linear_attention_layers_in(int begin, int end) const noexcept;
  /// Layers with a per-token cache among layers [begin, end): the range less its linear-attention layers and its share
  /// of Nemotron-H's MLP-only ones (over the whole model, attention_layers()).
  int attention_layers_in(int begin, int end) const noexcept;
  int full_attention_layers() const noexcept { return attention_layers() - (has_sliding_window() ? sliding_layers : 0); }
  /// Full-attention and sliding layers that keep a KV cache of their own (all of them but Gemma-4's KV-shared ones).
  int kv_full_layers() const noexcept { return full_attention_layers() - kv_shared_full_layers; }
  int kv_sliding_layers() const noexcept {
    return (has_sliding_window() ? sliding_layers : 0) - (kv_shared_layers - kv_shared_full_layers);
  }
  int kv_cache_layers() const noexcept { return attention_layers() - kv_shared_layers; }
  int value_head_dim() const noexcept { return is_mla() ? v_head_dim : head_dim; }
  bool has_full_layer_shape() const noexcept { return full_head_dim > 0 || full_kv_heads > 0 || full_k_eq_v; }
  int full_layer_head_dim() const noexcept { return full_head_dim > 0 ? full_head_dim : head_dim; }
  int full_layer_kv_heads() const noexcept { return full_kv_heads > 0 ? full_kv_heads : num_kv_heads; }
  /// KV elements per token of one full-attention layer (differs from kv_elements_per_token_per_layer() only for
  /// has_full_layer_shape() models).
  std::int64_t full_kv_elements_per_token_per_layer() const;
  /// Elements one token stores in the KV cache of one layer: 2 × kv_heads × head_dim, or MLA's one latent
  /// vector kv_lora_rank + qk_rope_head_dim (vLLM's MLA cache has no separate K and V).
  std::int64_t kv_elements_per_token_per_layer() const;
  /// Bytes the sparse-attention indexer caches per token and layer (FP8 keys + scales, whatever the KV dtype): 0
  /// without an indexer.
  double indexer_kv_bytes_per_token_per_layer() const noexcept {
    return index_head_dim > 0 ? index_head_dim + 4.0 * ((index_head_dim + 127) / 128) : 0.0;
  }
  /// Elements of the per-sequence state of one linear-attention layer: the conv window ((kernel − 1) × (2 key +
  /// value widths)) and the recurrent state (value heads × key_dim × value_dim). 0 without linear attention.
  std::int64_t linear_state_elements_per_layer() const;
  /// Of them, the causal-conv window's ((kernel − 1) × conv channels), kept in the model dtype.
  std::int64_t linear_conv_state_elements_per_layer() const;
  /// Bytes of one sequence's state in one linear-attention layer: the conv window at `bytes_per_element` (the model
  /// dtype), the recurrent state at linear_ssm_state_bytes when set (Qwen3.5: FP32), else at `bytes_per_element`.
  double linear_state_bytes_per_layer(double bytes_per_element) const;
  /// Parameters of one linear-attention layer's mixer: gated DeltaNet's in_proj_qkvz, in_proj_ba, conv1d, dt_bias,
  /// A_log, the gated norm and out_proj; Mamba-2's in_proj, conv1d (+ bias), dt_bias, A, D, the gated norm, out_proj.
  std::int64_t linear_attention_params_per_layer() const;

  // Parameter counts (elements).
  std::int64_t attention_params_per_layer() const;   ///< q,k,v,o (MLA: q_a/q_b, kv_a, kv_b, o and their norms) + biases, qk norms
  /// What a full-attention layer's attention has beyond attention_params_per_layer() (Gemma-4: wider heads, fewer KV
  /// heads, no v_proj with k_eq_v; may be negative). 0 unless has_full_layer_shape().
  std::int64_t full_attention_extra_params() const;
  /// Parameters vLLM holds beyond the checkpoint's: the V slot k_eq_v layers fill with K's weights (all layers).
  std::int64_t duplicated_v_params() const;
  std::int64_t dense_mlp_params() const;             ///< one dense MLP of intermediate_size (mlp_matrices of them)
  std::int64_t moe_mlp_params() const;               ///< one MoE layer: routed + shared experts, router, shared gate
  std::int64_t active_moe_mlp_params() const;        ///< what one token runs of it: experts_per_token experts + shared + router
  std::int64_t mlp_params_per_layer() const;         ///< MoE models: a MoE layer's; dense models: dense_mlp_params()
  std::int64_t active_mlp_params_per_layer() const;  ///< per token, of that layer
  std::int64_t norm_params_per_layer() const;         ///< RMSNorms + bias_params_per_layer (kept 16-bit)
  std::int64_t embedding_params() const;             ///< vocab × hidden
  /// Gemma-4's per-layer embedding table (per_layer_input_vocab × layers × per_layer_input_size): looked up, never
  /// multiplied; 0 without PLE.
  std::int64_t per_layer_embedding_params() const;
  /// The PLE linears and norms every token runs: per_layer_model_projection, its norm, and per layer the gate, the
  /// projection back and post_per_layer_input_norm. 0 without PLE.
  std::int64_t per_layer_input_params() const;
  std::int64_t lm_head_params() const;               ///< 0 when tied
  std::int64_t param_count() const;                  ///< everything vLLM loads, as published (no MTP layers)
  /// Per text token (MoE: routed experts only; no vision or audio tower, no PLE table: Gemma-4's "effective" count)
  std::int64_t active_param_count() const;
  /// KV bytes per token for the whole model at full context: attention layers × kv_elements_per_token_per_layer ×
  /// bytes (2 × layers × kv_heads × head_dim × bytes for GQA/MHA), + the indexer's cache. Sliding layers count here
  /// too; what they actually keep is memory::KvLayout's business. Linear-attention layers hold no per-token KV.
  double kv_bytes_per_token(double bytes_per_element) const;
  /// Bytes of one sequence's linear-attention state over the whole model (0 without linear attention).
  double linear_state_bytes_per_sequence(double bytes_per_element) const;

  /// Why tensor parallel `tp` cannot split this model the way vLLM shards it (heads, KV heads, MLP and expert
  /// widths), added to `p` at `path`. Nothing added when it can.
  void check_tensor_parallel(int tp, Problems& p, const std::string& path = "hardware.tp") const;

  /// Adds a problem at `path` when the sizes are so large that a parameter count could overflow int64 (an upper
  /// bound in long double: layers × 16 × widest² × (experts + 2) + embeddings); no real model is within 10^3 of it.
  /// Call before deriving counts from fields read from a file (validate() calls it).
  void check_magnitude(Problems& p, const std::string& path = "model") const;

  /// Collects every problem into one ConfigError at `path`.
  void validate(const std::string& path = "model") const;
};

/// Reads a Hugging Face config.json; missing or malformed fields, an architecture llmsim cannot size and keys it
/// does not understand -> ConfigError naming them (paths under `v.path()`).
ModelSpec model_spec_from_hf_config(const JsonView& v, std::string id);
/// HF config.json form: the config it was read from, else one synthesized from the fields (Llama-style).
Json to_json(const ModelSpec& m);

}  // namespace llmsim::spec
