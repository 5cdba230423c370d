// Gemma-4 (issue 30): the 31B dense and 26B-A4B MoE sizes against Google's model card, the full-attention layers'
// own shape (global_head_dim, num_global_key_value_heads, K doubling as V), KV bytes per token with the sliding
// layers capped at their window, and E2B/E4B's per-layer embeddings, shared KV, double-wide MLPs and audio tower.
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

TEST_CASE("Gemma-4 E2B/E4B match Google's totals: per-layer embeddings, shared KV, audio and vision towers") {
  // Google's Gemma 4 model card: E2B "2.3B effective (5.1B with embeddings)", E4B "8B with embeddings"; rounded
  // numbers (4 %). "With embeddings" is everything loaded: the text model, its per-layer embedding table and the
  // vision and audio towers (without the towers E2B would be 4.65 B, 9 % short).
  const ModelSpec e2b = cat("gemma-4-e2b");
  const ModelSpec e4b = cat("gemma-4-e4b");
  CHECK(billions(e2b.param_count()) == Approx(5.1).epsilon(0.04));
  CHECK(billions(e4b.param_count()) == Approx(8.0).epsilon(0.04));
  // "Effective": the text model without the per-layer table (a lookup) and without the towers.
  CHECK(billions(e2b.active_param_count()) == Approx(2.3).epsilon(0.04));
  // The table: vocab_size_per_layer_input × layers × 256.
  CHECK(e2b.per_layer_embedding_params() == 262144LL * 35 * 256);
  CHECK(e4b.per_layer_embedding_params() == 262144LL * 42 * 256);
  // The towers: ~150 M of vision (16 layers of 768) and ~300 M of audio (12 conformer layers of 1024), by hand:
  // 24 h^2 + h (kernel 5 + 9) + head_dim 128 per audio layer, the subsampling convs and projections.
  const std::int64_t h = 1024, layer = 24 * h * h + 14 * h + 128;
  const std::int64_t subsample = 9 * 128 + 128 + 9 * 128 * 32 + 32 + 32 * 32 * h;
  CHECK(e2b.audio_params == subsample + 12 * layer + h * 1536 + 1536 + 1536LL * 1536);
  CHECK(e4b.audio_params == e2b.audio_params + 1536LL * (2560 - 1536));  // only the projection into the text differs
  CHECK(billions(e2b.vision_params) == Approx(0.17).epsilon(0.02));
  // E2B's last 20 layers take the KV of layers 13 (sliding) and 14 (full) and have double-wide MLPs.
  CHECK(e2b.kv_shared_layers == 20);
  CHECK(e2b.kv_shared_full_layers == 4);  // layers 19, 24, 29, 34
  CHECK(e2b.kv_full_layers() == 3);
  CHECK(e2b.kv_sliding_layers() == 12);
  CHECK(e2b.double_wide_mlp_layers == 20);
  CHECK(e4b.double_wide_mlp_layers == 0);
  // KV per token, 16-bit: only the 15 (E4B: 24) layers with a cache of their own; full layers keep num_key_value_heads
  // at 512 (no attention_k_eq_v).
  CHECK(e2b.kv_bytes_per_token(2) == Approx(12 * 2 * 1 * 256 * 2.0 + 3 * 2 * 1 * 512 * 2.0));
  CHECK(e4b.kv_cache_layers() == 24);
  CHECK(e4b.kv_bytes_per_token(2) == Approx(20 * 2 * 2 * 256 * 2.0 + 4 * 2 * 2 * 512 * 2.0));
}

