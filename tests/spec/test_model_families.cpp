// Model families of issue 15: MoE with moe_intermediate_size and shared experts, MLA, sliding windows, Gemma's
// layout, quantization_config, and the refusal of what llmsim cannot size. Published totals are the model cards'
// (cited per row); each reproduction of the issue fails on the reader before it (233 B, 38.6 B, fp16).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "model_family_util.hpp"
#include "llmsim/spec/scenario.hpp"

using namespace llmsim;
using namespace llmsim::spec;

using test::billions;
using test::cat;
using test::read;

TEST_CASE("new catalogue models match their published parameter counts within 2%") {
  // Totals as the model cards / Hub safetensors metadata state them (billions).
  const std::pair<const char*, double> published[] = {
      {"llama-3.2-1b", 1.24},     // meta-llama/Llama-3.2-1B: 1.24B
      {"llama-3.2-3b", 3.21},     // meta-llama/Llama-3.2-3B: 3.21B
      {"llama-3.3-70b", 70.6},    // meta-llama/Llama-3.3-70B-Instruct: 70.6B
      {"qwen3-8b", 8.2},          // Qwen/Qwen3-8B card: "Number of Parameters: 8.2B"
      {"qwen3-14b", 14.8},        // Qwen/Qwen3-14B: 14.8B
      {"qwen3-32b", 32.8},        // Qwen/Qwen3-32B: 32.8B
      {"qwen3-30b-a3b", 30.5},    // Qwen/Qwen3-30B-A3B: "30.5B in total and 3.3B activated"
      {"qwen3-235b-a22b", 235},   // Qwen/Qwen3-235B-A22B: "235B in total and 22B activated"
      {"deepseek-v3", 671},       // deepseek-ai/DeepSeek-V3 README: 671B total, 37B activated
      {"deepseek-r1", 671},       // deepseek-ai/DeepSeek-R1: same architecture
      {"mistral-7b-v0.3", 7.25},  // mistralai/Mistral-7B-v0.3: 7.25B
      {"mistral-small-24b", 23.6},  // mistralai/Mistral-Small-24B-Instruct-2501: 23.6B
      {"mixtral-8x22b", 141},     // Mistral AI, "Cheaper, Better, Faster, Stronger": 39B active of 141B
      {"gemma-2-9b", 9.24},       // google/gemma-2-9b: 9.24B
      {"gemma-2-27b", 27.2},      // google/gemma-2-27b: 27.2B
      {"gemma-3-12b", 12.2},      // google/gemma-3-12b-it: 12.2B (vision tower included)
      {"gemma-3-27b", 27.4}};     // google/gemma-3-27b-it: 27.4B (vision tower included)
  for (const auto& [id, b] : published) {
    INFO(id);
    CHECK(billions(cat(id).param_count()) == Approx(b).epsilon(0.02));
  }
  CHECK(billions(cat("qwen3-235b-a22b").active_param_count()) == Approx(22).epsilon(0.02));
  CHECK(billions(cat("mixtral-8x22b").active_param_count()) == Approx(39).epsilon(0.02));
}

TEST_CASE("issue 15: Qwen3-30B-A3B is 30.5 B with 3.3 B active, not 233 B") {
  const ModelSpec& m = cat("qwen3-30b-a3b");
  CHECK(m.moe_intermediate_size == 768);  // the reader before ignored it and used intermediate_size 6144 per expert
  CHECK(m.num_experts == 128);
  CHECK(m.moe_layers() == 48);
  CHECK(m.qk_norm);
  CHECK(billions(m.param_count()) == Approx(30.5).epsilon(0.01));
  CHECK(billions(m.active_param_count()) == Approx(3.3).epsilon(0.02));
}

