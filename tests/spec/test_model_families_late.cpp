// Families and checkpoint layouts the issue-30 audit still found refused: GLM-4.7-Flash (glm4_moe_lite), Kimi-K2.5
// (kimi_k25: a nested kimi_k2 text_config and the MoonViT tower), the expert count under transformers' other name
// (num_local_experts) in Qwen MoE configs, and a ModelOpt quantization_config without quant_method. Published totals
// are the publishers' (data/models/README.md has the sources of the configs).
#include <catch2/catch.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"
#include "model_family_util.hpp"

using namespace llmsim;
using namespace llmsim::spec;

using test::billions;
using test::cat;
using test::read;

TEST_CASE("GLM-4.7-Flash (glm4_moe_lite) is DeepSeek's MLA + MoE layout, 30B total, one latent per token") {
  const ModelSpec m = cat("glm-4.7-flash");
  CHECK(m.model_type == "glm4_moe_lite");
  CHECK(m.is_mla());
  CHECK(m.kv_lora_rank == 512);
  CHECK(m.q_lora_rank == 768);
  CHECK(m.head_dim == 192 + 64);
  CHECK(m.num_experts == 64);
  CHECK(m.experts_per_token == 4);
  CHECK(m.shared_expert_intermediate_size == 1536);
  CHECK(m.dense_layers == 1);
  // zai-org/GLM-4.7-Flash's model card: "a 30B-A3B MoE model" (rounded).
  CHECK(billions(m.param_count()) == Approx(30).epsilon(0.04));
  // "A3B": one significant digit; 3.27 B without the embedding and LM head (as Qwen3-Next's "A3B" is checked).
  CHECK(billions(m.active_param_count() - m.embedding_params() - m.lm_head_params()) == Approx(3).epsilon(0.1));
  // vLLM's MLA cache: kv_lora_rank + qk_rope_head_dim = 576 elements per token and layer (vLLM's own test of this
  // config asserts head_size 576 with one KV head).
  CHECK(m.kv_bytes_per_token(2.0) == Approx(47.0 * 576 * 2));
  // partial_rotary_factor is judged by value: 1.0 changes nothing, anything else is refused by name.
  Json c = m.source;
  c["partial_rotary_factor"] = 0.5;
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.partial_rotary_factor"));
}

TEST_CASE("Kimi-K2.5: the nested kimi_k2 text_config sized as Kimi-K2, the MoonViT tower counted, INT4 experts") {
  const ModelSpec m = cat("kimi-k2.5");
  CHECK(m.model_type == "kimi_k25");
  CHECK(m.is_mla());
  CHECK(m.num_experts == 384);
  // The language model is Kimi-K2's shape: the same parameters.
  CHECK(m.param_count() - m.vision_params == cat("kimi-k2").param_count());
  // moonshotai/Kimi-K2.5's model card: 1T total (rounded), 32B activated, a 400M MoonViT vision encoder.
  CHECK(billions(m.param_count()) == Approx(1000).epsilon(0.04));
  CHECK(billions(m.active_param_count() - m.embedding_params()) == Approx(32).epsilon(0.04));
  // MoonViT by hand (vllm kimi_k25_vit.py): patch conv 3·14·14·1152 + 1152, a 64 × 64 position table, 27 layers of
  // two LayerNorms, biased wqkv (1152 → 3456), wo, fc0 (1152 → 4304), fc1, and a final LayerNorm ...
  const std::int64_t h = 1152, inter = 4304;
  const std::int64_t tower = 3 * 14 * 14 * h + h + 64 * 64 * h +
                             27 * (4 * h + 3 * h * h + 3 * h + h * h + h + h * inter + inter + inter * h + h) + 2 * h;
  // ... and the patch-merger projector: LayerNorm(1152), linear_1 4608 → 4608, linear_2 4608 → 7168, both biased.
  const std::int64_t projector = 2 * h + 4 * h * 4 * h + 4 * h + 4 * h * 7168 + 7168;
  CHECK(m.vision_params == tower + projector);
  CHECK(billions(tower) == Approx(0.4).epsilon(0.05));  // "400M": within the rounding of one significant digit
  // Moonshot's native INT4 checkpoint: compressed-tensors W4A16 on the routed experts (attention, shared experts,
  // dense MLPs and lm_head ignored), read from the nested text_config as vLLM propagates it.
  CHECK_FALSE(m.quantization.format.empty());
  // text_config may name deepseek_v3 (vLLM builds DeepseekV3 either way); another family is refused.
  Json c = m.source;
  c["text_config"]["model_type"] = "deepseek_v3";
  CHECK(read(c).param_count() == m.param_count());
  c["text_config"]["model_type"] = "llama";
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.text_config.model_type"));
  // A projector llmsim does not size, or one that cannot feed the text model, is refused naming the key.
  c = m.source;
  c["vision_config"]["mm_projector_type"] = "patchmergerv2";
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.vision_config.mm_projector_type"));
  c = m.source;
  c["vision_config"]["mm_hidden_size"] = 4096;
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.vision_config.mm_hidden_size"));
  c = m.source;
  c["vision_config"]["qkv_hidden_size"] = 2048;
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.vision_config.qkv_hidden_size"));
}

