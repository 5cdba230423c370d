// `check` and a server warm from an earlier run of the same prompts (docs/vllm.md "A warm server"): the physical floor
// of a cold TTFT, the question it raises when a measured TTFT is below it, and --warm-cache's replay from the warm
// cache. The file is surajssd's rate-inf run (Llama-3.3-70B, 8x A100 40GB, vLLM 0.8.3, --enable-prefix-caching), the
// fourth of four runs of the same 200 prompts on one server; no number of it is asserted, only the direction.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/analysis/result_notes.hpp"
#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/analysis/vllm_result.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"

using namespace llmsim;
using namespace llmsim::analysis;

namespace {

std::string suraj(const std::string& rate) {
  return std::string(LLMSIM_SOURCE_DIR) + "/data/validation/corpus/surajssd-aks-a100-vllm083/01_tp8_pp1/"
         "serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_" + rate + ".json";
}

VllmCheckOptions suraj_options(bool warm) {
  VllmCheckOptions o;
  o.gpu = "a100-40gb-sxm";
  o.model = "llama-3.3-70b";
  o.engine_version = "0.8.3";
  o.vllm_args = "vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 8 --enable-prefix-caching";
  o.warm_cache = warm;
  return o;
}

bool asks_warm(const VllmCheck& c) {
  for (const auto& n : c.notes)
    if (n.find("was the server warm from an earlier run") != std::string::npos) return true;
  return false;
}

double predicted(const VllmCheck& c, const std::string& key) {
  for (const auto& r : c.rows)
    if (r.key == key && r.predicted) return *r.predicted;
  FAIL("no prediction for " << key);
  return 0;
}

}  // namespace

TEST_CASE("warm check: the cold TTFT floor is the prompts' FLOPs at the dense peak, queued in order", "[warm_check]") {
  VllmCheckOptions o = suraj_options(false);
  const auto r = read_vllm_result(suraj("inf"));
  std::vector<std::string> notes;
  const auto rs = spec::resolve(vllm_check_scenario(r, o, spec::Catalog::builtin(), notes), spec::Catalog::builtin());
  // Two prompts of 1,000 tokens at 0 and a third at 10 s: the second waits for the first, the third for nobody.
  const auto f = cold_ttft_floor_s(rs, {{0.0, 1000}, {0.0, 1000}, {10.0, 1000}});
  REQUIRE(f.size() == 3);
  const double w = static_cast<double>(rs.model.active_param_count() - rs.model.embedding_params() - rs.model.lm_head_params());
  const double one = 1000 * 2 * w / (8 * 312e12);  // A100's dense FP16/BF16 tensor peak, 8 GPUs
  CHECK(f[0] == Approx(one));
  CHECK(f[1] == Approx(2 * one));
  CHECK(f[2] == Approx(one));
  CHECK(one > 0.05);  // ~137 GFLOP per token of a 70B model over 8 x 312 TFLOP/s: 55 ms per 1,000 tokens
  CHECK(one < 0.06);
}

TEST_CASE("warm check: a TTFT below the cold floor asks whether the server was warm; --warm-cache replays warm",
          "[warm_check]") {
  const auto cold = check_vllm_result(read_vllm_result(suraj("inf")), suraj_options(false));
  REQUIRE(cold.fits);
  CHECK(asks_warm(cold));
  const auto warm = check_vllm_result(read_vllm_result(suraj("inf")), suraj_options(true));
  REQUIRE(warm.fits);
  CHECK_FALSE(asks_warm(warm));
  CHECK(warm.scenario.workload.warm_cache);
  CHECK(predicted(warm, "mean_ttft_ms") < 0.5 * predicted(cold, "mean_ttft_ms"));
  // The first run at 1 req/s is not below the floor: no question.
  CHECK_FALSE(asks_warm(check_vllm_result(read_vllm_result(suraj("01")), suraj_options(false))));
  // Without prefix caching a warm server is impossible: no question either.
  VllmCheckOptions off = suraj_options(false);
  off.vllm_args = "vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 8 --no-enable-prefix-caching";
  CHECK_FALSE(asks_warm(check_vllm_result(read_vllm_result(suraj("inf")), off)));
}
