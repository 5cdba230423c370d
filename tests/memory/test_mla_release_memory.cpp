// What vLLM 0.7.x keeps for an MLA model that later releases do not (issue 27, branch r1pool31): the absorbed decode
// weights W_Q_UK / W_UV_O beside the raw projections (vllm#12528 .. vllm#14770) and V0's 256-byte padding of every
// MLA cache entry, 576 -> 640 elements (vllm#12676 .. vllm#14842). Both shrink DeepSeek-R1's KV pool on the 0.7.4
// nightly that dstack's H200 runs used; 0.8.x (simonmo's V1 runs) has neither.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/core/json_view.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "llmsim/spec/scenario.hpp"
#include "memory_test_util.hpp"

using namespace llmsim;
using test::cat;

namespace {
constexpr double kMlaGiB = 1024.0 * 1024.0 * 1024.0;

// DeepSeek-R1 (block FP8 unless told, bf16 KV) on 8 × H200 at TP 8, as `llmsim memory --engine-version V` plans it.
memory::MemoryPlan r1_release_plan(const std::string& runtime, const std::string& weights = "auto",
                                   double utilization = 0.9) {
  const Json doc{{"model", "deepseek-r1"},
                 {"quant", {{"weights", weights}, {"kv_cache", "auto"}}},
                 {"hardware", {{"gpu", "h200-141gb-sxm"}, {"tp", 8}}},
                 {"engine", {{"runtime", runtime}, {"gpu_memory_utilization", utilization}}}};
  return memory::plan_memory(spec::resolve_unbilled(spec::scenario_from_json(JsonView(doc, "")), cat()));
}
}  // namespace

TEST_CASE("the 0.7.x MLA terms are bounded by the PRs that added and removed them", "[memory][mla_release]") {
  using spec::mla_absorbed_weights;
  using spec::mla_kv_entries_aligned;
  CHECK_FALSE(mla_absorbed_weights(std::string("vllm==0.7.0")));
  CHECK(mla_absorbed_weights(std::string("vllm==0.7.1")));        // vllm#12528, committed 2025-01-30
  CHECK(mla_absorbed_weights(std::string("vllm==0.7.4.dev181")));  // dstack's nightly
  CHECK_FALSE(mla_absorbed_weights(std::string("vllm==0.8.0")));  // vllm#14770, committed 2025-03-13
  CHECK_FALSE(mla_kv_entries_aligned(std::string("vllm==0.7.1")));
  CHECK(mla_kv_entries_aligned(std::string("vllm==0.7.2")));       // vllm#12676, committed 2025-02-04
  CHECK(mla_kv_entries_aligned(std::string("vllm==0.7.3")));
  CHECK_FALSE(mla_kv_entries_aligned(std::string("vllm==0.8.4")));  // vllm#14842, committed 2025-03-15
  // No release (a runtime name: today's vLLM) and other engines keep neither.
  CHECK_FALSE(mla_absorbed_weights(std::nullopt));
  CHECK_FALSE(mla_kv_entries_aligned(std::string("sglang==0.4.3")));
}

