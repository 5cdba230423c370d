// Malformed and edge configs of the readers added in issue 30 (GLM-4.7-Flash, Kimi-K2.5, Gemma-4, ModelOpt without
// quant_method, num_local_experts): a missing key whose absence would take a class default llmsim cannot know, a zero
// or negative size, a list of the wrong length, an absurd value: each a ConfigError naming the key, never a crash, a
// hang or a silently different size. Keys whose value changes nothing stay accepted (judged by value).
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "model_family_util.hpp"

using namespace llmsim;
using namespace llmsim::spec;

using test::cat;
using test::read;

namespace {

// The catalogue config of `id`, as the file holds it.
Json malformed_base(const char* id) { return cat(id).source; }

// Throws a ConfigError whose message names `path`.
void refused_naming(const Json& c, const std::string& path) {
  INFO(c.dump().substr(0, 200));
  CHECK_THROWS_AS(read(c), ConfigError);
  CHECK_THROWS_WITH(read(c), Catch::Contains(path));
}

}  // namespace

TEST_CASE("GLM-4.7-Flash: missing MoE/MLA keys are refused, not filled with a class default") {
  for (const char* key : {"n_routed_experts", "q_lora_rank", "n_shared_experts", "first_k_dense_replace",
                          "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
                          "num_experts_per_tok", "moe_intermediate_size"}) {
    Json c = malformed_base("glm-4.7-flash");
    c.erase(key);
    refused_naming(c, std::string("model.") + key);
  }
  struct Case { const char* key; Json value; };
  for (const Case& k : {Case{"n_routed_experts", 0}, Case{"n_routed_experts", -64}, Case{"num_experts_per_tok", 65},
                        Case{"num_experts_per_tok", 0}, Case{"kv_lora_rank", 0}, Case{"v_head_dim", -5},
                        Case{"moe_layer_freq", 0}, Case{"num_nextn_predict_layers", -1},
                        Case{"first_k_dense_replace", -1}, Case{"n_shared_experts", 1 << 30},
                        Case{"q_lora_rank", "768"}, Case{"qk_rope_head_dim", 1.5}, Case{"q_lora_rank", 0},
                        Case{"first_k_dense_replace", nullptr}}) {
    Json c = malformed_base("glm-4.7-flash");
    c[k.key] = k.value;
    refused_naming(c, std::string("model.") + k.key);
  }
  // Absurd widths: the magnitude bound, before any count could overflow.
  Json c = malformed_base("glm-4.7-flash");
  c["hidden_size"] = 1 << 30;
  CHECK_THROWS_WITH(read(c), Catch::Contains("implausibly large"));
  // By value: null experts is DeepseekV2DecoderLayer's dense layer everywhere, null q_lora_rank a direct q_proj.
  c = malformed_base("glm-4.7-flash");
  c["n_routed_experts"] = nullptr;
  CHECK(read(c).num_experts == 0);
  c = malformed_base("glm-4.7-flash");
  c["q_lora_rank"] = nullptr;
  CHECK(read(c).q_lora_rank == 0);
  CHECK(read(c).param_count() != cat("glm-4.7-flash").param_count());
}

TEST_CASE("Kimi-K2.5: a broken wrapper, text_config, tower or INT4 group is refused by name") {
  Json c = malformed_base("kimi-k2.5");
  c.erase("text_config");
  refused_naming(c, "text_config");
  c = malformed_base("kimi-k2.5");
  c["text_config"]["model_type"] = "llama";
  refused_naming(c, "model.text_config.model_type");
  c = malformed_base("kimi-k2.5");
  c["text_config"] = 5;
  refused_naming(c, "model.text_config");
  c = malformed_base("kimi-k2.5");
  c["text_config"].erase("n_routed_experts");
  refused_naming(c, "model.text_config.n_routed_experts");
  c = malformed_base("kimi-k2.5");
  c["vision_config"]["num_experts"] = 4;
  refused_naming(c, "model.vision_config.num_experts");
  c = malformed_base("kimi-k2.5");
  c["vision_config"]["vt_num_hidden_layers"] = 0;
  refused_naming(c, "model.vision_config.vt_num_hidden_layers");
  c = malformed_base("kimi-k2.5");
  c["tie_word_embeddings"] = true;  // the text model's is false
  refused_naming(c, "model.tie_word_embeddings");
  // compressed-tensors' "group" strategy needs a positive group_size (its QuantizationArgs validator says so): not 128.
  const char* w = "/text_config/quantization_config/config_groups/group_0/weights";
  for (const Json& g : {Json(nullptr), Json(0), Json(-1)}) {
    c = malformed_base("kimi-k2.5");
    c[Json::json_pointer(w)]["group_size"] = g;
    refused_naming(c, "model.text_config.quantization_config.config_groups.group_0.weights.group_size");
  }
  c = malformed_base("kimi-k2.5");
  c[Json::json_pointer(w)].erase("group_size");
  refused_naming(c, "model.text_config.quantization_config.config_groups.group_0.weights.group_size");
  c = malformed_base("kimi-k2.5");
  c[Json::json_pointer(w)]["num_bits"] = 3;
  refused_naming(c, "model.text_config.quantization_config.config_groups.group_0.weights");
}

