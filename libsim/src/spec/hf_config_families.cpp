// The families the config.json reader sizes and the key check (hf_config_families.hpp; the reader is hf_config.cpp).
// Each family has an allow-list of the keys llmsim understands; any other key, one that may change the model's size in
// a way llmsim does not know, is a ConfigError naming it.
#include "hf_config_families.hpp"

#include "llmsim/core/error.hpp"

namespace llmsim::spec::hf {

// Keys that never change a decoder's size: metadata, tokens, numerics, RoPE, and the generation defaults old
// transformers versions serialized into every config.
const std::set<std::string>& common_keys() {
  static const std::set<std::string> k = {
      "architectures", "model_type", "_name_or_path", "transformers_version", "torch_dtype", "dtype", "use_cache",
      "initializer_range", "bos_token_id", "eos_token_id", "pad_token_id", "sep_token_id", "decoder_start_token_id",
      "rms_norm_eps", "rope_theta", "rope_scaling", "rope_parameters", "attention_dropout", "hidden_act",
      "hidden_activation", "auto_map", "quantization_config", "pretraining_tp", "tokenizer_class", "return_dict",
      "output_hidden_states", "output_attentions", "torchscript", "id2label", "label2id", "task_specific_params",
      "problem_type", "prefix", "max_length", "min_length", "do_sample", "early_stopping", "num_beams",
      "num_beam_groups", "diversity_penalty", "temperature", "top_k", "top_p", "typical_p", "repetition_penalty",
      "length_penalty", "no_repeat_ngram_size", "encoder_no_repeat_ngram_size", "bad_words_ids",
      "num_return_sequences", "chunk_size_feed_forward", "output_scores", "return_dict_in_generate",
      "forced_bos_token_id", "forced_eos_token_id", "remove_invalid_values", "exponential_decay_length_penalty",
      "suppress_tokens", "begin_suppress_tokens", "finetuning_task", "tf_legacy_loss", "use_bfloat16",
      "is_decoder", "is_encoder_decoder", "add_cross_attention", "cross_attention_hidden_size", "tie_encoder_decoder",
      "pruned_heads", "router_aux_loss_coef", "output_router_logits", "router_jitter_noise", "initializer_factor",
      "layer_types",
      // transformers' own bookkeeping, serialized by 4.4x into configs saved from a loaded model (Llama-4 quantized
      // checkpoints' text_config): which attention kernel it picked, nothing of the weights.
      "_attn_implementation_autoset"};
  return k;
}

// Keys of every text decoder (their values are read below).
const std::vector<const char*> kTextKeys = {
    "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
    "intermediate_size", "vocab_size", "max_position_embeddings", "tie_word_embeddings"};

const std::vector<Family>& families() {
  static const std::vector<Family> f = {
      // vllm/model_executor/models/llama.py: q,k,v,o (+ attention_bias), gated MLP (+ mlp_bias), 2 RMSNorms.
      {"llama", Kind::llama, {"LlamaForCausalLM"}, {"attention_bias", "mlp_bias", "sliding_window"}},
      // Mistral runs as Llama in vLLM; sliding_window applies to every layer (model-level window, cache_config).
      {"mistral", Kind::mistral, {"MistralForCausalLM"}, {"attention_bias", "mlp_bias", "sliding_window"}},
      // Ministral 3 (Ministral-3-3B/8B/14B, Devstral-Small-2): Mistral's layers; the llama_4_scaling_beta in its
      // rope_parameters scales attention, no weight. vLLM's registry: Ministral3ForCausalLM -> MistralForCausalLM.
      {"ministral3", Kind::mistral, {"Ministral3ForCausalLM"}, {"attention_bias", "mlp_bias", "sliding_window"}},
      // InternLM (v1) runs as Llama in vLLM (registry: InternLMForCausalLM -> llama.py); its "bias" puts biases on
      // q, k, v and o as attention_bias does (llama.py: attention_bias or config.bias, "Support internlm/internlm-7b").
      {"internlm", Kind::llama, {"InternLMForCausalLM"}, {"bias", "mlp_bias"}},
      // vllm/model_executor/models/mixtral.py: every layer a MoE of num_local_experts experts of intermediate_size.
      {"mixtral", Kind::mixtral, {"MixtralForCausalLM"},
       {"sliding_window", "num_local_experts", "num_experts_per_tok"}},
      // vllm/model_executor/models/qwen2.py: q/k/v bias always on.
      {"qwen2", Kind::qwen2, {"Qwen2ForCausalLM"},
       {"sliding_window", "use_sliding_window", "max_window_layers", "use_mrope"}},
      // vllm/model_executor/models/qwen2_moe.py: Qwen2MoeSparseMoeBlock = experts + shared_expert + its sigmoid gate;
      // a layer is sparse when not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0.
      {"qwen2_moe", Kind::qwen2_moe, {"Qwen2MoeForCausalLM"},
       {"sliding_window", "use_sliding_window", "max_window_layers", "num_experts", "num_local_experts",
        "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size", "decoder_sparse_step",
        "mlp_only_layers", "norm_topk_prob", "qkv_bias"}},
      // vllm/model_executor/models/qwen3.py: Qwen2's layout without q/k/v bias (attention_bias), + q_norm/k_norm.
      {"qwen3", Kind::qwen3, {"Qwen3ForCausalLM"},
       {"attention_bias", "sliding_window", "use_sliding_window", "max_window_layers"}},
      // vllm/model_executor/models/qwen3_moe.py: routed experts only (no shared expert), same sparse-step rule.
      {"qwen3_moe", Kind::qwen3_moe, {"Qwen3MoeForCausalLM"},
       {"attention_bias", "sliding_window", "use_sliding_window", "max_window_layers", "num_experts",
        "num_local_experts", "num_experts_per_tok", "moe_intermediate_size", "decoder_sparse_step", "mlp_only_layers",
        "norm_topk_prob"},
       {{"qkv_bias", false}, {"shared_expert_intermediate_size", 0}, {"use_qk_norm", true}}},
      // vllm/model_executor/models/qwen3_next.py: gated DeltaNet + gated attention layers, Qwen2-MoE-style MoE
      // (hf_config_parts.cpp, read_qwen3_next).
      {"qwen3_next", Kind::qwen3_next, {"Qwen3NextForCausalLM"},
       {"attention_bias", "use_sliding_window", "max_window_layers", "sliding_window", "num_experts",
        "num_local_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size",
        "decoder_sparse_step", "mlp_only_layers", "norm_topk_prob", "full_attention_interval", "linear_conv_kernel_dim",
        "linear_key_head_dim", "linear_value_head_dim", "linear_num_key_heads", "linear_num_value_heads",
        "partial_rotary_factor"}},
      // Qwen3.5 (vllm/model_executor/models/qwen3_5.py, qwen3_5_moe.py): Qwen3-Next's hybrid layers (dense MLPs in
      // Qwen3.5, Qwen3-Next's MoE in Qwen3.5-MoE) as the text_config of a Qwen3-VL-style wrapper
      // (hf_config_recent.cpp).
      // attn_output_gate is the gated attention Qwen3-Next always has: accepted at true only.
      {"qwen3_5_text", Kind::qwen3_next, {"Qwen3_5ForCausalLM"},
       {"attention_bias", "full_attention_interval", "linear_conv_kernel_dim", "linear_key_head_dim",
        "linear_value_head_dim", "linear_num_key_heads", "linear_num_value_heads", "mlp_only_layers",
        "mtp_num_hidden_layers", "mamba_ssm_dtype", "partial_rotary_factor"},
       {{"attn_output_gate", true}, {"mtp_use_dedicated_embeddings", false}}},
      {"qwen3_5_moe_text", Kind::qwen3_next, {"Qwen3_5MoeForCausalLM"},
       {"attention_bias", "full_attention_interval", "linear_conv_kernel_dim", "linear_key_head_dim",
        "linear_value_head_dim", "linear_num_key_heads", "linear_num_value_heads", "mlp_only_layers", "num_experts",
        "num_local_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size",
        "decoder_sparse_step", "norm_topk_prob", "mtp_num_hidden_layers", "mamba_ssm_dtype", "partial_rotary_factor"},
       {{"attn_output_gate", true}, {"mtp_use_dedicated_embeddings", false}}},
      {"qwen3_5", Kind::qwen3_5, {"Qwen3_5ForConditionalGeneration"},
       {"text_config", "vision_config", "image_token_id", "video_token_id", "vision_start_token_id",
        "vision_end_token_id"}},
      {"qwen3_5_moe", Kind::qwen3_5, {"Qwen3_5MoeForConditionalGeneration"},
       {"text_config", "vision_config", "image_token_id", "video_token_id", "vision_start_token_id",
        "vision_end_token_id"}},
      // MiniMax-M2 / M2.1 / M2.5 (vllm/model_executor/models/minimax_m2.py; hf_config_recent.cpp, read_minimax_m2):
      // full attention on every layer (no lightning attention: attn_type_list, where written, is all 1), MoE
      // everywhere; partial_rotary_factor (like rotary_dim) ropes part of each head, no weight.
      // shared_intermediate_size 0, qk_norm_type "per_layer" and sliding_window null (NVIDIA's export writes it) are
      // the layout vLLM builds: accepted at those values only.
      {"minimax_m2", Kind::minimax_m2, {"MiniMaxM2ForCausalLM"},
       {"num_local_experts", "num_experts_per_tok", "rotary_dim", "use_qk_norm", "use_routing_bias", "scoring_func",
        "use_mtp", "num_mtp_modules", "mtp_transformer_layers", "partial_rotary_factor", "attn_type_list"},
       {{"shared_intermediate_size", 0}, {"qk_norm_type", "per_layer"}, {"sliding_window", nullptr}}},
      // Nemotron-H / Nemotron-3 (vllm/model_executor/models/nemotron_h.py; hf_config_nemotron.cpp, read_nemotron_h):
      // single-block layers from hybrid_override_pattern (Mamba-2, attention, relu² MLP, MoE). The time_step_* keys
      // set dt's initialisation and clamp, expand / time_step_rank are Mamba-1 leftovers MambaMixer2 ignores (it uses
      // mamba_num_heads × mamba_head_dim), rescale_prenorm_residual / residual_in_fp32 are numerics, n_group /
      // topk_group / routed_scaling_factor / norm_topk_prob route tokens: no weight in any. Biases and activations are
      // accepted at the values vLLM's layers are built with only.
      {"nemotron_h", Kind::nemotron_h, {"NemotronHForCausalLM"},
       {"hybrid_override_pattern", "attention_head_dim", "mamba_num_heads", "mamba_head_dim", "n_groups",
        "ssm_state_size", "conv_kernel", "chunk_size", "use_conv_bias", "mamba_ssm_cache_dtype", "expand",
        "time_step_rank", "time_step_min", "time_step_max", "time_step_floor", "time_step_limit",
        "rescale_prenorm_residual", "residual_in_fp32", "use_mamba_kernels", "num_logits_to_keep", "hidden_dropout",
        "layer_norm_epsilon", "norm_eps", "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
        "n_shared_experts", "moe_shared_expert_intermediate_size", "n_group", "topk_group", "routed_scaling_factor",
        "norm_topk_prob", "partial_rotary_factor", "moe_latent_size", "num_nextn_predict_layers",
        "mtp_hybrid_override_pattern"},
       {{"attention_bias", false}, {"mlp_bias", false}, {"use_bias", false}, {"mamba_proj_bias", false},
        {"mamba_hidden_act", "silu"}, {"mlp_hidden_act", "relu2"}, {"sliding_window", nullptr}}},
      // vllm/model_executor/models/gpt_oss.py (hf_config_parts.cpp, read_gpt_oss).
      {"gpt_oss", Kind::gpt_oss, {"GptOssForCausalLM"},
       {"attention_bias", "sliding_window", "num_local_experts", "num_experts_per_tok", "experts_per_token",
        "initial_context_length", "swiglu_limit"}},
      // vllm/model_executor/models/llama4.py; the multimodal wrapper (mllama4.py) nests it in text_config.
      {"llama4_text", Kind::llama4_text, {"Llama4ForCausalLM"},
       {"attention_bias", "attention_chunk_size", "attn_scale", "attn_temperature_tuning", "floor_scale",
        "for_llm_compressor", "interleave_moe_layer_step", "intermediate_size_mlp", "moe_layers", "no_rope_layers",
        "no_rope_layer_interval", "num_experts_per_tok", "num_local_experts", "use_qk_norm", "cache_implementation"}},
      {"llama4", Kind::llama4, {"Llama4ForConditionalGeneration"},
       // image_processor_config (meta-llama's own config.json: max_patches, add_global_tile) sets how images are
       // tiled before the vision tower, at any value no weight.
       {"text_config", "vision_config", "boi_token_index", "eoi_token_index", "image_token_index",
        "image_processor_config"}},
      // vllm/model_executor/models/glm4_moe.py (hf_config_parts.cpp, read_glm4_moe): GLM-4.5, 4.6, 4.7.
      {"glm4_moe", Kind::glm4_moe, {"Glm4MoeForCausalLM"},
       {"attention_bias", "partial_rotary_factor", "use_qk_norm", "n_routed_experts", "n_shared_experts",
        "num_experts_per_tok", "moe_intermediate_size", "first_k_dense_replace", "routed_scaling_factor",
        "norm_topk_prob", "n_group", "topk_group", "num_nextn_predict_layers", "topk_method", "scoring_func"}},
      // Phi-3 / Phi-4 run on llama.py in vLLM (Phi3ForCausalLM; fused qkv and gate_up: the same parameters).
      // Phi-4-mini's config adds interpolate_factor (its LongRoPE's, no weight at any value) and full_attn_mod
      // (every n-th layer full attention, the others windowed; 1 = every layer full, what vLLM runs: it reads
      // neither key).
      {"phi3", Kind::llama, {"Phi3ForCausalLM"},
       {"attention_bias", "sliding_window", "embd_pdrop", "resid_pdrop", "original_max_position_embeddings",
        "partial_rotary_factor", "interpolate_factor"},
       {{"mlp_bias", false}, {"lm_head_bias", false}, {"full_attn_mod", 1}}},
      // Mistral Small 3.x and Ministral 3 (Mistral3ForConditionalGeneration): a mistral or ministral3 text_config, a
      // Pixtral vision tower and the patch-merger projector (vllm/model_executor/models/mistral3.py).
      {"mistral3", Kind::mistral3, {"Mistral3ForConditionalGeneration"},
       {"text_config", "vision_config", "image_token_index", "multimodal_projector_bias", "projector_hidden_act",
        "spatial_merge_size", "vision_feature_layer"}},
      // vllm/model_executor/models/deepseek_v2.py (V2, V2.5, V3, R1): MLA attention; DeepseekV2MoE from layer
      // first_k_dense_replace on (every moe_layer_freq-th), with n_shared_experts × moe_intermediate_size shared.
      {"deepseek_v2", Kind::deepseek, {"DeepseekV2ForCausalLM"}, {}},
      {"deepseek_v3", Kind::deepseek, {"DeepseekV3ForCausalLM"}, {}},
      // Kimi-K2 is DeepSeek-V3's architecture under its own model_type (its README: "rename model_type to
      // deepseek_v3" where a framework lacks it); vLLM loads it with DeepseekV3ForCausalLM.
      {"kimi_k2", Kind::deepseek, {}, {}},
      // Kimi-K2.5 and later (KimiK25ForConditionalGeneration, vllm/model_executor/models/kimi_k25.py): a kimi_k2 /
      // deepseek_v3 text_config, the MoonViT-3D vision tower and its patch-merger projector (kimi_k25_vit.py).
      {"kimi_k25", Kind::kimi_k25, {"KimiK25ForConditionalGeneration"},
       {"text_config", "vision_config", "ignore_index", "media_placeholder_token_id", "use_unified_vision_chunk",
        "video_placeholder"}},
      // GLM-4.7-Flash (vllm/model_executor/models/glm4_moe_lite.py): DeepseekV2's MLA attention, GLM-4.5's MoE
      // (routed experts + shared, dense first layers, the router's e_score_correction_bias): DeepSeek's layout.
      // partial_rotary_factor 1.0 (vLLM's test config of the Hub file) changes nothing: MLA ropes qk_rope_head_dim.
      {"glm4_moe_lite", Kind::deepseek, {"Glm4MoeLiteForCausalLM"}, {}, {{"partial_rotary_factor", 1.0}}},
      // DeepSeek-V3.2: V3's layout + the sparse-attention indexer (hf_config_parts.cpp, read_deepseek_indexer).
      {"deepseek_v32", Kind::deepseek, {"DeepseekV32ForCausalLM"}, {"index_n_heads", "index_head_dim", "index_topk"}},
      // GLM-5 (glm_moe_dsa): vLLM's registry maps GlmMoeDsaForCausalLM to deepseek_v2.py, a DeepseekV2ForCausalLM
      // subclass with nothing of its own: DeepSeek-V3.2's MLA + DSA indexer + MoE. indexer_rope_interleave only
      // changes how the indexer ropes its keys.
      {"glm_moe_dsa", Kind::deepseek, {"GlmMoeDsaForCausalLM"},
       {"index_n_heads", "index_head_dim", "index_topk", "indexer_rope_interleave"}},
      // vllm/model_executor/models/gemma.py / gemma2.py / gemma3.py: tied embeddings; Gemma-2/3 put RMSNorms before
      // and after both attention and MLP (4 per layer); Gemma-3 adds q_norm/k_norm.
      {"gemma", Kind::gemma, {"GemmaForCausalLM"}, {"attention_bias"}},
      {"gemma2", Kind::gemma2, {"Gemma2ForCausalLM"},
       {"attention_bias", "sliding_window", "sliding_window_size", "query_pre_attn_scalar", "attn_logit_softcapping",
        "final_logit_softcapping", "cache_implementation"}},
      {"gemma3_text", Kind::gemma3_text, {"Gemma3ForCausalLM"},
       {"attention_bias", "sliding_window", "sliding_window_pattern", "_sliding_window_pattern",
        "query_pre_attn_scalar", "attn_logit_softcapping", "final_logit_softcapping", "cache_implementation",
        "rope_local_base_freq", "use_bidirectional_attention"}},
      // The multimodal Gemma-3 (12B, 27B): text_config as gemma3_text, a SigLIP vision tower and a projector.
      {"gemma3", Kind::gemma3, {"Gemma3ForConditionalGeneration"},
       {"text_config", "vision_config", "boi_token_index", "eoi_token_index", "image_token_index",
        "mm_tokens_per_image"}},
      // vllm/model_executor/models/gemma4.py (hf_config_gemma.cpp, read_gemma4_text): sliding layers of head_dim and
      // num_key_value_heads, full layers of global_head_dim (K doubling as V with attention_k_eq_v), 4 RMSNorms and
      // q/k norms per layer, the 26B-A4B's MoE block beside the dense MLP. The E2B/E4B keys (per-layer inputs, KV
      // sharing, double-wide MLP) are read to refuse them by value.
      {"gemma4_text", Kind::gemma4_text, {"Gemma4ForCausalLM"},
       {"attention_bias", "sliding_window", "final_logit_softcapping", "attn_logit_softcapping",
        "use_bidirectional_attention", "vocab_size_per_layer_input", "hidden_size_per_layer_input",
        "attention_k_eq_v", "num_kv_shared_layers", "enable_moe_block", "use_double_wide_mlp", "num_experts",
        "top_k_experts", "moe_intermediate_size", "expert_intermediate_size", "global_head_dim",
        "num_global_key_value_heads", "cache_implementation"}},
      // The multimodal Gemma-4 (Gemma4ForConditionalGeneration): text_config as gemma4_text, the gemma4_vision tower
      // and its projector; audio_config (E2B/E4B's audio tower) is refused unless null.
      {"gemma4", Kind::gemma4, {"Gemma4ForConditionalGeneration"},
       {"text_config", "vision_config", "audio_config", "boi_token_id", "eoi_token_id", "image_token_id",
        "video_token_id", "boa_token_id", "eoa_token_id", "eoa_token_index", "audio_token_id",
        "vision_soft_tokens_per_image"}},
  };
  return f;
}

const std::vector<const char*> kDeepseekKeys = {
    "moe_intermediate_size", "n_shared_experts", "n_routed_experts", "routed_scaling_factor", "kv_lora_rank",
    "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "qk_head_dim", "v_head_dim", "topk_method", "n_group",
    "topk_group", "num_experts_per_tok", "moe_layer_freq", "first_k_dense_replace", "norm_topk_prob",
    "scoring_func", "aux_loss_alpha", "seq_aux", "ep_size", "num_nextn_predict_layers", "attention_bias",
    "rope_interleave"};

// What a key outside every allow-list usually signals, for the message.
std::string what_key_signals(const std::string& key) {
  static const std::pair<const char*, const char*> hints[] = {
      {"vision_config", "a vision tower"}, {"audio_config", "an audio tower"},
      {"cross_attention_layers", "cross-attention layers"}, {"attn_type_list", "linear-attention layers"},
      {"linear_attn_config", "linear-attention layers"}, {"mamba", "Mamba/SSM layers"}, {"ssm", "Mamba/SSM layers"},
      {"conv_kernel", "convolution (SSM) layers"}, {"index_", "a sparse-attention indexer"},
      {"num_nextn_predict_layers", "multi-token-prediction layers"}, {"expert", "a mixture of experts"},
      {"lora_rank", "latent (MLA) attention"}, {"encoder", "an encoder"}};
  for (const auto& [pattern, meaning] : hints) {
    if (key.find(pattern) != std::string::npos) return std::string(" (it looks like ") + meaning + ")";
  }
  return "";
}

std::vector<std::string> family_names() {
  std::vector<std::string> out;
  for (const auto& f : families()) out.emplace_back(f.model_type);
  return out;
}

const Family* find_by_model_type(const std::string& t) {
  for (const auto& f : families())
    if (t == f.model_type) return &f;
  return nullptr;
}

const Family* find_by_architecture(const std::string& a) {
  for (const auto& f : families())
    for (const char* arch : f.architectures)
      if (a == arch) return &f;
  return nullptr;
}


bool falsy(const Json& j) {
  return j.is_null() || (j.is_boolean() && !j.get<bool>()) || (j.is_object() && j.empty()) ||
         (j.is_array() && j.empty());
}

/// Rejects keys outside the allow-list, and keys every config carries whose non-default value changes the model.
void check_keys(const JsonView& v, const Family* f, const std::vector<const char*>& extra) {
  Problems p;
  const std::string family = f ? std::string("'") + f->model_type + "'" : "a config without model_type";
  for (auto it = v.json().begin(); it != v.json().end(); ++it) {
    const std::string& key = it.key();
    bool ok = common_keys().count(key) > 0;
    for (const char* k : kTextKeys) ok = ok || key == k;
    if (f)
      for (const char* k : f->keys) ok = ok || key == k;
    for (const char* k : extra) ok = ok || key == k;
    if (!ok && f) {
      for (const auto& [k, neutral] : f->neutral) {
        if (key != k) continue;
        ok = true;
        const Json& value = *it;
        const bool same = value.is_null() || value == neutral ||
                          (value.is_number() && neutral.is_number() && value.get<double>() == neutral.get<double>());
        if (!same)
          p.add(v.child_path(key), "is " + value.dump() + ": llmsim sizes " + family + " models with " + key + " = " +
                                       neutral.dump() + " only (the value that changes nothing); this one would "
                                       "change the size in a way llmsim does not model");
      }
    }
    if (!ok) {
      p.add(v.child_path(key), "llmsim does not know what this key does to the size of " + family + " model" +
                                   what_key_signals(key) +
                                   ", so it cannot size it (remove the key if it does not change the architecture)");
    }
  }
  for (const char* key : {"is_encoder_decoder", "add_cross_attention", "tie_encoder_decoder",
                          "cross_attention_hidden_size", "pruned_heads", "use_mrope", "use_bidirectional_attention"}) {
    // Gemma-4's "vision" (image tokens attend both ways, text causal) is judged by read_gemma4_text.
    if (f && f->kind == Kind::gemma4_text && std::string_view(key) == "use_bidirectional_attention") continue;
    auto it = v.json().find(key);
    if (it != v.json().end() && !falsy(*it))
      p.add(v.child_path(key), "is " + it->dump() + ": llmsim sizes causal decoder-only text models, without this");
  }
  p.throw_if_any();
}

}  // namespace llmsim::spec::hf
