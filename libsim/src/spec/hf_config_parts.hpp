#pragma once
// Private to the config.json reader (hf_config.cpp): integer readers, vision-tower sizes, and the layouts of the
// families added for issue 30 (gpt-oss, Llama-4, Qwen3-Next, GLM-4.5, DeepSeek-V3.2's indexer). Each layout cites
// the vLLM model file it follows; docs/cost-model.md "Model families" has the table.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/model_spec.hpp"

namespace llmsim::spec::hf {

using i64 = std::int64_t;

/// Integer `key` in 1..2^30; ConfigError naming it otherwise.
int read_positive_int(const JsonView& v, std::string_view key);
/// Integer `key` in 0..2^30, `fallback` when absent or null.
int read_non_negative_int(const JsonView& v, std::string_view key, int fallback);
/// Positive integer `key`, `fallback` when absent or null.
int positive_or(const JsonView& v, std::string_view key, int fallback);
/// Integer `key`, or the transformers class default when the config omits it (only where HF writes nested configs
/// as a diff against those defaults); else required.
int size_key(const JsonView& v, std::string_view key, int class_default);

/// Refuses every key of `v` outside `keys`, naming each (a key llmsim does not understand could change the size of
/// `what`, e.g. "a SigLIP vision tower").
void refuse_unknown_keys(const JsonView& v, const std::vector<const char*>& keys, std::string_view what);

/// Sliding layers from layer_types when given (each "full_attention" or "sliding_attention", one per layer); -1
/// when the config has no layer_types. ConfigError naming the entry otherwise.
int sliding_layers_from_types(const JsonView& v, int layers);

/// SigLIP vision tower without its pooling head (Gemma-3).
i64 siglip_params(const JsonView& vision);
/// Llama-4's vision tower, pixel-shuffle adapter and multi-modal projector into a text model of `text_hidden`.
i64 llama4_vision_params(const JsonView& vision, i64 text_hidden);
/// Kimi-K2.5's MoonViT-3D vision tower + its patch-merger projector into a text model of `text_hidden`.
i64 moonvit_params(const JsonView& vision, i64 text_hidden);
/// Pixtral vision tower + Mistral-3's patch merger and projector into a text model of `text_hidden`.
i64 pixtral_params(const JsonView& wrapper, const JsonView& vision, i64 text_hidden);

/// gpt-oss: attention biases and sinks, MoE with expert and router biases. After the text-model keys are read.
void read_gpt_oss(const JsonView& v, ModelSpec& m);
/// Llama-4 text: MoE every interleave_moe_layer_step-th layer with a shared expert, dense layers of
/// intermediate_size_mlp, chunked local attention on the RoPE layers (planned as a sliding window of the chunk).
void read_llama4_text(const JsonView& v, ModelSpec& m);
/// Qwen3-Next: gated DeltaNet layers (per-sequence state) and gated full-attention layers.
void read_qwen3_next(const JsonView& v, ModelSpec& m);
/// GLM-4.5 / 4.6 / 4.7 (glm4_moe): dense-first MoE with shared experts, q/k/v bias, optional q/k norm, MTP layers.
void read_glm4_moe(const JsonView& v, ModelSpec& m);
/// DeepSeek-V2/V3 (and Kimi-K2): MLA, dense-first MoE with shared experts, MTP modules reported apart.
void read_deepseek(const JsonView& v, ModelSpec& m);
/// Gemma-4 text (hf_config_gemma.cpp): full layers' global_head_dim / num_global_key_value_heads / k_eq_v, qk
/// norms, the MoE block beside the dense MLP (26B-A4B), E2B/E4B's per-layer inputs, KV sharing, double-wide MLPs.
void read_gemma4_text(const JsonView& v, ModelSpec& m);
/// Sliding layers of a Gemma-4 text config (layer_types, or transformers' default of 5 in 6, last layer full).
int gemma4_sliding_layers(const JsonView& v, int layers);
/// The gemma4 wrapper around its text model: refuses an untied head, sizes the vision and audio towers.
void read_gemma4_wrapper(const JsonView& wrapper, ModelSpec& m);
/// Gemma-4's vision tower (gemma4_vision) and its projector into a text model of `text_hidden`.
i64 gemma4_vision_params(const JsonView& vision, i64 text_hidden);
/// Gemma-4 E2B/E4B's audio tower (gemma4_audio, a conformer) and its projector into a text model of `text_hidden`.
i64 gemma4_audio_params(const JsonView& audio, i64 text_hidden);
/// DeepSeek-V3.2's sparse-attention indexer (index_n_heads, index_head_dim, index_topk).
void read_deepseek_indexer(const JsonView& v, ModelSpec& m);

/// Qwen3.5's vision tower (Qwen3-VL's) and its patch mergers into a text model of `text_hidden`
/// (hf_config_recent.cpp).
i64 qwen3_vl_vision_params(const JsonView& vision, i64 text_hidden);
/// Qwen3.5 text (qwen3_5_text, qwen3_5_moe_text), after read_qwen3_next: MTP layers, the recurrent state's dtype.
void read_qwen3_5_text(const JsonView& v, ModelSpec& m);
/// MiniMax-M2 (minimax_m2): every layer a MoE of intermediate_size experts, full-width q/k norms, routing bias.
void read_minimax_m2(const JsonView& v, ModelSpec& m);
/// Nemotron-H / Nemotron-3 (hf_config_nemotron.cpp): hybrid_override_pattern's single-block layers, Mamba-2 mixers
/// as linear-attention layers, relu² MLPs and MoEs.
void read_nemotron_h(const JsonView& v, ModelSpec& m);
/// Why llmsim refuses a model_type (or its architecture class) it knows it cannot price (DeepSeek-V4, Nemotron-H);
/// "" for any other.
std::string refused_architecture(const std::string& model_type);

}  // namespace llmsim::spec::hf
