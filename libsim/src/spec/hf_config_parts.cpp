// Pieces of the config.json reader shared by hf_config.cpp (the family table and dispatch) and
// hf_config_parts.cpp (integer readers, vision towers, and the families added for issue 30).
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <set>

#include "hf_config_parts.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"

namespace llmsim::spec::hf {

int read_positive_int(const JsonView& v, std::string_view key) {
  const i64 x = v.integer(key);
  if (x < 1 || x > (i64{1} << 30)) v[key].fail("must be a positive integer, got " + std::to_string(x));
  return static_cast<int>(x);
}

int read_non_negative_int(const JsonView& v, std::string_view key, int fallback) {
  if (!v.has(key) || v.json().at(std::string(key)).is_null()) return fallback;
  const i64 x = v.integer(key);
  if (x < 0 || x > (i64{1} << 30)) v[key].fail("must be a non-negative integer, got " + std::to_string(x));
  return static_cast<int>(x);
}

int positive_or(const JsonView& v, std::string_view key, int fallback) {
  if (!v.has(key) || v.json().at(std::string(key)).is_null()) return fallback;
  return read_positive_int(v, key);
}

/// Integer `key`, or the transformers class default when the config omits it (only where HF writes nested configs
/// as a diff against those defaults); else required.
int size_key(const JsonView& v, std::string_view key, int class_default) {
  if (class_default > 0 && (!v.has(key) || v.json().at(std::string(key)).is_null())) return class_default;
  return read_positive_int(v, key);
}

/// Parameters of a SigLIP vision tower without its pooling head (transformers SiglipVisionModel; vLLM
/// model_executor/models/siglip.py): patch conv + position embedding, per layer two LayerNorms, q/k/v/o with biases
/// and a biased two-layer MLP, a final LayerNorm. Nested config: SiglipVisionConfig's defaults fill what it omits.
namespace {

/// Attributes every transformers PretrainedConfig carries (configuration_utils.py, PretrainedConfig.__init__), which
/// a sub-config serialized whole writes beside the tower's own keys (google/gemma-4-26B-A4B's vision_config: id2label,
/// return_dict, chunk_size_feed_forward, ...). They name outputs, labels and tokens, none a weight; the two that could
/// add weights are judged by value in base_key_changes_weights.
bool pretrained_config_base_key(const std::string& key) {
  static const std::set<std::string> k = {
      "_name_or_path", "architectures", "transformers_version", "dtype", "torch_dtype", "return_dict",
      "output_hidden_states", "output_attentions", "torchscript", "use_bfloat16", "tf_legacy_loss", "pruned_heads",
      "tie_word_embeddings", "chunk_size_feed_forward", "is_encoder_decoder", "is_decoder",
      "cross_attention_hidden_size", "add_cross_attention", "tie_encoder_decoder", "finetuning_task", "id2label",
      "label2id", "num_labels", "tokenizer_class", "prefix", "bos_token_id", "pad_token_id", "eos_token_id",
      "sep_token_id", "decoder_start_token_id", "task_specific_params", "problem_type"};
  return k.count(key) > 0;
}

/// pruned_heads (heads removed from layers) and add_cross_attention (cross-attention blocks added) change the weights
/// when set; their serialized defaults ({} and false) do not.
bool base_key_changes_weights(const std::string& key, const Json& value) {
  if (value.is_null()) return false;
  if (key == "pruned_heads") return !value.empty();
  if (key == "add_cross_attention") return !value.is_boolean() || value.get<bool>();
  return false;
}

}  // namespace

void refuse_unknown_keys(const JsonView& v, const std::vector<const char*>& keys, std::string_view what) {
  Problems p;
  for (auto it = v.json().begin(); it != v.json().end(); ++it) {
    if (pretrained_config_base_key(it.key())) {
      if (base_key_changes_weights(it.key(), it.value()))
        p.add(v.child_path(it.key()), "is " + it.value().dump() + ": llmsim sizes " + std::string(what) +
                                          " without pruned heads or added cross-attention");
      continue;
    }
    if (std::find_if(keys.begin(), keys.end(), [&](const char* k) { return it.key() == k; }) == keys.end())
      p.add(v.child_path(it.key()),
            "llmsim does not know what this key does to the size of " + std::string(what) + ", so it cannot size it");
  }
  p.throw_if_any();
}

i64 siglip_params(const JsonView& v) {
  v.expect_object();
  static const std::vector<const char*> keys = {
      "hidden_size", "image_size", "intermediate_size", "model_type", "num_attention_heads", "num_hidden_layers",
      "patch_size", "vision_use_head", "num_channels", "hidden_act", "layer_norm_eps", "attention_dropout",
      "torch_dtype", "dtype", "initializer_range"};
  refuse_unknown_keys(v, keys, "a SigLIP vision tower");
  const std::string type = v.string_or("model_type", "siglip_vision_model");
  if (type != "siglip_vision_model") v["model_type"].fail("llmsim sizes SigLIP vision towers only, got '" + type + "'");
  if (v.boolean_or("vision_use_head", false)) v["vision_use_head"].fail("the attention-pooling head is not sized by llmsim");
  const i64 h = size_key(v, "hidden_size", 768), inter = size_key(v, "intermediate_size", 3072);
  const i64 layers = size_key(v, "num_hidden_layers", 12), channels = size_key(v, "num_channels", 3);
  const i64 image = size_key(v, "image_size", 224), patch = size_key(v, "patch_size", 16);
  size_key(v, "num_attention_heads", 12);  // checked, not needed: q/k/v/o are h × h whatever the head count
  // int64 products below: bound them first (SigLIP-so400m has ~4e8 parameters).
  const long double bound = static_cast<long double>(channels) * image * image * h +
                            static_cast<long double>(layers) * (8 * h * h + 2 * h * inter) + 16 * h;
  if (bound > 1e15L) v.fail("sizes allow " + format_value(static_cast<double>(bound)) + " parameters: implausibly large");
  const i64 patches = (image / patch) * (image / patch);
  const i64 embeddings = channels * patch * patch * h + h + patches * h;
  const i64 layer = 2 * 2 * h + 4 * (h * h + h) + (h * inter + inter) + (inter * h + h);
  return embeddings + layers * layer + 2 * h;
}

namespace {

bool present(const JsonView& v, std::string_view key) {
  return v.has(key) && !v.json().at(std::string(key)).is_null();
}

/// Refuses keys of a vision_config outside `keys` (a key llmsim does not understand could change the tower's size).
void check_vision_keys(const JsonView& v, std::initializer_list<const char*> keys) {
  refuse_unknown_keys(v, std::vector<const char*>(keys), "this vision tower");
}

/// Checks the int64 products of `m`'s fields stay far from overflow before counting from them.
void bound(const JsonView& v, const ModelSpec& m) {
  Problems p;
  m.check_magnitude(p, v.path());
  p.throw_if_any();
}

}  // namespace

i64 llama4_vision_params(const JsonView& v, i64 text_hidden) {
  // vllm/model_executor/models/mllama4.py (Llama4VisionModel, Llama4VisionPixelShuffleMLP,
  // Llama4MultiModalProjector); transformers' published per-module count of Llama-4-Scout (109,676,279,296).
  v.expect_object();
  check_vision_keys(v, {"attention_dropout", "hidden_act", "hidden_size", "image_size", "initializer_range",
                        "intermediate_size", "model_type", "multi_modal_projector_bias", "norm_eps",
                        "num_attention_heads", "num_channels", "num_hidden_layers", "patch_size", "pixel_shuffle_ratio",
                        "projector_dropout", "projector_input_dim", "projector_output_dim", "rope_theta",
                        "vision_feature_layer", "vision_feature_select_strategy", "vision_output_dim", "torch_dtype",
                        "dtype", "_attn_implementation_autoset"});
  const std::string type = v.string_or("model_type", "llama4_vision_model");
  if (type != "llama4_vision_model") v["model_type"].fail("must be llama4_vision_model, got '" + type + "'");
  const i64 h = read_positive_int(v, "hidden_size"), inter = read_positive_int(v, "intermediate_size");
  const i64 layers = read_positive_int(v, "num_hidden_layers"), patch = read_positive_int(v, "patch_size");
  const i64 image = read_positive_int(v, "image_size"), channels = positive_or(v, "num_channels", 3);
  const i64 proj_in = read_positive_int(v, "projector_input_dim"), proj_out = read_positive_int(v, "projector_output_dim");
  const i64 out = read_positive_int(v, "vision_output_dim");
  const double ratio = v.number("pixel_shuffle_ratio");
  if (!(ratio > 0 && ratio <= 1)) v["pixel_shuffle_ratio"].fail("must be in (0, 1], got " + format_value(ratio));
  const long double b = static_cast<long double>(layers) * (4.0L * h * h + 2.0L * h * inter) +
                        static_cast<long double>(channels) * patch * patch * h + 1.0L * image * image * h +
                        1.0L * h / (ratio * ratio) * proj_in + 1.0L * proj_in * proj_out + 1.0L * out * text_hidden;
  if (b > 1e15L) v.fail("sizes allow " + format_value(static_cast<double>(b)) + " parameters: implausibly large");
  const i64 patches = (image / patch) * (image / patch);
  const i64 embeddings = h + (patches + 1) * h + channels * patch * patch * h + 4 * h;  // class, positions, patch, ln
  const i64 layer = 4 * (h * h + h) + (h * inter + inter) + (inter * h + h) + 4 * h;
  const i64 shuffled = static_cast<i64>(std::llround(static_cast<double>(h) / (ratio * ratio)));
  const i64 adapter = shuffled * proj_in + proj_in * proj_out;  // vision_adapter fc1, fc2 (no biases)
  const i64 projector = out * text_hidden + (v.boolean_or("multi_modal_projector_bias", false) ? text_hidden : 0);
  return embeddings + layers * layer + adapter + projector;
}

i64 pixtral_params(const JsonView& w, const JsonView& v, i64 text_hidden) {
  // vllm/model_executor/models/pixtral.py (PixtralHFVisionModel: patch_conv without bias, ln_pre, per layer two
  // RMSNorms, q/k/v/o and a gated MLP without biases) and mistral3.py (Mistral3MultiModalProjector: RMSNorm, the
  // patch merger's merging_layer, linear_1 and linear_2).
  v.expect_object();
  check_vision_keys(v, {"attention_dropout", "head_dim", "hidden_act", "hidden_size", "image_size",
                        "initializer_range", "intermediate_size", "model_type", "num_attention_heads", "num_channels",
                        "num_hidden_layers", "patch_size", "rope_theta", "rope_parameters", "torch_dtype", "dtype"});
  const std::string type = v.string_or("model_type", "pixtral");
  if (type != "pixtral") v["model_type"].fail("must be pixtral, got '" + type + "'");
  const i64 h = read_positive_int(v, "hidden_size"), inter = read_positive_int(v, "intermediate_size");
  const i64 layers = read_positive_int(v, "num_hidden_layers"), patch = read_positive_int(v, "patch_size");
  const i64 channels = positive_or(v, "num_channels", 3), merge = positive_or(w, "spatial_merge_size", 2);
  if (present(w, "vision_feature_layer") && !w.json().at("vision_feature_layer").is_number_integer())
    w["vision_feature_layer"].fail("several feature layers are not sized by llmsim");
  const long double b = static_cast<long double>(layers) * (4.0L * h * h + 3.0L * h * inter) +
                        1.0L * merge * merge * h * h + 1.0L * h * text_hidden + 1.0L * text_hidden * text_hidden;
  if (b > 1e15L) v.fail("sizes allow " + format_value(static_cast<double>(b)) + " parameters: implausibly large");
  const bool bias = w.boolean_or("multimodal_projector_bias", false);
  const i64 tower = channels * patch * patch * h + h + layers * (2 * h + 4 * h * h + 3 * h * inter);
  const i64 projector = h + merge * merge * h * h + h * text_hidden + text_hidden * text_hidden + (bias ? 2 * text_hidden : 0);
  return tower + projector;
}

i64 moonvit_params(const JsonView& v, i64 text_hidden) {
  // vllm/model_executor/models/kimi_k25_vit.py (MoonViT3dPretrainedModel: a biased patch conv, a learnable
  // init_pos_emb_height × init_pos_emb_width position table (the temporal table is a fixed sincos buffer), per layer
  // two LayerNorms, a biased fused wqkv and wo, a biased two-layer GELU MLP, a final LayerNorm;
  // KimiK25MultiModalProjector "patchmerger": a LayerNorm, then linear_1 (4h -> 4h) and linear_2 (4h -> the text
  // hidden size), both biased, for a 2 × 2 merge). vLLM's KimiK25VisionConfig reads the vt_* names or the plain ones.
  v.expect_object();
  check_vision_keys(v, {"_attn_implementation", "hidden_size", "init_pos_emb_height", "init_pos_emb_time",
                        "init_pos_emb_width", "intermediate_size", "merge_kernel_size", "merge_type", "mm_hidden_size",
                        "mm_projector_type", "model_type", "num_attention_heads", "num_hidden_layers", "patch_size",
                        "pos_emb_type", "projector_hidden_act", "projector_ln_eps", "text_hidden_size",
                        "video_attn_type", "vt_hidden_size", "vt_intermediate_size", "vt_num_attention_heads",
                        "vt_num_hidden_layers", "torch_dtype", "dtype"});
  auto either = [&](const char* plain, const char* vt, int fallback) {  // KimiK25VisionConfig: plain, vt_*, default
    return present(v, plain) ? read_positive_int(v, plain) : positive_or(v, vt, fallback);
  };
  const i64 h = either("hidden_size", "vt_hidden_size", 1152);
  const i64 inter = either("intermediate_size", "vt_intermediate_size", 4304);
  const i64 layers = either("num_hidden_layers", "vt_num_hidden_layers", 27);
  either("num_attention_heads", "vt_num_attention_heads", 16);  // checked: wqkv is h × 3h whatever the head count
  const i64 patch = positive_or(v, "patch_size", 14);
  const i64 pos_h = positive_or(v, "init_pos_emb_height", 64), pos_w = positive_or(v, "init_pos_emb_width", 64);
  static const std::pair<const char*, const char*> sized[] = {
      {"mm_projector_type", "patchmerger"}, {"pos_emb_type", "divided_fixed"}, {"merge_type", "sd2_tpool"}};
  for (const auto& [key, want] : sized)
    if (v.string_or(key, want) != want)
      v[key].fail(std::string("is '") + v.string(key) + "': llmsim sizes MoonViT with " + key + " '" + want + "' only");
  i64 merge = 4;  // merge_kernel_size [2, 2]
  if (present(v, "merge_kernel_size")) {
    merge = 1;
    const auto k = v["merge_kernel_size"].elements();
    if (k.size() != 2) v["merge_kernel_size"].fail("must be [height, width]");
    for (const auto& e : k) {
      const i64 x = e.as_integer();
      if (x < 1 || x > 64) e.fail("must be in 1..64, got " + std::to_string(x));
      merge *= x;
    }
  }
  // KimiK25Config: mm_hidden_size defaults to the tower's width and then means the text model's hidden size.
  const i64 mm = present(v, "mm_hidden_size") ? read_positive_int(v, "mm_hidden_size") : h;
  const i64 out = mm == h ? text_hidden : mm;
  if (out != text_hidden)
    v["mm_hidden_size"].fail("is " + std::to_string(mm) + ": the projector must emit the text model's hidden size (" +
                             std::to_string(text_hidden) + ")");
  if (present(v, "text_hidden_size") && v.integer("text_hidden_size") != text_hidden)
    v["text_hidden_size"].fail("differs from text_config's hidden_size (" + std::to_string(text_hidden) + ")");
  const long double b = static_cast<long double>(layers) * (4.0L * h * h + 2.0L * h * inter) + 3.0L * patch * patch * h +
                        1.0L * pos_h * pos_w * h + 1.0L * merge * merge * h * h + 1.0L * merge * h * text_hidden;
  if (b > 1e15L) v.fail("sizes allow " + format_value(static_cast<double>(b)) + " parameters: implausibly large");
  const i64 embeddings = 3 * patch * patch * h + h + pos_h * pos_w * h;
  const i64 layer = 2 * 2 * h + (3 * h * h + 3 * h) + (h * h + h) + (h * inter + inter) + (inter * h + h);
  const i64 merged = merge * h;
  const i64 projector = 2 * h + (merged * merged + merged) + (merged * text_hidden + text_hidden);
  return embeddings + layers * layer + 2 * h + projector;
}

void read_gpt_oss(const JsonView& v, ModelSpec& m) {
  // vllm/model_executor/models/gpt_oss.py: OAIAttention (qkv and o_proj with biases, one learned sink logit per head),
  // MLPBlock (router with bias; every layer a FusedMoE of num_local_experts experts of intermediate_size whose
  // gate_up and down projections have biases). layer_types alternate sliding (128) and full attention.
  m.num_experts = read_positive_int(v, "num_local_experts");
  m.experts_per_token = read_positive_int(v, "num_experts_per_tok");
  if (present(v, "experts_per_token") && v.integer("experts_per_token") != m.experts_per_token)
    v["experts_per_token"].fail("differs from num_experts_per_tok (" + std::to_string(m.experts_per_token) + ")");
  if (!m.attention_bias) v.fail("gpt-oss without attention_bias is not a published shape; llmsim will not guess it");
  bound(v, m);
  const i64 h = m.hidden_size, e = m.num_experts, inter = m.intermediate_size;
  m.bias_params_per_layer += h + m.num_heads;  // o_proj bias + sinks
  m.moe_bias_params = e * (2 * inter + h) + e;   // gate_up and down biases per expert, router bias
  m.dense_layers = 0;
}

void read_llama4_text(const JsonView& v, ModelSpec& m) {
  // vllm/model_executor/models/llama4.py: Llama4MoE (router without bias, routed experts of intermediate_size, one
  // shared expert of intermediate_size) on layers with (i + 1) % interleave_moe_layer_step == 0 (or those listed in
  // moe_layers), LlamaMLP of intermediate_size_mlp elsewhere; use_qk_norm is a weightless L2 norm. Layers with RoPE
  // (no_rope_layers[i] == 1; by default all but every no_rope_layer_interval-th) attend within chunks of
  // attention_chunk_size tokens (ChunkedLocalAttention); the NoPE layers attend to everything.
  m.num_experts = read_positive_int(v, "num_local_experts");
  m.experts_per_token = read_positive_int(v, "num_experts_per_tok");
  m.moe_intermediate_size = m.intermediate_size;
  m.shared_expert_intermediate_size = m.intermediate_size;
  m.intermediate_size = read_positive_int(v, "intermediate_size_mlp");
  int moe = 0;
  if (present(v, "moe_layers") && !v["moe_layers"].elements().empty()) {
    std::set<i64> seen;
    for (const auto& e : v["moe_layers"].elements()) {
      const i64 i = e.as_integer();
      if (i < 0 || i >= m.num_layers) e.fail("must be a layer index in 0.." + std::to_string(m.num_layers - 1));
      seen.insert(i);
    }
    moe = static_cast<int>(seen.size());
  } else {
    const int step = read_non_negative_int(v, "interleave_moe_layer_step", 1);
    moe = step > 0 ? m.num_layers / step : 0;
  }
  m.dense_layers = m.num_layers - moe;
  int rope = 0;
  if (present(v, "no_rope_layers") && !v["no_rope_layers"].elements().empty()) {
    const auto flags = v["no_rope_layers"].elements();
    if (static_cast<int>(flags.size()) != m.num_layers)
      v["no_rope_layers"].fail("has " + std::to_string(flags.size()) + " entries for " + std::to_string(m.num_layers) +
                               " layers");
    for (const auto& f : flags) rope += f.as_integer() != 0 ? 1 : 0;
  } else {
    const int interval = positive_or(v, "no_rope_layer_interval", 4);
    rope = m.num_layers - m.num_layers / interval;
  }
  const int chunk = read_non_negative_int(v, "attention_chunk_size", 0);
  if (chunk > 0 && chunk < m.max_position_embeddings && rope > 0) {
    m.sliding_window = chunk;
    m.sliding_layers = rope;
    m.notes.push_back(std::to_string(rope) + " chunked-attention layers (chunks of " + std::to_string(chunk) +
                      " tokens) are planned as a sliding window of " + std::to_string(chunk) +
                      ": the same KV bound; their attention FLOPs are an upper bound (a chunk sees 0.." +
                      std::to_string(chunk) + " tokens, a window always " + std::to_string(chunk) + ")");
  }
}

void read_qwen3_next(const JsonView& v, ModelSpec& m) {
  // vllm/model_executor/models/qwen3_next.py: Qwen3NextAttention (q_proj emits q and a sigmoid output gate,
  // q_norm/k_norm) on every full_attention_interval-th layer, Qwen3NextGatedDeltaNet on the others; the MoE of
  // Qwen2-MoE's shape (routed experts, a shared expert with its sigmoid gate) on every layer.
  m.attention_output_gate = true;
  m.qk_norm = true;
  m.linear_num_key_heads = read_positive_int(v, "linear_num_key_heads");
  m.linear_num_value_heads = read_positive_int(v, "linear_num_value_heads");
  m.linear_key_head_dim = read_positive_int(v, "linear_key_head_dim");
  m.linear_value_head_dim = read_positive_int(v, "linear_value_head_dim");
  m.linear_conv_kernel_dim = read_positive_int(v, "linear_conv_kernel_dim");
  if (m.linear_num_value_heads % m.linear_num_key_heads != 0)
    v["linear_num_value_heads"].fail("must be a multiple of linear_num_key_heads (" +
                                     std::to_string(m.linear_num_key_heads) + ")");
  int linear = 0;
  if (present(v, "layer_types")) {
    const auto types = v["layer_types"].elements();
    if (static_cast<int>(types.size()) != m.num_layers)
      v["layer_types"].fail("has " + std::to_string(types.size()) + " entries for " + std::to_string(m.num_layers) +
                            " layers");
    for (const auto& t : types) {
      const std::string s = t.as_string();
      if (s == "linear_attention") ++linear;
      else if (s != "full_attention") t.fail("is '" + s + "': Qwen3-Next has linear_attention and full_attention layers");
    }
  } else {
    const int interval = positive_or(v, "full_attention_interval", 4);  // layer i is full when (i + 1) % interval == 0
    linear = m.num_layers - m.num_layers / interval;
  }
  m.linear_attention_layers = linear;
  m.notes.push_back(std::to_string(linear) + " gated-DeltaNet layers keep a fixed state per running sequence (no "
                    "per-token KV); the KV cache per token counts the " + std::to_string(m.num_layers - linear) +
                    " attention layers only");
}

void read_glm4_moe(const JsonView& v, ModelSpec& m) {
  // vllm/model_executor/models/glm4_moe.py: Glm4MoeAttention (q/k/v bias when attention_bias, no o_proj bias,
  // q_norm/k_norm when use_qk_norm, partial rotary); Glm4MoE from layer first_k_dense_replace on: routed experts of
  // moe_intermediate_size, n_shared_experts shared ones, a router with e_score_correction_bias.
  m.qk_norm = v.boolean_or("use_qk_norm", false);
  m.num_experts = read_positive_int(v, "n_routed_experts");
  m.experts_per_token = read_positive_int(v, "num_experts_per_tok");
  m.moe_intermediate_size = read_positive_int(v, "moe_intermediate_size");
  const i64 shared = i64{read_non_negative_int(v, "n_shared_experts", 0)} * m.moe_intermediate_size;
  if (shared > (i64{1} << 30)) v["n_shared_experts"].fail("times moe_intermediate_size exceeds 2^30");
  m.shared_expert_intermediate_size = static_cast<int>(shared);
  m.dense_layers = std::min(m.num_layers, read_non_negative_int(v, "first_k_dense_replace", 0));
  m.moe_bias_params = m.num_experts;  // e_score_correction_bias
  m.mtp_layers = read_non_negative_int(v, "num_nextn_predict_layers", 0);
  if (m.mtp_layers > 0) {
    bound(v, m);
    // Glm4MoeMTP: one MoE decoder layer + enorm, hnorm, eh_proj (2h -> h) and a shared-head norm.
    const i64 h = m.hidden_size;
    m.mtp_params = m.mtp_layers * (m.attention_params_per_layer() + m.norm_params_per_layer() + m.moe_mlp_params() +
                                   2 * h + 2 * h * h + h);
    m.notes.push_back(std::to_string(m.mtp_layers) +
                      " multi-token-prediction layer(s) in the checkpoint are not loaded by vLLM without speculative "
                      "decoding; not counted");
  }
}

void read_deepseek(const JsonView& v, ModelSpec& m) {
  // vllm/model_executor/models/deepseek_v2.py (V2, V2.5, V3, R1, V3.2, Kimi-K2): MLA attention; DeepseekV2MoE from
  // layer first_k_dense_replace on (every moe_layer_freq-th), with n_shared_experts × moe_intermediate_size shared.
  // Keys whose absence would silently take a transformers class default that differs by family (q_lora_rank 1536 in
  // DeepseekV3Config, the expert counts, first_k_dense_replace): every published config writes them (null where a
  // piece is absent), so a config without them is refused rather than guessed.
  for (const char* key : {"q_lora_rank", "n_routed_experts"})
    if (!v.json().contains(key)) v[key].fail("missing: write it (null for none); llmsim will not guess a class default");
  // null: a direct q_proj; a number is q_a_proj's width (DeepseekV2MLAAttention), so 0 would be a zero-width LoRA.
  m.q_lora_rank = v.json().at("q_lora_rank").is_null() ? 0 : read_positive_int(v, "q_lora_rank");
  m.kv_lora_rank = read_positive_int(v, "kv_lora_rank");
  m.qk_nope_head_dim = read_positive_int(v, "qk_nope_head_dim");
  m.qk_rope_head_dim = read_positive_int(v, "qk_rope_head_dim");
  m.v_head_dim = read_positive_int(v, "v_head_dim");
  if (i64{m.qk_nope_head_dim} + m.qk_rope_head_dim > (i64{1} << 30))
    v["qk_rope_head_dim"].fail("with qk_nope_head_dim exceeds 2^30");
  m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  m.num_kv_heads = m.num_heads;  // prefill runs MHA on the up-projected K/V; the cache holds one latent per token
  // DeepseekV2DecoderLayer: n_routed_experts null means dense layers; 0 would build a MoE of no experts.
  m.num_experts = v.json().at("n_routed_experts").is_null() ? 0 : read_positive_int(v, "n_routed_experts");
  if (m.num_experts > 0) {
    for (const char* key : {"n_shared_experts", "first_k_dense_replace"})
      if (!v.json().contains(key))
        v[key].fail("missing: write it (null or 0 for none); llmsim will not guess a class default");
    // vLLM compares the layer index with it (DeepseekV2DecoderLayer): a number, 0 for MoE from the first layer.
    if (v.json().at("first_k_dense_replace").is_null())
      v["first_k_dense_replace"].fail("is null: write the number of leading dense layers (0 for none)");
    m.experts_per_token = read_positive_int(v, "num_experts_per_tok");
    if (m.experts_per_token > m.num_experts)
      v["num_experts_per_tok"].fail("must be <= n_routed_experts (" + std::to_string(m.num_experts) + "), got " +
                                    std::to_string(m.experts_per_token));
    m.moe_intermediate_size = read_positive_int(v, "moe_intermediate_size");
    const i64 shared = i64{read_non_negative_int(v, "n_shared_experts", 0)} * m.moe_intermediate_size;
    if (shared > (i64{1} << 30)) v["n_shared_experts"].fail("times moe_intermediate_size exceeds 2^30");
    m.shared_expert_intermediate_size = static_cast<int>(shared);
    // Sparse layers: i >= first_k_dense_replace and i % moe_layer_freq == 0, counted in closed form.
    const i64 first_dense = read_non_negative_int(v, "first_k_dense_replace", 0);
    const i64 freq = positive_or(v, "moe_layer_freq", 1), layers = m.num_layers;
    const i64 sparse = first_dense >= layers ? 0 : (layers - 1) / freq - (first_dense + freq - 1) / freq + 1;
    m.dense_layers = static_cast<int>(layers - sparse);
  }
  m.mtp_layers = read_non_negative_int(v, "num_nextn_predict_layers", 0);
  if (m.mtp_layers > 0) {
    // DeepSeek-V3's MTP module (its README: "671B of the Main Model weights and 14B of the Multi-Token Prediction
    // (MTP) Module weights"): one MoE decoder layer, enorm + hnorm, eh_proj (2h → h), a final norm and its own copy
    // of the embedding and the LM head. vLLM skips these weights unless a deepseek_mtp speculator loads them
    // (deepseek_v2.py load_weights: "skip spec decode layers for main model").
    Problems p;  // the counts below are int64 products of the fields: bound them first
    m.check_magnitude(p, v.path());
    p.throw_if_any();
    const i64 h = m.hidden_size;
    const i64 layer = m.attention_params_per_layer() + m.norm_params_per_layer() +
                      (m.num_experts > 0 ? m.moe_mlp_params() : m.dense_mlp_params());
    m.mtp_params = m.mtp_layers * (layer + 2 * h + 2 * h * h + h + 2 * m.embedding_params());
    m.notes.push_back(std::to_string(m.mtp_layers) +
                      " multi-token-prediction layer(s) in the checkpoint are not loaded by vLLM without speculative "
                      "decoding; not counted");
  }
}

void read_deepseek_indexer(const JsonView& v, ModelSpec& m) {
  // vllm/model_executor/models/deepseek_v2.py (Indexer, DeepseekV32IndexerCache): each MLA layer gains a lightning
  // indexer that scores every cached token and keeps the index_topk best for the sparse MLA; its FP8 key cache adds
  // index_head_dim + 4 bytes per 128 to each token of each layer.
  m.index_n_heads = read_positive_int(v, "index_n_heads");
  m.index_head_dim = read_positive_int(v, "index_head_dim");
  m.index_topk = read_positive_int(v, "index_topk");
  if (m.q_lora_rank <= 0) v["q_lora_rank"].fail("must be > 0 for the indexer's wq_b (DeepSeek-V3.2 layout)");
  m.notes.push_back("sparse attention (DSA): the indexer's weights and FP8 key cache (" +
                    format_value(m.indexer_kv_bytes_per_token_per_layer()) +
                    " B per token and layer) are counted; each query attends to the indexer's top " +
                    std::to_string(m.index_topk) + " tokens after the indexer scores every cached token (vLLM on "
                    "Hopper/Blackwell: every token computes all " + std::to_string(m.index_topk) +
                    " slots at heads padded to 64/128, perf/sparse_mla; other runtimes: a window of that size)");
}

// Sliding layers from layer_types when given (each "full_attention" or "sliding_attention", one per layer).
// Returns -1 when the config has no layer_types.
int sliding_layers_from_types(const JsonView& v, int layers) {
  if (!v.has("layer_types") || v.json().at("layer_types").is_null()) return -1;
  const auto types = v["layer_types"].elements();
  if (static_cast<int>(types.size()) != layers) {
    v["layer_types"].fail("has " + std::to_string(types.size()) + " entries for " + std::to_string(layers) +
                          " layers");
  }
  int sliding = 0;
  for (const auto& t : types) {
    const std::string s = t.as_string();
    if (s == "sliding_attention") ++sliding;
    else if (s != "full_attention")
      t.fail("is '" + s + "': llmsim sizes full_attention and sliding_attention layers only");
  }
  return sliding;
}

}  // namespace llmsim::spec::hf
