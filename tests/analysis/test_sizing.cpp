// Sizing sizes what simulate would run (DESIGN.md "Planner defaults", issue 29): the daily curve's peak, not the
// first minutes after midnight; a fixed fleet, not whatever an autoscaler adds; the fleet billed is the fleet
// verified; hot spares are in the bill; a winner inside the noise is a tie said as such.
#include <catch2/catch.hpp>

#include <cmath>

#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/compare.hpp"
#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/analysis/ranking.hpp"
#include "llmsim/analysis/row.hpp"
#include "llmsim/analysis/search.hpp"
#include "llmsim/analysis/slo_headroom.hpp"
#include "llmsim/core/error.hpp"
#include "scenarios.hpp"

using namespace llmsim;

namespace {

// 24 hourly multipliers: quiet at midnight (0.3), busiest at 15:00 (1.9).
Json sizing_daily_chat(const std::string& gpu = "a100-80gb-sxm") {
  Json j = test::chat_json(gpu);
  j["workload"]["daily_profile"] = {0.3, 0.2, 0.2, 0.2, 0.2, 0.3, 0.5, 0.8, 1.2, 1.5, 1.6, 1.7,
                                    1.7, 1.7, 1.8, 1.9, 1.8, 1.5, 1.2, 1.0, 0.9, 0.7, 0.5, 0.4};
  j["workload"].erase("num_requests");
  return j;
}

analysis::CapacityOptions sizing_quick() {
  analysis::CapacityOptions o;
  o.replications = 1;
  o.num_requests = 300;
  o.warmup_requests = 30;
  return o;
}

}  // namespace

TEST_CASE("sizing a daily curve sizes its peak window: the same as the flat load at the peak", "[analysis][sizing]") {
  const auto daily = test::resolve_json(sizing_daily_chat());
  const spec::Workload flat = spec::sizing_workload(daily.scenario.workload);
  CHECK(flat.daily_profile.empty());
  CHECK(*spec::offered_rate(flat) == Approx(2.0 * 1.9));  // base rate x the peak multiplier
  CHECK(spec::sizing_window(daily.scenario.workload).find("15:00, 1.9 x") != std::string::npos);
  CHECK(spec::sizing_window(test::resolve_json(test::chat_json()).scenario.workload).empty());

  Json flat_json = test::chat_json();
  flat_json["workload"]["arrival"]["rate"] = 2.0 * 1.9;
  const auto a = analysis::find_capacity(daily, sizing_quick());
  const auto b = analysis::find_capacity(test::resolve_json(flat_json), sizing_quick());
  REQUIRE(a.found);
  CHECK(a.max_qps == b.max_qps);  // the runs themselves are the flat load's
  CHECK(!a.sized_at.empty());
  CHECK(b.sized_at.empty());
  // The fleet is sized for the peak rate, not the day's mean.
  CHECK(analysis::sizing_target_qps(daily.scenario) == Approx(2.0 * 1.9));
}

TEST_CASE("capacity does not grow with autoscaler.max_replicas: sizing measures fixed replicas", "[analysis][sizing]") {
  std::vector<double> caps;
  for (int max_replicas : {3, 6, 12}) {
    Json j = test::chat_json();
    j["autoscaler"] = {{"min_replicas", 1}, {"max_replicas", max_replicas}, {"queue_per_replica", 8}};
    const auto cap = analysis::find_capacity(test::resolve_json(j), sizing_quick());
    REQUIRE(cap.found);
    CHECK(cap.sized_at.find("autoscaler off") != std::string::npos);
    caps.push_back(cap.max_qps);
  }
  CHECK(caps[0] == caps[1]);
  CHECK(caps[1] == caps[2]);
  const auto plain = analysis::find_capacity(test::resolve_json(test::chat_json()), sizing_quick());
  CHECK(plain.max_qps == caps[0]);
}

