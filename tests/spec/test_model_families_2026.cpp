// The families people deploy in 2026 (issue 30), each from its publisher's real config.json (data/models/README.md
// and tests/data/hf_checkpoints/README.md cite the copies): Qwen3.5 (Qwen3-Next's gated-DeltaNet hybrid under a
// Qwen3-VL tower, dense and MoE), GLM-5 (DeepSeek-V3.2's MLA + DSA layout), MiniMax-M2.5 (full attention, MoE), and
// the architecture refused with the reason (DeepSeek-V4). Totals are the publishers' model cards.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "model_family_util.hpp"

using namespace llmsim;
using namespace llmsim::spec;

using test::billions;
using test::cat;
using test::read;

namespace {

// Active parameters as the publishers count them: without the input embedding (a row gather).
double active_2026(const ModelSpec& m) { return billions(m.active_param_count() - m.embedding_params()); }

}  // namespace

TEST_CASE("Qwen3.5: Qwen3-Next's hybrid layers, the Qwen3-VL tower, the publishers' totals") {
  struct Row {
    const char* id;
    double total, active;  // Qwen's model cards (rounded: "27B", "35B-A3B", "122B-A10B", "397B-A17B")
  };
  const Row rows[] = {{"qwen3.5-27b", 27, 27}, {"qwen3.5-35b-a3b", 35, 3}, {"qwen3.5-122b-a10b", 122, 10},
                      {"qwen3.5-397b-a17b", 397, 17}};
  for (const auto& r : rows) {
    INFO(r.id);
    const ModelSpec& m = cat(r.id);
    // Within 2 % although the cards round (27.36 / 35.11 / 122.56 / 396.80 B, vision tower included).
    CHECK(billions(m.param_count()) == Approx(r.total).epsilon(0.02));
    // Qwen's "A3B" / "A10B" / "A17B" (and the dense 27B's text model) are the text model's active parameters with
    // the embedding and LM head, rounded to the billion: 3.46, 9.77, 17.35, 26.90. Without the embedding they would
    // round to 3, 9 and 16: that is not how these cards count.
    CHECK(std::lround(billions(m.active_param_count())) == std::lround(r.active));
    CHECK(m.has_linear_attention());
    CHECK(m.attention_output_gate);
    CHECK(m.linear_ssm_state_bytes == 4);  // mamba_ssm_dtype float32
    CHECK(m.mtp_layers == 1);              // mtp_num_hidden_layers: not loaded without speculative decoding
  }
  const ModelSpec& d = cat("qwen3.5-27b");
  CHECK(d.model_type == "qwen3_5");
  CHECK_FALSE(d.is_moe());
  CHECK(d.num_layers == 64);
  CHECK(d.linear_attention_layers == 48);
  // The vision tower by hand (vllm qwen3_vl.py): Conv3d 3·2·16·16 → 1152 + bias, 2304 positions, 27 blocks of two
  // LayerNorms, biased qkv / proj / fc1 (1152 → 4304) / fc2; the merger's LayerNorm, 4608 → 4608 and 4608 → 5120.
  const std::int64_t h = 1152, inter = 4304, merged = 4 * h;
  const std::int64_t tower = 3 * 2 * 16 * 16 * h + h + 2304 * h +
                             27 * (4 * h + 3 * h * h + 3 * h + h * h + h + h * inter + inter + inter * h + h) +
                             2 * h + merged * merged + merged + merged * 5120 + 5120;
  CHECK(d.vision_params == tower);
  // KV per token: the 16 attention layers only (2 × 4 KV heads × 256 × 2 B) = 64 KiB.
  CHECK(d.kv_bytes_per_token(2.0) == Approx(16.0 * 2 * 4 * 256 * 2));
  // Per sequence and DeltaNet layer (vLLM's gated_delta_net_state_shape): the conv window 3 × (2·16·128 + 48·128)
  // in BF16 and the recurrent state 48 × 128 × 128 in FP32 (Qwen3_5ForConditionalGenerationConfig takes the config's
  // mamba_ssm_dtype): 153.9 MB per sequence over 48 layers.
  const double per_layer = 3.0 * (2 * 16 * 128 + 48 * 128) * 2 + 48.0 * 128 * 128 * 4;
  CHECK(d.linear_state_bytes_per_layer(2.0) == Approx(per_layer));
  CHECK(d.linear_state_bytes_per_sequence(2.0) == Approx(48 * per_layer));
  // Without mamba_ssm_dtype the state is in the model dtype (Qwen3-Next's rule).
  Json c = d.source;
  c["text_config"].erase("mamba_ssm_dtype");
  CHECK(read(c).linear_state_bytes_per_sequence(2.0) ==
        Approx(48.0 * (3.0 * (2 * 16 * 128 + 48 * 128) + 48.0 * 128 * 128) * 2));
  c["text_config"]["mamba_ssm_dtype"] = "float8";
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.text_config.mamba_ssm_dtype"));

  const ModelSpec& moe = cat("qwen3.5-35b-a3b");
  CHECK(moe.model_type == "qwen3_5_moe");
  CHECK(moe.num_experts == 256);
  CHECK(moe.experts_per_token == 8);
  CHECK(moe.shared_expert_intermediate_size == 512);
  CHECK(moe.shared_expert_gate);
  CHECK(moe.kv_bytes_per_token(2.0) == Approx(10.0 * 2 * 2 * 256 * 2));  // 10 attention layers of 40
}