TEST_CASE("Gemma-4: mismatched layer lists, zero or non-dividing shapes, and absurd towers are refused by name") {
  Json c = malformed_base("gemma-4-31b");
  c["text_config"]["layer_types"].erase(0);
  refused_naming(c, "model.text_config.layer_types");
  c = malformed_base("gemma-4-31b");
  c["text_config"]["layer_types"][3] = "linear_attention";
  refused_naming(c, "model.text_config.layer_types[3]");
  c = malformed_base("gemma-4-31b");
  c["text_config"]["layer_types"] = Json::array();
  refused_naming(c, "model.text_config.layer_types");
  struct Case { const char* key; Json value; };
  for (const Case& k : {Case{"num_global_key_value_heads", 5}, Case{"num_global_key_value_heads", 0},
                        Case{"global_head_dim", 0}, Case{"global_head_dim", -512}, Case{"head_dim", 0},
                        Case{"num_key_value_heads", 3}, Case{"sliding_window", -1}, Case{"num_hidden_layers", 0}}) {
    Json t = malformed_base("gemma-4-31b");
    t["text_config"][k.key] = k.value;
    refused_naming(t, std::string("model.text_config.") + k.key);
  }
  // A sliding layer without a window to slide in.
  c = malformed_base("gemma-4-31b");
  c["text_config"]["sliding_window"] = 0;
  refused_naming(c, "model.text_config");
  // The 26B-A4B's MoE block: experts absent, zero, or fewer than top-k.
  for (const Case& k : {Case{"num_experts", nullptr}, Case{"num_experts", 0}, Case{"top_k_experts", 0},
                        Case{"top_k_experts", 129}, Case{"moe_intermediate_size", -1}}) {
    Json t = malformed_base("gemma-4-26b-a4b");
    t["text_config"][k.key] = k.value;
    refused_naming(t, std::string("model.text_config.") + k.key);
  }
  // Omitted sizes take Gemma4TextConfig's defaults (as transformers and vLLM do), not Llama's derivations.
  c = malformed_base("gemma-4-e2b");
  c["text_config"].erase("head_dim");
  c["text_config"].erase("num_key_value_heads");
  CHECK(read(c).head_dim == 256);  // not 1536 / 8
  CHECK(read(c).num_kv_heads == 4);  // not the 8 query heads
  c = malformed_base("gemma-4-31b");
  c["vision_config"]["hidden_size"] = 1 << 30;
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.vision_config") && Catch::Contains("implausibly large"));
  c = malformed_base("gemma-4-31b");
  c["vision_config"]["model_type"] = "siglip_vision_model";
  refused_naming(c, "model.vision_config.model_type");
  c = malformed_base("gemma-4-31b");
  c["tie_word_embeddings"] = false;
  refused_naming(c, "model.tie_word_embeddings");
}

TEST_CASE("a ModelOpt quantization_config without quant_method: a broken scheme is refused by name") {
  Json c = malformed_base("llama-3.1-8b");
  const Json producer = {{"name", "modelopt"}, {"version", "0.35.0"}};
  c["quantization_config"] = {{"producer", producer}, {"quantization", {{"group_size", 16}}}};
  refused_naming(c, "model.quantization_config.quantization.quant_algo");
  c["quantization_config"]["quantization"]["quant_algo"] = "INT3";
  refused_naming(c, "model.quantization_config.quantization.quant_algo");
  c["quantization_config"]["quantization"]["quant_algo"] = 8;
  refused_naming(c, "model.quantization_config.quantization.quant_algo");
  c["quantization_config"]["quantization"] = {{"quant_algo", "NVFP4"}, {"group_size", 32}};
  refused_naming(c, "model.quantization_config.quantization.group_size");
  c["quantization_config"]["quantization"] = Json::array({"NVFP4"});
  refused_naming(c, "model.quantization_config.quantization");
  // A producer that is not ModelOpt's (or not an object) leaves the block without a quant_method.
  c["quantization_config"] = {{"producer", "modelopt"}, {"quantization", {{"quant_algo", "FP8"}}}};
  refused_naming(c, "model.quantization_config");
  c["quantization_config"] = {{"producer", {{"name", "other"}}}, {"quantization", {{"quant_algo", "FP8"}}}};
  refused_naming(c, "model.quantization_config");
}

TEST_CASE("num_local_experts: negative, absurd, mistyped or inconsistent expert counts are refused by name") {
  struct Case { const char* key; Json value; };
  for (const Case& k : {Case{"num_local_experts", -1}, Case{"num_local_experts", 1 << 21},
                        Case{"num_local_experts", "8"}, Case{"num_experts_per_tok", 9},
                        Case{"num_experts_per_tok", 0}}) {
    Json c = malformed_base("mixtral-8x7b");
    c[k.key] = k.value;
    refused_naming(c, std::string("model.") + k.key);
  }
  Json c = malformed_base("mixtral-8x7b");
  c.erase("num_experts_per_tok");
  refused_naming(c, "model.num_experts_per_tok");
  for (const Case& k : {Case{"num_local_experts", -1}, Case{"num_local_experts", "128"},
                        Case{"num_local_experts", 1.5}}) {
    Json q = malformed_base("qwen3-30b-a3b");
    q.erase("num_experts");
    q[k.key] = k.value;
    refused_naming(q, std::string("model.") + k.key);
  }
  // Qwen's other name, alone: the same model.
  Json q = malformed_base("qwen3-30b-a3b");
  q["num_local_experts"] = q["num_experts"];
  q.erase("num_experts");
  CHECK(read(q).param_count() == cat("qwen3-30b-a3b").param_count());
  // Fewer experts than picked per token.
  q["num_local_experts"] = 4;
  refused_naming(q, "num_experts_per_tok");
}
