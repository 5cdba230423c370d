// Capacity search, SLO-filtered cost and rows on the real engine (small runs).
#include <catch2/catch.hpp>

#include <cmath>
#include <utility>
#include <vector>

#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/analysis/row.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/scenario.hpp"
#include "scenarios.hpp"

using namespace llmsim;
using test::chat_json;
using test::resolve_json;

namespace {

analysis::CapacityOptions quick_capacity() {
  analysis::CapacityOptions o;
  o.num_requests = 300;
  o.warmup_requests = 30;
  o.replications = 3;
  o.rel_tol = 0.04;
  return o;
}

double capacity_of(const Json& j) {
  const auto r = analysis::find_capacity(resolve_json(j), quick_capacity());
  REQUIRE(r.fits);
  REQUIRE(r.found);
  return r.max_qps;
}

}  // namespace

TEST_CASE("an unset search warm-up follows the search's requests by the scenario's rule", "[analysis][capacity]") {
  // Issue 29: a fixed 60 refused num_requests = 50 from Python and ran 60 where the CLI (which scaled it itself) ran
  // 30 at --requests 300. Every length gets the scenario's rule; a warm-up set explicitly is kept and checked.
  analysis::CapacityOptions o;
  for (std::int64_t n : {10, 50, 300, 600, 2000}) {
    o.num_requests = n;
    CHECK(o.warmup() == spec::default_warmup_requests(n));
    CHECK(o.warmup() < n);
    CHECK_NOTHROW(o.validate());
  }
  o.num_requests = 50;
  o.warmup_requests = 50;
  CHECK_THROWS_AS(o.validate(), ConfigError);
  o.warmup_requests = 0;
  CHECK(o.warmup() == 0);
}

TEST_CASE("cost per Mtok counts only tokens of requests that met the SLO", "[analysis][cost][engine]") {
  // The SLO does not change the dynamics, so a TTFT target at the run's own median fails about half.
  Json j = chat_json("rtx4090-24gb");
  spec::set_json_path(j, "workload.arrival.rate", 2.5);
  const double median = analysis::evaluate(resolve_json(j)).summary.ttft_ms.p50;
  REQUIRE(median > 0);
  j["slo"] = Json::object();
  j["slo"]["ttft_ms"] = Json::object();
  j["slo"]["ttft_ms"]["p95"] = median;
  const auto s = resolve_json(j);
  const auto r = analysis::evaluate(s).summary;
  REQUIRE(r.fits);
  INFO("attainment " << r.slo_attainment);
  REQUIRE(r.slo_attainment > 0.05);
  REQUIRE(r.slo_attainment < 0.95);
  CHECK(r.goodput_output_tps < r.throughput.output_tokens_per_s);
  CHECK(r.cost.per_hour == Approx(2.0));
  CHECK(r.cost.monthly == Approx(2.0 * 730));
  CHECK(r.cost.per_mtok_output_slo == Approx(2.0 / (r.goodput_output_tps * 3600) * 1e6));
  CHECK(r.cost.per_mtok_total_slo == Approx(2.0 / (r.goodput_total_tps * 3600) * 1e6));
  // Dearer than if every token counted.
  CHECK(r.cost.per_mtok_output_slo > *analysis::cost_per_mtok(2.0, r.throughput.output_tokens_per_s) * 1.02);
  // 16 GB of fp16 weights over 1 Gbps, plus the engine start (60 s): engine::cold_start_s.
  CHECK(r.cost.cold_start_s == Approx(188.5).epsilon(0.01));
}

TEST_CASE("no request meeting the SLO gives no price per token, shown as null", "[analysis][cost][engine]") {
  Json j = chat_json();
  spec::set_json_path(j, "slo", Json::parse(R"({"ttft_ms": {"p95": 0.001}})"));
  analysis::Row row = analysis::evaluate_row(resolve_json(j));
  REQUIRE(row.fits);
  REQUIRE(row.summary);
  CHECK(row.summary->slo_attainment == 0);
  CHECK(row.summary->cost.per_mtok_output_slo == 0);  // metrics::CostSummary's documented "none met"
  const Json out = analysis::to_json(row);
  CHECK(out["cost_per_mtok_output_slo"].is_null());
  CHECK(out["cost_per_mtok_total_slo"].is_null());
  CHECK_FALSE(out["meets_slo"].get<bool>());
}