TEST_CASE("issue 15: DeepSeek-V3 is 671 B (+ 14 B MTP) with 37 B active, not 38.6 B") {
  const ModelSpec& m = cat("deepseek-v3");
  CHECK(m.is_mla());
  CHECK(m.kv_lora_rank == 512);
  CHECK(m.q_lora_rank == 1536);
  CHECK(m.dense_layers == 3);                                  // first_k_dense_replace
  CHECK(m.shared_expert_intermediate_size == 2048);            // n_shared_experts 1 × moe_intermediate_size
  CHECK(billions(m.param_count()) == Approx(671).epsilon(0.01));
  CHECK(billions(m.active_param_count()) == Approx(37).epsilon(0.02));
  // The README's checkpoint total: 685B = 671B main model + 14B MTP module (a MoE layer, eh_proj, own embedding and
  // head copies); vLLM does not load the MTP weights without speculative decoding, so param_count leaves them out.
  CHECK(m.mtp_layers == 1);
  CHECK(billions(m.param_count() + m.mtp_params) == Approx(685).epsilon(0.005));
  CHECK_FALSE(m.notes.empty());
  // Its config.json says FP8 (block-wise): that is its default weight format.
  CHECK(m.quantization.format == "fp8");
}

TEST_CASE("KV bytes per token by hand: GQA, MLA, sliding window") {
  // GQA: 2 × layers × kv_heads × head_dim × bytes.
  CHECK(cat("qwen3-30b-a3b").kv_bytes_per_token(2.0) == 2.0 * 48 * 4 * 128 * 2);
  CHECK(cat("llama-3.3-70b").kv_bytes_per_token(2.0) == 2.0 * 80 * 8 * 128 * 2);
  // MLA: one latent of kv_lora_rank + qk_rope_head_dim per layer, no separate K and V: 61 × 576 × 2 = 70,272 B
  // (a 128-head MHA of head_dim 192/128 would store 61 × 128 × 320 × 2 = 5.0 MB).
  CHECK(cat("deepseek-v3").kv_elements_per_token_per_layer() == 576);
  CHECK(cat("deepseek-v3").kv_bytes_per_token(2.0) == 61.0 * 576 * 2);
  // Sliding window: the whole-context figure counts every layer; which layers slide is the spec's.
  const ModelSpec& g3 = cat("gemma-3-27b");
  CHECK(g3.kv_bytes_per_token(2.0) == 2.0 * 62 * 16 * 128 * 2);
  CHECK(g3.sliding_window == 1024);
  CHECK(g3.sliding_layers == 52);  // 62 layers, every 6th global: 10 global
  const ModelSpec& g2 = cat("gemma-2-9b");
  CHECK(g2.sliding_window == 4096);
  CHECK(g2.sliding_layers == 21);  // every other layer of 42
  CHECK(g2.head_dim == 256);       // not hidden / heads = 224
  CHECK(g2.tie_word_embeddings);   // Gemma ties without saying so
  CHECK(g2.norms_per_layer == 4);
  // Mistral-7B v0.1's window applies to every layer; v0.3 has none.
  CHECK(cat("mistral-7b").sliding_layers == 32);
  CHECK_FALSE(cat("mistral-7b-v0.3").has_sliding_window());
  // Qwen2.5 carries sliding_window 131072 with use_sliding_window false: no sliding layers.
  CHECK_FALSE(cat("qwen2.5-7b").has_sliding_window());
}

TEST_CASE("MoE layouts: dense-first layers, mlp_only_layers, sparse step, Qwen2-MoE shared expert") {
  Json c = {{"model_type", "qwen3_moe"}, {"hidden_size", 256}, {"num_hidden_layers", 8},
            {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 64},
            {"intermediate_size", 1024}, {"moe_intermediate_size", 128}, {"num_experts", 16},
            {"num_experts_per_tok", 2}, {"vocab_size", 1000}, {"max_position_embeddings", 4096},
            {"mlp_only_layers", Json::array({0, 5})}, {"decoder_sparse_step", 2}};
  ModelSpec m = read(c);
  CHECK(m.moe_layers() == 3);  // layers 1, 3, 7 ((i + 1) % 2 == 0, 5 excluded)
  CHECK(m.dense_layers == 5);
  const std::int64_t h = 256;
  CHECK(m.param_count() - m.active_param_count() == 3 * (16 - 2) * 3 * h * 128);

  c = {{"model_type", "qwen2_moe"}, {"hidden_size", 2048}, {"num_hidden_layers", 24}, {"num_attention_heads", 16},
       {"num_key_value_heads", 16}, {"intermediate_size", 5632}, {"moe_intermediate_size", 1408},
       {"shared_expert_intermediate_size", 5632}, {"num_experts", 60}, {"num_experts_per_tok", 4},
       {"vocab_size", 151936}, {"max_position_embeddings", 8192}, {"decoder_sparse_step", 1},
       {"use_sliding_window", false}, {"sliding_window", 4096}};
  m = read(c);  // Qwen/Qwen1.5-MoE-A2.7B's shape: 14.3B total, 2.7B activated (its model card)
  CHECK(m.shared_expert_gate);
  CHECK(m.attention_bias);
  CHECK(billions(m.param_count()) == Approx(14.3).epsilon(0.02));
  CHECK(billions(m.active_param_count()) == Approx(2.7).epsilon(0.03));
}