TEST_CASE("hot spares are in every bill: the headline cost and a sized fleet's", "[analysis][sizing]") {
  Json j = test::chat_json();
  const double without = analysis::hourly_cost(test::resolve_json(j));
  j["failures"] = {{"spares", 2}};
  const auto rs = test::resolve_json(j);
  CHECK(analysis::spare_gpus(rs) == 2);
  CHECK(analysis::hourly_cost(rs) == Approx(without + 2 * 2.0));  // two more GPUs at $2/h
  CHECK(analysis::evaluate(rs).summary.cost.monthly == Approx(analysis::hourly_cost(rs) * 730));

  analysis::RowOptions ro;
  ro.capacity = true;
  ro.capacity_options = sizing_quick();
  const auto row = analysis::evaluate_row(rs, ro);
  REQUIRE(row.replicas_needed);
  REQUIRE(row.serving_replicas);
  CHECK(*row.replicas_needed == *row.serving_replicas + 2);
  CHECK(*row.monthly_cost == Approx(analysis::units_hourly(rs, *row.replicas_needed) * 730));
}

TEST_CASE("the fleet billed is the fleet verified: its replicas, with the router, at the full target", "[analysis][sizing]") {
  Json j = test::chat_json();
  j["cost"] = {{"target_qps", 40.0}};  // several replicas' worth
  analysis::RowOptions ro;
  ro.capacity = true;
  ro.capacity_options = sizing_quick();
  const auto row = analysis::evaluate_row(test::resolve_json(j), ro);
  REQUIRE(row.capacity);
  REQUIRE(row.capacity->found);
  REQUIRE(row.at_target);
  REQUIRE(row.serving_replicas);
  CHECK(*row.serving_replicas >= 2);
  CHECK(row.at_target_whole_fleet);
  CHECK(*row.at_target_load_qps == Approx(40.0));  // the whole target, not one replica's share
  // Every serving replica took part in the verified run.
  CHECK(row.at_target->fleet.peak_replicas == *row.serving_replicas);
  if (row.reason.empty()) CHECK(analysis::run_meets_slo(*row.at_target));
  else CHECK(row.reason.find("sizing limit") != std::string::npos);
}

TEST_CASE("ranking: options inside each other's noise are a tie, broken by the lossless format, then the cheaper card",
          "[analysis][sizing]") {
  using analysis::RankCandidate;
  auto cand = [](double v, double u, bool lossless, double price, std::string name) {
    RankCandidate c;
    c.value = v;
    c.rel_uncertainty = u;
    c.lossless = lossless;
    c.card_price = price;
    c.name = std::move(name);
    return c;
  };
  // Equal bills decided by $0.001 toward a 4-bit format: a tie, and fp16 takes it.
  auto p = analysis::pick_winner({cand(365.0, 0, true, 0.5, "fp16"), cand(365.0, 0, false, 0.5, "int8"),
                                  cand(364.9, 0, false, 0.5, "awq-int4")});
  REQUIRE(p.winner);
  CHECK(*p.winner == 0);
  CHECK(p.tied.size() == 3);
  CHECK(p.note.find("lossless") != std::string::npos);
  // Overlapping CIs: the cheaper card wins the tie.
  p = analysis::pick_winner({cand(7.70, 0.3, true, 1.8, "a100-sxm"), cand(7.79, 0.3, true, 1.5, "a100-pcie")});
  CHECK(*p.winner == 1);
  CHECK(p.note.find("cheaper card") != std::string::npos);
  // Clearly apart: the better value wins, and no tie is claimed.
  p = analysis::pick_winner({cand(100, 0.01, true, 1, "a"), cand(50, 0.01, false, 2, "b")});
  CHECK(*p.winner == 1);
  CHECK(p.tied.size() == 1);
  CHECK(p.note.empty());
  // Not eligible is never a winner.
  RankCandidate none;
  CHECK_FALSE(analysis::pick_winner({none}).winner);
}

