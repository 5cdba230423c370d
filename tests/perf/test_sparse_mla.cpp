// vLLM's FLASHMLA_SPARSE for DeepSeek-V3.2 (perf/sparse_mla.hpp; docs/cost-model.md, "Sparse attention
// (DeepSeek-V3.2)"): every token, prefill and decode, runs the sparse kernel over all index_topk slots at the padded
// heads in MQA mode over the latent, whatever its context. Hand counts from the config (61 layers, 128 heads, latent
// 512 + 64, index_topk 2048, indexer 64 heads × 128); each check fails under the former window pricing.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/provenance.hpp"
#include "llmsim/perf/sparse_mla.hpp"
#include "llmsim/spec/catalog.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;
using test::decode;

namespace {

perf::CostModel v32_on(const std::string& model, perf::Runtime runtime = perf::Runtime::vllm_v1, int tp = 8) {
  const auto g = test::gpu("h200-141gb-sxm");
  spec::Quantization q;
  q.weights = spec::weight_format("fp8");
  return perf::CostModel(spec::Catalog::builtin().model(model), q, g, perf::default_profile(g),
                         spec::ParallelConfig{tp, 1}, true, 0, runtime);
}

double sparse_op(const perf::CostModel& cm, const perf::BatchShape& b, const std::string& name, bool bytes = false) {
  for (const auto& o : cm.breakdown(b).ops)
    if (o.name == name) return bytes ? o.bytes : o.flops;
  return 0;
}

/// One chunk of `tokens` prompt tokens after `cached` ones, for each of `seqs` sequences.
perf::BatchShape sparse_prefill(std::int64_t seqs, std::int64_t tokens, std::int64_t cached = 0) {
  perf::BatchShape b;
  b.prefill_seqs = seqs;
  b.prefill_tokens = seqs * tokens;
  b.prefill_kv_tokens = seqs * (cached + tokens);
  b.prefill_attn_pairs = static_cast<double>(seqs) * tokens * (cached + (tokens + 1) / 2.0);
  b.prefill_last_chunks = seqs;
  return b;
}

constexpr double kLayers = 61, kIndexerPairFlops = 2.0 * 64 * 128;
// One query token in one layer at TP 8: 16 heads padded to 64, every one of the 2048 slots, 576 + 512 wide.
constexpr double kSparseTokenFlops = 2.0 * 64 * 2048 * (576 + 512);

}  // namespace

TEST_CASE("sparse MLA: vLLM pads a rank's query heads to the kernel's tile") {
  const auto h200 = test::gpu("h200-141gb-sxm"), b200 = test::gpu("b200-180gb-sxm");
  CHECK(perf::flashmla_sparse_padded_heads(16, h200) == 64);  // TP 8 of 128 heads
  CHECK(perf::flashmla_sparse_padded_heads(64, h200) == 64);
  CHECK(perf::flashmla_sparse_padded_heads(128, h200) == 128);
  CHECK(perf::flashmla_sparse_padded_heads(16, b200) == 128);
  const auto& m = spec::Catalog::builtin().model("deepseek-v3.2");
  CHECK(perf::vllm_flashmla_sparse(m, h200, perf::Runtime::vllm_v1));
  CHECK_FALSE(perf::vllm_flashmla_sparse(m, h200, perf::Runtime::sglang));  // SGLang's NSA backend is not this
  CHECK_FALSE(perf::vllm_flashmla_sparse(m, test::gpu("a100-80gb-sxm"), perf::Runtime::vllm_v1));
  CHECK_FALSE(perf::vllm_flashmla_sparse(spec::Catalog::builtin().model("deepseek-v3"), h200, perf::Runtime::vllm_v1));
}