TEST_CASE("vLLM 0.7.x keeps R1's absorbed W_Q_UK and W_UV_O in FP8 beside the raw projections",
          "[memory][mla_release]") {
  const memory::MemoryPlan old = r1_release_plan("vllm==0.7.4");
  const memory::MemoryPlan v1 = r1_release_plan("vllm==0.8.4");
  // Per layer at TP 8 (16 heads; q_lora 1536, kv_lora 512, hidden 7168, rope 64, nope 128, v 128): W_Q_UK
  // 1536 × 16 × 512 and W_UV_O 16 × 512 × 7168 in FP8, W_QR 1536 × 16 × 64 and the dequantised kv_b 512 × 16 × 256
  // in bf16: 78,643,200 bytes, × 61 layers.
  CHECK(old.per_gpu.mla_absorbed_weights_bytes == 61LL * 78643200LL);
  CHECK(v1.per_gpu.mla_absorbed_weights_bytes == 0);
  CHECK(old.per_gpu.weights_bytes == v1.per_gpu.weights_bytes);  // reported beside the checkpoint's shard
  // vLLM 0.7.3's own V0 log for this model, card and TP (a public setup note, 2025-03-15: "model weights take
  // 83.88GiB"): the shard and the absorbed copies together within 1 %; the shard alone is 4.6 GiB short.
  const double weights_gib =
      static_cast<double>(old.per_gpu.weights_bytes + old.per_gpu.mla_absorbed_weights_bytes) / kMlaGiB;
  CHECK(weights_gib == Approx(83.88).epsilon(0.01));
  CHECK(static_cast<double>(old.per_gpu.weights_bytes) / kMlaGiB < 0.95 * 83.88);
  // `llmsim memory --json` (and the Python package) name the term.
  CHECK(memory::to_json(old)["per_gpu"]["mla_absorbed_weights_bytes"].get<std::int64_t>() == 61LL * 78643200LL);
  CHECK(memory::to_json(old)["kv_mla_entries_aligned"].get<bool>());
  // A 16-bit checkpoint keeps the absorbed pair in bf16 (no requantisation): twice their FP8 bytes.
  const memory::MemoryPlan bf16 = r1_release_plan("vllm==0.7.4", "bf16");
  CHECK(bf16.per_gpu.mla_absorbed_weights_bytes - old.per_gpu.mla_absorbed_weights_bytes ==
        61LL * (1536LL * 16 * 512 + 16LL * 512 * 7168));
}

TEST_CASE("V0's CacheEngine of 0.7.2-0.7.x counts an MLA entry at 640 elements, not 576", "[memory][mla_release]") {
  const memory::MemoryPlan old = r1_release_plan("vllm==0.7.4");
  const memory::MemoryPlan v1 = r1_release_plan("vllm==0.8.4");
  // 61 layers × 576 × 2 bytes unpadded; 61 × 640 × 2 padded (get_cache_block_size). The 0.7.3 log above reads 18,418
  // blocks of 16 for 21.43 GiB: 1,249,280 bytes a block = 16 × 78,080.
  CHECK(v1.kv_bytes_per_token_per_gpu == 61.0 * 576 * 2);
  CHECK(old.kv_bytes_per_token_per_gpu == 61.0 * 640 * 2);
  CHECK(old.kv_mla_entries_aligned);
  CHECK_FALSE(v1.kv_mla_entries_aligned);
  CHECK(old.kv_bytes_per_token == v1.kv_bytes_per_token);  // the latent itself is unchanged
  // The pool's bytes buy 10 % fewer tokens: capacity = pool / padded bytes.
  const double tokens_per_byte = static_cast<double>(old.kv_capacity_tokens) / static_cast<double>(old.per_gpu.kv_cache_bytes);
  CHECK(tokens_per_byte == Approx(1.0 / (61.0 * 640 * 2)).epsilon(0.001));
  // No release (the runtime's name: today's vLLM V1) pads nothing.
  const memory::MemoryPlan v1_07 = r1_release_plan("vllm-v1");
  CHECK_FALSE(v1_07.kv_mla_entries_aligned);
}

TEST_CASE("dstack's 0.7.4 nightly: R1's pool loses the absorbed weights and the padding", "[memory][mla_release]") {
  // Before (session 45 start): 31.85 GiB per GPU, 486,640 tokens. The absorbed copies take 4.47 GiB out of the pool
  // and the padding 10 % of the tokens of what is left.
  const memory::MemoryPlan p = r1_release_plan("vllm==0.7.4");
  const double pool_gib = static_cast<double>(p.per_gpu.kv_cache_bytes) / kMlaGiB;
  CHECK(pool_gib == Approx(31.85 - 61 * 78643200.0 / kMlaGiB).epsilon(0.005));
  CHECK(p.kv_capacity_tokens < 400000);
  CHECK(p.kv_capacity_tokens > 300000);
}
