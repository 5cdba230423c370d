// Gemma-4 (issue 30): the 31B dense and 26B-A4B MoE sizes against Google's model card, the full-attention layers'
// own shape (global_head_dim, num_global_key_value_heads, K doubling as V), KV bytes per token with the sliding
// layers capped at their window, and the E2B/E4B pieces llmsim refuses by name.
#include <catch2/catch.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "model_family_util.hpp"

using namespace llmsim;
using namespace llmsim::spec;

using test::billions;
using test::cat;
using test::read;

namespace {
// The 26B-A4B catalogue config with one text_config key changed.
Json gemma4_26b_with(const char* key, const Json& value) {
  Json c = to_json(cat("gemma-4-26b-a4b"));
  c["text_config"][key] = value;
  return c;
}
}  // namespace

TEST_CASE("Gemma-4 31B and 26B-A4B match Google's model card") {
  // Gemma 4 model card (ai.google.dev/gemma/docs/core/model_card_4): 31B dense "30.7B", 26B A4B "25.2B total,
  // 3.8B active"; the vision encoder ("~550M") is listed apart, so the totals are the text model's.
  const ModelSpec d = cat("gemma-4-31b");  // copies: cat() reuses one object
  CHECK(billions(d.param_count() - d.vision_params) == Approx(30.7).epsilon(0.02));
  const ModelSpec moe = cat("gemma-4-26b-a4b");
  CHECK(billions(moe.param_count() - moe.vision_params) == Approx(25.2).epsilon(0.02));
  CHECK(billions(moe.active_param_count()) == Approx(3.8).epsilon(0.04));  // a rounded number
  for (const ModelSpec* m : {&d, &moe}) {
    CHECK(billions(m->vision_params) > 0.50);  // "~550M" (27 layers of 1152 + the projector)
    CHECK(billions(m->vision_params) < 0.60);
  }
  // The MoE block sits beside a dense MLP of intermediate_size that every token runs: a shared expert's role.
  CHECK(moe.num_experts == 128);
  CHECK(moe.experts_per_token == 8);
  CHECK(moe.shared_expert_intermediate_size == 2112);
  CHECK(moe.moe_layers() == 30);
}

TEST_CASE("Gemma-4's full-attention layers have their own shape and K doubles as V") {
  const ModelSpec m = cat("gemma-4-31b");
  CHECK(m.sliding_layers == 50);  // 5 of 6 layers slide
  CHECK(m.full_attention_layers() == 10);
  CHECK(m.sliding_window == 1024);
  CHECK(m.full_layer_head_dim() == 512);
  CHECK(m.full_layer_kv_heads() == 4);
  CHECK(m.full_k_eq_v);
  // A full layer: q and o of 32 × 512, k of 4 × 512 and no v_proj; a sliding one: q/o of 32 × 256, k and v of 16 × 256.
  const std::int64_t h = 5376;
  CHECK(m.attention_params_per_layer() == h * 8192 * 2 + 2 * h * 4096 + 2 * 256);
  CHECK(m.attention_params_per_layer() + m.full_attention_extra_params() == h * 16384 * 2 + h * 2048 + 2 * 512);
  // vLLM holds a V slot filled with K's weights in the 10 full layers.
  CHECK(m.duplicated_v_params() == 10 * h * 2048);
  // KV per token at full context, 16-bit: 50 sliding layers × 2 × 16 × 256 and 10 full ones × 2 × 4 × 512.
  CHECK(m.kv_bytes_per_token(2) == Approx(50 * 16384.0 + 10 * 8192.0));
  // Without attention_k_eq_v the full layers keep num_key_value_heads (Gemma4DecoderLayer) and their own v_proj.
  const ModelSpec no_share = read(gemma4_26b_with("attention_k_eq_v", false));
  CHECK(no_share.full_layer_kv_heads() == 8);
  CHECK(no_share.duplicated_v_params() == 0);
  CHECK(no_share.param_count() > cat("gemma-4-26b-a4b").param_count());
}

TEST_CASE("Gemma-4's layer pattern follows transformers' defaults when layer_types is absent") {
  Json c = gemma4_26b_with("layer_types", nullptr);
  CHECK(read(c).sliding_layers == 25);  // (i + 1) % 6 == 0 is full
  c["text_config"]["num_hidden_layers"] = 7;  // layer 5 full, and the last layer forced to full
  CHECK(read(c).sliding_layers == 5);
  c["text_config"].erase("sliding_window");
  CHECK(read(c).sliding_window == 512);  // Gemma4TextConfig's default
}

TEST_CASE("Gemma-4's on-device pieces and a non-causal config are refused by name") {
  CHECK_THROWS_WITH(read(gemma4_26b_with("hidden_size_per_layer_input", 256)),
                    Catch::Contains("model.text_config.hidden_size_per_layer_input") && Catch::Contains("E2B"));
  CHECK_THROWS_WITH(read(gemma4_26b_with("num_kv_shared_layers", 20)),
                    Catch::Contains("model.text_config.num_kv_shared_layers"));
  CHECK_THROWS_WITH(read(gemma4_26b_with("use_bidirectional_attention", "all")),
                    Catch::Contains("use_bidirectional_attention"));
  Json audio = to_json(cat("gemma-4-26b-a4b"));
  audio["audio_config"] = {{"model_type", "gemma4_audio"}, {"hidden_size", 1024}};
  CHECK_THROWS_WITH(read(audio), Catch::Contains("model.audio_config") && Catch::Contains("audio tower"));
  Json vision = to_json(cat("gemma-4-31b"));
  vision["vision_config"]["num_global_experts"] = 4;  // a key that could change the tower's size
  CHECK_THROWS_WITH(read(vision), Catch::Contains("model.vision_config.num_global_experts"));
  CHECK_THROWS_WITH(read(gemma4_26b_with("top_k_experts", 129)), Catch::Contains("top_k_experts"));
}
