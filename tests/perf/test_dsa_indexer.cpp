// DeepSeek-V3.2's lightning indexer under vLLM (perf/dsa_indexer.hpp; docs/cost-model.md, "Sparse attention
// (DeepSeek-V3.2)"): its q·k logits run on DeepGEMM's FP8 MQA-logits kernels at their measured share of the FP8 peak,
// not at the fp16 prefill-attention rate, and write FP32 logits the top-k reads. The indexer's time is isolated as the
// attention op with the indexer's heads less the same model without them. Hand counts: 61 layers, 64 indexer heads ×
// 128, 132-byte FP8 keys; H200: 1,979 dense FP8 / 989 fp16 TFLOPS, the Hopper prefill-attention prior 0.5.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/dsa_indexer.hpp"
#include "llmsim/perf/provenance.hpp"
#include "llmsim/spec/catalog.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;

namespace {

/// DeepSeek-V3.2 (FP8, TP 8) on an H200, with its indexer or (`indexer_heads` = 0) without one.
perf::CostModel dsa_v32(perf::Runtime runtime, int indexer_heads = 64) {
  const auto g = test::gpu("h200-141gb-sxm");
  spec::ModelSpec m = spec::Catalog::builtin().model("deepseek-v3.2");
  m.index_n_heads = indexer_heads;
  spec::Quantization q;
  q.weights = spec::weight_format("fp8");
  return perf::CostModel(m, q, g, perf::default_profile(g), spec::ParallelConfig{8, 1}, true, 0, runtime);
}

/// One chunk of `tokens` prompt tokens after `cached` ones.
perf::BatchShape dsa_chunk(std::int64_t tokens, std::int64_t cached) {
  perf::BatchShape b;
  b.prefill_seqs = 1;
  b.prefill_tokens = tokens;
  b.prefill_kv_tokens = cached + tokens;
  b.prefill_attn_pairs = static_cast<double>(tokens) * (cached + (tokens + 1) / 2.0);
  b.prefill_last_chunks = 1;
  return b;
}

/// Seconds the indexer adds to op `name` of batch `b` under `runtime`.
double dsa_indexer_s(perf::Runtime runtime, const perf::BatchShape& b, const std::string& name) {
  return test::op(dsa_v32(runtime), b, name) - test::op(dsa_v32(runtime, 0), b, name);
}

constexpr double kDsaLayers = 61, kDsaPairFlops = 2.0 * 64 * 128, kDsaKeyBytes = 132;
constexpr double kH200Fp8 = 1979e12, kH200Fp16 = 989e12, kHopperAttnEff = 0.5;

}  // namespace

TEST_CASE("DSA indexer: vLLM runs the logits on DeepGEMM's FP8 kernels on Hopper and Blackwell only") {
  const auto& m = spec::Catalog::builtin().model("deepseek-v3.2");
  const auto h200 = test::gpu("h200-141gb-sxm");
  CHECK(perf::vllm_deepgemm_indexer(m, h200, perf::Runtime::vllm_v1));
  CHECK(perf::vllm_deepgemm_indexer(m, test::gpu("b200-180gb-sxm"), perf::Runtime::vllm_v1));
  CHECK_FALSE(perf::vllm_deepgemm_indexer(m, h200, perf::Runtime::sglang));
  CHECK_FALSE(perf::vllm_deepgemm_indexer(m, test::gpu("a100-80gb-sxm"), perf::Runtime::vllm_v1));
  CHECK_FALSE(perf::vllm_deepgemm_indexer(spec::Catalog::builtin().model("deepseek-v3"), h200, perf::Runtime::vllm_v1));
  CHECK(perf::deepgemm_mqa_logits_rate(h200) == Approx(1126e12).epsilon(1e-3));  // DeepGEMM's own Hopper figure
}