TEST_CASE("compare: a missing price is an error, never a 'cannot run' row that hands the win to the rest",
          "[analysis][sizing]") {
  Json j = test::chat_json();
  j["cost"] = {{"currency", "HKD"}};
  j["hardware"]["price_per_gpu_hour"] = 14.0;  // HKD, for the scenario's own card only
  const auto base = spec::scenario_from_json(JsonView(j, ""));
  analysis::CompareOptions opt;
  opt.gpus = {"a100-80gb-sxm", "rtx4090-24gb"};
  opt.capacity = sizing_quick();
  CHECK_THROWS_WITH(analysis::compare(base, opt), Catch::Contains("rtx4090-24gb") && Catch::Contains("HKD"));
  opt.prices = {{"rtx4090-24gb", 4.0}};
  CHECK_NOTHROW(analysis::compare(base, opt));
}

TEST_CASE("one number per quantity: the fleet check at the scenario's own load is the run simulate makes",
          "[analysis][sizing]") {
  // The target is the scenario's own rate and one replica carries it: compare's at-target run and simulate's run
  // are the same simulation (requests, warm-up, seed), so their latencies agree exactly and their $/Mtok differ
  // only by what each divides by (the steady state against the whole run, both labelled).
  const auto rs = test::resolve_json(test::chat_json());
  analysis::RowOptions ro;
  ro.capacity = true;
  ro.capacity_options = sizing_quick();
  const auto row = analysis::evaluate_row(rs, ro);
  REQUIRE(row.at_target);
  REQUIRE(*row.serving_replicas == 1);
  const auto sim = analysis::evaluate(rs).summary;
  CHECK(row.at_target->completed_requests == sim.completed_requests);
  CHECK(row.at_target->ttft_ms.p95 == sim.ttft_ms.p95);
  CHECK(row.at_target->tpot_ms.p95 == sim.tpot_ms.p95);
  // The whole run's rate is diluted by the drain tail (400 requests here): within 10 %, the steady state cheaper.
  CHECK(*row.cost_per_mtok_output_at_target == Approx(sim.cost.per_mtok_output_slo).epsilon(0.1));
  CHECK(*row.cost_per_mtok_output_at_target <= sim.cost.per_mtok_output_slo);
}

TEST_CASE("saturation comes from the replicas that served: it does not grow with autoscaler.max_replicas",
          "[analysis][sizing]") {
  // An overloaded replica whose autoscaler can never start another (a start delay longer than the run): the runs
  // for max_replicas 3, 6 and 12 are the same run, and so must be their saturation rate.
  std::vector<double> sat;
  for (int max_replicas : {3, 6, 12}) {
    Json j = test::chat_json("rtx4090-24gb");
    j["workload"]["arrival"]["rate"] = 20.0;
    j["autoscaler"] = {{"min_replicas", 1}, {"max_replicas", max_replicas}, {"queue_per_replica", 8},
                       {"scale_up_delay_s", 1e6}};
    const auto s = analysis::evaluate(test::resolve_json(j)).summary;
    REQUIRE(s.saturation.time_s > 0);
    sat.push_back(s.saturation.throughput.requests_per_s);
  }
  CHECK(sat[0] == sat[1]);
  CHECK(sat[1] == sat[2]);
  // And it is one replica's rate: the fixed single replica's.
  Json one = test::chat_json("rtx4090-24gb");
  one["workload"]["arrival"]["rate"] = 20.0;
  CHECK(analysis::evaluate(test::resolve_json(one)).summary.saturation.throughput.requests_per_s == Approx(sat[0]));
  // At light load a few saturated steps are no full-load rate: none is reported.
  one["workload"]["arrival"]["rate"] = 0.2;
  const auto light = analysis::evaluate(test::resolve_json(one)).summary;
  CHECK(light.saturation.throughput.requests_per_s == 0);
}