TEST_CASE("an architecture llmsim cannot size is refused, naming the file and the field") {
  Json c = {{"architectures", Json::array({"MiniMaxM1ForCausalLM"})}, {"model_type", "minimax_m1"},
            {"hidden_size", 6144}, {"num_hidden_layers", 80}, {"num_attention_heads", 64},
            {"intermediate_size", 9216}, {"vocab_size", 200064}, {"max_position_embeddings", 10240000}};
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.model_type") && Catch::Contains("minimax_m1") &&
                                 Catch::Contains("cannot size"));
  c.erase("model_type");  // the class name alone is checked too
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.architectures[0]") && Catch::Contains("MiniMaxM1ForCausalLM"));

  // A known family with a key that may change the size: named, with what it looks like.
  Json q = Catalog::builtin().model("qwen3-8b").source;
  q["linear_attn_config"] = Json{{"num_heads", 32}};
  CHECK_THROWS_WITH(read(q), Catch::Contains("model.linear_attn_config") && Catch::Contains("linear-attention"));
  q.erase("linear_attn_config");
  q["layer_types"] = Json::array();
  for (int i = 0; i < 36; ++i) q["layer_types"].push_back(i % 4 == 3 ? "full_attention" : "linear_attention");
  CHECK_THROWS_WITH(read(q), Catch::Contains("model.layer_types[0]") && Catch::Contains("linear_attention"));
  q.erase("layer_types");
  q["use_sliding_window"] = true;
  CHECK_THROWS_WITH(read(q), Catch::Contains("model.use_sliding_window"));
  q["use_sliding_window"] = false;
  q["is_encoder_decoder"] = true;
  CHECK_THROWS_WITH(read(q), Catch::Contains("model.is_encoder_decoder"));

  // Through the catalogue, a file path: the error names the file.
  const auto dir = std::filesystem::temp_directory_path() / "llmsim_test_model_families";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "config.json").string();
  std::ofstream(path) << c.dump();
  CHECK_THROWS_WITH(Catalog::builtin().model(path), Catch::Contains(path) && Catch::Contains("architectures"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("Gemma-3 multimodal: text_config with transformers' defaults, the vision tower counted") {
  const ModelSpec& m = cat("gemma-3-12b");
  CHECK(m.vocab_size == 262208);            // Gemma3TextConfig default, omitted in the file
  CHECK(m.head_dim == 256);                 // default
  CHECK(m.max_position_embeddings == 131072);
  CHECK(m.sliding_layers == 40);            // 48 layers, sliding_window_pattern 6 by default
  CHECK(m.qk_norm);
  // SigLIP-so400m (27 layers, 1152 wide) + projector: ~0.42 B, counted in weights, not in active parameters.
  CHECK(billions(m.vision_params) == Approx(0.42).epsilon(0.02));
  CHECK(m.param_count() - m.active_param_count() == m.vision_params);
  Json c = m.source;
  c.erase("vision_config");
  CHECK_THROWS_WITH(read(c), Catch::Contains("vision_config"));
}

TEST_CASE("quantization_config becomes the model's weight format") {
  Json c = Catalog::builtin().model("llama-3.1-8b").source;
  // casperhansen/deepseek-r1-distill-llama-8b-awq's quantization_config
  c["quantization_config"] = {{"bits", 4}, {"group_size", 128}, {"modules_to_not_convert", nullptr},
                              {"quant_method", "awq"}, {"version", "gemm"}, {"zero_point", true}};
  CHECK(read(c).quantization.format == "awq-int4");
  c["quantization_config"]["group_size"] = 64;
  CHECK(read(c).quantization.format == "awq-int4-g64");
  CHECK(weight_format("awq-int4-g64").bits_per_weight == Approx(4 + 20.0 / 64));
  c["quantization_config"] = {{"bits", 8}, {"group_size", 128}, {"desc_act", false}, {"quant_method", "gptq"}};
  CHECK(read(c).quantization.format == "int8-g128");
  c["quantization_config"] = {{"bits", 4}, {"group_size", -1}, {"quant_method", "gptq"}};
  CHECK(read(c).quantization.format == "gptq-int4-gch");
  c["quantization_config"] = {{"bits", 4}, {"group_size", 256}, {"quant_method", "gptq"}};
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.quantization_config.group_size") && Catch::Contains("256"));
  // neuralmagic-style FP8 dynamic (compressed-tensors), and its W4A16
  c["quantization_config"] = {
      {"quant_method", "compressed-tensors"}, {"format", "float-quantized"},
      {"config_groups", {{"group_0", {{"weights", {{"num_bits", 8}, {"type", "float"}, {"strategy", "channel"}}},
                                      {"input_activations", {{"num_bits", 8}, {"type", "float"}, {"dynamic", true}}}}}}},
      {"ignore", Json::array({"lm_head"})}};
  CHECK(read(c).quantization.format == "fp8-dynamic");  // channel-wise weights, dynamic activations
  c["quantization_config"]["config_groups"]["group_0"] = {
      {"weights", {{"num_bits", 4}, {"type", "int"}, {"strategy", "group"}, {"group_size", 128}, {"symmetric", true}}},
      {"input_activations", nullptr}};
  CHECK(read(c).quantization.format == "w4a16");
  // unsloth's bitsandbytes checkpoints
  c["quantization_config"] = {{"quant_method", "bitsandbytes"}, {"load_in_4bit", true},
                              {"bnb_4bit_quant_type", "nf4"}, {"bnb_4bit_use_double_quant", true}};
  CHECK(read(c).quantization.format == "nf4-dq");
  CHECK(weight_format("nf4-dq").bits_per_weight == Approx(4.127).epsilon(0.001));
  c["quantization_config"] = {{"quant_method", "bitsandbytes"}, {"load_in_8bit", true}};
  CHECK(read(c).quantization.format == "bnb-int8");
  c["quantization_config"] = {{"quant_method", "exl2"}, {"bits", 2.0}};
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.quantization_config.quant_method") && Catch::Contains("exl2"));
}

TEST_CASE("issue 15: an AWQ checkpoint is planned at 4 bits unless the scenario says otherwise") {
  const auto dir = std::filesystem::temp_directory_path() / "llmsim_test_awq_checkpoint";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "config.json").string();
  Json c = Catalog::builtin().model("qwen3-30b-a3b").source;
  c["quantization_config"] = {{"bits", 4}, {"group_size", 128}, {"quant_method", "awq"}, {"version", "gemm"},
                              {"zero_point", true}};
  std::ofstream(path) << c.dump();
  Scenario s;  // quant.weights left at its default
  s.model = path;
  s.hardware.gpu = "rtx4090-24gb";
  s.engine.max_model_len = 8192;
  ResolvedScenario r = resolve(s, Catalog::builtin());
  CHECK(r.quant.weights.id == "awq-int4");  // the reader before planned it as fp16
  CHECK(r.quant.weights.bits_per_weight < 4.2);
  CHECK(r.scenario.weights == "awq-int4");
  CHECK(r.notes.empty());
  // Asked for fp8 explicitly: allowed, and noted.
  s.weights = "fp8";
  r = resolve(s, Catalog::builtin());
  CHECK(r.quant.weights.id == "fp8");
  REQUIRE(r.notes.size() == 1);
  CHECK_THAT(r.notes[0], Catch::Contains("quantization_config") && Catch::Contains("awq-int4"));
  // A 16-bit checkpoint stays fp16 by default, as before.
  s.model = "qwen3-30b-a3b";
  s.weights = "auto";
  CHECK(resolve(s, Catalog::builtin()).quant.weights.id == "fp16");
  std::filesystem::remove_all(dir);
}

TEST_CASE("tensor parallel rules follow the MoE and MLA shapes") {
  Problems p;
  cat("qwen3-30b-a3b").check_tensor_parallel(8, p);  // 32 heads, 4 KV heads replicated, 768-wide experts
  CHECK(p.empty());
  cat("qwen3-30b-a3b").check_tensor_parallel(5, p);
  CHECK_THROWS_WITH(p.throw_if_any(), Catch::Contains("hardware.tp"));
  Problems q;
  cat("deepseek-v3").check_tensor_parallel(16, q);  // MLA: no KV-head rule; 2048-wide experts split 16 ways
  CHECK(q.empty());
  Json c = cat("qwen3-30b-a3b").source;
  c["moe_intermediate_size"] = 772;  // does not split 8 ways
  Problems r;
  read(c).check_tensor_parallel(8, r);
  CHECK_THROWS_WITH(r.throw_if_any(), Catch::Contains("moe_intermediate_size (772)"));
}

TEST_CASE("InternLM (v1) is read as Llama, its 'bias' on q, k, v and o") {
  // data/validation/models/internlm-20b.json's shape (lmdeploy's validation rows); vLLM loads it with llama.py.
  Json c = {{"architectures", Json::array({"InternLMForCausalLM"})}, {"model_type", "internlm"},
            {"hidden_size", 5120}, {"intermediate_size", 13824}, {"num_hidden_layers", 60},
            {"num_attention_heads", 40}, {"num_key_value_heads", 40}, {"vocab_size", 103168},
            {"max_position_embeddings", 4096}};
  const ModelSpec plain = read(c);
  CHECK(billions(plain.param_count()) == Approx(20).epsilon(0.03));  // InternLM-20B
  c["bias"] = true;  // internlm/internlm-7b's config
  const ModelSpec biased = read(c);
  CHECK(biased.attention_bias);
  CHECK(biased.param_count() - plain.param_count() == 60 * 4 * 5120);
}

TEST_CASE("implausibly large sizes are refused before any count could overflow") {
  // Each field is within the reader's 2^30, but experts × hidden × width × layers would wrap int64.
  Json c = cat("deepseek-v3").source;
  c["hidden_size"] = 1 << 30;
  c["n_routed_experts"] = 1 << 20;
  c["num_hidden_layers"] = 1 << 20;
  CHECK_THROWS_WITH(read(c), Catch::Contains("implausibly large"));
  c = cat("qwen3-30b-a3b").source;
  c["moe_intermediate_size"] = 1 << 30;
  c["num_experts"] = 1 << 30;
  c["num_experts_per_tok"] = 8;
  CHECK_THROWS_WITH(read(c), Catch::Contains("implausibly large"));
  c = cat("deepseek-v3").source;
  c["n_shared_experts"] = 1 << 20;
  CHECK_THROWS_WITH(read(c), Catch::Contains("model.n_shared_experts"));
  // The closed-form layer counts agree with the layouts above at a size a loop could not afford.
  c = cat("qwen3-30b-a3b").source;
  c["num_hidden_layers"] = 1 << 30;
  c["hidden_size"] = 8;
  c["head_dim"] = 2;
  c["num_attention_heads"] = 4;
  c["num_key_value_heads"] = 4;
  c["moe_intermediate_size"] = 8;
  c["intermediate_size"] = 8;
  c["vocab_size"] = 8;
  c["decoder_sparse_step"] = 4;
  c["mlp_only_layers"] = Json::array({3, 5});
  const ModelSpec big = read(c);
  CHECK(big.moe_layers() == (1 << 28) - 1);  // every 4th layer, less layer 3
}
