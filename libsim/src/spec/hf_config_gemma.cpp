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

namespace {

/// Full-attention layers among layers [first, last) of a Gemma-4 text config of `layers` layers: layer_types when
/// given (validated by the caller), else transformers' default ((i + 1) % 6 == 0, in closed form: no loop over a count
/// read from the file); the last layer is full either way (Gemma4TextConfig.__post_init__).
int gemma4_full_layers_in(const JsonView& v, int layers, int first, int last) {
  if (first >= last) return 0;
  const bool forced_last = last == layers;
  if (v.has("layer_types") && !v.json().at("layer_types").is_null()) {
    const auto types = v["layer_types"].elements();
    int full = 0;
    for (int i = first; i < last; ++i)
      full += (forced_last && i == layers - 1) || types[static_cast<std::size_t>(i)].as_string() == "full_attention";
    return full;
  }
  return last / 6 - first / 6 + (forced_last && layers % 6 != 0 ? 1 : 0);
}

/// E2B/E4B: per-layer input embeddings, KV shared by the last num_kv_shared_layers layers, double-wide MLPs there.
void read_gemma4_on_device(const JsonView& v, ModelSpec& m) {
  // Gemma4TextConfig defaults hidden_size_per_layer_input to 256 and vocab_size_per_layer_input to 262144; vLLM reads
  // both from that config (Gemma4Model), so a config that omits them gets per-layer inputs.
  if (!v.has("hidden_size_per_layer_input") || v.json().at("hidden_size_per_layer_input").is_null())
    m.notes.push_back("hidden_size_per_layer_input absent: transformers' default 256 (per-layer input embeddings)");
  m.per_layer_input_size = v.has("hidden_size_per_layer_input") && !v.json().at("hidden_size_per_layer_input").is_null()
                               ? read_non_negative_int(v, "hidden_size_per_layer_input", 0)
                               : 256;
  if (m.per_layer_input_size > 0) m.per_layer_input_vocab = positive_or(v, "vocab_size_per_layer_input", 262144);
  const int layers = m.num_layers;
  const int shared = read_non_negative_int(v, "num_kv_shared_layers", 0);
  if (shared > 0) {
    if (shared >= layers)
      v["num_kv_shared_layers"].fail("must be < num_hidden_layers (" + std::to_string(layers) + "), got " +
                                     std::to_string(shared) + ": a shared layer reads an earlier layer's cache");
    sliding_layers_from_types(v, layers);  // layer_types' length and values, before they are indexed
    // Gemma4Attention (vLLM): a shared layer takes the cache of the last non-shared layer of its type; a type with no
    // such layer fails there.
    const int first = layers - shared;
    const int shared_full = gemma4_full_layers_in(v, layers, first, layers);
    const int owned_full = gemma4_full_layers_in(v, layers, 0, first);
    if (shared_full > 0 && owned_full == 0)
      v["num_kv_shared_layers"].fail("shares full-attention layers' KV, but none of the first " +
                                     std::to_string(first) + " layers is a full-attention layer to share it");
    if (shared - shared_full > 0 && first - owned_full == 0)
      v["num_kv_shared_layers"].fail("shares sliding layers' KV, but none of the first " + std::to_string(first) +
                                     " layers slides");
    m.kv_shared_layers = shared;
    m.kv_shared_full_layers = shared_full;
    // Gemma4DecoderLayer: use_double_wide_mlp doubles intermediate_size in the KV-shared layers only.
    if (v.boolean_or("use_double_wide_mlp", false)) m.double_wide_mlp_layers = shared;
  }
}

}  // namespace

void read_gemma4_text(const JsonView& v, ModelSpec& m) {
  read_gemma4_on_device(v, m);
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
      "attention_dropout", "initializer_range", "dtype", "torch_dtype", "_name_or_path", "transformers_version",
      // Soft tokens per image and per video frame (nvidia/Gemma-4-31B-IT-NVFP4 writes 280 and 70): how many rows the
      // parameter-free pooler emits, as default_output_length says, not a weight.
      "image_seq_length", "video_seq_length"};
  refuse_unknown_keys(v, keys, "a gemma4_vision tower");
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