TEST_CASE("search: lossy formats only when asked for, and a lossy option carries its caveat", "[analysis][sizing]") {
  for (const auto& axis : analysis::default_search_axes()) CHECK(axis.path.rfind("quant.", 0) != 0);
  Json j = test::chat_json();
  CHECK(analysis::row_identity(test::resolve_json(j)).quality_caveat.empty());  // fp16 weights and KV
  j["quant"]["kv_cache"] = "fp8";
  CHECK_THAT(analysis::row_identity(test::resolve_json(j)).quality_caveat, Catch::Contains("KV cache fp8"));
  j["quant"]["weights"] = "awq-int4";
  const auto both = analysis::row_identity(test::resolve_json(j)).quality_caveat;
  CHECK_THAT(both, Catch::Contains("quality not modelled") && Catch::Contains("KV cache fp8"));
}

TEST_CASE("search plans what simulate runs: the auto context, and a missing price is an error", "[analysis][sizing]") {
  Json base = test::chat_json("rtx4090-24gb");
  base["engine"].erase("max_model_len");  // vLLM's auto: 8B fp16 fits one 24 GB card
  base["hardware"].erase("price_per_gpu_hour");
  analysis::SearchOptions o;
  o.target_qps = 4;
  o.axes = {{"hardware.gpu", {"rtx4090-24gb", "a100-80gb-sxm"}}};
  const auto plan = analysis::plan_search(base, o, spec::Catalog::builtin());
  CHECK(plan.pruned_memory == 0);
  CHECK(plan.candidates.size() == 2);
  base["cost"] = {{"currency", "HKD"}};
  base["hardware"]["price_per_gpu_hour"] = 4.0;  // HKD, for the scenario's own card only
  CHECK_THROWS_WITH(analysis::plan_search(base, o, spec::Catalog::builtin()),
                    Catch::Contains("a100-80gb-sxm") && Catch::Contains("HKD"));
}

TEST_CASE("an SLO one request alone misses is said to be below its unloaded latency, with that latency",
          "[analysis][sizing]") {
  // Light and tight: the unloaded run is what decides, on one replica and on a fleet unit alike.
  for (const double p95_ms : {20.0, 5000.0}) {
    Json j = test::chat_json();
    j["slo"] = {{"ttft_ms", {{"p95", p95_ms}}}};
    j["hardware"]["replicas"] = 3;  // the note is about one replica whatever the deployment holds
    const auto rs = test::resolve_json(j);
    const auto note = analysis::unloaded_slo_miss(rs, sizing_quick(), false);
    INFO("p95 TTFT SLO " << p95_ms << " ms: " << note.value_or("(none)"));
    if (p95_ms < 100) {
      REQUIRE(note);
      CHECK_THAT(*note, Catch::Contains("below one request's unloaded latency") &&
                            Catch::Contains("one replica (0.001 req/s") && Catch::Contains("ttft_ms.p95 = ") &&
                            Catch::Contains("> 20"));
    } else {
      CHECK(!note);  // met alone: growing the fleet can help, nothing to say
    }
  }
  // The capacity search's floor is the same situation: its reason says so too.
  Json j = test::chat_json();
  j["slo"] = {{"ttft_ms", {{"p95", 20}}}};
  const auto cap = analysis::find_capacity(test::resolve_json(j), sizing_quick());
  CHECK(!cap.found);
  CHECK_THAT(cap.reason, Catch::Contains("below one request's unloaded latency"));
}

