// Issues 27/30: prefix caching on hybrid models (Mamba-2: Nemotron-3-Nano; gated DeltaNet: Qwen3-Next) by vLLM
// release. Before support vLLM turns it off for them (spec::vllm_release_without_hybrid_prefix_caching: no hits, and
// the resolved scenario's notes say so); from support on a hit is whole blocks of the attention block size vLLM
// raises for the model (memory::MemoryPlan::hybrid_prefix_block_tokens, vllm#40696). A full-attention model keeps
// its 16-token blocks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "llmsim/engine/simulator.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "engine_test_util.hpp"

using namespace llmsim;

namespace {
struct PrefixRun {
  spec::ResolvedScenario rs;
  memory::MemoryPlan plan;
  engine::SimulationResult result;
};

// 24 chats sharing one 5,000-token prefix (prompts of 5,200 tokens), spaced so each finds the previous one's blocks.
PrefixRun shared_prefix_run(const char* model, const char* gpu, const char* runtime) {
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 1.0}}},
                  {"input_tokens", {{"dist", "fixed"}, {"value", 5200}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", 16}}},
                  {"prefix_tokens", 5000},
                  {"prefix_groups", 1},
                  {"num_requests", 24},
                  {"warmup_requests", 0}};
  Json e = {{"enable_prefix_caching", true}, {"max_model_len", 8192}};
  if (runtime) e["runtime"] = runtime;
  Json j = test::scenario(w, e, gpu);
  j["model"] = model;
  PrefixRun r{test::make(j), {}, {}};
  r.plan = memory::plan_memory(r.rs);
  r.result = engine::simulate(r.rs);
  return r;
}