TEST_CASE("sparse MLA: a decode token computes all 2048 slots at 64 heads, however short its context") {
  const perf::CostModel cm = v32_on("deepseek-v3.2");
  for (const std::int64_t context : {256, 1024}) {
    INFO(context);
    const double indexer = kLayers * kIndexerPairFlops * 16 * context;
    // The window pricing computed min(context, 2048) keys at 16 heads: 1/32 of this at 256 tokens.
    CHECK(sparse_op(cm, decode(16, context), "attention_decode") - indexer ==
          Approx(kLayers * 16 * kSparseTokenFlops).epsilon(1e-9));
  }
  // Its latents are read only for the valid slots: min(context, 2048) per sequence (1,152 bytes each, bf16); the
  // indexer reads every context token's 132-byte key and writes an FP32 logit its top-k reads (perf/dsa_indexer.hpp).
  const double b256 = sparse_op(cm, decode(16, 256), "attention_decode", true);
  const double b1024 = sparse_op(cm, decode(16, 1024), "attention_decode", true);
  const double b4096 = sparse_op(cm, decode(16, 4096), "attention_decode", true);
  CHECK(b1024 - b256 == Approx(kLayers * 16 * 768 * (1152 + 132 + 8)).epsilon(1e-9));
  CHECK(b4096 - b1024 == Approx(kLayers * 16 * (1024 * 1152 + 3072 * (132 + 8))).epsilon(1e-9));
}

TEST_CASE("sparse MLA: prefill runs the absorbed path and the sparse kernel, no up-projection of the context") {
  const perf::CostModel cm = v32_on("deepseek-v3.2");
  // 512 new tokens after 3,584 cached: kv_b_proj's absorbed W_UK / W_UV on the 512 queries only (the MHA prefill
  // up-projected all 4,096 KV tokens), at 2 FLOPs per weight: 512 latent × 16 heads × (128 nope + 128 v).
  const auto b = sparse_prefill(1, 512, 3584);
  const double kv_b_params = 512.0 * 16 * (128 + 128);
  CHECK(sparse_op(cm, b, "kv_b_proj") == Approx(kLayers * 2 * 512 * kv_b_params).epsilon(1e-9));
  CHECK(sparse_op(cm, b, "attention_prefill") ==
        Approx(kLayers * (512 * kSparseTokenFlops + kIndexerPairFlops * b.prefill_attn_pairs)).epsilon(1e-9));
}

TEST_CASE("sparse MLA: a burst of short prompts prefills far slower than DeepSeek-V3's MHA prefill") {
  // 64 prompts of 128 tokens: V3 attends 128·129/2 pairs per prompt at 16 heads of 192 + 128, V3.2 2048 slots per
  // token at 64 heads of 576 + 512 (the kernel's 640 TFLOPS on H800-class compute).
  const auto b = sparse_prefill(64, 128);
  const perf::CostModel v32 = v32_on("deepseek-v3.2"), v3 = v32_on("deepseek-v3");
  const double t32 = test::op(v32, b, "attention_prefill"), t3 = test::op(v3, b, "attention_prefill");
  CHECK(t32 > 20 * t3);
  // Compute-bound at the kernel's rate: FLOPs / (989.4 TFLOPS × 640 / 989.4).
  CHECK(t32 == Approx(kLayers * (64 * 128 * kSparseTokenFlops + kIndexerPairFlops * b.prefill_attn_pairs) / 640e12)
                   .epsilon(0.25));
  // SGLang keeps the window pricing (its NSA backend is not read here): the same batch costs it far less attention.
  CHECK(test::op(v32_on("deepseek-v3.2", perf::Runtime::sglang), b, "attention_prefill") < 0.1 * t32);
}

TEST_CASE("sparse MLA: the kernel's constants are in the provenance table") {
  const double sm90 = perf::flashmla_sparse_efficiency(test::gpu("h200-141gb-sxm"));
  const double sm100 = perf::flashmla_sparse_efficiency(test::gpu("b200-180gb-sxm"));
  test::check_provenance_values({{"sparse_mla.head_tile_sm90", perf::kSparseMlaHeadTileSm90},
                                 {"sparse_mla.head_tile_sm100", perf::kSparseMlaHeadTileSm100},
                                 {"sparse_mla.efficiency_sm90", sm90},
                                 {"sparse_mla.efficiency_sm100", sm100}},
                                std::nullopt, /*approx=*/true);
}