TEST_CASE("capacity search is repeatable and brackets the SLO", "[analysis][capacity][engine]") {
  const auto s = resolve_json(chat_json());
  const auto a = analysis::find_capacity(s, quick_capacity());
  const auto b = analysis::find_capacity(s, quick_capacity());
  REQUIRE(a.found);
  CHECK(a.max_qps == b.max_qps);
  CHECK(a.ci95_lo == b.ci95_lo);
  CHECK(a.ci95_hi == b.ci95_hi);
  CHECK(a.evaluations == b.evaluations);
  CHECK(a.replications.size() == 3);
  CHECK(a.ci95_lo <= a.ci95_hi);
  CHECK(a.max_qps > 0.5);
  REQUIRE(a.at_capacity);
  CHECK(a.at_capacity->slo_met);
  CHECK(a.at_capacity->ttft_ms.p95 <= 2000);
  // Steady-state rates: completions per second equal the offered rate at capacity.
  CHECK(a.at_capacity->throughput.requests_per_s == Approx(a.max_qps));
  // Clearly above capacity the SLO fails on the same seed.
  auto over = analysis::evaluate(analysis::at_load(s, a.max_qps * 1.5, s.scenario.workload.seed, quick_capacity())).summary;
  CHECK((!over.slo_met || over.unstable));
}

TEST_CASE("capacity is monotone: more GPUs or a faster GPU never lowers it", "[analysis][capacity][engine]") {
  const double slow = capacity_of(chat_json("rtx4090-24gb"));
  const double big = capacity_of(chat_json("rtx4090-48gb"));
  const double fast = capacity_of(chat_json("a100-80gb-sxm"));
  Json two = chat_json("a100-80gb-sxm");
  spec::set_json_path(two, "hardware.replicas", 2);
  const double doubled = capacity_of(two);
  INFO("4090-24 " << slow << ", 4090-48 " << big << ", a100 " << fast << ", 2 x a100 " << doubled);
  CHECK(big >= slow);
  CHECK(fast >= slow);
  CHECK(doubled >= fast);
  CHECK(doubled > 1.5 * fast);  // two replicas behind a router carry nearly twice the load
}