TEST_CASE("an SLO within the model's error of one request's unloaded latency says the fleet is set by queueing noise",
          "[analysis][sizing]") {
  // Issue 29: 112.5 ms over an unloaded TTFT of ~110 ms sized "500 H100s" without a word. The rule (slo_headroom.hpp)
  // compares the tightest target's margin over the run alone with the model's typical error in that regime.
  Json j = test::chat_json();
  const auto o = sizing_quick();
  const metrics::Summary alone = analysis::unloaded_run(test::resolve_json(j), o, false);
  REQUIRE(alone.completed_requests > 0);
  const double unloaded = alone.ttft_ms.p95;
  for (const double f : {1.02, 3.0}) {
    Json t = j;
    t["slo"] = {{"ttft_ms", {{"p95", unloaded * f}}}, {"tpot_ms", {{"p95", 1000}}}};
    const auto rs = test::resolve_json(t);
    const auto h = analysis::tightest_slo_headroom(rs, alone);
    REQUIRE(h);
    CHECK(h->target == "ttft_ms.p95");  // the tighter of the two targets
    CHECK(h->headroom == Approx(f - 1));
    REQUIRE(h->band.known());
    // A fleet whose replicas are busy half the time carries load: only the margin can speak.
    const auto note = analysis::slo_headroom_note(rs, alone, 12, 0.5);
    INFO("SLO " << f << " x the unloaded p95 TTFT " << unloaded << " ms; band ±" << h->band.typical << ": "
                << note.value_or("(none)"));
    if (f - 1 <= h->band.typical) {
      REQUIRE(note);
      CHECK_THAT(*note, Catch::Contains("ttft_ms.p95 <= ") && Catch::Contains("one request takes alone") &&
                            Catch::Contains("typical error") && Catch::Contains("12 replica(s), each busy 50 %") &&
                            Catch::Contains("queueing noise"));
    } else {
      CHECK(!note);  // room to queue: the fleet is the load's
    }
    // Several replicas each busy no more than the 5 % of requests a p95 lets miss: the fleet was grown until
    // collisions are rarer than that, whatever the margin; one replica, or a busier fleet, says nothing of it.
    const auto idle = analysis::slo_headroom_note(rs, alone, 12, 0.03);
    REQUIRE(idle);
    CHECK_THAT(*idle, Catch::Contains("each busy 3.0 % of the time, no more than the 5.0 % of requests the p95 lets miss"));
    CHECK(analysis::slo_headroom_note(rs, alone, 1, 0.03).has_value() == (f - 1 <= h->band.typical));
    CHECK(analysis::slo_headroom_note(rs, alone, 12, 0.06).has_value() == (f - 1 <= h->band.typical));
  }
  // A target missed alone is unloaded_slo_miss's case, not this one.
  Json missed = j;
  missed["slo"] = {{"ttft_ms", {{"p95", unloaded * 0.5}}}};
  CHECK(!analysis::tightest_slo_headroom(test::resolve_json(missed), alone));

  // Sizing says it beside the fleet, in the row that capacity, compare, report, search and Python print.
  analysis::RowOptions ro;
  ro.capacity = true;
  ro.capacity_options = o;
  Json tight = j;
  tight["slo"] = {{"ttft_ms", {{"p95", unloaded * 1.02}}}};
  tight["cost"] = {{"target_qps", 0.05}};
  const auto row = analysis::evaluate_row(test::resolve_json(tight), ro);
  REQUIRE(row.capacity);
  REQUIRE(row.capacity->found);
  CHECK_THAT(row.slo_headroom_note, Catch::Contains("queueing noise"));
  CHECK_THAT(analysis::to_json(row)["slo_headroom_note"].get<std::string>(), Catch::Contains("queueing noise"));
  Json loose = j;
  loose["cost"] = {{"target_qps", 0.05}};
  CHECK(analysis::evaluate_row(test::resolve_json(loose), ro).slo_headroom_note.empty());
}

TEST_CASE("the knee: a fleet that falls faster than the SLO loosens is the SLO's, not the load's", "[analysis][sizing]") {
  // The bill's elasticity to the SLO: loosening every latency target by the tightest one's headroom h must shrink
  // the fleet by more than h for the SLO to sit on the knee.
  CHECK(analysis::on_knee({1.1, 30, 0, 50}));    // 40 % fewer for 10 % looser
  CHECK(!analysis::on_knee({1.1, 46, 0, 50}));   // 8 % fewer for 10 % looser: the load's fleet
  CHECK(!analysis::on_knee({1.3, 8, 0, 10}));    // 20 % for 30 %
  CHECK(!analysis::on_knee({1.1, 1, 0, 1}));     // one replica cannot shrink
  CHECK(!analysis::on_knee({1.0, 10, 0, 20}));   // no looser SLO
  spec::Scenario sc = test::resolve_json(test::chat_json()).scenario;
  analysis::loosen_slo(sc, 1.5);
  for (const auto& t : sc.slo.targets) CHECK((t.max_ms == Approx(3000) || t.max_ms == Approx(150)));
}

