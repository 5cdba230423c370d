// Nemotron-H and Nemotron-3 (issue 30), from NVIDIA's real config.json files (data/models/README.md cites the
// copies): hybrid_override_pattern's single-block layers as vLLM builds them (nemotron_h.py: Mamba-2 'M', attention
// '*', relu² MLP '-', MoE 'E'), the Mamba-2 mixers' parameters and per-sequence state, the publishers' totals.
#include <catch2/catch.hpp>

#include <cstdint>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "model_family_util.hpp"

using namespace llmsim;
using namespace llmsim::spec;

using test::billions;
using test::cat;
using test::read;

namespace {
using i64 = std::int64_t;

// One MambaMixer2 by hand: in_proj (hidden -> z, x: heads × head_dim each; B, C: groups × state each; dt: heads),
// conv1d over x, B, C with its bias, A, D and dt_bias, the gated norm, out_proj.
i64 nemotron_mamba_layer(i64 h, i64 heads, i64 head_dim, i64 groups, i64 state, i64 kernel) {
  const i64 inner = heads * head_dim, conv = inner + 2 * groups * state;
  return h * (2 * inner + 2 * groups * state + heads) + conv * kernel + conv + 3 * heads + inner + inner * h;
}
}  // namespace

TEST_CASE("Nemotron-H-56B: 54 Mamba-2, 10 attention and 54 relu² MLP layers; 56 B as NVIDIA states it") {
  const ModelSpec& m = cat("nemotron-h-56b");
  CHECK(m.model_type == "nemotron_h");
  CHECK(m.num_layers == 118);
  CHECK(m.linear_attention_layers == 54);
  CHECK(m.attention_layers() == 10);
  CHECK(m.mixer_free_layers == 54);
  CHECK(m.mlp_free_layers == 64);
  CHECK(m.dense_mlp_layers() == 54);
  CHECK_FALSE(m.is_moe());
  // Nemotron-H paper (arXiv 2504.03624) and model card: "56B" (rounded: within 4 %). 56.3 B here.
  CHECK(billions(m.param_count()) == Approx(56).epsilon(0.04));
  // Each part by hand: the relu² MLP has no gate (up, down); attention q/k/v/o without bias; one norm per layer.
  const i64 h = 8192;
  CHECK(m.dense_mlp_params() == 2 * h * 32768);
  CHECK(m.attention_params_per_layer() == 2 * h * 64 * 128 + 2 * h * 8 * 128);
  CHECK(m.linear_attention_params_per_layer() == nemotron_mamba_layer(h, 256, 64, 8, 256, 4));
  const i64 total = 54 * nemotron_mamba_layer(h, 256, 64, 8, 256, 4) + 10 * m.attention_params_per_layer() +
                    54 * 2 * h * 32768 + 118 * h + 2 * 131072 * h + h;
  CHECK(m.param_count() == total);
  // KV per token: the 10 attention layers only (8 KV heads × 128, K and V, 2 bytes).
  CHECK(m.kv_bytes_per_token(2) == 10.0 * 2 * 8 * 128 * 2);
  // The Mamba state per sequence (mamba_utils' mamba2_state_shape): the conv window (3 × (16384 + 2 × 8 × 256)) in
  // the model dtype and the SSM state 256 heads × 64 × 256 in FP32 (vLLM's NemotronHForCausalLMConfig default).
  CHECK(m.linear_ssm_state_bytes == 4);
  CHECK(m.linear_state_bytes_per_sequence(2) == 54.0 * (3 * (16384 + 4096) * 2 + 256.0 * 64 * 256 * 4));
}

TEST_CASE("Nemotron-3-Nano-30B-A3B: Mamba-2 + MoE + attention; 31.6 B total, 3.2 B active as NVIDIA states") {
  const ModelSpec& m = cat("nemotron-3-nano-30b-a3b");
  CHECK(m.num_layers == 52);
  CHECK(m.linear_attention_layers == 23);
  CHECK(m.attention_layers() == 6);
  CHECK(m.moe_layers() == 23);
  CHECK(m.dense_mlp_layers() == 0);
  CHECK(m.is_moe());
  CHECK(m.head_dim == 128);  // head_dim, not hidden / heads (84)
  // Model card (nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16): 31.6 B total; 3.2 B active, 3.6 B with embeddings.
  CHECK(billions(m.param_count()) == Approx(31.6).epsilon(0.02));
  CHECK(billions(m.active_param_count() - m.embedding_params()) == Approx(3.2).epsilon(0.02));
  CHECK(billions(m.active_param_count()) == Approx(3.6).epsilon(0.02));
  // One MoE layer: 128 relu² experts (up, down) of 1856, the shared expert of 3712, the router and its fp32 bias.
  const i64 h = 2688;
  CHECK(m.moe_mlp_params() == 128 * 2 * h * 1856 + 2 * h * 3712 + h * 128 + 128);
  CHECK(m.linear_attention_params_per_layer() == nemotron_mamba_layer(h, 64, 64, 8, 128, 4));
  CHECK(m.kv_bytes_per_token(2) == 6.0 * 2 * 2 * 128 * 2);
  CHECK(m.linear_state_bytes_per_sequence(2) == 23.0 * (3 * (4096 + 2048) * 2 + 64.0 * 64 * 128 * 4));
}

TEST_CASE("Nemotron-H configs are judged by value: what changes the layout is refused with the reason") {
  const ModelSpec& m = cat("nemotron-3-nano-30b-a3b");
  Json c = m.source;
  // The SSM state's dtype follows the config (vLLM: mamba_ssm_cache_dtype, float32 when absent).
  c["mamba_ssm_cache_dtype"] = "bfloat16";
  CHECK(read(c).linear_ssm_state_bytes == 2);
  c.erase("mamba_ssm_cache_dtype");
  CHECK(read(c).linear_ssm_state_bytes == 4);
  // Nemotron-3 Super / Ultra's latent MoE is not modelled: refused, never sized without it.
  c = m.source;
  c["moe_latent_size"] = 1024;
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.moe_latent_size") && Catch::Contains("latent"));
  // A gated MLP, a biased projection: another layer than vLLM builds.
  c = m.source;
  c["mlp_hidden_act"] = "silu";
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.mlp_hidden_act"));
  c = m.source;
  c["mamba_proj_bias"] = true;
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.mamba_proj_bias"));
  // The pattern must name every layer, with the four known blocks.
  c = m.source;
  c["hybrid_override_pattern"] = "MEM";
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.hybrid_override_pattern") && Catch::Contains("3 layers"));
  std::string p = m.source["hybrid_override_pattern"].get<std::string>();
  p[1] = 'X';
  c["hybrid_override_pattern"] = p;
  CHECK_THROWS_WITH(read(c), Catch::Contains("'X'"));
  // Without attention there is no KV cache to plan beside the state.
  c["hybrid_override_pattern"] = std::string(52, 'M');
  CHECK_THROWS_WITH(read(c), Catch::Contains("no attention layer"));
}

TEST_CASE("Nemotron-H checkpoints in tests/data read as the catalogue's copies") {
  CHECK(test::checkpoint("nemotron-h-56b-base-8k").param_count() == cat("nemotron-h-56b").param_count());
  CHECK(test::checkpoint("nemotron-3-nano-30b-a3b").param_count() == cat("nemotron-3-nano-30b-a3b").param_count());
  // Named by its architecture only (no model_type), the same family.
  Json c = cat("nemotron-h-56b").source;
  c.erase("model_type");
  CHECK(read(c).param_count() == cat("nemotron-h-56b").param_count());
}