TEST_CASE("a configuration that does not fit is a row with its reason and no numbers", "[analysis][row][engine]") {
  const auto s = resolve_json(chat_json("rtx4090-24gb", "llama-3.1-70b", "fp16"));
  analysis::RowOptions opt;
  opt.capacity = true;
  opt.capacity_options = quick_capacity();
  const auto row = analysis::evaluate_row(s, opt);
  CHECK_FALSE(row.fits);
  CHECK_FALSE(row.reason.empty());
  const Json j = analysis::to_json(row);
  CHECK(j["fits"] == false);
  CHECK(j["reason"].get<std::string>() == row.reason);
  for (const char* k : {"max_qps", "goodput_rps", "goodput_output_tps", "slo_attainment", "cost_per_mtok_output_slo",
                        "cost_per_mtok_total_slo", "monthly_cost", "replicas_needed", "scaling_efficiency"})
    CHECK(j[k].is_null());
  for (const char* k : {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"})
    for (const char* p : {"p50", "p90", "p95", "p99", "mean"}) CHECK(j[k][p].is_null());
  CHECK(j["max_qps_ci95"][0].is_null());
  // Flattened, every column is present, the numbers empty.
  for (const auto& [col, v] : analysis::flatten(row))
    if (col.rfind("ttft_ms.", 0) == 0 || col == "max_qps") CHECK(v.is_null());
}

TEST_CASE("a capacity row sizes the fleet for the target load", "[analysis][row][engine]") {
  Json j = chat_json("rtx4090-24gb");
  spec::set_json_path(j, "cost.target_qps", 10.0);
  spec::set_json_path(j, "cost.spare_fraction", 0.25);
  analysis::RowOptions opt;
  opt.capacity = true;
  opt.capacity_options = quick_capacity();
  const auto row = analysis::evaluate_row(resolve_json(j), opt);
  REQUIRE(row.capacity);
  REQUIRE(row.capacity->found);
  REQUIRE(row.replicas_needed);
  const int estimate = static_cast<int>(std::ceil(10.0 / row.capacity->max_qps - 1e-9));
  REQUIRE(row.serving_replicas);
  const int serving = *row.serving_replicas;
  CHECK(serving == estimate + row.replicas_added);
  CHECK(serving >= estimate);
  CHECK(*row.replicas_needed == static_cast<int>(std::ceil(serving * 1.25 - 1e-9)));
  CHECK(*row.monthly_cost == Approx(2.0 * *row.replicas_needed * 730));
  REQUIRE(row.at_target);
  // The sized fleet itself ran at the whole target, with its router: each replica's share is within capacity.
  CHECK(row.at_target_whole_fleet);
  CHECK(*row.at_target_load_qps == Approx(10.0));
  CHECK(*row.at_target_load_qps / serving <= row.capacity->max_qps + 1e-9);
}

TEST_CASE("closed-loop capacity is a whole number of users", "[analysis][capacity][engine]") {
  Json j = chat_json();
  spec::set_json_path(j, "workload.arrival", Json::parse(R"({"process": "closed", "concurrency": 4})"));
  const auto r = analysis::find_capacity(resolve_json(j), quick_capacity());
  REQUIRE(r.found);
  REQUIRE(r.max_concurrency);
  CHECK(*r.max_concurrency >= 1);
  CHECK(r.closed_loop);
  CHECK(r.max_qps > 0);
}

TEST_CASE("capacity of a short scenario with no SLO is a finite saturation, not the search limit",
          "[analysis][capacity][engine][overload]") {
  // 100 requests: too few for the growth check, so every rate up to max_rate passed and 1e5 req/s was printed.
  Json j = chat_json();
  j.erase("slo");
  j["workload"]["num_requests"] = 100;
  j["workload"].erase("warmup_requests");
  const auto opt = quick_capacity();
  const auto r = analysis::find_capacity(resolve_json(j), opt);
  REQUIRE(r.found);
  CHECK_FALSE(r.hit_limit);
  // The same scenario judged on long runs (the growth check): the short one is coarser, but of the same order.
  j["workload"]["num_requests"] = 600;
  auto long_opt = opt;
  long_opt.num_requests = 600;
  const auto ref = analysis::find_capacity(resolve_json(j), long_opt);
  REQUIRE(ref.found);
  INFO("short " << r.max_qps << " req/s, long " << ref.max_qps << " req/s");
  CHECK(r.max_qps < 8 * ref.max_qps);
  CHECK(r.max_qps > 0.5 * ref.max_qps);
}

TEST_CASE("capacity refuses trace replay and bad options", "[analysis][capacity]") {
  auto opt = quick_capacity();
  opt.rel_tol = 0;
  CHECK_THROWS_AS(opt.validate(), ConfigError);
  opt = quick_capacity();
  opt.replications = 0;
  CHECK_THROWS_AS(opt.validate(), ConfigError);
}

TEST_CASE("t95 is Student's t 0.975 quantile at every degree of freedom", "[analysis][capacity]") {
  // Two-sided 95% critical values t(0.975, dof), as tables print them (12.706, 4.303, ...) to 9 digits: computed
  // independently by bisection on the regularized incomplete beta (scipy.stats.t.ppf gives the same), including
  // dof beyond any fixed table.
  const std::vector<std::pair<int, double>> known{{1, 12.7062047}, {2, 4.30265273}, {3, 3.18244631},
                                                  {4, 2.77644511}, {5, 2.57058184}, {10, 2.22813885},
                                                  {30, 2.04227246}, {31, 2.03951345}, {60, 2.00029782},
                                                  {120, 1.97993041}, {100000, 1.95998771}};
  for (const auto& [dof, q] : known) {
    INFO("dof " << dof);
    CHECK(analysis::t95(dof) == Approx(q).epsilon(1e-6));
  }
  for (int dof = 1; dof < 200; ++dof) CHECK(analysis::t95(dof + 1) < analysis::t95(dof));  // tighter with more data
  CHECK(analysis::t95(1000000) > 1.959963);  // approaches the normal's 1.959964 from above
  CHECK_THROWS_AS(analysis::t95(0), ConfigError);
}

TEST_CASE("an SLO percentile outside (0, 100] is a clear error", "[analysis][slo]") {
  for (double bad : {0.0, -5.0, 100.5}) {
    Json j = chat_json();
    j["slo"] = Json::parse(R"({"ttft_ms": {}})");
    j["slo"]["ttft_ms"]["p" + format_value(bad)] = 2000;
    INFO("percentile " << bad);
    try {
      resolve_json(j);
      FAIL("expected ConfigError");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()).find("slo") != std::string::npos);
    }
  }
}