TEST_CASE("Qwen MoE configs: the expert count is read under either of transformers' names") {
  // transformers' Qwen2-MoE / Qwen3-MoE / Qwen3-Next configs declare num_local_experts and num_experts one attribute.
  for (const char* id : {"qwen3-30b-a3b", "qwen3-next-80b-a3b"}) {
    INFO(id);
    const ModelSpec& orig = cat(id);
    Json c = orig.source;
    const Json n = c["num_experts"];
    c.erase("num_experts");
    c["num_local_experts"] = n;
    const ModelSpec m = read(c);
    CHECK(m.num_experts == orig.num_experts);
    CHECK(m.param_count() == orig.param_count());
    c["num_experts"] = n;  // both names, the same count: fine
    CHECK(read(c).num_experts == orig.num_experts);
    c["num_local_experts"] = n.get<int>() / 2;  // both names, two counts: which one loads is not llmsim's guess
    CHECK_THROWS_WITH(read(c), Catch::Contains("model.num_local_experts"));
  }
}

TEST_CASE("a ModelOpt quantization_config without quant_method is read by its producer, as vLLM does") {
  // ModelOpt exports put hf_quant_config.json's content into config.json (producer + quantization.quant_algo);
  // vLLM's ModelConfig._parse_quant_hf_config picks modelopt / modelopt_fp4 from quant_algo.
  Json c = cat("llama-3.1-8b").source;
  c["quantization_config"] = {{"producer", {{"name", "modelopt"}, {"version", "0.35.0"}}},
                              {"quantization", {{"quant_algo", "NVFP4"}, {"group_size", 16},
                                                {"exclude_modules", {"lm_head"}}}}};
  CHECK(read(c).quantization.format == "nvfp4");
  c["quantization_config"]["quantization"]["quant_algo"] = "FP8";
  CHECK(read(c).quantization.format == "fp8");
  // Neither a quant_method nor ModelOpt's producer: refused, naming the block.
  c["quantization_config"] = {{"bits", 4}};
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.quantization_config") && Catch::Contains("quant_method"));
}

TEST_CASE("vLLM's --kv-cache-dtype values are KV dtypes everywhere (one table: canonical_kv_dtype_id)") {
  CHECK(parse_kv_dtype("fp8_e4m3", "k") == DType::fp8);
  CHECK(parse_kv_dtype("FP8_E5M2", "k") == DType::fp8);
  CHECK(parse_kv_dtype("fp8_inc", "k") == DType::fp8);
  CHECK(parse_kv_dtype("bfloat16", "k") == DType::bf16);
  CHECK(parse_kv_dtype("half", "k") == DType::fp16);
  CHECK(parse_kv_dtype("auto", "k") == DType::fp16);
  CHECK_THROWS_WITH(parse_kv_dtype("fp8_e3m4", "k"), Catch::Contains("k: unknown KV-cache dtype 'fp8_e3m4'"));
}