TEST_CASE("Gemma-4's KV sharing and per-layer inputs follow the config's values") {
  Json c = to_json(cat("gemma-4-e2b"));
  // Without sharing every layer keeps its KV, and use_double_wide_mlp widens nothing (vLLM widens shared layers only).
  c["text_config"]["num_kv_shared_layers"] = 0;
  const ModelSpec none = read(c);
  CHECK(none.kv_cache_layers() == 35);
  CHECK(none.double_wide_mlp_layers == 0);
  CHECK(none.kv_bytes_per_token(2) > cat("gemma-4-e2b").kv_bytes_per_token(2));
  // hidden_size_per_layer_input 0 turns the per-layer inputs off: the table and its linears go.
  c["text_config"]["hidden_size_per_layer_input"] = 0;
  CHECK(read(c).per_layer_embedding_params() == 0);
  CHECK(read(c).per_layer_input_params() == 0);
  // Absent, it is transformers' default 256, and the reader says so.
  c["text_config"].erase("hidden_size_per_layer_input");
  const ModelSpec dflt = read(c);
  CHECK(dflt.per_layer_input_size == 256);
  bool noted = false;
  for (const auto& n : dflt.notes) noted = noted || n.find("hidden_size_per_layer_input absent") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("Gemma-4's malformed on-device keys and a non-causal config are refused by name") {
  Json c = to_json(cat("gemma-4-e2b"));
  for (const int n : {35, 36, 1000000}) {
    c["text_config"]["num_kv_shared_layers"] = n;
    CHECK_THROWS_WITH(read(c), Catch::Contains("model.text_config.num_kv_shared_layers"));
  }
  c["text_config"]["num_kv_shared_layers"] = -1;
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.text_config.num_kv_shared_layers"));
  // Sharing reaches back to the only full layer that would be shared: the first 15 layers all slide.
  c = to_json(cat("gemma-4-e2b"));
  for (int i = 0; i < 15; ++i) c["text_config"]["layer_types"][i] = "sliding_attention";
  c["text_config"]["num_kv_shared_layers"] = 20;
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.text_config.num_kv_shared_layers") &&
                                 Catch::Contains("none of the first 15"));
  c = to_json(cat("gemma-4-e2b"));
  c["text_config"]["layer_types"].erase(0);  // 34 entries for 35 layers
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.text_config.layer_types") && Catch::Contains("34 entries"));
  c = to_json(cat("gemma-4-e2b"));
  c["text_config"]["hidden_size_per_layer_input"] = -256;
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.text_config.hidden_size_per_layer_input"));
  c = to_json(cat("gemma-4-e2b"));
  c["text_config"]["vocab_size_per_layer_input"] = 0;
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.text_config.vocab_size_per_layer_input"));
  c = to_json(cat("gemma-4-e2b"));
  c["text_config"]["use_double_wide_mlp"] = "yes";
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.text_config.use_double_wide_mlp"));
  // The audio tower: an unknown key, a wrong type, channel lists of the wrong length or values, absurd sizes.
  Json a = to_json(cat("gemma-4-e2b"));
  a["audio_config"]["num_experts"] = 4;
  CHECK_THROWS_WITH(read(a), Catch::Contains("model.audio_config.num_experts"));
  a = to_json(cat("gemma-4-e2b"));
  a["audio_config"]["model_type"] = "whisper";
  CHECK_THROWS_WITH(read(a), Catch::Contains("model.audio_config.model_type"));
  a = to_json(cat("gemma-4-e2b"));
  a["audio_config"]["subsampling_conv_channels"] = Json::array({128});
  CHECK_THROWS_WITH(read(a), Catch::Contains("model.audio_config.subsampling_conv_channels"));
  a["audio_config"]["subsampling_conv_channels"] = Json::array({128, 0});
  CHECK_THROWS_WITH(read(a), Catch::Contains("model.audio_config.subsampling_conv_channels"));
  a = to_json(cat("gemma-4-e2b"));
  a["audio_config"]["num_attention_heads"] = 7;
  CHECK_THROWS_WITH(read(a), Catch::Contains("model.audio_config.num_attention_heads"));
  a["audio_config"]["num_attention_heads"] = 8;
  a["audio_config"]["hidden_size"] = 1 << 30;
  CHECK_THROWS_WITH(read(a), Catch::Contains("model.audio_config") && Catch::Contains("implausibly large"));
  CHECK_THROWS_WITH(read(gemma4_26b_with("use_bidirectional_attention", "all")),
                    Catch::Contains("use_bidirectional_attention"));
  Json vision = to_json(cat("gemma-4-31b"));
  vision["vision_config"]["num_global_experts"] = 4;  // a key that could change the tower's size
  CHECK_THROWS_WITH(read(vision), Catch::Contains("model.vision_config.num_global_experts"));
  CHECK_THROWS_WITH(read(gemma4_26b_with("top_k_experts", 129)), Catch::Contains("top_k_experts"));
}
