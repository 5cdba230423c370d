// Issue 30's cards in the memory plan: what fits where, as `llmsim memory` sizes it (Llama-3.1-8B and 70B).
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"
#include "memory_test_util.hpp"

using namespace llmsim;
using test::cat;
using test::gb;
using namespace llmsim::spec;

namespace {
memory::MemoryPlan plan_on(const std::string& model, const std::string& gpu, const std::string& w, int tp = 1,
                           int max_model_len = 8192) {
  const auto g = cat().gpu(gpu);
  Quantization q;
  q.weights = format_for_gpu(weight_format(w), g);
  q.kv_dtype = DType::fp16;
  return memory::plan_memory(cat().model(model), q, g, ParallelConfig{tp, 1}, EngineConfig{}, max_model_len);
}
}  // namespace

TEST_CASE("llama-3.1-8b fp16 fits every new card, with KV in proportion to the memory left") {
  for (const char* id : {"h20-96gb", "l20-48gb", "rtxpro6000-96gb", "rtxpro6000-server-96gb", "b200-180gb-sxm",
                         "gb200-186gb", "rtx4090d-24gb", "rtx5090d-32gb", "rtx5090d-v2-24gb"}) {
    INFO(id);
    const auto p = plan_on("llama-3.1-8b", id, "fp16");
    CHECK(p.fits);
    CHECK(gb(p.per_gpu.weights_bytes) == Approx(16.06).epsilon(0.005));
  }
  // The 4090 D has the 4090's 24 GB: the same KV pool (the plan does not depend on SMs).
  CHECK(plan_on("llama-3.1-8b", "rtx4090d-24gb", "fp16").kv_capacity_tokens ==
        plan_on("llama-3.1-8b", "rtx4090-24gb", "fp16").kv_capacity_tokens);
  // The 5090 D V2's 24 GB hold a third of the KV of the 5090 D's 32 GB.
  const double v2 = static_cast<double>(plan_on("llama-3.1-8b", "rtx5090d-v2-24gb", "fp16").kv_capacity_tokens);
  const double d = static_cast<double>(plan_on("llama-3.1-8b", "rtx5090d-32gb", "fp16").kv_capacity_tokens);
  CHECK(v2 / d < 0.6);
  // L20: inline ECC leaves 45 of its 48 GiB, so an L20 holds the L40S's KV by that rule, not the RTX 6000 Ada's; the
  // L40S's measured CUDA-visible total (44.39 GiB) leaves it less.
  {
    GpuSpec l40s = cat().gpu("l40s-48gb");
    REQUIRE(l40s.cuda_visible_memory_bytes > 0);
    const std::int64_t measured = plan_on("llama-3.1-8b", "l40s-48gb", "fp16").kv_capacity_tokens;
    l40s.cuda_visible_memory_bytes = 0;
    Quantization q;
    q.weights = format_for_gpu(weight_format("fp16"), l40s);
    q.kv_dtype = DType::fp16;
    const auto by_rule = memory::plan_memory(cat().model("llama-3.1-8b"), q, l40s, ParallelConfig{1, 1}, EngineConfig{}, 8192);
    CHECK(plan_on("llama-3.1-8b", "l20-48gb", "fp16").kv_capacity_tokens == by_rule.kv_capacity_tokens);
    CHECK(measured < by_rule.kv_capacity_tokens);
  }
  // A B200 holds about 140 GB of KV beside an 8B model: over a million tokens at 128 KiB each.
  CHECK(plan_on("llama-3.1-8b", "b200-180gb-sxm", "fp16").kv_capacity_tokens > 1'000'000);
}

TEST_CASE("llama-3.1-70b: which new cards hold it, and how many") {
  // 141 GB of BF16 weights: one B200 (180 GB) or GB200 GPU holds them with KV to spare ...
  for (const char* id : {"b200-180gb-sxm", "gb200-186gb"}) {
    INFO(id);
    const auto p = plan_on("llama-3.1-70b", id, "fp16");
    CHECK(p.fits);
    CHECK(gb(p.per_gpu.kv_cache_bytes) > 15);
    const auto two = plan_on("llama-3.1-70b", id, "fp16", 2);
    CHECK(two.fits);
    CHECK(two.kv_capacity_tokens > 3 * p.kv_capacity_tokens);  // half the weights per GPU, twice the GPUs
  }
  // ... a 96 GB H20 or RTX PRO 6000 does not, naming the weights; two H20s (TP 2, NVLink) do.
  for (const char* id : {"h20-96gb", "rtxpro6000-96gb"}) {
    INFO(id);
    const auto p = plan_on("llama-3.1-70b", id, "fp16");
    CHECK_FALSE(p.fits);
    CHECK_THAT(p.reason, Catch::Contains("weights"));
  }
  CHECK(plan_on("llama-3.1-70b", "h20-96gb", "fp16", 2).fits);
  // FP8 (71 GB) fits one 96 GB card.
  CHECK(plan_on("llama-3.1-70b", "h20-96gb", "fp8").fits);
  CHECK(plan_on("llama-3.1-70b", "rtxpro6000-96gb", "fp8").fits);
  // AWQ 4-bit (39.8 GB) on 24 GB GeForce cards: no; on one 32 GB 5090 D: no.
  CHECK_FALSE(plan_on("llama-3.1-70b", "rtx4090d-24gb", "awq-int4").fits);
  CHECK_FALSE(plan_on("llama-3.1-70b", "rtx5090d-32gb", "awq-int4").fits);
}
