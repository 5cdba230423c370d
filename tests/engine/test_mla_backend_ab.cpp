// vllm#13747's A/B of the MLA decode kernels (issue 27, branch r1moe27; not a validation source): LucasWilkinson's
// 8 x H200 DeepSeek-R1 runs of 2025-02-25 on the FlashMLA integration branch (vLLM V0, benchmark_throughput.py,
// 100 prompts of 3000 tokens, 1000 output tokens each, TP 8): 2539.60 total tokens/s with VLLM_ATTENTION_BACKEND=
// TRITON_MLA, 2769.37 with FLASHMLA. llmsim prices the two through the release rule (vLLM 0.7.3 predates FlashMLA and
// decodes with Triton MLA; the 0.7.4 nightlies run FlashMLA) on the same engine; every other op is the same, so the
// ratio isolates the two kernels' relative prices. The runs' absolute throughput is not asserted: llmsim reads them
// about twice as fast (docs/cost-model.md, "DeepSeek-R1 on the 0.7.4 nightly", the r1moe27 note).
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/engine/simulator.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

using namespace llmsim;

namespace {

double r1_offline_tokens_per_s(const std::string& release) {
  const Json j = {{"model", "deepseek-r1"},
                  {"quant", {{"weights", "fp8"}}},
                  {"hardware", {{"gpu", "h200-141gb-sxm"}, {"tp", 8}}},
                  {"engine", {{"runtime", release}, {"api_server", false}}},
                  {"workload", {{"arrival", {{"process", "offline"}}},
                                {"input_tokens", {{"dist", "fixed"}, {"value", 3000}}},
                                {"output_tokens", {{"dist", "fixed"}, {"value", 1000}}},
                                {"num_requests", 100}, {"warmup_requests", 0}}}};
  const auto s = spec::resolve(spec::scenario_from_json(JsonView(j, "")), spec::Catalog::builtin());
  return engine::simulate(s).summary.throughput.requests_per_s * 4000.0;
}

}  // namespace

TEST_CASE("vllm#13747's FlashMLA gain on 8 x H200 DeepSeek-R1 (1.09x) within 5 % under the release rule",
          "[mla_backend_ab]") {
  const double triton = r1_offline_tokens_per_s("vllm==0.7.3");
  const double flash = r1_offline_tokens_per_s("vllm==0.7.4");
  INFO("Triton MLA " << triton << " tokens/s (2539.60 measured), FlashMLA " << flash << " (2769.37)");
  CHECK(flash / triton == Approx(2769.37 / 2539.60).epsilon(0.05));
}
