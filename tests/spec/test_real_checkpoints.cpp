// Real checkpoint configs (tests/data/hf_checkpoints: publishers' config.json / hf_quant_config.json as public
// repositories keep them) read as `vllm serve FOLDER` reads them: sizes against the publishers' totals and the weight
// format each checkpoint stores. Each case failed before its reader fix (named per case).
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"
#include "model_family_util.hpp"

using namespace llmsim;
using namespace llmsim::spec;

using test::billions;
using test::cat;
using test::read;

namespace {

bool has_note(const ModelSpec& m, const std::string& text) {
  for (const auto& n : m.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

CheckpointQuantization modelopt(const Json& j) {
  std::vector<std::string> notes;
  return modelopt_quantization(JsonView(j, "q"), notes);
}

}  // namespace

TEST_CASE("Gemma-4's real configs are read: towers serialized whole, soft-token counts, Google's totals") {
  // google/gemma-4-26B-A4B (the catalogue file): its vision_config carries every PretrainedConfig attribute
  // (id2label, return_dict, chunk_size_feed_forward, ...), refused as unknown tower keys before.
  const ModelSpec& a4b = cat("gemma-4-26b-a4b");
  REQUIRE(a4b.source["vision_config"].contains("id2label"));
  // Google's Gemma 4 model card: 25.2 B total, 3.8 B active (text model; the vision encoder ~550 M apart).
  CHECK(billions(a4b.param_count() - a4b.vision_params) == Approx(25.2).epsilon(0.02));
  CHECK(billions(a4b.vision_params) == Approx(0.55).epsilon(0.1));
  // nvidia/Gemma-4-31B-IT-NVFP4: its vision_config adds image_seq_length / video_seq_length (soft tokens, no weight).
  const ModelSpec g31 = test::checkpoint("gemma-4-31b-it-nvfp4");
  CHECK(billions(g31.param_count() - g31.vision_params) == Approx(30.7).epsilon(0.02));
  CHECK(g31.param_count() == cat("gemma-4-31b").param_count());
  // A base attribute whose value would add or remove weights is still refused, naming it.
  Json c = a4b.source;
  c["vision_config"]["pruned_heads"] = {{"0", {1}}};
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.vision_config.pruned_heads"));
  c["vision_config"]["pruned_heads"] = Json::object();
  CHECK(read(c).param_count() == a4b.param_count());
}

TEST_CASE("ModelOpt config.json quantization_config: 'ignore' names the 16-bit modules, as vLLM reads it") {
  // nvidia/Gemma-4-31B-IT-NVFP4: quant_method modelopt, quant_algo NVFP4, every layer's self_attn* in "ignore".
  // Before, only hf_quant_config.json's exclude_modules was read: all-NVFP4, the attention 3.6x too small.
  const ModelSpec g31 = test::checkpoint("gemma-4-31b-it-nvfp4");
  CHECK(g31.quantization.format == "nvfp4+attn16");
  CHECK(has_note(g31, "quantization_config.ignore keeps the attention modules unquantized"));
  CHECK(has_note(g31, "takes precedence"));  // config.json's block wins over hf_quant_config.json, as in vLLM
  // nvidia/Gemma-4-26B-A4B-NVFP4: attention, the dense MLP beside the experts (mlp*) and the router ignored: only
  // the routed experts are NVFP4.
  const ModelSpec a4b = test::checkpoint("gemma-4-26b-a4b-nvfp4");
  CHECK(a4b.quantization.format == "nvfp4-experts");
  CHECK(weight_format("nvfp4-experts").experts_only);
  CHECK(weight_format("nvfp4-experts").bits_per_weight == Approx(4.5));
  // Without its ignore list the same block is all-NVFP4: the list, not the algorithm, makes the difference.
  Json q = g31.source["quantization_config"];
  q.erase("ignore");
  CHECK(modelopt(q).format == "nvfp4");
}

TEST_CASE("ModelOpt checkpoint directories: hf_quant_config.json alone, and a producer-only quantization_config") {
  // nvidia/Llama-3.1-70B-Instruct-FP8: config.json without quantization_config, hf_quant_config.json beside it.
  const ModelSpec fp8 = test::checkpoint("llama-3.1-70b-instruct-fp8");
  CHECK(fp8.quantization.format == "fp8");
  CHECK(billions(fp8.param_count()) == Approx(70.6).epsilon(0.02));  // Meta's Llama-3.1-70B card: 70.6 B
  CHECK(has_note(fp8, "weights as hf_quant_config.json says"));
  // A ModelOpt FP8 export of Qwen3-32B: flat quantization_config with a producer and no quant_method, its
  // kv_cache_scheme the string "FP8".
  const ModelSpec qwen = test::checkpoint("qwen3-32b-fp8-static-pertensor");
  CHECK(qwen.quantization.format == "fp8");
  CHECK(has_note(qwen, "FP8 KV-cache scale"));
  CHECK(billions(qwen.param_count()) == Approx(32.8).epsilon(0.02));  // Qwen3-32B card: 32.8 B
}

TEST_CASE("ModelOpt algorithms vLLM loads are planned at their bytes; a real mix is refused by name") {
  auto nested = [](const char* algo) { return Json{{"quantization", {{"quant_algo", algo}}}}; };
  CHECK(modelopt(nested("FP8_PER_CHANNEL_PER_TOKEN")).format == "fp8-dynamic");
  CHECK(modelopt(nested("W4A16_NVFP4")).format == "nvfp4-a16");
  CHECK(modelopt(nested("nvfp4")).format == "nvfp4");  // vLLM upper-cases quant_algo (ModelOpt may write lower case)
  Json mixed = {{"quantization", {{"quant_algo", "MIXED_PRECISION"},
                                  {"quantized_layers", {{"model.layers.0.mlp.down_proj", {{"quant_algo", "NVFP4"}}},
                                                        {"model.layers.1.mlp.down_proj", {{"quant_algo", "NVFP4"}}}}}}}};
  CHECK(modelopt(mixed).format == "nvfp4");
  mixed["quantization"]["quantized_layers"]["model.layers.1.mlp.down_proj"]["quant_algo"] = "FP8";
  CHECK_THROWS_WITH(modelopt(mixed), Catch::Contains("q.quantization.quantized_layers") && Catch::Contains("FP8") &&
                                         Catch::Contains("NVFP4"));
  CHECK_THROWS_WITH(modelopt(nested("INT2")), Catch::Contains("q.quantization.quant_algo") &&
                                                  Catch::Contains("W4A16_NVFP4"));
  // Kimi-K2.6-NVFP4's pattern: self_attn* and shared_experts* ignored -> routed experts only. DeepSeek-V3-0324-NVFP4's:
  // self_attn* and the MTP layer "layers.61*" (not loaded by vLLM) -> attention 16-bit, every MLP NVFP4.
  const Json kimi = {{"quant_method", "modelopt"}, {"quant_algo", "NVFP4"},
                     {"ignore", {"language_model.model.layers.0*", "language_model.model.layers.1.mlp.shared_experts*",
                                 "language_model.model.layers.1.self_attn*"}}};
  CHECK(modelopt(kimi).format == "nvfp4-experts");
  const Json v3 = {{"quantization", {{"quant_algo", "NVFP4"},
                                     {"exclude_modules", {"model.layers.0.self_attn*", "model.layers.61*"}}}}};
  CHECK(modelopt(v3).format == "nvfp4+attn16");
}

TEST_CASE("Mistral-3's real wrapper: a mistral text_config and a Pixtral tower, 24 B") {
  // black-forest-labs/FLUX.2-dev's text encoder, a Mistral Small 3.x 24B config.json (transformers 4.57.1).
  const ModelSpec m = test::checkpoint("mistral-small-3.2-24b-flux2-text-encoder");
  CHECK(m.model_type == "mistral3");
  CHECK(billions(m.param_count()) == Approx(24.0).epsilon(0.04));  // "Mistral Small 3.1 (24B)", rounded
  CHECK(billions(m.vision_params) == Approx(0.44).epsilon(0.05));
  CHECK(m.quantization.format.empty());
}

TEST_CASE("Phi-4's real config: Phi3ForCausalLM at 14.7 B, its window as long as its context") {
  // microsoft/phi-4 (transformers 4.47.0): sliding_window 16384 = max_position_embeddings, so no layer slides.
  const ModelSpec m = test::checkpoint("phi-4");
  CHECK(m.model_type == "phi3");
  CHECK(billions(m.param_count()) == Approx(14.7).epsilon(0.02));  // Phi-4 technical report: 14B, 14.7 B in the card
  CHECK(m.sliding_window == 0);
  CHECK(m.kv_bytes_per_token(2.0) == Approx(40.0 * 2 * 10 * 128 * 2));
}
