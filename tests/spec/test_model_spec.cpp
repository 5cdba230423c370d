#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/published_name.hpp"

using namespace llmsim;
using namespace llmsim::spec;

TEST_CASE("derived parameter counts match the published ones within 2%") {
  // Published totals (Hugging Face model cards / safetensors metadata, billions).
  const std::pair<const char*, double> published[] = {
      {"llama-2-7b", 6.74},   {"llama-2-13b", 13.0},  {"llama-2-70b", 69.0},  {"llama-3.1-8b", 8.03},
      {"llama-3.1-70b", 70.6}, {"mistral-7b", 7.24},  {"qwen2.5-7b", 7.61},   {"qwen2.5-14b", 14.7},
      {"qwen2.5-32b", 32.5},  {"qwen2.5-72b", 72.7},  {"mixtral-8x7b", 46.7}};
  for (const auto& [id, billions] : published) {
    INFO(id);
    const auto m = Catalog::builtin().model(id);
    CHECK(static_cast<double>(m.param_count()) / 1e9 == Approx(billions).epsilon(0.02));
  }
  // Mixtral: ~12.9 B active per token (2 of 8 experts).
  CHECK(static_cast<double>(Catalog::builtin().model("mixtral-8x7b").active_param_count()) / 1e9 ==
        Approx(12.9).epsilon(0.02));
}

TEST_CASE("KV bytes per token: 2 x layers x kv_heads x head_dim x bytes") {
  const auto m = Catalog::builtin().model("llama-3.1-8b");
  CHECK(m.head_dim == 128);
  CHECK(m.num_kv_heads == 8);
  CHECK(m.kv_bytes_per_token(2.0) == 131072.0);               // 128 KiB
  CHECK(8192 * m.kv_bytes_per_token(2.0) == 1024.0 * 1024 * 1024);  // 8,192 tokens = 1 GiB
  CHECK(Catalog::builtin().model("llama-3.1-70b").kv_bytes_per_token(2.0) == 320.0 * 1024);
  CHECK(Catalog::builtin().model("llama-2-7b").kv_bytes_per_token(2.0) == 512.0 * 1024);  // MHA
}

TEST_CASE("HF config defaults and aliases") {
  Json c = {{"hidden_size", 2048}, {"num_hidden_layers", 4}, {"num_attention_heads", 16},
            {"intermediate_size", 5632}, {"vocab_size", 32000}, {"max_position_embeddings", 2048}};
  auto m = model_spec_from_hf_config(JsonView(c, "model"), "tiny");
  CHECK(m.head_dim == 128);       // hidden / heads
  CHECK(m.num_kv_heads == 16);    // = heads
  CHECK_FALSE(m.attention_bias);
  CHECK_FALSE(m.is_moe());
  c["num_experts"] = 4;  // a config naming no family reads num_experts as Mixtral's experts
  c["num_experts_per_tok"] = 2;
  c["head_dim"] = 64;
  m = model_spec_from_hf_config(JsonView(c, "model"), "tiny");
  CHECK(m.num_experts == 4);
  CHECK(m.experts_per_token == 2);
  CHECK(m.head_dim == 64);
  c.erase("num_experts");
  c.erase("num_experts_per_tok");
  c["model_type"] = "qwen2";
  m = model_spec_from_hf_config(JsonView(c, "model"), "tiny");
  CHECK(m.attention_bias);  // Qwen2 has QKV bias without saying so
  CHECK(Catalog::builtin().model("qwen2.5-7b").attention_bias);
  CHECK_FALSE(Catalog::builtin().model("llama-3.1-8b").attention_bias);
  // round trip through the HF form
  const auto back = model_spec_from_hf_config(JsonView(to_json(m), "model"), "tiny");
  CHECK(back.param_count() == m.param_count());
  CHECK(back.attention_bias);
}

TEST_CASE("incomplete or malformed configs name the field") {
  Json c = {{"num_hidden_layers", 4}, {"num_attention_heads", 16}, {"intermediate_size", 5632},
            {"vocab_size", 32000}, {"max_position_embeddings", 2048}};
  CHECK_THROWS_WITH(model_spec_from_hf_config(JsonView(c, "model"), "x"), Catch::Contains("model.hidden_size"));
  c["hidden_size"] = "big";
  CHECK_THROWS_WITH(model_spec_from_hf_config(JsonView(c, "model"), "x"), Catch::Contains("model.hidden_size"));
  c["hidden_size"] = -4096;
  CHECK_THROWS_WITH(model_spec_from_hf_config(JsonView(c, "model"), "x"), Catch::Contains("model.hidden_size"));
  c["hidden_size"] = 2048;
  c["num_key_value_heads"] = 5;  // does not divide 16 heads
  CHECK_THROWS_WITH(model_spec_from_hf_config(JsonView(c, "model"), "x"), Catch::Contains("num_key_value_heads"));
  c["num_key_value_heads"] = 4;
  c["num_local_experts"] = 8;  // MoE without num_experts_per_tok
  CHECK_THROWS_WITH(model_spec_from_hf_config(JsonView(c, "model"), "x"), Catch::Contains("num_experts_per_tok"));

  const auto dir = std::filesystem::temp_directory_path() / "llmsim_test_model_spec";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "config.json").string();
  {
    std::ofstream(path) << "{\"hidden_size\": 4096, ";  // truncated
  }
  CHECK_THROWS_AS(Catalog::builtin().model(path), ConfigError);
  {
    std::ofstream(path) << Json{{"hidden_size", 1024}, {"num_hidden_layers", 2}, {"num_attention_heads", 8},
                                {"intermediate_size", 4096}, {"vocab_size", 1000},
                                {"max_position_embeddings", 512}}.dump();
  }
  const auto m = Catalog::builtin().model(path);
  CHECK(m.hidden_size == 1024);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a --model / model naming no file but a published checkpoint says which catalogue model it is") {
  // attack12: `memory --model meta-llama/Llama-3.1-8B-Instruct` said only "no such file" while `vllm serve` with that
  // name sizes catalogue llama-3.1-8b (spec::catalogue_model_for, one rule with server lines and check).
  const auto& cat = Catalog::builtin();
  CHECK_THROWS_WITH(cat.model("meta-llama/Llama-3.1-8B-Instruct", "--model"),
                    Catch::Contains("--model") && Catch::Contains("catalogue model 'llama-3.1-8b'") &&
                        !Catch::Contains("weights '"));
  CHECK_THROWS_WITH(cat.model("neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", "model"),
                    Catch::Contains("catalogue model 'llama-3.1-8b' with fp8 weights") &&
                        Catch::Contains("the weights 'fp8'"));
  CHECK_THROWS_WITH(cat.model("org/not-a-model", "model"),
                    Catch::Contains("no such file") && !Catch::Contains("catalogue model"));
  CHECK(weight_format_in_name("hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4") == "awq-int4");
  CHECK(weight_format_in_name("meta-llama/Llama-3.1-8B-Instruct").empty());
}
