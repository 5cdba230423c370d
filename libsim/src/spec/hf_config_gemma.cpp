// Gemma-4 (gemma4_text, and the gemma4 multimodal wrapper's vision tower), read after the text-model keys. Layout from
// vllm/model_executor/models/gemma4.py (Gemma4DecoderLayer, Gemma4Attention, Gemma4MoE, Gemma4Router) and
// transformers' models/gemma4 (configuration_gemma4.py defaults, Gemma4VisionModel); docs/cost-model.md, "Model
// families", has the table.
#include <algorithm>
#include <vector>

#include "llmsim/core/error.hpp"
#include "hf_config_parts.hpp"

namespace llmsim::spec::hf {

namespace {

bool truthy(const JsonView& v, std::string_view key) {
  if (!v.has(key) || v.json().at(std::string(key)).is_null()) return false;
  return v.boolean(key);
}

}  // namespace

int gemma4_sliding_layers(const JsonView& v, int layers) {
  // Gemma4TextConfig.__post_init__: without layer_types every 6th layer is full ((i + 1) % 6 == 0); either way the
  // last layer is forced to full_attention.
  const int typed = sliding_layers_from_types(v, layers);
  if (typed < 0) return layers - layers / 6 - (layers % 6 != 0 ? 1 : 0);
  return v["layer_types"].elements().back().as_string() != "full_attention" ? typed - 1 : typed;
}

void read_gemma4_text(const JsonView& v, ModelSpec& m) {
  // The on-device sizes (E2B, E4B) add per-layer input embeddings (PLE), KV shared across the last
  // num_kv_shared_layers layers and double-wide MLPs there, and an audio tower: not sized yet, refused by name.
  if (read_non_negative_int(v, "hidden_size_per_layer_input", 0) > 0)
    v["hidden_size_per_layer_input"].fail("is > 0: llmsim does not yet size Gemma-4's per-layer input embeddings "
                                          "(E2B/E4B); a wrong size would be worse than none");
  if (read_non_negative_int(v, "num_kv_shared_layers", 0) > 0)
    v["num_kv_shared_layers"].fail("is > 0: llmsim does not yet size Gemma-4's KV shared across layers (E2B/E4B)");
  const std::string bidirectional = v.has("use_bidirectional_attention") &&
                                            !v.json().at("use_bidirectional_attention").is_null()
                                        ? v.string("use_bidirectional_attention")
                                        : "";
  // "vision": image tokens attend to each other both ways, text stays causal (the serving case); "all" is an encoder.
  if (!bidirectional.empty() && bidirectional != "vision")
    v["use_bidirectional_attention"].fail("is '" + bidirectional + "': llmsim sizes causal decoders (or 'vision')");
  if (truthy(v, "attention_bias")) v["attention_bias"].fail("is true: no Gemma-4 checkpoint has attention biases");
  // Full-attention layers: global_head_dim (transformers' default 512) and, with attention_k_eq_v, no v_proj and
  // num_global_key_value_heads KV heads (Gemma4DecoderLayer; without k_eq_v they keep num_key_value_heads).
  m.full_head_dim = positive_or(v, "global_head_dim", 512);
  m.full_k_eq_v = truthy(v, "attention_k_eq_v");
  if (m.full_k_eq_v) m.full_kv_heads = positive_or(v, "num_global_key_value_heads", m.num_kv_heads);
  m.qk_norm = true;             // q_norm, k_norm with weights of the layer's head_dim; v_norm has none
  m.bias_params_per_layer += 1;  // layer_scalar, loaded from the checkpoint
  if (truthy(v, "enable_moe_block")) {
    // Gemma4MoE beside the dense MLP in every layer: both see the same residual and their outputs are summed, so the
    // dense MLP (intermediate_size) runs for every token as a shared expert does. Gemma4Router adds a per-dimension
    // scale (hidden) and Gemma4MoE a per_expert_scale (experts); the layer adds 3 RMSNorms (post_feedforward 1 and 2,
    // pre_feedforward 2).
    m.num_experts = read_positive_int(v, "num_experts");
    m.experts_per_token = read_positive_int(v, "top_k_experts");
    if (m.experts_per_token > m.num_experts)
      v["top_k_experts"].fail("must be <= num_experts (" + std::to_string(m.num_experts) + ")");
    m.moe_intermediate_size = v.has("moe_intermediate_size") && !v.json().at("moe_intermediate_size").is_null()
                                  ? read_positive_int(v, "moe_intermediate_size")
                                  : read_positive_int(v, "expert_intermediate_size");
    m.shared_expert_intermediate_size = m.intermediate_size;
    m.dense_layers = 0;
    m.moe_bias_params = i64{m.hidden_size} + m.num_experts;
    m.norms_per_layer += 3;
  }
}

i64 gemma4_vision_params(const JsonView& v, i64 text_hidden) {
  v.expect_object();
  static const std::vector<const char*> keys = {
      "model_type", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
      "num_key_value_heads", "head_dim", "global_head_dim", "patch_size", "pooling_kernel_size",
      "position_embedding_size", "default_output_length", "use_clipped_linears", "standardize", "rms_norm_eps",
      "rope_parameters", "hidden_activation", "hidden_act", "max_position_embeddings", "attention_bias",
      "attention_dropout", "initializer_range", "dtype", "torch_dtype", "_name_or_path", "transformers_version"};
  Problems p;
  for (auto it = v.json().begin(); it != v.json().end(); ++it) {
    if (std::find_if(keys.begin(), keys.end(), [&](const char* k) { return it.key() == k; }) == keys.end())
      p.add(v.child_path(it.key()), "llmsim does not know what this key does to the size of a gemma4_vision tower, "
                                    "so it cannot size it");
  }
  p.throw_if_any();
  if (truthy(v, "attention_bias")) v["attention_bias"].fail("is true: llmsim sizes the bias-free gemma4_vision tower");
  const std::string type = v.string_or("model_type", "gemma4_vision");
  if (type != "gemma4_vision") v["model_type"].fail("llmsim sizes the gemma4_vision tower only, got '" + type + "'");
  // Gemma4VisionConfig defaults (transformers); the checkpoint's config writes them all.
  const i64 h = size_key(v, "hidden_size", 768), inter = size_key(v, "intermediate_size", 3072);
  const i64 layers = size_key(v, "num_hidden_layers", 16), heads = size_key(v, "num_attention_heads", 12);
  const i64 kv = size_key(v, "num_key_value_heads", 12), hd = size_key(v, "head_dim", 64);
  const i64 patch = size_key(v, "patch_size", 16), positions = size_key(v, "position_embedding_size", 10240);
  const long double bound = static_cast<long double>(layers) * (4.0L * h * heads * hd + 3.0L * h * inter) +
                            2.0L * positions * h + 3.0L * patch * patch * h;
  if (bound > 1e13L)
    v.fail("sizes allow " + format_value(static_cast<double>(bound)) + " parameters: implausibly large");
  // Gemma4VisionPatchEmbedder: input_proj (3 × patch² → hidden) and a 2 × position_embedding_size × hidden table.
  const i64 embed = 3 * patch * patch * h + 2 * positions * h;
  // Gemma4VisionEncoderLayer: q/k/v/o, q_norm/k_norm (head_dim; v_norm has no weight), gated MLP, 4 RMSNorms.
  const i64 layer = h * heads * hd + 2 * h * kv * hd + heads * hd * h + 2 * hd + 3 * h * inter + 4 * h;
  // standardize: std_bias and std_scale (hidden each); Gemma4MultimodalEmbedder: a weightless RMSNorm and
  // embedding_projection (vision hidden → text hidden). Clipped linears' min/max scalars are not counted.
  const i64 standardize = v.has("standardize") && !v.json().at("standardize").is_null() && v.boolean("standardize")
                              ? 2 * h
                              : 0;
  return embed + layers * layer + standardize + h * text_hidden;
}

void read_gemma4_wrapper(const JsonView& v, ModelSpec& m) {
  if (v.has("audio_config") && !v.json().at("audio_config").is_null())
    v["audio_config"].fail("is set: llmsim does not yet size Gemma-4's audio tower (E2B/E4B)");
  if (!v.boolean_or("tie_word_embeddings", true))
    v["tie_word_embeddings"].fail("is false: vLLM's Gemma-4 always ties the LM head to the embedding");
  // Gemma4ForConditionalGeneration builds vision_tower + embed_vision only with a vision_config; vLLM loads them
  // whether or not requests carry images.
  if (v.has("vision_config") && !v.json().at("vision_config").is_null()) {
    m.vision_params = gemma4_vision_params(v["vision_config"], m.hidden_size);
    m.notes.push_back("the vision tower and projector (" + format_value(static_cast<double>(m.vision_params) / 1e9) +
                      " B parameters, 16-bit) are loaded and counted in memory; text requests never run them");
  }
  if (m.full_k_eq_v)
    m.notes.push_back("the full-attention layers have no v_proj (K doubles as V); vLLM loads K's weights into the V "
                      "slot too: " + format_value(static_cast<double>(m.duplicated_v_params()) / 1e9) +
                      " B parameters more in memory than the checkpoint holds");
}

}  // namespace llmsim::spec::hf
