// The families of 2026 the config.json reader sizes beyond hf_config_parts.cpp: Qwen3.5 (Qwen3-Next's hybrid layers
// under a Qwen3-VL vision tower), MiniMax-M2, and the architectures it refuses with the reason (DeepSeek-V4,
// Nemotron-H). Each cites the vLLM model file it follows; docs/cost-model.md "Model families" has the table.
#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "hf_config_parts.hpp"

namespace llmsim::spec::hf {

namespace {
bool given(const JsonView& v, std::string_view key) { return v.has(key) && !v.json().at(std::string(key)).is_null(); }
}  // namespace

i64 qwen3_vl_vision_params(const JsonView& v, i64 text_hidden) {
  // vllm/model_executor/models/qwen3_vl.py (Qwen3_VisionTransformer, which qwen3_5.py builds): a biased Conv3d patch
  // embedding (in_channels × temporal_patch_size × patch_size² → hidden), a learnable num_position_embeddings ×
  // hidden position table, depth blocks of two LayerNorms, a biased fused qkv and proj and a biased two-layer MLP
  // (linear_fc1 hidden → intermediate, linear_fc2 back); the patch merger (LayerNorm of hidden, linear_fc1 4h → 4h,
  // linear_fc2 4h → out_hidden_size, both biased, for a 2 × 2 merge) and one more merger per deepstack index (its
  // LayerNorm after the shuffle, of 4h).
  v.expect_object();
  refuse_unknown_keys(v, {"deepstack_visual_indexes", "depth", "hidden_act", "hidden_size", "in_channels",
                          "initializer_range", "intermediate_size", "model_type", "num_heads",
                          "num_position_embeddings", "out_hidden_size", "patch_size", "spatial_merge_size",
                          "temporal_patch_size", "dtype", "torch_dtype"},
                      "a Qwen3-VL vision tower");
  const i64 h = read_positive_int(v, "hidden_size"), inter = read_positive_int(v, "intermediate_size");
  const i64 depth = read_positive_int(v, "depth"), patch = read_positive_int(v, "patch_size");
  const i64 channels = positive_or(v, "in_channels", 3), temporal = positive_or(v, "temporal_patch_size", 2);
  const i64 positions = read_positive_int(v, "num_position_embeddings");
  const i64 merge = positive_or(v, "spatial_merge_size", 2);
  const i64 out = read_positive_int(v, "out_hidden_size");
  if (out != text_hidden)
    v["out_hidden_size"].fail("is " + std::to_string(out) + " but the text model's hidden_size is " +
                              std::to_string(text_hidden) + ": the merger must feed the text model");
  i64 deepstack = 0;
  if (given(v, "deepstack_visual_indexes")) {
    for (const auto& e : v["deepstack_visual_indexes"].elements()) {
      const i64 i = e.as_integer();
      if (i < 0 || i >= depth) e.fail("must be a block index in 0.." + std::to_string(depth - 1));
      ++deepstack;
    }
  }
  const i64 merged = merge * merge * h;
  const long double b = static_cast<long double>(depth) * (4.0L * h * h + 2.0L * h * inter) +
                        1.0L * channels * temporal * patch * patch * h + 1.0L * positions * h +
                        (1.0L + deepstack) * (1.0L * merged * merged + 1.0L * merged * out);
  if (b > 1e15L) v.fail("sizes allow " + format_value(static_cast<double>(b)) + " parameters: implausibly large");
  const i64 embeddings = channels * temporal * patch * patch * h + h + positions * h;
  const i64 block = 2 * 2 * h + (3 * h * h + 3 * h) + (h * h + h) + (h * inter + inter) + (inter * h + h);
  const i64 merger_linears = (merged * merged + merged) + (merged * out + out);
  return embeddings + depth * block + (2 * h + merger_linears) + deepstack * (2 * merged + merger_linears);
}

void read_qwen3_5_text(const JsonView& v, ModelSpec& m) {
  // vllm/model_executor/models/qwen3_5.py and qwen3_5_moe.py: Qwen3-Next's layers (Qwen3_5GatedDeltaNet's in_proj_qkv,
  // in_proj_z, in_proj_b and in_proj_a hold Qwen3-Next's in_proj_qkvz and in_proj_ba), dense MLPs in Qwen3.5 and a
  // MoE with a gated shared expert in Qwen3.5-MoE; the multi-token-prediction layer (mtp.*) is loaded only by the
  // qwen3_5_mtp speculator.
  if (m.is_moe() && m.dense_layers > 0 && !given(v, "intermediate_size"))
    v["intermediate_size"].fail("missing: needed by the " + std::to_string(m.dense_layers) +
                                " dense layers (mlp_only_layers / decoder_sparse_step)");
  m.mtp_layers = read_non_negative_int(v, "mtp_num_hidden_layers", 0);
  if (m.mtp_layers > 0)
    m.notes.push_back(std::to_string(m.mtp_layers) + " multi-token-prediction layer(s) in the checkpoint are not "
                      "loaded by vLLM without speculative decoding; not counted");
  if (given(v, "mamba_ssm_dtype")) {
    const std::string d = v.string("mamba_ssm_dtype");
    if (d == "float32") m.linear_ssm_state_bytes = 4;
    else if (d == "bfloat16" || d == "float16") m.linear_ssm_state_bytes = 2;
    else v["mamba_ssm_dtype"].fail("is '" + d + "': llmsim knows float32, bfloat16 and float16");
    m.notes.push_back("the gated-DeltaNet recurrent state is kept in " + d +
                      " (mamba_ssm_dtype; vLLM's mamba_ssm_cache_dtype \"auto\" takes it), the conv window in the "
                      "model dtype");
  }
}

void read_minimax_m2(const JsonView& v, ModelSpec& m) {
  // vllm/model_executor/models/minimax_m2.py: full attention on every layer (GQA, partial rotary of rotary_dim: no
  // weight), q_norm over all query heads and k_norm over all KV heads together (MiniMaxText01RMSNormTP of
  // heads × head_dim: qk_norm_type "per_layer"); every layer a MoE of num_local_experts experts of intermediate_size,
  // top num_experts_per_tok, no shared expert, a router without bias and, with use_routing_bias, an
  // e_score_correction_bias per expert. The MTP modules (use_mtp, num_mtp_modules) are not loaded by vLLM's model.
  m.num_experts = read_positive_int(v, "num_local_experts");
  m.experts_per_token = read_positive_int(v, "num_experts_per_tok");
  if (m.experts_per_token > m.num_experts)
    v["num_experts_per_tok"].fail("must be <= num_local_experts (" + std::to_string(m.num_experts) + ")");
  m.moe_intermediate_size = m.intermediate_size;
  m.dense_layers = 0;
  if (v.boolean_or("use_routing_bias", false)) m.moe_bias_params = m.num_experts;
  if (v.boolean_or("use_qk_norm", false))
    m.bias_params_per_layer += (i64{m.num_heads} + m.num_kv_heads) * m.head_dim;  // 16-bit norm weights
  if (given(v, "rotary_dim")) {
    const int rotary = read_positive_int(v, "rotary_dim");
    if (rotary > m.head_dim) v["rotary_dim"].fail("exceeds head_dim (" + std::to_string(m.head_dim) + ")");
  }
  if (given(v, "attn_type_list")) {
    // MiniMax's attention kinds per layer (MiniMax-Text-01 / M1: 0 = lightning linear attention, 1 = softmax).
    // MiniMax-M2's exports write 1 for every layer, the only layout minimax_m2.py builds.
    const auto types = v["attn_type_list"].elements();
    if (static_cast<int>(types.size()) != m.num_layers)
      v["attn_type_list"].fail("has " + std::to_string(types.size()) + " entries for " + std::to_string(m.num_layers) +
                               " layers");
    for (const auto& t : types)
      if (t.as_integer() != 1)
        t.fail("is " + std::to_string(t.as_integer()) + ": only 1 (softmax attention) is MiniMax-M2's layout; 0 marks "
               "a lightning (linear) attention layer of MiniMax-Text-01 / M1, which llmsim does not model");
  }
  if (v.boolean_or("use_mtp", false)) {
    m.mtp_layers = read_non_negative_int(v, "num_mtp_modules", 0);
    m.notes.push_back(std::to_string(m.mtp_layers) + " multi-token-prediction module(s) in the checkpoint are not "
                      "loaded by vLLM; not counted");
  }
}

std::string refused_architecture(const std::string& model_type) {
  // Architectures whose config llmsim reads far enough to know it cannot price them honestly: a plan of them as a
  // dense transformer would be wrong, so the refusal says what is missing.
  if (model_type == "deepseek_v4" || model_type == "DeepseekV4ForCausalLM")
    return "DeepSeek-V4 compresses its KV cache by a per-layer ratio (compress_ratios: 1/4 or 1/128 of the tokens, "
           "uncompressed in a few layers) beside a sliding window, and uses hyper-connections (hc_mult), a grouped "
           "low-rank output projection (o_lora_rank, o_groups) and hash-routed layers (num_hash_layers): llmsim "
           "sizes none of these, so neither its weights nor its KV per token can be stated";
  return "";
}

}  // namespace llmsim::spec::hf
