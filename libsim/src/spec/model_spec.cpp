// What a ModelSpec derives: parameter counts per layer type, KV elements per token, tensor-parallel rules.
// Reading config.json is hf_config.cpp; the formulas and their sources are in docs/cost-model.md ("Model families").
#include "llmsim/spec/model_spec.hpp"

#include <algorithm>

#include "llmsim/core/error.hpp"

namespace llmsim::spec {

namespace {
using i64 = std::int64_t;
}  // namespace

i64 ModelSpec::kv_elements_per_token_per_layer() const {
  // vLLM's MLA cache: one latent of kv_lora_rank + qk_rope_head_dim per token (MLAAttentionSpec, one "head").
  if (is_mla()) return i64{kv_lora_rank} + qk_rope_head_dim;
  return 2 * i64{num_kv_heads} * head_dim;
}

i64 ModelSpec::full_kv_elements_per_token_per_layer() const {
  if (!has_full_layer_shape()) return kv_elements_per_token_per_layer();
  return 2 * i64{full_layer_kv_heads()} * full_layer_head_dim();  // K and V cached even with k_eq_v (V is normed K)
}

i64 ModelSpec::linear_state_elements_per_layer() const {
  if (!has_linear_attention()) return 0;
  // vllm/model_executor/models/qwen3_next.py (Qwen3NextGatedDeltaNet) and mamba_utils' gated_delta_net_state_shape:
  // conv state (conv_kernel − 1) × conv_dim with conv_dim = 2 × key heads × key_dim + value heads × value_dim;
  // temporal state value heads × key_dim × value_dim.
  return linear_conv_state_elements_per_layer() + i64{linear_num_value_heads} * linear_key_head_dim * linear_value_head_dim;
}

i64 ModelSpec::linear_conv_state_elements_per_layer() const {
  if (!has_linear_attention()) return 0;
  const i64 key = i64{linear_num_key_heads} * linear_key_head_dim, value = i64{linear_num_value_heads} * linear_value_head_dim;
  return (i64{linear_conv_kernel_dim} - 1) * (2 * key + value);
}

double ModelSpec::linear_state_bytes_per_layer(double bytes_per_element) const {
  const auto conv = static_cast<double>(linear_conv_state_elements_per_layer());
  const auto ssm = static_cast<double>(linear_state_elements_per_layer()) - conv;
  return conv * bytes_per_element + ssm * (linear_ssm_state_bytes > 0 ? linear_ssm_state_bytes : bytes_per_element);
}

i64 ModelSpec::linear_in_proj_width() const {
  if (!has_linear_attention()) return 0;
  const i64 key = i64{linear_num_key_heads} * linear_key_head_dim, value = i64{linear_num_value_heads} * linear_value_head_dim;
  // MambaMixer2 (vllm/model_executor/layers/mamba/mamba_mixer2.py): in_proj emits the gate z and x (heads × head_dim
  // each), B and C (groups × state each) and dt (one per head). Qwen3NextGatedDeltaNet: in_proj_qkvz (2 key + 2 value
  // widths) and in_proj_ba (2 × value heads).
  if (linear_mamba2) return 2 * value + 2 * key + linear_num_value_heads;
  return 2 * key + 2 * value + 2 * i64{linear_num_value_heads};
}

i64 ModelSpec::linear_attention_params_per_layer() const {
  if (!has_linear_attention()) return 0;
  const i64 h = hidden_size, key = i64{linear_num_key_heads} * linear_key_head_dim;
  const i64 value = i64{linear_num_value_heads} * linear_value_head_dim, conv = 2 * key + value;
  if (linear_mamba2) {
    // MambaMixer2: in_proj, conv1d over x, B, C (conv_dim × kernel, + conv_dim bias with use_conv_bias), A, D and
    // dt_bias (one per head), the gated RMSNorm (heads × head_dim), out_proj (heads × head_dim -> hidden).
    return h * linear_in_proj_width() + conv * linear_conv_kernel_dim + (linear_conv_bias ? conv : 0) +
           3 * i64{linear_num_value_heads} + value + value * h;
  }
  // Qwen3NextGatedDeltaNet: in_proj_qkvz, in_proj_ba, conv1d (conv_dim × kernel, no bias), dt_bias and A_log (value
  // heads), RMSNormGated (value_dim), out_proj (value width -> hidden).
  return h * linear_in_proj_width() + conv * linear_conv_kernel_dim + 2 * i64{linear_num_value_heads} +
         linear_value_head_dim + value * h;
}

i64 ModelSpec::attention_params_per_layer() const {
  const i64 h = hidden_size;
  if (is_mla()) {
    // vllm/model_executor/models/deepseek_v2.py, DeepseekV2MLAAttention: q_a_proj (hidden → q_lora_rank) +
    // q_a_layernorm + q_b_proj (→ heads × (nope + rope)), or q_proj directly; kv_a_proj_with_mqa (hidden →
    // kv_lora_rank + rope) + kv_a_layernorm; kv_b_proj (kv_lora_rank → heads × (nope + v)); o_proj (heads × v → hidden).
    const i64 qk = i64{qk_nope_head_dim} + qk_rope_head_dim, heads = num_heads;
    const i64 q = q_lora_rank > 0 ? h * q_lora_rank + q_lora_rank + i64{q_lora_rank} * heads * qk : h * heads * qk;
    const i64 kv_a = h * (i64{kv_lora_rank} + qk_rope_head_dim) + kv_lora_rank;
    const i64 kv_b = i64{kv_lora_rank} * heads * (i64{qk_nope_head_dim} + v_head_dim);
    const i64 o = heads * i64{v_head_dim} * h;
    // DeepSeek-V3.2's Indexer: wq_b (q_lora_rank -> index heads × dim), wk (hidden -> dim), k_norm (LayerNorm with
    // bias), weights_proj (hidden -> index heads).
    const i64 indexer = index_head_dim > 0 ? i64{q_lora_rank} * index_n_heads * index_head_dim + h * index_head_dim +
                                                 2 * i64{index_head_dim} + h * index_n_heads
                                           : 0;
    return q + kv_a + kv_b + o + indexer;
  }
  const i64 q = i64{num_heads} * head_dim, kv = i64{num_kv_heads} * head_dim;
  i64 n = h * q + 2 * h * kv + q * h;   // q, k, v, o projections
  if (attention_output_gate) n += h * q;  // Qwen3-Next: q_proj emits q and its gate
  if (attention_bias) n += q + 2 * kv;  // Qwen2: biases on q, k, v only
  if (qk_norm) n += 2 * i64{head_dim};  // Qwen3 / Gemma-3 q_norm, k_norm (one weight per head dimension)
  return n;
}

i64 ModelSpec::full_attention_extra_params() const {
  if (!has_full_layer_shape() || is_mla()) return 0;
  // Gemma4DecoderLayer: a full layer's q/o use global_head_dim, k (and v unless k_eq_v) its KV heads × that dim.
  const i64 h = hidden_size, hd = full_layer_head_dim();
  const i64 q = i64{num_heads} * hd, kv = i64{full_layer_kv_heads()} * hd;
  i64 full = h * q + (full_k_eq_v ? 1 : 2) * h * kv + q * h;
  if (attention_bias) full += q + (full_k_eq_v ? 1 : 2) * kv;
  if (qk_norm) full += 2 * hd;
  return full - attention_params_per_layer();
}

i64 ModelSpec::duplicated_v_params() const {
  if (!full_k_eq_v) return 0;
  return i64{full_attention_layers()} * hidden_size * full_layer_kv_heads() * full_layer_head_dim();
}

// gate, up, down (Nemotron-H's relu² MLP: up, down)
i64 ModelSpec::dense_mlp_params() const { return i64{mlp_matrices} * hidden_size * intermediate_size; }

i64 ModelSpec::moe_mlp_params() const {
  const i64 h = hidden_size;
  const i64 routed = i64{num_experts} * mlp_matrices * h * expert_intermediate_size();
  const i64 shared = i64{mlp_matrices} * h * shared_expert_intermediate_size;
  return routed + shared + h * num_experts + (shared_expert_gate ? h : 0) +  // + router (+ Qwen2-MoE's shared gate)
         moe_bias_params;
}

i64 ModelSpec::active_moe_mlp_params() const {
  const i64 h = hidden_size;
  return i64{experts_per_token} * mlp_matrices * h * expert_intermediate_size() +
         i64{mlp_matrices} * h * shared_expert_intermediate_size +
         h * num_experts + (shared_expert_gate ? h : 0) + moe_bias_params;  // biases: all counted (negligible)
}

i64 ModelSpec::mlp_params_per_layer() const { return is_moe() ? moe_mlp_params() : dense_mlp_params(); }

i64 ModelSpec::active_mlp_params_per_layer() const { return is_moe() ? active_moe_mlp_params() : dense_mlp_params(); }

i64 ModelSpec::norm_params_per_layer() const { return i64{norms_per_layer} * hidden_size + bias_params_per_layer; }

i64 ModelSpec::embedding_params() const { return i64{vocab_size} * hidden_size; }

i64 ModelSpec::lm_head_params() const { return tie_word_embeddings ? 0 : i64{vocab_size} * hidden_size; }

i64 ModelSpec::per_layer_embedding_params() const {
  return i64{per_layer_input_vocab} * num_layers * per_layer_input_size;
}

i64 ModelSpec::per_layer_input_params() const {
  if (per_layer_input_size <= 0) return 0;
  const i64 h = hidden_size, ple = per_layer_input_size;
  // Gemma4Model: per_layer_model_projection (h → layers × ple) and per_layer_projection_norm (ple); Gemma4DecoderLayer:
  // per_layer_input_gate (h → ple), per_layer_projection (ple → h), post_per_layer_input_norm (h).
  return h * num_layers * ple + ple + i64{num_layers} * (2 * h * ple + h);
}

i64 ModelSpec::param_count() const {
  const i64 dense = dense_mlp_layers();
  return i64{attention_layers()} * attention_params_per_layer() +
         i64{full_attention_layers()} * full_attention_extra_params() +
         i64{linear_attention_layers} * linear_attention_params_per_layer() +
         i64{num_layers} * norm_params_per_layer() + dense * dense_mlp_params() +
         i64{moe_layers()} * moe_mlp_params() + embedding_params() + lm_head_params() + hidden_size +  // + final norm
         i64{double_wide_mlp_layers} * dense_mlp_params() + per_layer_embedding_params() + per_layer_input_params() +
         vision_params + audio_params;
}

i64 ModelSpec::active_param_count() const {
  const i64 dense = dense_mlp_layers();
  return i64{attention_layers()} * attention_params_per_layer() +
         i64{full_attention_layers()} * full_attention_extra_params() +
         i64{linear_attention_layers} * linear_attention_params_per_layer() +
         i64{num_layers} * norm_params_per_layer() + dense * dense_mlp_params() +
         i64{moe_layers()} * active_moe_mlp_params() + embedding_params() + lm_head_params() + hidden_size +
         i64{double_wide_mlp_layers} * dense_mlp_params() + per_layer_input_params();
}

double ModelSpec::kv_bytes_per_token(double bytes_per_element) const {
  // Only layers with a KV cache of their own (Gemma-4's KV-shared layers read an earlier layer's).
  const i64 extra_per_layer = full_kv_elements_per_token_per_layer() - kv_elements_per_token_per_layer();
  const double full_extra = static_cast<double>(kv_full_layers()) * static_cast<double>(extra_per_layer);
  return static_cast<double>(kv_cache_layers()) *
             (static_cast<double>(kv_elements_per_token_per_layer()) * bytes_per_element +
              indexer_kv_bytes_per_token_per_layer()) +
         full_extra * bytes_per_element;
}

double ModelSpec::linear_state_bytes_per_sequence(double bytes_per_element) const {
  return static_cast<double>(linear_attention_layers) * linear_state_bytes_per_layer(bytes_per_element);
}

void ModelSpec::check_tensor_parallel(int tp, Problems& p, const std::string& path) const {
  if (tp < 1) return;  // reported by the deployment's own validation
  const std::string got = ", got " + std::to_string(tp);
  if (num_heads % tp != 0) {
    p.add(path, "must divide the model's num_attention_heads (" + std::to_string(num_heads) + ")" + got);
    return;
  }
  // vLLM shards KV heads over tp, or replicates them when tp is a multiple of their count. MLA's latent cache is
  // one "head" that every rank keeps whole.
  if (!is_mla() && num_kv_heads > 0 && num_kv_heads % tp != 0 && tp % num_kv_heads != 0) {
    p.add(path, "must divide the model's num_key_value_heads (" + std::to_string(num_kv_heads) +
                    ") or be a multiple of it" + got);
  }
  const int full_kv = full_layer_kv_heads();  // Gemma-4's full-attention layers shard theirs the same way
  if (has_full_layer_shape() && full_kv > 0 && full_kv % tp != 0 && tp % full_kv != 0) {
    p.add(path, "must divide the model's num_global_key_value_heads (" + std::to_string(full_kv) +
                    ") or be a multiple of it" + got);
  }
  // Column-parallel gate/up and row-parallel down split the MLP width (FusedMoE splits each expert's the same way).
  if ((!is_moe() || dense_layers > 0) && intermediate_size % tp != 0) {
    p.add(path, "must divide the model's intermediate_size (" + std::to_string(intermediate_size) + ")" + got);
  }
  if (is_moe() && expert_intermediate_size() % tp != 0) {
    p.add(path, "must divide the model's moe_intermediate_size (" + std::to_string(expert_intermediate_size()) + ")" + got);
  }
  if (has_linear_attention() && (linear_num_key_heads % tp != 0 || linear_num_value_heads % tp != 0)) {
    p.add(path, "must divide the model's linear_num_key_heads (" + std::to_string(linear_num_key_heads) +
                    ") and linear_num_value_heads (" + std::to_string(linear_num_value_heads) + ")" + got);
  }
  if (shared_expert_intermediate_size % tp != 0) {
    p.add(path, "must divide the width of the model's shared experts (" +
                    std::to_string(shared_expert_intermediate_size) + ")" + got);
  }
}

void ModelSpec::check_magnitude(Problems& p, const std::string& path) const {
  using ld = long double;
  auto x = [](auto v) { return static_cast<ld>(v); };
  const ld heads = x(num_heads);
  const ld widest = std::max({x(hidden_size), heads * head_dim, heads * full_head_dim, x(num_kv_heads) * head_dim,
                              x(intermediate_size),
                              x(moe_intermediate_size), x(shared_expert_intermediate_size), x(q_lora_rank),
                              x(kv_lora_rank) + qk_rope_head_dim, heads * (x(qk_nope_head_dim) + qk_rope_head_dim),
                              heads * (x(qk_nope_head_dim) + v_head_dim), x(norms_per_layer) * hidden_size,
                              x(index_n_heads) * index_head_dim,
                              2 * x(linear_num_key_heads) * linear_key_head_dim +
                                  2 * x(linear_num_value_heads) * linear_value_head_dim,
                              x(linear_num_value_heads) * linear_key_head_dim * linear_value_head_dim /
                                  std::max(x(1), x(hidden_size))});
  const ld bound = x(num_layers) * 16 * widest * widest * (std::max(x(1), x(num_experts)) + 2) +
                   2 * x(vocab_size) * hidden_size + x(bias_params_per_layer) * num_layers + x(vision_params) +
                   x(audio_params) + x(per_layer_input_vocab) * num_layers * per_layer_input_size +
                   x(num_layers) * 3 * x(hidden_size) * per_layer_input_size +
                   x(moe_bias_params) * num_layers;
  constexpr ld kLimit = 1e17;  // int64 holds 9.2e18; the largest published model has ~2e12 parameters
  if (bound > kLimit)
    p.add(path, "its sizes allow up to " + format_value(static_cast<double>(bound)) +
                    " parameters, more than llmsim counts (1e17): a hidden_size, num_hidden_layers, expert count or "
                    "width is implausibly large");
}

void ModelSpec::validate(const std::string& path) const {
  Problems p;
  auto positive = [&](const char* field, int v) {
    if (v < 1) p.add(path + "." + field, "must be >= 1, got " + std::to_string(v));
  };
  auto non_negative = [&](const char* field, int v) {
    if (v < 0) p.add(path + "." + field, "must be >= 0, got " + std::to_string(v));
  };
  positive("hidden_size", hidden_size);
  positive("num_hidden_layers", num_layers);
  positive("num_attention_heads", num_heads);
  positive("num_key_value_heads", num_kv_heads);
  positive("head_dim", head_dim);
  positive("intermediate_size", intermediate_size);
  positive("vocab_size", vocab_size);
  positive("max_position_embeddings", max_position_embeddings);
  positive("norms_per_layer", norms_per_layer);
  for (const auto& [field, v] :
       {std::pair<const char*, int>{"moe_intermediate_size", moe_intermediate_size},
        {"shared_expert_intermediate_size", shared_expert_intermediate_size}, {"dense_layers", dense_layers},
        {"q_lora_rank", q_lora_rank}, {"kv_lora_rank", kv_lora_rank}, {"qk_nope_head_dim", qk_nope_head_dim},
        {"qk_rope_head_dim", qk_rope_head_dim}, {"v_head_dim", v_head_dim}, {"sliding_window", sliding_window},
        {"sliding_layers", sliding_layers}, {"num_nextn_predict_layers", mtp_layers},
        {"index_n_heads", index_n_heads}, {"index_head_dim", index_head_dim}, {"index_topk", index_topk},
        {"linear_attention_layers", linear_attention_layers}, {"linear_num_key_heads", linear_num_key_heads},
        {"linear_num_value_heads", linear_num_value_heads}, {"linear_key_head_dim", linear_key_head_dim},
        {"linear_value_head_dim", linear_value_head_dim}, {"linear_conv_kernel_dim", linear_conv_kernel_dim},
        {"linear_chunk_size", linear_chunk_size}, {"mixer_free_layers", mixer_free_layers},
        {"mlp_free_layers", mlp_free_layers}})
    non_negative(field, v);
  if (vision_params < 0) p.add(path + ".vision_config", "parameters must be >= 0, got " + std::to_string(vision_params));
  if (num_heads >= 1 && num_kv_heads >= 1 && num_heads % num_kv_heads != 0) {
    p.add(path + ".num_key_value_heads", "must divide num_attention_heads (" + std::to_string(num_heads) +
                                             "), got " + std::to_string(num_kv_heads));
  }
  if (num_experts < 0) p.add(path + ".num_local_experts", "must be >= 0, got " + std::to_string(num_experts));
  if (is_moe() && (experts_per_token < 1 || experts_per_token > num_experts)) {
    p.add(path + ".num_experts_per_tok", "must be in 1.." + std::to_string(num_experts) + " for a MoE model, got " +
                                             std::to_string(experts_per_token));
  }
  if (dense_layers > num_layers) {
    p.add(path + ".dense_layers", "must be <= num_hidden_layers (" + std::to_string(num_layers) + "), got " +
                                      std::to_string(dense_layers));
  }
  if (moe_bias_params < 0) p.add(path + ".moe_bias_params", "must be >= 0, got " + std::to_string(moe_bias_params));
  if (mlp_matrices != 2 && mlp_matrices != 3)
    p.add(path + ".mlp_matrices", "must be 2 (up, down) or 3 (gate, up, down), got " + std::to_string(mlp_matrices));
  if (mixer_free_layers + mlp_free_layers > num_layers || linear_attention_layers + mixer_free_layers > num_layers ||
      dense_layers + mlp_free_layers > num_layers) {
    p.add(path + ".hybrid_override_pattern", "has more mixer-only, MLP-only, linear and dense layers than the " +
                                                 std::to_string(num_layers) + " layers");
  }
  if (attention_layers() < 1 && linear_attention_layers > 0) {
    p.add(path + ".layer_types", "needs at least one attention layer besides " +
                                     std::to_string(linear_attention_layers) + " linear-attention layers of " +
                                     std::to_string(num_layers));
  }
  if (sliding_layers + linear_attention_layers > num_layers) {
    p.add(path + ".sliding_layers", "must be <= num_hidden_layers (" + std::to_string(num_layers) + "), got " +
                                        std::to_string(sliding_layers));
  }
  non_negative("hidden_size_per_layer_input", per_layer_input_size);
  non_negative("vocab_size_per_layer_input", per_layer_input_vocab);
  non_negative("num_kv_shared_layers", kv_shared_layers);
  non_negative("double_wide_mlp_layers", double_wide_mlp_layers);
  if (audio_params < 0) p.add(path + ".audio_config", "parameters must be >= 0, got " + std::to_string(audio_params));
  if (kv_shared_layers >= attention_layers() && kv_shared_layers > 0) {
    p.add(path + ".num_kv_shared_layers", "must be < the attention layers (" + std::to_string(attention_layers()) +
                                              "): a KV-shared layer reads an earlier layer's cache, got " +
                                              std::to_string(kv_shared_layers));
  }
  if (kv_shared_full_layers < 0 || kv_shared_full_layers > kv_shared_layers || kv_full_layers() < 0 ||
      kv_sliding_layers() < 0) {
    p.add(path + ".num_kv_shared_layers", "shares " + std::to_string(kv_shared_full_layers) + " full-attention and " +
                                              std::to_string(kv_shared_layers - kv_shared_full_layers) +
                                              " sliding layers, more than the model has of each");
  }
  if (double_wide_mlp_layers > num_layers) {
    p.add(path + ".use_double_wide_mlp", "widens " + std::to_string(double_wide_mlp_layers) + " layers of " +
                                             std::to_string(num_layers));
  }
  non_negative("global_head_dim", full_head_dim);
  non_negative("num_global_key_value_heads", full_kv_heads);
  if (num_heads >= 1 && full_kv_heads >= 1 && num_heads % full_kv_heads != 0) {
    p.add(path + ".num_global_key_value_heads", "must divide num_attention_heads (" + std::to_string(num_heads) +
                                                    "), got " + std::to_string(full_kv_heads));
  }
  if (is_mla() && (i64{qk_nope_head_dim} + qk_rope_head_dim < 1 || v_head_dim < 1)) {
    p.add(path + ".kv_lora_rank", "an MLA model needs qk_nope_head_dim + qk_rope_head_dim >= 1 and v_head_dim >= 1");
  }
  p.throw_if_any();  // the bound below reads the fields checked above
  check_magnitude(p, path);
  p.throw_if_any();
}

Json to_json(const ModelSpec& m) {
  if (!m.source.is_null()) return m.source;
  Json j;
  j["architectures"] = Json::array({m.architecture});
  if (!m.model_type.empty()) j["model_type"] = m.model_type;
  j["hidden_size"] = m.hidden_size;
  j["num_hidden_layers"] = m.num_layers;
  j["num_attention_heads"] = m.num_heads;
  j["num_key_value_heads"] = m.num_kv_heads;
  j["head_dim"] = m.head_dim;
  j["intermediate_size"] = m.intermediate_size;
  j["vocab_size"] = m.vocab_size;
  j["max_position_embeddings"] = m.max_position_embeddings;
  j["tie_word_embeddings"] = m.tie_word_embeddings;
  j["attention_bias"] = m.attention_bias;
  if (m.num_experts > 0) {
    j["num_local_experts"] = m.num_experts;
    j["num_experts_per_tok"] = m.experts_per_token;
  }
  return j;
}

int ModelSpec::linear_attention_layers_in(int begin, int end) const noexcept {
  begin = std::max(begin, 0);
  end = std::min(end, num_layers);
  if (linear_attention_layers <= 0 || end <= begin) return 0;
  const int attention = attention_layers();
  // The interval rule is Qwen3-Next's layout; Nemotron-H's pattern (with MLP-only layers) is not periodic.
  if (mixer_free_layers == 0 && attention > 0 && num_layers % attention == 0) {
    const int interval = num_layers / attention;  // HF's full_attention_interval
    // Attention layers i in [begin, end) with (i + 1) % interval == 0: multiples of interval in [begin + 1, end].
    const int attention_in = end / interval - begin / interval;
    return (end - begin) - attention_in;
  }
  return static_cast<int>(static_cast<std::int64_t>(linear_attention_layers) * (end - begin) / num_layers);
}

int ModelSpec::attention_layers_in(int begin, int end) const noexcept {
  begin = std::max(begin, 0);
  end = std::min(end, num_layers);
  if (end <= begin) return 0;
  const int n = end - begin;
  // Nemotron-H's MLP-only layers hold no cache either: the range's share of them (over the whole model, the count).
  const int mlp_only = static_cast<int>(static_cast<std::int64_t>(mixer_free_layers) * n / num_layers);
  return n - linear_attention_layers_in(begin, end) - mlp_only;
}

}  // namespace llmsim::spec
