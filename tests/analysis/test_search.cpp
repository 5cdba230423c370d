// analysis::search: enumeration, pruning (memory, throughput bound, budget, branch-and-bound), the Pareto front.
#include <catch2/catch.hpp>

#include "llmsim/analysis/search.hpp"
#include "scenarios.hpp"

using namespace llmsim;
using Catch::Contains;

namespace {

analysis::SearchOptions small_options(double target) {
  analysis::SearchOptions o;
  o.target_qps = target;
  o.axes = {{"hardware.gpu", {"rtx4090-24gb", "a100-80gb-sxm", "2xrtx4090-24gb"}},
            {"quant.weights", {"fp16", "awq-int4"}},
            {"engine.max_num_seqs", {32, 128}}};
  o.screen.num_requests = 200;
  o.screen.warmup_requests = 20;
  o.screen.replications = 1;
  o.final_check = o.screen;  // the same settings: the re-check reproduces the first pass exactly
  o.wave = 2;                // small waves so the bound prunes within this small space
  o.front_cost_ratio = 1.0;  // the tightest branch-and-bound: only a cheaper winner is looked for
  return o;
}

Json base() {
  Json j = test::chat_json();
  j["hardware"].erase("price_per_gpu_hour");
  return j;
}

}  // namespace

TEST_CASE("search: pruning never drops a configuration that is feasible and cheaper than the winner (brute force)", "[search]") {
  const auto opt = small_options(6.0);
  const auto& cat = spec::Catalog::builtin();
  const auto plan = analysis::plan_search(base(), opt, cat);
  CHECK(plan.enumerated == 12);
  CHECK(plan.invalid + plan.pruned_memory + plan.pruned_budget + static_cast<std::int64_t>(plan.candidates.size()) == 12);
  const auto result = analysis::search(base(), opt, cat);
  REQUIRE(result.winner);
  const double winner_cost = result.front[*result.winner].evaluation.monthly_cost;
  CHECK(result.pruned_bound > 0);  // the bound did cut something in this space
  double brute_best = 1e300;
  for (const auto& c : plan.candidates) {
    const auto e = analysis::evaluate_candidate(c, opt.screen, cat);
    INFO(c.name);
    // The analytic bound is above what the simulation finds, and the cost bound below the bill.
    CHECK(e.capacity_qps <= c.qps_bound_per_replica);
    if (e.meets_slo) {
      CHECK(e.monthly_cost >= c.monthly_lower_bound * (1 - 1e-9));
      brute_best = std::min(brute_best, e.monthly_cost);
    }
  }
  CHECK(winner_cost == brute_best);
}

TEST_CASE("search: the front is Pareto, sorted by cost, and the same for any thread count", "[search]") {
  auto opt = small_options(4.0);
  opt.front_cost_ratio = 3.0;
  const auto& cat = spec::Catalog::builtin();
  const auto one = analysis::search(base(), opt, cat);
  opt.jobs = 2;
  const auto two = analysis::search(base(), opt, cat);
  CHECK(analysis::to_json(one) == analysis::to_json(two));
  REQUIRE_FALSE(one.front.empty());
  for (std::size_t i = 0; i < one.front.size(); ++i) {
    const auto& a = one.front[i].evaluation;
    CHECK(a.meets_slo);
    if (i > 0) CHECK(one.front[i - 1].evaluation.monthly_cost <= a.monthly_cost);
    for (std::size_t j = 0; j < one.front.size(); ++j) {
      const auto& b = one.front[j].evaluation;
      const bool dominated = b.monthly_cost <= a.monthly_cost && b.ttft_p95_ms <= a.ttft_p95_ms &&
                             b.tpot_p95_ms <= a.tpot_p95_ms &&
                             (b.monthly_cost < a.monthly_cost || b.ttft_p95_ms < a.ttft_p95_ms || b.tpot_p95_ms < a.tpot_p95_ms);
      CHECK_FALSE(dominated);
    }
  }
  CHECK(one.reasons.size() == 2);
  CHECK_THAT(one.reasons[0], Contains("cheapest"));
}