TEST_CASE("DSA indexer: a 32k prompt's last chunk scores its context 2.28x as fast as at the fp16 attention rate") {
  // The last 8,192-token chunk of a 32,768-token prompt: 8,192 x 28,672.5 causal pairs, 1.9e8 per layer.
  const auto b = dsa_chunk(8192, 24576);
  const double flops = kDsaLayers * kDsaPairFlops * b.prefill_attn_pairs;
  const double t = dsa_indexer_s(perf::Runtime::vllm_v1, b, "attention_prefill");
  // Compute-bound at DeepGEMM's 1,126 TFLOPS; the keys and FP32 logits (8 B a pair) stream well under it.
  const double tc = flops / (kH200Fp8 * perf::kMqaLogitsEfficiency);
  const double tm = kDsaLayers * (b.prefill_kv_tokens * kDsaKeyBytes + 8.0 * b.prefill_attn_pairs) / 4.8e12;
  CHECK(tm < 0.2 * tc);
  CHECK(t >= tc);
  CHECK(t == Approx(tc).epsilon(0.03));
  // The former price, fp16 at the Hopper attention prior (494.5 TFLOPS): 1,126 / 494.5 = 2.28 times as long.
  const double fp16_price = flops / (kH200Fp16 * kHopperAttnEff);
  CHECK(fp16_price / t == Approx(1126.0 / 494.5).epsilon(0.03));
  // The whole chunk's attention falls with it (the sparse MLA part is unchanged).
  const double attn = test::op(dsa_v32(perf::Runtime::vllm_v1), b, "attention_prefill");
  CHECK(attn - t + fp16_price > 1.3 * attn);
}

TEST_CASE("DSA indexer: short prompts are unchanged within 0.5 % of the step") {
  // 64 prompts of 128 tokens: 64 x 8,256 pairs a layer; the indexer is a sliver of the step at either price.
  perf::BatchShape b;
  b.prefill_seqs = 64;
  b.prefill_tokens = 64 * 128;
  b.prefill_kv_tokens = 64 * 128;
  b.prefill_attn_pairs = 64 * 128 * 129 / 2.0;
  b.prefill_last_chunks = 64;
  const perf::CostModel cm = dsa_v32(perf::Runtime::vllm_v1);
  const double step = cm.iteration_time(b);
  const double t = dsa_indexer_s(perf::Runtime::vllm_v1, b, "attention_prefill");
  const double fp16_price = kDsaLayers * kDsaPairFlops * b.prefill_attn_pairs / (kH200Fp16 * kHopperAttnEff);
  CHECK(t > 0);
  CHECK(std::abs(fp16_price - t) < 0.005 * step);
}

TEST_CASE("DSA indexer: a decode step streams the keys and logits, its FLOPs at the FP8 kernel's rate") {
  // 16 sequences at 32,768 tokens of context: 5.2e5 pairs a layer.
  const auto b = test::decode(16, 32768);
  const double pairs = 16.0 * 32768;
  const double t = dsa_indexer_s(perf::Runtime::vllm_v1, b, "attention_decode");
  const double tc = kDsaLayers * kDsaPairFlops * pairs / (kH200Fp8 * perf::kMqaLogitsEfficiency);
  const double eff = perf::default_profile(test::gpu("h200-141gb-sxm")).mem_bw_efficiency;
  const double tm = kDsaLayers * pairs * (kDsaKeyBytes + 8.0) / (4.8e12 * eff);
  CHECK(t >= std::max(tc, tm) * (1 - 1e-9));
  CHECK(t <= (tc + tm) * (1 + 1e-9));
  // At the FP8 rate a decode step's indexer is bound by the keys and logits it streams, not by its FLOPs (at the fp16
  // attention rate the FLOPs alone took as long as the stream).
  CHECK(tm > 2 * tc);
  CHECK(kDsaLayers * kDsaPairFlops * pairs / (kH200Fp16 * kHopperAttnEff) > 2 * tc);
}

TEST_CASE("DSA indexer: SGLang keeps the fp16 attention price (its NSA backend is not read here)") {
  const auto b = dsa_chunk(8192, 24576);
  const double t = dsa_indexer_s(perf::Runtime::sglang, b, "attention_prefill");
  const double tc = kDsaLayers * kDsaPairFlops * b.prefill_attn_pairs / (kH200Fp16 * kHopperAttnEff);
  CHECK(t >= tc * (1 - 1e-9));
  CHECK(t == Approx(tc).epsilon(0.03));
}

TEST_CASE("DSA indexer: its constants are in the provenance table") {
  test::check_provenance_values({{"dsa_indexer.mqa_logits_efficiency", perf::kMqaLogitsEfficiency},
                                 {"dsa_indexer.logit_bytes_per_pair", perf::kIndexerLogitBytesPerPair}},
                                std::nullopt, /*approx=*/true);
}
