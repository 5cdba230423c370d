// Disaggregated prefill/decode in the analysis layer (issue 16): the bill covers both pools at their own prices,
// and the capacity search shows the DistServe effect — a prefill/decode split wins under a tight TPOT target and
// loses under a loose one against colocated replicas of the same cards.
#include <catch2/catch.hpp>

#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/cost.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"
#include "scenarios.hpp"

using namespace llmsim;
using test::resolve_json;

namespace {

// llama-3.1-8b fp16 on A100-80GB SXM, prompt-heavy (2048 in, 128 out), P95 TTFT <= 2 s and P95 TPOT <= tpot_ms:
// two colocated replicas, or one prefill and one decode replica over NVLink.
Json scenario(double tpot_ms, bool disaggregated) {
  Json j = {{"model", "llama-3.1-8b"},
            {"quant", {{"weights", "fp16"}, {"kv_cache", "fp16"}}},
            {"hardware", {{"gpu", "a100-80gb-sxm"}, {"replicas", 2}}},
            {"engine", {{"max_model_len", 8192}}},
            {"workload",
             {{"arrival", {{"process", "poisson"}, {"rate", 1.0}}},
              {"input_tokens", {{"dist", "fixed"}, {"value", 2048}}},
              {"output_tokens", {{"dist", "fixed"}, {"value", 128}}}}},
            {"slo", {{"ttft_ms", {{"p95", 2000}}}, {"tpot_ms", {{"p95", tpot_ms}}}}}};
  if (disaggregated) j.erase("hardware");  // the pools are the deployment (one prefill, one decode replica)
  if (disaggregated)
    j["disaggregation"] = {{"prefill", {{"gpu", "a100-80gb-sxm"}}},
                           {"decode", {{"gpu", "a100-80gb-sxm"}}},
                           {"link", {{"kind", "nvlink"}, {"bandwidth_gbps", 2400}}}};
  return j;
}

analysis::CapacityOptions quick_split() {
  analysis::CapacityOptions o;
  o.num_requests = 300;
  o.warmup_requests = 30;
  o.replications = 1;
  o.rel_tol = 0.05;
  return o;
}

}  // namespace

TEST_CASE("a disaggregated deployment bills both pools at their own prices", "[analysis][disagg]") {
  Json j = scenario(50, true);
  j["disaggregation"]["prefill"]["price_per_gpu_hour"] = 2.0;
  j["disaggregation"]["decode"] = {{"gpu", "2xrtx4090-24gb"}, {"replicas", 3}, {"price_per_gpu_hour", 0.5}};
  j["cost"] = {{"ops_overhead_fraction", 0.1}, {"storage_per_month", 73}};
  j["workload"]["num_requests"] = 50;
  j["workload"]["warmup_requests"] = 0;
  const auto rs = resolve_json(j);
  // (1 A100 × 2.0 + 3 replicas × 2 cards × 0.5) × 1.1 + 73 / 730.
  CHECK(analysis::hourly_cost(rs) == Approx((2.0 + 3.0) * 1.1 + 0.1));
  const auto r = engine::simulate(rs);
  REQUIRE(r.summary.fits);
  const auto c = analysis::cost_summary(rs, r.summary);
  CHECK(c.per_hour == Approx(5.6));
  REQUIRE(r.summary.disaggregation);
  const auto& pools = r.summary.disaggregation->pools;
  REQUIRE(pools.size() == 2);
  CHECK(pools[0].gpus == 1);
  CHECK(pools[1].gpus == 6);
  CHECK(pools[1].price_per_gpu_hour == 0.5);
  // The period's bill: both pools for the run's length.
  REQUIRE(c.period_hours > 0);
  CHECK(c.period == Approx(5.0 * 1.1 * c.period_hours + 73.0 * c.period_hours / 730).epsilon(1e-9));
}

TEST_CASE("the DistServe effect: a 1P:1D split beats two colocated replicas only under a tight TPOT target",
          "[analysis][disagg][capacity]") {
  const auto tight_split = analysis::find_capacity(resolve_json(scenario(15, true)), quick_split());
  const auto tight_colo = analysis::find_capacity(resolve_json(scenario(15, false)), quick_split());
  const auto loose_split = analysis::find_capacity(resolve_json(scenario(200, true)), quick_split());
  const auto loose_colo = analysis::find_capacity(resolve_json(scenario(200, false)), quick_split());
  INFO("tight: split " << tight_split.max_qps << " colocated " << tight_colo.max_qps << "; loose: split "
                       << loose_split.max_qps << " colocated " << loose_colo.max_qps);
  REQUIRE(tight_split.found);
  REQUIRE(loose_split.found);
  REQUIRE(loose_colo.found);
  // Tight TPOT: colocated decodes stall behind every prefill step; the split's decode replica never does.
  CHECK(tight_split.max_qps > 1.3 * tight_colo.max_qps);
  // Loose TPOT: two replicas that both prefill carry more prompts than one prefill replica.
  CHECK(loose_colo.max_qps > 1.3 * loose_split.max_qps);
  // The split's capacity result carries the transfer and the pools.
  REQUIRE(tight_split.at_capacity);
  REQUIRE(tight_split.at_capacity->disaggregation);
  CHECK(tight_split.at_capacity->disaggregation->transfer_ms.p50 > 0);
}
