// Memory plans of Nemotron-H / Nemotron-3 (issue 30): weights by layer kind (Mamba-2 mixers, attention, relu² MLPs
// and MoEs, each layer one block), KV per token on the attention layers only, the Mamba state as vLLM V1's pool pages.
#include <catch2/catch.hpp>

#include <cmath>

#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"
#include "memory_test_util.hpp"

using namespace llmsim;
using namespace llmsim::spec;
using llmsim::memory::plan_memory;

namespace {
memory::MemoryPlan nemotron_plan(const std::string& model, int tp, EngineConfig e = {}) {
  const auto g = test::cat().gpu("h100-80gb-sxm");
  Quantization q;
  q.weights = format_for_gpu(weight_format("bf16"), g);
  return plan_memory(test::cat().model(model), q, g, ParallelConfig{tp, 1}, e, 32768);
}
}  // namespace

TEST_CASE("issue 30: Nemotron-3-Nano on one H100: its BF16 weights, KV on 6 layers, Mamba state as pool pages") {
  const ModelSpec m = test::cat().model("nemotron-3-nano-30b-a3b");
  const auto p = nemotron_plan("nemotron-3-nano-30b-a3b", 1);
  INFO(p.reason);
  REQUIRE(p.fits);
  // Every parameter in BF16: the memory layer's per-kind bytes add up to the spec's count (no gate on the relu²
  // experts, no MLP on the mixer layers, no mixer on the MoE layers).
  CHECK(static_cast<double>(p.per_gpu.weights_bytes) == Approx(2.0 * static_cast<double>(m.param_count())).epsilon(0.001));
  CHECK(p.kv_bytes_per_token_per_gpu == 6.0 * 2 * 2 * 128 * 2);
  // One layer's state: conv 3 × (4096 + 2 × 8 × 128) in BF16 + SSM 64 × 64 × 128 in FP32, padded to the attention
  // page at 16 tokens (16 × 1 KiB); 6 attention and 23 Mamba layers: groups of 6, 4 Mamba groups per request.
  const double layer = 3.0 * 6144 * 2 + 64.0 * 64 * 128 * 4;
  const double page = std::ceil(layer / 16384) * 16384;
  CHECK(p.linear_state_bytes_per_seq_per_gpu == Approx(4 * 6 * page));
  CHECK(p.per_gpu.linear_state_bytes == 0);  // V1: nothing reserved for max_num_seqs
  CHECK(p.linear_state_seqs_fit > 0);
  // Under tensor parallel 2 the weights, the KV heads and the state split by heads.
  const auto tp2 = nemotron_plan("nemotron-3-nano-30b-a3b", 2);
  CHECK(tp2.kv_bytes_per_token_per_gpu == p.kv_bytes_per_token_per_gpu / 2);
  CHECK(static_cast<double>(tp2.per_gpu.weights_bytes) < 0.52 * static_cast<double>(p.per_gpu.weights_bytes));
}

TEST_CASE("issue 30: Nemotron-H-56B needs two H100s in BF16; 10 layers of KV per token") {
  const ModelSpec m = test::cat().model("nemotron-h-56b");
  const auto one = nemotron_plan("nemotron-h-56b", 1);
  CHECK_FALSE(one.fits);  // 112.6 GB of BF16 weights
  // At 256 sequences vLLM would refuse (its pool holds 222 Mamba blocks at 32K tokens: memory_plan's start-up check).
  EngineConfig e;
  e.max_num_seqs = 256;
  CHECK_THAT(nemotron_plan("nemotron-h-56b", 2, e).reason, Catch::Contains("Mamba cache blocks"));
  e.max_num_seqs = 128;
  const auto two = nemotron_plan("nemotron-h-56b", 2, e);
  INFO(two.reason);
  REQUIRE(two.fits);
  CHECK(static_cast<double>(two.per_gpu.weights_bytes) ==
        Approx(static_cast<double>(m.param_count())).epsilon(0.01));  // half of 2 bytes each, embeddings split too
  CHECK(two.kv_bytes_per_token_per_gpu == 10.0 * 2 * 4 * 128 * 2);
  // The state per sequence: one layer's conv window + FP32 SSM state halved by heads, padded to the attention page
  // at 16 tokens (16 × 2 KiB per rank); 10 attention and 54 Mamba layers: groups of 10, 6 Mamba groups per request.
  const double layer = (3.0 * 20480 * 2 + 256.0 * 64 * 256 * 4) / 2;
  CHECK(two.linear_state_bytes_per_seq_per_gpu == Approx(6 * 10 * std::ceil(layer / 32768) * 32768));
}

TEST_CASE("issue 29/30: Nemotron-3-Nano over two pipeline stages caches KV on its stage's attention layers only") {
  // A stage's cached layers are its share of the 6 attention layers: not its layers less the Mamba ones (which would
  // count the 23 MoE-only layers as caches: 29 of 52).
  const auto g = test::cat().gpu("h100-80gb-sxm");
  Quantization q;
  q.weights = format_for_gpu(weight_format("bf16"), g);
  const auto one = nemotron_plan("nemotron-3-nano-30b-a3b", 1);
  const auto pp2 = plan_memory(test::cat().model("nemotron-3-nano-30b-a3b"), q, g, ParallelConfig{1, 2}, {}, 32768);
  INFO(pp2.reason);
  REQUIRE(pp2.fits);
  CHECK(pp2.kv_bytes_per_token_per_gpu >= 3.0 * 2 * 2 * 128 * 2);
  CHECK(pp2.kv_bytes_per_token_per_gpu < one.kv_bytes_per_token_per_gpu);
}
