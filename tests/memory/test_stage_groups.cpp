// vLLM's KV-cache groups by release (the 1.25x / 1.5x rule of _get_kv_cache_groups_uniform_page_size) and what each
// pipeline stage holds of a hybrid model's linear-attention state (its own layers, not the model's divided by pp).
#include <catch2/catch.hpp>

#include <vector>

#include "llmsim/memory/kv_layout.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "memory_test_util.hpp"

using namespace llmsim;
using test::cat;

namespace {
memory::MemoryPlan stage_plan(const spec::ModelSpec& m, int pp, std::vector<int> partition, spec::EngineConfig e = {}) {
  const auto g = cat().gpu("h200-141gb-sxm");
  spec::Quantization q;
  q.weights = spec::format_for_gpu(spec::weight_format("bf16"), g);
  spec::ParallelConfig par{1, pp};
  par.layer_partition = std::move(partition);
  return memory::plan_memory(m, q, g, par, e, 32768);
}
}  // namespace

TEST_CASE("KV-cache groups: the larger type's count under vLLM's ratio, by release (1.25x from 0.12, 1.5x from 0.18)") {
  using memory::hybrid_kv_group_size;
  // gpt-oss-20b + EAGLE: 12 sliding + 13 full -> groups of 13 (vllm#29303's example), from 0.12.0 on.
  CHECK(hybrid_kv_group_size(12, 13, 1.25) == 13);
  CHECK(hybrid_kv_group_size(13, 12, 1.5) == 13);
  CHECK(hybrid_kv_group_size(12, 13, 0) == 12);  // before 0.12.0: always the smaller
  // gpt-oss-20b + a 4-layer P-EAGLE: 12 + 17 (1.42x) -> 12 under 1.25 (3 groups), 17 under 1.5 (vllm#36684).
  CHECK(hybrid_kv_group_size(12, 17, 1.25) == 12);
  CHECK(hybrid_kv_group_size(12, 17, 1.5) == 17);
  CHECK(hybrid_kv_group_size(4, 5, 1.25) == 4);  // strictly less: 5 < 5.0 does not hold
  CHECK(hybrid_kv_group_size(10, 52, 1.5) == 10);  // Gemma-3's 5:1 is untouched
  CHECK(hybrid_kv_group_size(0, 5, 1.5) == 0);
  CHECK(spec::hybrid_kv_group_ratio(std::string("vllm==0.10.1")) == 0.0);
  CHECK(spec::hybrid_kv_group_ratio(std::string("vllm==0.11.2")) == 0.0);
  CHECK(spec::hybrid_kv_group_ratio(std::string("vllm==0.12.0")) == 1.25);
  CHECK(spec::hybrid_kv_group_ratio(std::string("vllm==0.17.1")) == 1.25);
  CHECK(spec::hybrid_kv_group_ratio(std::string("vllm==0.18.0")) == 1.5);
  CHECK(spec::hybrid_kv_group_ratio(std::nullopt) == 1.5);  // a runtime name: today's vLLM

  // The plan follows the release: 14 full + 10 sliding layers (1.4x) are 2 groups of 10 + 1 under 0.17 (30
  // layer-pages per token inside the window), 1 + 1 groups of 14 under 0.18 (28), so a token costs less.
  spec::ModelSpec m = cat().model("gpt-oss-20b");
  REQUIRE(m.num_layers == 24);
  m.sliding_layers = 10;
  auto at = [&](const char* release) {
    spec::EngineConfig e;
    e.runtime_release = release;
    return stage_plan(m, 1, {}, e);
  };
  const auto v17 = at("vllm==0.17.0"), v18 = at("vllm==0.18.0"), v11 = at("vllm==0.11.0");
  CHECK(v17.kv_cache_groups == 3);
  CHECK(v11.kv_cache_groups == 3);
  CHECK(v18.kv_cache_groups == 2);
  CHECK(v18.kv_bytes_per_token_per_gpu == Approx(v17.kv_bytes_per_token_per_gpu * 28.0 / 30.0));
  // kv_layout and the plan take the same rule (one place: hybrid_kv_group_size).
  CHECK(memory::kv_layout(m, spec::ParallelConfig{1, 1}, 2.0, true, 1.25).group_size == 10);
  CHECK(memory::kv_layout(m, spec::ParallelConfig{1, 1}, 2.0, true, 1.5).group_size == 14);
}

TEST_CASE("linear-attention state under pipeline parallel: each stage's own linear layers; the largest sizes the plan") {
  const spec::ModelSpec m = cat().model("qwen3.5-27b");
  REQUIRE(m.num_layers == 64);
  REQUIRE(m.linear_attention_layers == 48);
  // Every fourth layer is attention (full_attention_interval 4: layers 3, 7, ...), so a stage's linear layers follow
  // its range: [0, 40) holds 30, [40, 64) 18; vLLM's default 3-stage split [21, 22, 21] holds 16, 17 and 15.
  CHECK(m.linear_attention_layers_in(0, 64) == 48);
  CHECK(m.linear_attention_layers_in(0, 40) == 30);
  CHECK(m.linear_attention_layers_in(40, 64) == 18);
  CHECK(m.linear_attention_layers_in(0, 21) == 16);
  CHECK(m.linear_attention_layers_in(21, 43) == 17);
  CHECK(m.linear_attention_layers_in(43, 64) == 15);
  // vLLM V1 (state as pool blocks per request): VLLM_PP_LAYER_PARTITION=40,24 puts 30 linear layers (and 10
  // attention ones: 3 groups of 10) on the first stage: 30 state pages per request, not the 24 of 48 / pp.
  const auto even = stage_plan(m, 2, {}), skewed = stage_plan(m, 2, {40, 24});
  REQUIRE(even.linear_state_bytes_per_seq_per_gpu > 0);
  CHECK(skewed.linear_state_bytes_per_seq_per_gpu == Approx(even.linear_state_bytes_per_seq_per_gpu * 30.0 / 24.0));
  // The same with the default uneven split: pp 3's middle stage holds 17 linear layers, 17 of the 48 pages
  // (5 attention layers: groups of 5, 4 of them, 20 pages with padding) against pp 1's 48.
  const auto one = stage_plan(m, 1, {}), three = stage_plan(m, 3, {});
  CHECK(three.linear_state_bytes_per_seq_per_gpu == Approx(one.linear_state_bytes_per_seq_per_gpu * 20.0 / 48.0));
  // vLLM V0 / SGLang reserve max_num_seqs states up front: the stage with most linear layers sets it too.
  spec::EngineConfig v0;
  v0.max_num_seqs = 64;
  v0.policy = spec::SchedulerPolicy::vllm_v0;
  v0.runtime = spec::Runtime::vllm_v0;
  const auto v0_one = stage_plan(m, 1, {}, v0), v0_three = stage_plan(m, 3, {}, v0);
  REQUIRE(v0_one.per_gpu.linear_state_bytes > 0);
  CHECK(static_cast<double>(v0_three.per_gpu.linear_state_bytes) ==
        Approx(static_cast<double>(v0_one.per_gpu.linear_state_bytes) * 17.0 / 48.0).epsilon(1e-6));
  CHECK(static_cast<double>(stage_plan(m, 2, {40, 24}, v0).per_gpu.linear_state_bytes) ==
        Approx(static_cast<double>(v0_one.per_gpu.linear_state_bytes) * 30.0 / 48.0).epsilon(1e-6));
}
