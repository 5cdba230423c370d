// Nemotron-H and Nemotron-3 (model_type nemotron_h): a stack of single-block layers named by hybrid_override_pattern,
// read as vLLM builds them (vllm/model_executor/models/nemotron_h.py, ALL_DECODER_LAYER_TYPES): 'M' a Mamba-2 mixer
// (MambaMixer2), '*' attention (NemotronHAttention: q/k/v/o, no bias, no rotary), '-' a relu² MLP (NemotronHMLP: up
// and down, no gate), 'E' a MoE (NemotronHMoE: relu² experts, sigmoid router with e_score_correction_bias, shared
// experts as one relu² MLP). Each layer has one RMSNorm. docs/cost-model.md, "Model families" and "Mamba-2 layers".
#include <string>

#include "hf_config_parts.hpp"
#include "llmsim/core/error.hpp"

namespace llmsim::spec::hf {

void read_nemotron_h(const JsonView& v, ModelSpec& m) {
  const std::string pattern = v.string("hybrid_override_pattern");
  if (static_cast<int>(pattern.size()) != m.num_layers)
    v["hybrid_override_pattern"].fail("has " + std::to_string(pattern.size()) + " layers for num_hidden_layers " +
                                      std::to_string(m.num_layers));
  int mamba = 0, attention = 0, mlp = 0, moe = 0;
  for (const char c : pattern) {
    if (c == 'M') ++mamba;
    else if (c == '*') ++attention;
    else if (c == '-') ++mlp;
    else if (c == 'E') ++moe;
    else
      v["hybrid_override_pattern"].fail(std::string("has '") + c + "': Nemotron-H's layers are 'M' (Mamba-2), '*' "
                                        "(attention), '-' (MLP) and 'E' (MoE)");
  }
  if (attention == 0)
    v["hybrid_override_pattern"].fail("has no attention layer ('*'): llmsim plans a KV cache beside the Mamba state");
  if (v.has("moe_latent_size") && !v.json().at("moe_latent_size").is_null())
    v["moe_latent_size"].fail("is set: Nemotron-3 Super/Ultra's latent MoE (experts run in a projected latent "
                              "space: fc1_latent_proj / fc2_latent_proj) is not modelled by llmsim; a size without it "
                              "would be wrong");
  if (v.has("intermediate_size") && v.json().at("intermediate_size").is_array())
    v["intermediate_size"].fail("is a list: per-layer MLP widths (Nemotron-H puzzle models) are not modelled");

  // Attention: head_dim, else Nemotron-H v1's attention_head_dim, else hidden / heads (NemotronHAttention).
  const bool has_head_dim = v.has("head_dim") && !v.json().at("head_dim").is_null();
  if (v.has("attention_head_dim") && !v.json().at("attention_head_dim").is_null()) {
    const int a = read_positive_int(v, "attention_head_dim");
    if (has_head_dim && a != m.head_dim)
      v["attention_head_dim"].fail("is " + std::to_string(a) + " but head_dim is " + std::to_string(m.head_dim) +
                                   ": llmsim will not guess which one the attention layers use");
    m.head_dim = a;
  }
  m.norms_per_layer = 1;
  m.rotary = false;  // NemotronHAttention.forward takes no positions: no rotary embedding
  m.mlp_matrices = 2;
  m.mixer_free_layers = mlp + moe;
  m.mlp_free_layers = mamba + attention;

  // Mamba-2 mixers (MambaMixer2(intermediate_size = mamba_num_heads × mamba_head_dim, n_groups, ssm_state_size,
  // conv_kernel, use_conv_bias, use_bias)), as linear-attention layers (ModelSpec: the field mapping).
  m.linear_attention_layers = mamba;
  if (mamba > 0) {
    m.linear_mamba2 = true;
    m.linear_num_value_heads = read_positive_int(v, "mamba_num_heads");
    m.linear_value_head_dim = read_positive_int(v, "mamba_head_dim");
    m.linear_num_key_heads = read_positive_int(v, "n_groups");
    m.linear_key_head_dim = read_positive_int(v, "ssm_state_size");
    m.linear_conv_kernel_dim = read_positive_int(v, "conv_kernel");
    m.linear_chunk_size = positive_or(v, "chunk_size", 128);
    m.linear_conv_bias = v.boolean_or("use_conv_bias", true);
    if (m.linear_num_value_heads % m.linear_num_key_heads != 0)
      v["mamba_num_heads"].fail("must be a multiple of n_groups (" + std::to_string(m.linear_num_key_heads) + ")");
    // vLLM keeps the SSM (temporal) state in mamba_ssm_cache_dtype: NemotronHForCausalLMConfig
    // (vllm/model_executor/models/config.py) takes the config's mamba_ssm_cache_dtype, float32 when absent.
    const std::string dtype = v.string_or("mamba_ssm_cache_dtype", "float32");
    if (dtype == "float32") m.linear_ssm_state_bytes = 4;
    else if (dtype == "bfloat16" || dtype == "float16") m.linear_ssm_state_bytes = 2;
    else
      v["mamba_ssm_cache_dtype"].fail("is '" + dtype + "': llmsim knows float32, bfloat16 and float16");
  }

  // MoE layers: n_routed_experts relu² experts of moe_intermediate_size, top num_experts_per_tok, the shared experts
  // (n_shared_experts × moe_shared_expert_intermediate_size as one MLP), the router and its fp32 correction bias.
  if (moe > 0) {
    m.num_experts = read_positive_int(v, "n_routed_experts");
    m.experts_per_token = read_positive_int(v, "num_experts_per_tok");
    m.moe_intermediate_size = read_positive_int(v, "moe_intermediate_size");
    const int shared = read_non_negative_int(v, "n_shared_experts", 0);
    m.shared_expert_intermediate_size =
        shared > 0 ? shared * read_positive_int(v, "moe_shared_expert_intermediate_size") : 0;
    m.moe_bias_params = m.num_experts;  // gate.e_score_correction_bias
    m.dense_layers = mlp;
  }
  if (v.has("num_nextn_predict_layers")) {
    m.mtp_layers = read_non_negative_int(v, "num_nextn_predict_layers", 0);
    if (m.mtp_layers > 0)
      m.notes.push_back(std::to_string(m.mtp_layers) + " multi-token-prediction layer(s) are not loaded by vLLM "
                        "unless speculative decoding runs them; not counted");
  }
  m.notes.push_back(std::to_string(mamba) + " Mamba-2 layers keep a fixed state per running sequence (conv window in "
                    "the model dtype, SSM state in " + v.string_or("mamba_ssm_cache_dtype", "float32") +
                    "); the KV cache per token counts the " + std::to_string(attention) + " attention layers only; " +
                    std::to_string(mlp + moe) + " layers are an MLP or MoE alone (hybrid_override_pattern)");
}

}  // namespace llmsim::spec::hf
