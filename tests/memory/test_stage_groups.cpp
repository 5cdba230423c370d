// vLLM's KV-cache groups by release (the 1.25x / 1.5x rule of _get_kv_cache_groups_uniform_page_size) and what each
// pipeline stage holds of a hybrid model's linear-attention state (its own layers, not the model's divided by pp).
#include <catch2/catch.hpp>

#include <optional>
#include <string>
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
  // The default uneven split [21, 22, 21]: the middle stage holds 17 linear layers (linear indices 16-32) and 5
  // attention ones. Today's vLLM groups the whole model (48 + 16: groups of 16, 3 linear ones dealt round-robin), so
  // that stage's linear layers fall 6, 6, 5 into the 3 groups: 6 tensors, 3 x 6 = 18 pages per request against pp
  // 1's 48. Before 0.11.0 each stage grouped its own 17 + 5 layers: groups of 5, 4 linear ones, 20 pages.
  const auto one = stage_plan(m, 1, {}), three = stage_plan(m, 3, {});
  CHECK(three.linear_state_bytes_per_seq_per_gpu == Approx(one.linear_state_bytes_per_seq_per_gpu * 18.0 / 48.0));
  spec::EngineConfig v010;
  v010.runtime_release = "vllm==0.10.1";
  CHECK(stage_plan(m, 3, {}, v010).linear_state_bytes_per_seq_per_gpu ==
        Approx(stage_plan(m, 1, {}, v010).linear_state_bytes_per_seq_per_gpu * 20.0 / 48.0));
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

TEST_CASE("pipeline parallel: vLLM from 0.11.0 decides the KV-cache groups on the whole model, then projects them") {
  // vllm#23974 (kv_cache_utils.get_kv_cache_configs): the groups come from the merged specs of every stage; each
  // stage allocates as many tensors as the most layers one group has on it.
  CHECK(spec::kv_groups_whole_model(std::string("vllm==0.10.2")) == false);
  CHECK(spec::kv_groups_whole_model(std::string("vllm==0.11.0")) == true);
  CHECK(spec::kv_groups_whole_model(std::nullopt) == true);

  // The stage projection on its own: 10 full + 20 sliding layers over two stages of 5 + 10: groups of 10 (1 full,
  // 2 sliding), each stage holding 5 layers of each group: 5 tensors. Stage by stage gives the same here.
  using memory::KvTypeCounts;
  const std::vector<KvTypeCounts> even{{5, 10, 0}, {5, 10, 0}};
  const auto whole = memory::hybrid_kv_groups(even, 0, true);
  CHECK(whole.groups == KvTypeCounts{1, 2, 0});
  CHECK(whole.tensors == 5);
  CHECK(memory::hybrid_kv_groups(even, 0, false).tensors == 5);

  // Gemma-2 9B (vllm#23883's case, bge-multilingual-gemma2's body): 42 layers alternating, 21 full and 21 sliding;
  // pp 2 puts 10 of one type and 11 of the other on each stage. Under 0.11 (groups of the smaller count, ratio 0) the
  // whole model's 21 + 21 make 2 groups of 21, each stage holding 11 of one: 2 x 11 = 22 layer-pages per token inside
  // the window. Grouped stage by stage (0.10.x) a stage's 11 + 10 make groups of 10 (2 + 1): 3 x 10 = 30.
  const spec::ModelSpec g2 = cat().model("gemma-2-9b");
  REQUIRE(g2.num_layers == 42);
  REQUIRE(g2.kv_sliding_layers() == 21);
  const auto stages = memory::kv_stage_counts(g2, spec::ParallelConfig{1, 2}, true, true);
  REQUIRE(stages.size() == 2);
  CHECK(stages[0][memory::kv_full] + stages[1][memory::kv_full] == 21);  // the counts add up to the model's
  CHECK(stages[0][memory::kv_sliding] + stages[1][memory::kv_sliding] == 21);
  CHECK(stages[0][memory::kv_full] + stages[0][memory::kv_sliding] == 21);
  const auto g11 = memory::kv_layout(g2, spec::ParallelConfig{1, 2}, 2.0, true, 0.0, true);
  CHECK(g11.full_groups == 1);
  CHECK(g11.sliding_groups == 1);
  CHECK(g11.group_size == 11);
  const auto g10 = memory::kv_layout(g2, spec::ParallelConfig{1, 2}, 2.0, true, 0.0, false);
  CHECK(g10.groups() == 3);
  CHECK(g10.group_size == 10);
  // Through the plan: the release picks the rule, and a token costs 22 / 30 of the pages it cost before.
  auto at = [&](const spec::ModelSpec& m, const char* release, std::vector<int> partition = {}) {
    spec::EngineConfig e;
    e.runtime_release = release;
    return stage_plan(m, 2, std::move(partition), e);
  };
  const auto p11 = at(g2, "vllm==0.11.0"), p10 = at(g2, "vllm==0.10.2");
  CHECK(p11.kv_cache_groups == 2);
  CHECK(p10.kv_cache_groups == 3);
  CHECK(p11.kv_bytes_per_token_per_gpu == Approx(p10.kv_bytes_per_token_per_gpu * 22.0 / 30.0));
  CHECK(p11.kv_bytes_per_token_per_gpu == Approx(22.0 * 2 * 8 * 256 * 2));  // 8 KV heads of 256, 16-bit

  // Qwen3-Next (36 gated-DeltaNet + 12 attention layers, one every fourth) over VLLM_PP_LAYER_PARTITION=26,22: the
  // first stage holds 20 linear and 6 attention layers. Whole model: groups of 12 (3 linear, 1 attention); the stage's
  // 20 linear layers fall 7, 7, 6 into the linear groups: 7 tensors, a request's state 3 x 7 = 21 pages and a token
  // 7 attention pages. Stage by stage (0.10.x): groups of 6, 4 linear ones: 24 pages of state, 6 per token.
  const spec::ModelSpec qn = cat().model("qwen3-next-80b-a3b");
  REQUIRE(qn.linear_attention_layers == 36);
  CHECK(qn.linear_attention_layers_in(0, 26) == 20);
  const auto q11 = at(qn, "vllm==0.11.0", {26, 22}), q10 = at(qn, "vllm==0.10.2", {26, 22});
  REQUIRE(q10.linear_state_bytes_per_seq_per_gpu > 0);
  CHECK(q11.linear_state_bytes_per_seq_per_gpu == Approx(q10.linear_state_bytes_per_seq_per_gpu * 21.0 / 24.0));
  CHECK(q11.kv_bytes_per_token_per_gpu == Approx(q10.kv_bytes_per_token_per_gpu * 7.0 / 6.0));
  // An even split holds 18 + 6 per stage: 6 tensors either way, the rules agree.
  CHECK(at(qn, "vllm==0.11.0").linear_state_bytes_per_seq_per_gpu ==
        Approx(at(qn, "vllm==0.10.2").linear_state_bytes_per_seq_per_gpu));
}