TEST_CASE("an SLO on the knee is said with what a slightly looser SLO costs, on several cards and models",
          "[analysis][sizing]") {
  // Issue 29's leftover: at 1.1 x the unloaded TTFT an H100 sized 50 replicas for 4 req/s, its margin just outside
  // the model's typical error and each replica just busier than the 5 % a p95 lets miss, and said nothing. The knee
  // (slo_headroom.hpp) is measured, not bounded: the same sizing with the targets 1 + h looser.
  const auto o = sizing_quick();
  analysis::RowOptions ro;
  ro.capacity = true;
  ro.capacity_options = o;
  struct Case {
    const char* gpu;
    const char* model;
    const char* weights;
  };
  for (const Case c : {Case{"h100-80gb-sxm", "llama-3.1-8b", "fp16"}, Case{"a100-80gb-sxm", "qwen2.5-14b", "fp16"},
                       Case{"l40s-48gb", "llama-3.1-8b", "fp8"}}) {
    Json j = test::chat_json(c.gpu, c.model, c.weights);
    const metrics::Summary alone = analysis::unloaded_run(test::resolve_json(j), o, false);
    REQUIRE(alone.completed_requests > 0);
    for (const double f : {1.1, 3.0}) {
      Json t = j;
      t["slo"] = {{"ttft_ms", {{"p95", std::round(alone.ttft_ms.p95 * f * 10) / 10}}}, {"tpot_ms", {{"p95", 1000}}}};
      t["cost"] = {{"target_qps", 4}};
      const auto row = analysis::evaluate_row(test::resolve_json(t), ro);
      INFO(c.gpu << " " << c.model << " " << c.weights << ", SLO " << f << " x the unloaded TTFT p95 "
                 << alone.ttft_ms.p95 << " ms: " << row.serving_replicas.value_or(-1) << " serving; "
                 << row.slo_headroom_note);
      REQUIRE(row.meets_slo());
      REQUIRE(row.serving_replicas);
      if (f < 2) {
        // On the knee: the looser sizing is run and shrinks the fleet by more than the SLO moved; the note says so
        // with the looser fleet and its bill.
        // When no fleet up to the sizing limit met the SLO as set (row.reason), the looser one is compared with that
        // limit and the note says so.
        REQUIRE(row.looser_slo);
        const auto& l = *row.looser_slo;
        CHECK(l.from_met == row.reason.empty());
        CHECK(l.from_serving == (l.from_met ? *row.serving_replicas : l.from_serving));
        CHECK(l.from_serving > 1);
        CHECK(l.factor == Approx(t["slo"]["ttft_ms"]["p95"].get<double>() / alone.ttft_ms.p95));
        CHECK(l.serving < l.from_serving);
        CHECK(analysis::on_knee(l));
        CHECK_THAT(row.slo_headroom_note, Catch::Contains("sits on the knee") &&
                                              Catch::Contains(std::to_string(l.serving) + " replica(s) meet it"));
        if (l.from_met) {
          CHECK(l.monthly_cost < *row.fixed_monthly_cost);
          CHECK_THAT(row.slo_headroom_note, Catch::Contains("USD/month instead of"));
        } else {
          CHECK_THAT(row.slo_headroom_note, Catch::Contains("is not met by up to " + std::to_string(l.from_serving)));
        }
        const Json js = analysis::to_json(row);
        CHECK(js["looser_slo"]["serving_replicas"] == row.looser_slo->serving);
      } else {
        // Room to queue: the fleet is the load's; no note, and no looser sizing run (h >= 1).
        CHECK(row.slo_headroom_note.empty());
        CHECK(!row.looser_slo);
        CHECK(analysis::to_json(row)["looser_slo"]["serving_replicas"].is_null());
      }
    }
  }
}