TEST_CASE("Qwen3.5's config is judged key by key: the gate, the tower, the text type") {
  const ModelSpec& d = cat("qwen3.5-27b");
  Json c = d.source;
  c["text_config"]["attn_output_gate"] = false;  // an ungated attention has another q_proj: refused by value
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.text_config.attn_output_gate"));
  c = d.source;
  c["vision_config"]["out_hidden_size"] = 4096;  // the merger must feed the text model
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.vision_config.out_hidden_size"));
  c = d.source;
  c["vision_config"]["window_size"] = 112;  // Qwen2.5-VL's windowed tower: another layout
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.vision_config.window_size"));
  c = d.source;
  c["vision_config"]["deepstack_visual_indexes"] = {8, 16, 24};  // Qwen3-VL's deepstack: one merger each
  const std::int64_t merged = 4 * 1152;
  CHECK(read(c).vision_params - d.vision_params == 3 * (2 * merged + merged * merged + merged + merged * 5120 + 5120));
  c = d.source;
  c["text_config"]["model_type"] = "qwen3_5_moe_text";
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.text_config.model_type"));
}

TEST_CASE("GLM-5 (glm_moe_dsa) is DeepSeek-V3.2's layout: MLA, the DSA indexer, 744B total") {
  const ModelSpec& m = cat("glm-5");
  CHECK(m.model_type == "glm_moe_dsa");
  CHECK(m.is_mla());
  CHECK(m.head_dim == 192 + 64);  // qk_nope + qk_rope (config's head_dim 64 is not MLA's head)
  CHECK(m.index_head_dim == 128);
  CHECK(m.index_topk == 2048);
  CHECK(m.num_experts == 256);
  CHECK(m.dense_layers == 3);
  CHECK(m.mtp_layers == 1);
  // zai-org/GLM-5's model card: "744B parameters (40B active)": 743.9 B; 40.8 B active without the input embedding
  // (DeepSeek's and Kimi's convention, checked so for DeepSeek-V3 and Kimi-K2).
  CHECK(billions(m.param_count()) == Approx(744).epsilon(0.02));
  CHECK(active_2026(m) == Approx(40).epsilon(0.04));
  // vLLM's MLA cache (576 BF16 elements) + the indexer's FP8 keys (128 + 4 B) per token and layer.
  CHECK(m.kv_bytes_per_token(2.0) == Approx(78.0 * (576 * 2 + 132)));
}

