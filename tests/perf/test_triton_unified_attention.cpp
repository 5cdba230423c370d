// gpt-oss on Ampere: vLLM V1 prefills its attention (sinks) on the Triton unified kernel, whose Q-blocks of 16 rows hold
// 2 query tokens of 8 query heads each, so its K/V tile reads from the L2 bound the kernel (docs/cost-model.md,
// "Triton unified attention for attention sinks"). Hopper keeps FA3 (sinks supported); a sink-less model keeps FA2.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/quant_latency.hpp"
#include "llmsim/perf/triton_unified_attention.hpp"
#include "llmsim/spec/catalog.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;

namespace {

perf::CostModel triton_case_model(const spec::ModelSpec& m, const std::string& gpu_id, perf::Runtime runtime) {
  const auto g = test::gpu(gpu_id);
  spec::Quantization q;
  q.weights = spec::weight_format("mxfp4-experts");
  q.kernels = spec::quant_kernels_for("vllm==0.11.0");
  return perf::CostModel(m, q, g, perf::default_profile(g), spec::ParallelConfig{1, 1}, true, 0, runtime);
}

/// One 2048-token chunk after 16,000 cached tokens (a 32k prompt half way through).
perf::BatchShape triton_case_chunk() {
  perf::BatchShape b;
  b.prefill_seqs = 1;
  b.prefill_last_chunks = 0;
  b.prefill_tokens = 2048;
  b.prefill_kv_tokens = 18048;
  b.prefill_attn_pairs = 2048.0 * 16000 + 2048.0 * 2049 / 2;
  return b;
}

}  // namespace

TEST_CASE("Triton unified attention: the Q-block holds 16 rows of query heads, at least one token") {
  CHECK(perf::triton_unified_block_q(8) == 2);   // gpt-oss: 64 query heads over 8 KV heads
  CHECK(perf::triton_unified_block_q(4) == 4);
  CHECK(perf::triton_unified_block_q(1) == 16);
  CHECK(perf::triton_unified_block_q(16) == 1);
  CHECK(perf::triton_unified_block_q(32) == 1);  // BLOCK_M = next power of two
  // gpt-oss's 8 KV heads of 64, BF16: K and V of a key, per KV head, shared by 2 query tokens.
  CHECK(perf::triton_unified_l2_bytes_per_pair(8, 64, 2, 8) == Approx(8 * 2 * 64 * 2 / 2.0));
}

TEST_CASE("gpt-oss on an A100 under vLLM V1 prefills at the L2's rate of the Triton kernel's tile reads") {
  const auto& cat = spec::Catalog::builtin();
  const spec::ModelSpec oss = cat.model("gpt-oss-20b");
  spec::ModelSpec no_sinks = oss;  // the same shapes without sinks: vLLM would run FlashAttention-2
  no_sinks.model_type = "llama";
  const perf::BatchShape b = triton_case_chunk();
  const double triton = test::op(triton_case_model(oss, "a100-80gb-sxm", perf::Runtime::vllm_v1), b, "attention_prefill");
  const double fa2 = test::op(triton_case_model(no_sinks, "a100-80gb-sxm", perf::Runtime::vllm_v1), b,
                              "attention_prefill");
  // The 12 full layers read 1,024 B of K/V from the L2 per query-key pair (8 KV heads × 256 B / 2 tokens per
  // Q-block); the L2 serves 20.34 B per SM-clock per SM (RRZE gpu-l2-stream, A100: 3.1 TB/s).
  const auto g = test::gpu("a100-80gb-sxm");
  const double l2 = perf::sm_residency(g).l2_bytes_per_sm_clock * g.sm_count * perf::sm_clock_hz(g);
  const double l2_s = 12 * b.prefill_attn_pairs * 1024 / l2;
  CHECK(triton >= l2_s);
  CHECK(triton > 2.5 * fa2);  // FA2 at 60 % of the tensor peak: the old price, which read these prefills 2x fast
  // Hopper runs FA3 with sinks; SGLang is not this kernel: both keep their price.
  CHECK(test::op(triton_case_model(oss, "h100-80gb-sxm", perf::Runtime::vllm_v1), b, "attention_prefill") ==
        Approx(test::op(triton_case_model(no_sinks, "h100-80gb-sxm", perf::Runtime::vllm_v1), b, "attention_prefill")));
  CHECK(test::op(triton_case_model(oss, "a100-80gb-sxm", perf::Runtime::sglang), b, "attention_prefill") ==
        Approx(test::op(triton_case_model(no_sinks, "a100-80gb-sxm", perf::Runtime::sglang), b, "attention_prefill")));
}
