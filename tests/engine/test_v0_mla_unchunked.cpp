// vLLM V0 runs MLA models (DeepSeek-V2/V3/R1) without chunked prefill from 0.7.1 (vllm#12642 forced it off, then
// vllm#12639 left V0's default off for MLA: EngineArgs `_set_default_args_v0`, "Chunked prefill not supported for
// Multimodal or MLA in V0"), so the >32K-context rule (vllm#6666) that chunks Llama-3.1 does not chunk DeepSeek-R1:
// every waiting prompt is prefilled whole, together, in one step of up to max_model_len tokens.
#include <catch2/catch.hpp>

#include "llmsim/engine/simulator.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

using namespace llmsim;

namespace {

spec::ResolvedScenario deepseek_v0(const std::string& release, const char* policy) {
  Json engine = {{"runtime", release}, {"api_server", false}};
  if (policy) engine["policy"] = policy;
  const Json j = {{"model", "deepseek-r1"},
                  {"hardware", {{"gpu", "h200-141gb-sxm"}, {"tp", 8}}},
                  {"engine", engine},
                  {"workload", {{"arrival", {{"process", "closed"}, {"concurrency", 4}}},
                                {"input_tokens", {{"dist", "fixed"}, {"value", 3200}}},
                                {"output_tokens", {{"dist", "fixed"}, {"value", 32}}},
                                {"num_requests", 8}, {"warmup_requests", 0}}}};
  return spec::resolve(spec::scenario_from_json(JsonView(j, "")), spec::Catalog::builtin());
}

}  // namespace

TEST_CASE("issue 27: vLLM V0 from 0.7.1 leaves MLA models unchunked above 32K of context", "[runtime_version]") {
  // dstack's DeepSeek-R1 nightly (0.7.4.dev181, 2025-03) and the 0.7.1-0.7.3 releases: prefill-first, the budget
  // the context limit (163,840), where the >32K rule gave chunked prefill at 2048 before.
  for (const char* r : {"vllm==0.7.4.dev181+gf35f8e22", "vllm==0.7.3", "vllm==0.7.1"}) {
    const auto e = deepseek_v0(r, nullptr).scenario.engine;
    INFO(r);
    CHECK(e.policy == spec::SchedulerPolicy::vllm_v0);
    CHECK(e.max_num_batched_tokens == 163840);
  }
  // Before MLA (0.7.0) the rule chunked DeepSeek as any long-context model; a non-MLA model still chunks.
  CHECK(deepseek_v0("vllm==0.7.0", nullptr).scenario.engine.policy == spec::SchedulerPolicy::chunked);
  const Json llama = {{"model", "llama-3.1-8b"}, {"engine", {{"runtime", "vllm==0.7.4"}}}};
  CHECK(spec::resolve(spec::scenario_from_json(JsonView(llama, "")), spec::Catalog::builtin()).scenario.engine.policy ==
        spec::SchedulerPolicy::chunked);
  // From 0.7.4 a scenario may turn it on (vllm#12639 made MLA chunk); 0.7.1-0.7.3 forced it off whatever was asked,
  // prefix caching too (vllm#12642).
  const auto asked_new = deepseek_v0("vllm==0.7.4", "chunked").scenario.engine;
  CHECK(asked_new.policy == spec::SchedulerPolicy::chunked);
  CHECK(asked_new.max_num_batched_tokens == 2048);
  const auto asked_old = deepseek_v0("vllm==0.7.3", "chunked").scenario.engine;
  CHECK(asked_old.policy == spec::SchedulerPolicy::vllm_v0);
  CHECK(asked_old.max_num_batched_tokens == 163840);
  CHECK_FALSE(asked_old.prefix_caching());
}

TEST_CASE("issue 27: V0 DeepSeek-R1 prefills a closed loop's prompts together, so its users stay in step",
          "[runtime_version]") {
  // Four users with equal prompts and outputs: unchunked, the four prompts share one 12,800-token prefill step and
  // every request waits for all of it; chunked at 2048 (the rule before), the prompts finish one after another in
  // 2048-token chunks (decodes beside them once the first one runs), so the first tokens spread and come earlier on
  // average (here 561 against 663 ms, the latest at 852).
  const auto unchunked = deepseek_v0("vllm==0.7.4.dev181+gf35f8e22", nullptr);
  const auto chunked = deepseek_v0("vllm==0.7.4.dev181+gf35f8e22", "chunked");
  const auto u = engine::simulate(unchunked).summary;
  const auto c = engine::simulate(chunked).summary;
  perf::BatchShape together;
  for (int i = 0; i < 4; ++i) together.add_prefill(3200, 0, true);
  const double step_ms = perf::make_cost_model(unchunked).iteration_time(together) * 1e3;
  INFO("unchunked TTFT mean " << u.ttft_ms.mean << " max " << u.ttft_ms.max << ", one 12,800-token step " << step_ms
                              << " ms; chunked mean " << c.ttft_ms.mean << " max " << c.ttft_ms.max);
  REQUIRE(u.ttft_ms.count == 8);
  // Every first token waits for the whole shared step, and little more (the step's host work).
  CHECK(u.ttft_ms.p50 >= 0.99 * step_ms);
  CHECK(u.ttft_ms.max < 1.1 * step_ms);
  CHECK(u.ttft_ms.max < 1.02 * u.ttft_ms.p50);
  // Chunked, the same work is spread: earlier first tokens on average, a wide spread.
  CHECK(c.ttft_ms.mean < 0.9 * u.ttft_ms.mean);
  CHECK(c.ttft_ms.max > 1.3 * c.ttft_ms.mean);
}