TEST_CASE("search: a budget excludes costlier configurations", "[search]") {
  auto opt = small_options(6.0);
  opt.front_cost_ratio = 3.0;
  const auto& cat = spec::Catalog::builtin();
  const auto free = analysis::search(base(), opt, cat);
  REQUIRE(free.front.size() >= 1);
  const double cheapest = free.front.front().evaluation.monthly_cost;
  opt.budget_per_month = cheapest * 1.01;
  const auto capped = analysis::search(base(), opt, cat);
  REQUIRE_FALSE(capped.front.empty());
  for (const auto& m : capped.front) CHECK(m.evaluation.monthly_cost <= *opt.budget_per_month);
  CHECK(capped.pruned_budget + capped.pruned_bound > free.pruned_budget + free.pruned_bound);
  opt.budget_per_month = cheapest * 0.5;  // nothing meets the SLO that cheaply
  const auto none = analysis::search(base(), opt, cat);
  CHECK(none.front.empty());
  CHECK_FALSE(none.winner);
  CHECK_THAT(none.reasons.at(0), Contains("no configuration"));
}

TEST_CASE("search: a configuration that cannot hold the model is pruned by memory, not simulated", "[search]") {
  analysis::SearchOptions o = small_options(1.0);
  o.axes = {{"hardware.gpu", {"rtx4090-24gb", "8xa100-80gb-sxm"}}};
  Json j = base();
  j["model"] = "llama-3.1-70b";
  const auto plan = analysis::plan_search(j, o, spec::Catalog::builtin());
  CHECK(plan.pruned_memory == 1);
  REQUIRE(plan.candidates.size() == 1);
  CHECK(plan.candidates[0].gpus_per_replica == 8);
}

TEST_CASE("search: bad inputs name the field", "[search]") {
  const auto& cat = spec::Catalog::builtin();
  auto o = small_options(0);
  CHECK_THROWS_WITH(analysis::plan_search(base(), o, cat), Contains("search.target_qps"));
  o = small_options(-2);
  CHECK_THROWS_AS(analysis::plan_search(base(), o, cat), ConfigError);
  o = small_options(1);
  o.axes[1].values.clear();
  CHECK_THROWS_WITH(analysis::plan_search(base(), o, cat), Contains("search.axes[1]"));
  o = small_options(1);
  o.axes[2].path = "engine.max_num_sequences";
  CHECK_THROWS_WITH(analysis::plan_search(base(), o, cat), Contains("search.axes[2].path"));
  o = small_options(1);
  o.axes = {{"hardware.gpu", {"nope-gpu"}}};  // every configuration invalid: an error, not an empty answer
  CHECK_THROWS_WITH(analysis::plan_search(base(), o, cat), Contains("nope-gpu"));
  Json closed = base();
  closed["workload"]["arrival"] = {{"process", "closed"}, {"concurrency", 8}};
  CHECK_THROWS_WITH(analysis::plan_search(closed, small_options(1), cat), Contains("workload.arrival"));
  o = small_options(1);
  o.budget_per_month = 0;
  CHECK_THROWS_WITH(analysis::plan_search(base(), o, cat), Contains("search.budget_per_month"));
}

TEST_CASE("search: candidates and evaluations round-trip through JSON (what a Dask worker receives and returns)", "[search]") {
  const auto& cat = spec::Catalog::builtin();
  const auto plan = analysis::plan_search(base(), small_options(2.0), cat);
  REQUIRE_FALSE(plan.candidates.empty());
  const auto& c = plan.candidates.front();
  const auto back = analysis::candidate_from_json(JsonView(analysis::to_json(c), ""));
  CHECK(analysis::to_json(back) == analysis::to_json(c));
  analysis::SearchEvaluation e;
  e.index = 3;
  e.meets_slo = true;
  e.monthly_cost = 1234.5;
  e.cost_per_mtok_output = 0.7;
  CHECK(analysis::to_json(analysis::evaluation_from_json(JsonView(analysis::to_json(e), ""))) == analysis::to_json(e));
}
