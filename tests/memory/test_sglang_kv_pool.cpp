// SGLang's KV pool and sliding-window layers (issue 27): its token pool caches every layer for every token unless
// model_config.is_hybrid_swa_model names the architecture and server_args leaves the hybrid SWA pool on — in the
// 0.5.x releases only Llama-4; gpt-oss is named but opted out (disable_hybrid_swa_memory = True). vLLM V1 keeps a
// sliding layer's window only. The pool's bytes per token, and so its tokens and concurrency, differ by that.
#include <catch2/catch.hpp>

#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"
#include "memory_test_util.hpp"

using namespace llmsim;
using namespace llmsim::spec;
using llmsim::memory::plan_memory;
using test::cat;

namespace {

/// One GPU of `gpu`, the model's own checkpoint format, a 32768-token context, the engine as given.
memory::MemoryPlan sgl_pool_plan(const std::string& model, const std::string& gpu, const std::string& w,
                                 const EngineConfig& e) {
  const auto g = cat().gpu(gpu);
  Quantization q;
  q.weights = format_for_gpu(weight_format(w), g);
  return plan_memory(cat().model(model), q, g, ParallelConfig{1, 1}, e, 32768);
}

EngineConfig sgl_engine() {
  EngineConfig e;
  e.policy = SchedulerPolicy::sglang;
  e.runtime_release = "sglang==0.5.4.post2";
  return e;
}

}  // namespace

TEST_CASE("SGLang's pool keeps every gpt-oss layer for every token; vLLM V1 keeps the sliding layers' window") {
  for (const char* model : {"gpt-oss-20b", "gpt-oss-120b"}) {
    INFO(model);
    const auto v1 = sgl_pool_plan(model, "h200-141gb-sxm", "mxfp4-experts", EngineConfig{});
    const auto sgl = sgl_pool_plan(model, "h200-141gb-sxm", "mxfp4-experts", sgl_engine());
    INFO(v1.reason << " / " << sgl.reason);
    REQUIRE(v1.fits);
    REQUIRE(sgl.fits);
    const ModelSpec m = cat().model(model);
    // 2 x 8 KV heads x 64 x 2 bytes per layer, every layer (24 / 36 of them) in one pool.
    const double per_layer = 2.0 * m.num_kv_heads * m.head_dim * 2;
    CHECK(sgl.kv_bytes_per_token_per_gpu == Approx(per_layer * m.num_layers));
    CHECK(sgl.kv_sliding_window == 0);
    CHECK(sgl.kv_cache_groups == 1);
    CHECK(v1.kv_sliding_window == 128);
    CHECK(v1.kv_cache_groups == 2);
    // A 32k-token sequence: 2048 blocks of 16 in every layer on SGLang; on vLLM V1 2048 in the full half and
    // ceil((128 - 1 + 8192) / 16) + 1 = 521 in the sliding half (SlidingWindowSpec's bound). The same pool holds
    // 4096 / 2569 = 1.59 times as many such sequences on vLLM.
    const double pools = static_cast<double>(v1.per_gpu.kv_cache_bytes) / static_cast<double>(sgl.per_gpu.kv_cache_bytes);
    REQUIRE(sgl.max_concurrent_seqs > 10);
    CHECK(static_cast<double>(v1.max_concurrent_seqs) / sgl.max_concurrent_seqs / pools ==
          Approx(4096.0 / 2569.0).epsilon(0.05));
  }
}

TEST_CASE("SGLang's pool: Gemma-3 in full (not a hybrid-SWA architecture), Llama-4 keeps its window plan") {
  const auto gemma_v1 = sgl_pool_plan("gemma-3-27b", "h200-141gb-sxm", "fp16", EngineConfig{});
  const auto gemma_sgl = sgl_pool_plan("gemma-3-27b", "h200-141gb-sxm", "fp16", sgl_engine());
  REQUIRE(gemma_sgl.fits);
  CHECK(gemma_v1.kv_sliding_window == 1024);
  CHECK(gemma_sgl.kv_sliding_window == 0);
  CHECK(gemma_sgl.kv_bytes_per_token_per_gpu == 62.0 * 8192);
  // Llama-4 is the architecture SGLang's hybrid pool serves: its chunked layers stay planned as windowed.
  const ModelSpec scout = cat().model("llama-4-scout");
  REQUIRE(scout.has_sliding_window());
  EngineConfig e = sgl_engine();
  const auto g = cat().gpu("h200-141gb-sxm");
  Quantization q;
  q.weights = format_for_gpu(weight_format("fp8"), g);
  const auto v1 = plan_memory(scout, q, g, ParallelConfig{2, 1}, EngineConfig{}, 4096);
  const auto sgl = plan_memory(scout, q, g, ParallelConfig{2, 1}, e, 4096);
  INFO(v1.reason << " / " << sgl.reason);
  CHECK(sgl.kv_sliding_window == v1.kv_sliding_window);
  CHECK(sgl.kv_sliding_window > 0);
  CHECK(sgl.kv_bytes_per_token_per_gpu == v1.kv_bytes_per_token_per_gpu);
}