TEST_CASE("slo_failures names each failing target with its value", "[analysis][capacity][slo]") {
  Json j = chat_json();  // P95 TTFT <= 2000 ms, P95 TPOT <= 100 ms
  j["slo"]["min_attainment"] = 0.9;
  const spec::Scenario sc = spec::scenario_from_json(JsonView(j, ""));
  metrics::Summary s;
  s.completed_requests = 100;
  s.ttft_ms.count = s.tpot_ms.count = 100;
  s.ttft_ms.quantiles = {{95, 4204.4}};
  s.tpot_ms.quantiles = {{95, 80}};
  s.slo_attainment = 0.5;
  s.slo_met = false;
  CHECK(analysis::slo_failures(sc, s) == "ttft_ms.p95 = 4204 ms > 2000; slo_attainment = 0.500 < 0.9");
  s.tpot_ms.quantiles = {{95, 123.4}};
  s.slo_attainment = 0.95;
  CHECK(analysis::slo_failures(sc, s) == "ttft_ms.p95 = 4204 ms > 2000; tpot_ms.p95 = 123 ms > 100");
  s.unstable = true;
  s.reason = "queue grew";
  CHECK(analysis::slo_failures(sc, s) == "unstable: queue grew");
  s = metrics::Summary{};
  s.completed_requests = 10;
  s.ttft_ms.count = 10;
  s.ttft_ms.quantiles = {{95, 10}};
  s.slo_attainment = 1;
  CHECK(analysis::slo_failures(sc, s).empty());
  CHECK(analysis::run_meets_slo(s));
}

TEST_CASE("no capacity says which target fails at the lowest load tried", "[analysis][capacity][slo][engine]") {
  // 8B prompts of ~800 tokens take far more than 30 ms to prefill on any card: no load meets this.
  Json j = chat_json();
  j["slo"] = Json::parse(R"({"ttft_ms": {"p95": 30}})");
  const auto r = analysis::find_capacity(resolve_json(j), quick_capacity());
  REQUIRE(r.fits);
  REQUIRE_FALSE(r.found);
  INFO(r.reason);
  CHECK_THAT(r.reason, Catch::StartsWith("the SLO is not met even at the lowest load tried (0.001 req/s"));
  CHECK_THAT(r.reason, Catch::Contains("): ttft_ms.p95 = "));
  CHECK_THAT(r.reason, Catch::Contains(" ms > 30 ("));
  // At that floor requests come one at a time: the latency named is one request's own, which replicas cannot shorten.
  CHECK_THAT(r.reason, Catch::Contains("below one request's unloaded latency"));
}

TEST_CASE("a fleet sized for the target meets the SLO there", "[analysis][row][engine]") {
  // 70B on two A100s by TP under the chat workload: the seeds' capacities spread widely, so ⌈target / max_qps⌉
  // replicas can miss P95 TTFT on the scenario's own seed. Sizing simulates that fleet whole, with its router, at
  // the target, and adds replicas until it meets the SLO (issue 29: "SLO NOT met, 1 replica" at 0.5 req/s). (The TTFT target is 2.5 s: under vLLM V1's 2048-token budget a p95 prompt of ~3,600 tokens
  // takes two chunks, so P95 TTFT is ~2 s even at 0.25 QPS and a 2 s target could not be met by any fleet.)
  Json j = chat_json("a100-80gb-sxm", "llama-3.1-70b");
  j["hardware"]["tp"] = 2;
  j["slo"]["ttft_ms"]["p95"] = 2500;
  j["workload"] = Json::parse(R"({"arrival": {"process": "poisson", "rate": 4.0},
      "input_tokens": {"dist": "lognormal", "mean": 1150, "sigma": 1.0},
      "output_tokens": {"dist": "lognormal", "mean": 210, "sigma": 0.86},
      "num_requests": 2000, "warmup_requests": 100, "seed": 1})");
  analysis::RowOptions opt;
  opt.capacity = true;
  int added = 0;
  for (double target : {0.5, 2.0, 4.0}) {
    INFO("target " << target);
    j["cost"]["target_qps"] = target;
    const auto row = analysis::evaluate_row(resolve_json(j), opt);
    REQUIRE(row.capacity->found);
    REQUIRE(row.at_target);
    CHECK(analysis::run_meets_slo(*row.at_target));
    CHECK(analysis::to_json(row)["at_target"]["slo_met"] == true);
    const int estimate = static_cast<int>(std::ceil(target / row.capacity->max_qps - 1e-9));
    CHECK(*row.replicas_needed == estimate + row.replicas_added);
    CHECK(*row.serving_replicas == *row.replicas_needed);  // no spares asked for
    CHECK(row.replicas_added <= 3 * estimate + 4);         // bounded: the stated limit, 4 x the estimate + 4
    CHECK(row.at_target_whole_fleet);
    CHECK(*row.at_target_load_qps == Approx(target));      // the fleet at the whole target, not one replica's share
    CHECK(row.at_target->fleet.peak_replicas == *row.serving_replicas);
    added += row.replicas_added;
  }
  CHECK(added >= 0);
}
