#pragma once
// Architecture of a decoder-only transformer, read from a Hugging Face config.json.
#include <cstdint>
#include <string>

#include "llmsim/core/json_view.hpp"

namespace llmsim::spec {

struct ModelSpec {
  std::string id;                  ///< catalogue id or file name
  std::string architecture;        ///< HF "architectures"[0] or model_type, informational
  int hidden_size = 0;
  int num_layers = 0;              ///< num_hidden_layers
  int num_heads = 0;               ///< num_attention_heads
  int num_kv_heads = 0;            ///< num_key_value_heads (defaults to num_heads)
  int head_dim = 0;                ///< head_dim (defaults to hidden_size / num_heads)
  int intermediate_size = 0;       ///< per expert for MoE
  int vocab_size = 0;
  int max_position_embeddings = 0;
  bool tie_word_embeddings = false;
  bool attention_bias = false;     ///< QKV bias (Qwen2)
  int num_experts = 0;             ///< 0 = dense; num_local_experts for MoE
  int experts_per_token = 0;       ///< num_experts_per_tok

  bool is_moe() const noexcept { return num_experts > 1; }
  // Parameter counts (elements). Linear = q,k,v,o + MLP per layer; embeddings and LM head separate.
  std::int64_t attention_params_per_layer() const;   ///< q,k,v,o weights (+ biases)
  std::int64_t mlp_params_per_layer() const;         ///< all experts' gate/up/down (+ router for MoE)
  std::int64_t active_mlp_params_per_layer() const;  ///< experts_per_token experts (+ router)
  std::int64_t norm_params_per_layer() const;
  std::int64_t embedding_params() const;             ///< vocab × hidden
  std::int64_t lm_head_params() const;               ///< 0 when tied
  std::int64_t param_count() const;                  ///< everything, as published
  std::int64_t active_param_count() const;           ///< per token (MoE: routed experts only)
  /// KV bytes per token for the whole model: 2 × layers × kv_heads × head_dim × bytes_per_element.
  double kv_bytes_per_token(double bytes_per_element) const;

  /// Collects every problem into one ConfigError at `path`.
  void validate(const std::string& path = "model") const;
};

/// Reads a Hugging Face config.json; missing or malformed fields -> ConfigError naming them.
ModelSpec model_spec_from_hf_config(const JsonView& v, std::string id);
Json to_json(const ModelSpec& m);  ///< HF config.json form

}  // namespace llmsim::spec