i64 gemma4_audio_params(const JsonView& v, i64 text_hidden) {
  v.expect_object();
  static const std::vector<const char*> keys = {
      "model_type", "hidden_size", "num_hidden_layers", "num_attention_heads", "hidden_act",
      "subsampling_conv_channels", "conv_kernel_size", "residual_weight", "attention_chunk_size",
      "attention_context_left", "attention_context_right", "attention_logit_cap", "attention_invalid_logits_value",
      "use_clipped_linears", "rms_norm_eps", "gradient_clipping", "output_proj_dims", "initializer_range",
      "architectures", "dtype", "torch_dtype", "_name_or_path", "transformers_version"};
  refuse_unknown_keys(v, keys, "a gemma4_audio tower");
  const std::string type = v.string_or("model_type", "gemma4_audio");
  if (type != "gemma4_audio") v["model_type"].fail("llmsim sizes the gemma4_audio tower only, got '" + type + "'");
  // Gemma4AudioConfig defaults (transformers).
  const i64 h = size_key(v, "hidden_size", 1024), layers = size_key(v, "num_hidden_layers", 12);
  const i64 heads = size_key(v, "num_attention_heads", 8), kernel = size_key(v, "conv_kernel_size", 5);
  const i64 out = size_key(v, "output_proj_dims", 1536);
  if (h % heads != 0)
    v["num_attention_heads"].fail("must divide hidden_size (" + std::to_string(h) + "), got " + std::to_string(heads));
  i64 ch0 = 128, ch1 = 32;
  if (v.has("subsampling_conv_channels") && !v.json().at("subsampling_conv_channels").is_null()) {
    const auto ch = v["subsampling_conv_channels"].elements();
    if (ch.size() != 2)
      v["subsampling_conv_channels"].fail("must list 2 channel counts (two conv layers), got " +
                                          std::to_string(ch.size()));
    const i64 c0 = ch[0].as_integer(), c1 = ch[1].as_integer();
    if (c0 < 4 || c0 > (i64{1} << 20)) ch[0].fail("must be an integer in 4..2^20, got " + std::to_string(c0));
    if (c1 < 1 || c1 > (i64{1} << 20)) ch[1].fail("must be an integer in 1..2^20, got " + std::to_string(c1));
    ch0 = c0;
    ch1 = c1;
  }
  const long double bound = static_cast<long double>(layers) * (24.0L * h * h + h * kernel) +
                            static_cast<long double>(ch0) * ch1 * (9 + h) + static_cast<long double>(out) * (h + text_hidden);
  if (bound > 1e13L)
    v.fail("sizes allow " + format_value(static_cast<double>(bound)) + " parameters: implausibly large");
  // Gemma4AudioSubSampleConvProjection: two 3×3 convs (1 → ch0 → ch1, no bias) with weight-only LayerNorms, and
  // input_proj_linear ((ch0 / 4) × ch1 → hidden).
  const i64 subsample = 9 * ch0 + ch0 + 9 * ch0 * ch1 + ch1 + (ch0 / 4) * ch1 * h;
  // Gemma4AudioLayer (conformer): two feed-forwards (h → 4h → h, 2 RMSNorms each); attention q/k/v/post (h × h),
  // relative_k_proj (h × h) and per_dim_scale (head_dim); the light conv (linear_start h → 2h, depthwise conv of
  // conv_kernel_size, linear_end h × h, 2 RMSNorms); 3 RMSNorms.
  const i64 layer = 2 * (8 * h * h + 2 * h) + 5 * h * h + h / heads + 3 * h * h + h * kernel + 2 * h + 3 * h;
  // output_proj (h → output_proj_dims, biased) and Gemma4MultimodalEmbedder's embedding_projection (output_proj_dims →
  // text hidden; its RMSNorm has no weight). Clipped linears' min/max scalars are not counted.
  return subsample + layers * layer + h * out + out + out * text_hidden;
}

void read_gemma4_wrapper(const JsonView& v, ModelSpec& m) {
  // Gemma4ForConditionalGeneration builds audio_tower + embed_audio only with an audio_config (E2B, E4B); loaded as
  // the vision tower is, never run for text.
  if (v.has("audio_config") && !v.json().at("audio_config").is_null()) {
    m.audio_params = gemma4_audio_params(v["audio_config"], m.hidden_size);
    m.notes.push_back("the audio tower and projector (" + format_value(static_cast<double>(m.audio_params) / 1e9) +
                      " B parameters, 16-bit) are loaded and counted in memory; text requests never run them");
  }
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