bool notes_prefix_off(const spec::ResolvedScenario& rs, const std::string& release) {
  for (const auto& n : rs.notes)
    if (n.find("prefix caching is off: vLLM " + release) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("hybrid prefix caching: the release boundaries of vLLM's rule", "[hybrid_prefix]") {
  using spec::vllm_release_without_hybrid_prefix_caching;
  // Mamba-2 (vllm#25752): off through 0.11.0, on from 0.11.1.
  REQUIRE(vllm_release_without_hybrid_prefix_caching("vllm==0.11.0", true));
  CHECK(vllm_release_without_hybrid_prefix_caching("vllm==0.11.0", true)->first_with == "0.11.1");
  CHECK(vllm_release_without_hybrid_prefix_caching("vllm==0.10.2", true));
  CHECK_FALSE(vllm_release_without_hybrid_prefix_caching("vllm==0.11.1", true));
  // Gated DeltaNet (vllm#30877): off through 0.13.x, on from 0.14.0.
  CHECK(vllm_release_without_hybrid_prefix_caching("vllm==0.12.0", false));
  CHECK(vllm_release_without_hybrid_prefix_caching("vllm==0.13.0", false));
  CHECK_FALSE(vllm_release_without_hybrid_prefix_caching("vllm==0.14.0", false));
  // No release (today's vLLM) and other engines: not this rule's.
  CHECK_FALSE(vllm_release_without_hybrid_prefix_caching(std::nullopt, true));
  CHECK_FALSE(vllm_release_without_hybrid_prefix_caching("sglang==0.5.3", false));
}

TEST_CASE("hybrid prefix caching: Nemotron-3-Nano has no hits before vLLM 0.11.1, whole hybrid blocks after",
          "[hybrid_prefix]") {
  for (const char* old : {"vllm==0.10.2", "vllm==0.11.0"}) {
    CAPTURE(old);
    const auto r = shared_prefix_run("nemotron-3-nano-30b-a3b", "h200-141gb-sxm", old);
    CHECK_FALSE(r.rs.scenario.engine.prefix_caching());
    CHECK(notes_prefix_off(r.rs, std::string(old).substr(6)));
    // The run says so too.
    REQUIRE(!r.result.summary.warnings.empty());
    CHECK(std::count(r.result.summary.warnings.begin(), r.result.summary.warnings.end(), r.rs.prefix_caching_off) == 1);
    // ... and beside the empty hit rate (a sweep row's prefix_cache_note), so a row says why its cell is empty.
    CHECK(r.result.summary.prefix_cache_note == r.rs.prefix_caching_off);
    CHECK(r.result.summary.completed_requests == 24);
    CHECK(r.result.summary.kv.prefix_cache_hit_tokens == 0);
  }
  const auto r = shared_prefix_run("nemotron-3-nano-30b-a3b", "h200-141gb-sxm", "vllm==0.12.0");
  CHECK(r.rs.scenario.engine.prefix_caching());
  CHECK_FALSE(notes_prefix_off(r.rs, "0.12.0"));
  CHECK(r.rs.prefix_caching_off.empty());
  CHECK(r.result.summary.prefix_cache_note.empty());
  const std::int64_t g = r.plan.hybrid_prefix_block_tokens;
  CAPTURE(g);
  REQUIRE(g > 16);
  CHECK(g % 128 == 0);  // Mamba-2's "all" mode: a multiple of the SSD kernel's chunk (chunk_size 128)
  const double hits = r.result.summary.kv.prefix_cache_hit_tokens;
  CHECK(hits > 0);
  CHECK(std::fmod(hits, static_cast<double>(g)) == 0);  // whole hybrid blocks only
  // Each later request finds floor(5000 / g) whole blocks of the prefix, never the 4,992 tokens of 16-token blocks.
  CHECK(hits <= 23.0 * static_cast<double>(5000 / g * g));
}

TEST_CASE("hybrid prefix caching: Qwen3-Next has no hits before vLLM 0.14.0, whole hybrid blocks after",
          "[hybrid_prefix]") {
  for (const char* old : {"vllm==0.10.2", "vllm==0.11.0", "vllm==0.13.0"}) {
    CAPTURE(old);
    const auto r = shared_prefix_run("qwen3-next-80b-a3b", "2xh200-141gb-sxm", old);
    CHECK_FALSE(r.rs.scenario.engine.prefix_caching());
    CHECK(notes_prefix_off(r.rs, std::string(old).substr(6)));
    CHECK(r.result.summary.kv.prefix_cache_hit_tokens == 0);
  }
  const auto r = shared_prefix_run("qwen3-next-80b-a3b", "2xh200-141gb-sxm", "vllm==0.14.0");
  CHECK(r.rs.scenario.engine.prefix_caching());
  const std::int64_t g = r.plan.hybrid_prefix_block_tokens;
  CAPTURE(g);
  REQUIRE(g > 16);
  CHECK(g % 16 == 0);
  const double hits = r.result.summary.kv.prefix_cache_hit_tokens;
  CHECK(std::fmod(hits, static_cast<double>(g)) == 0);
  CHECK(hits <= 23.0 * static_cast<double>(5000 / g * g));
  CHECK(hits > 0);
}

TEST_CASE("hybrid prefix caching: a full-attention model keeps 16-token hits under every release", "[hybrid_prefix]") {
  for (const char* rel : {"vllm==0.10.2", "vllm==0.11.0", "vllm==0.14.0"}) {
    CAPTURE(rel);
    const auto r = shared_prefix_run("llama-3.1-8b", "h100-80gb-sxm", rel);
    CHECK(r.rs.scenario.engine.prefix_caching());
    CHECK(r.plan.hybrid_prefix_block_tokens == 0);
    const double hits = r.result.summary.kv.prefix_cache_hit_tokens;
    // Every request after the first finds the prefix's 312 whole 16-token blocks (4,992 tokens).
    CHECK(hits >= 20.0 * 4992);
  }
}

TEST_CASE("hybrid prefix caching: a host KV tier on a release without it is refused, naming the field",
          "[hybrid_prefix]") {
  Json j = test::scenario({{"arrival", {{"process", "offline"}}}, {"num_requests", 4}},
                          {{"enable_prefix_caching", true}, {"kv_offload_gb", 64}, {"runtime", "vllm==0.11.0"}},
                          "h200-141gb-sxm");
  j["model"] = "nemotron-3-nano-30b-a3b";
  CHECK_THROWS_WITH(test::make(j), Catch::Contains("engine.kv_offload_gb") && Catch::Contains("vLLM 0.11.0"));
  j["engine"]["runtime"] = "vllm==0.11.1";
  CHECK_NOTHROW(test::make(j));
}