TEST_CASE("MiniMax-M2.5: full attention with full-width q/k norms, 256 experts top 8, 230B total") {
  const ModelSpec& m = cat("minimax-m2.5");
  CHECK(m.model_type == "minimax_m2");
  CHECK_FALSE(m.has_linear_attention());
  CHECK(m.num_experts == 256);
  CHECK(m.experts_per_token == 8);
  CHECK(m.moe_layers() == 62);
  CHECK(m.shared_expert_intermediate_size == 0);
  CHECK(m.moe_bias_params == 256);                                 // e_score_correction_bias
  CHECK(m.bias_params_per_layer == (48 + 8) * 128);                // q_norm over 48 heads, k_norm over 8
  CHECK_FALSE(m.quantization.format.empty());                      // the Hub checkpoint is block FP8
  // MiniMax's model card (M2; M2.5 keeps the shape): "230 billion total parameters with 10 billion active": 228.7 B;
  // 10.42 B active without the input embedding, which rounds to the card's 10 (with it, 11.03 would not).
  CHECK(billions(m.param_count()) == Approx(230).epsilon(0.02));
  CHECK(std::lround(active_2026(m)) == 10);
  CHECK(m.kv_bytes_per_token(2.0) == Approx(62.0 * 2 * 8 * 128 * 2));
  // Keys judged by value: a shared expert or per-head norms would be another layout.
  Json c = m.source;
  c["shared_intermediate_size"] = 1536;
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.shared_intermediate_size"));
  c = m.source;
  c["qk_norm_type"] = "per_head";
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.qk_norm_type"));
}

TEST_CASE("DeepSeek-V4 is refused with the reason, never planned as a dense transformer") {
  CHECK_THROWS_WITH(test::checkpoint("deepseek-v4-flash"),
                    Catch::Contains("model_type") && Catch::Contains("compress_ratios"));
  // Nemotron-H / Nemotron-3, refused here before, are sized now: test_model_families_nemotron.cpp.
}

TEST_CASE("MiniMax-M2's attn_type_list is judged by value: all softmax is its layout, a lightning layer is refused") {
  const ModelSpec& m = cat("minimax-m2.5");
  Json c = m.source;
  c["attn_type_list"] = Json::array();
  for (int i = 0; i < 62; ++i) c["attn_type_list"].push_back(1);
  c["partial_rotary_factor"] = 0.5;  // NVIDIA's export writes it beside rotary_dim: no weight
  CHECK(read(c).param_count() == m.param_count());
  c["attn_type_list"][7] = 0;  // MiniMax-Text-01 / M1's lightning attention
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.attn_type_list[7]") && Catch::Contains("lightning"));
  c["attn_type_list"].erase(0);
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.attn_type_list") && Catch::Contains("61 entries for 62"));
}

TEST_CASE("NVIDIA's NVFP4 exports of Qwen3.5-397B and MiniMax-M2.5 plan the bytes they hold") {
  // nvidia/Qwen3.5-397B-A17B-NVFP4: the ignore list keeps self_attn*, linear_attn* (the DeltaNet layers), the
  // shared experts and the vision tower 16-bit: only the routed experts are NVFP4.
  const ModelSpec q = test::checkpoint("qwen3.5-397b-a17b-nvfp4");
  CHECK(q.param_count() == cat("qwen3.5-397b-a17b").param_count());
  CHECK(q.quantization.format == "nvfp4-experts");
  // nvidia/MiniMax-M2.5-NVFP4: self_attn* and the routers stay 16-bit, the experts (all its MLPs) NVFP4.
  const ModelSpec mm = test::checkpoint("minimax-m2.5-nvfp4");
  CHECK(mm.param_count() == cat("minimax-m2.5").param_count());
  CHECK(mm.quantization.format == "nvfp4+attn16");
  // Its sliding_window is null: a window would be another layout, refused by name.
  Json c = mm.source;
  c["sliding_window"] = 4096;
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.sliding_window"));
}
