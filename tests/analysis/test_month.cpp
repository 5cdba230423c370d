// A month, not a moment: an autoscaled fleet under a varying load, its cold starts, its replica-hours and its
// bill, against a fixed fleet (issue 14).
#include <catch2/catch.hpp>

#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/autoscaler.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"

using namespace llmsim;

namespace {

spec::ResolvedScenario make(const Json& j) {
  return spec::resolve(spec::scenario_from_json(JsonView(j, "")), spec::Catalog::builtin());
}

// One RTX 4090 serves about 13 req/s of these (its saturation throughput); the middle hour offers 30 req/s, so
// a fleet needs three or four replicas then and one before and after.
Json ramp(const Json& autoscaler, int replicas = 1) {
  Json j = {{"model", "llama-3.1-8b"},
            {"hardware", {{"gpu", "rtx4090-24gb"}, {"replicas", replicas}, {"price_per_gpu_hour", 0.5}}},
            {"engine", {{"max_model_len", 4096}}},
            {"workload",
             {{"arrival", {{"process", "piecewise"}, {"rates", {{0, 2}, {3600, 30}, {7200, 2}, {10800, 0}}}}},
              {"input_tokens", {{"dist", "fixed"}, {"value", 512}}},
              {"output_tokens", {{"dist", "fixed"}, {"value", 64}}},
              {"num_requests", 1'000'000'000},
              {"warmup_requests", 0}}},
            {"slo", {{"ttft_ms", {{"p95", 2000}}}, {"tpot_ms", {{"p95", 100}}}}}};
  if (!autoscaler.is_null()) j["autoscaler"] = autoscaler;
  return j;
}

Json scaler(double delay_s) {
  return {{"min_replicas", 1}, {"max_replicas", 4}, {"queue_per_replica", 8}, {"interval_s", 15},
          {"scale_up_delay_s", delay_s}, {"scale_down_delay_s", 300}};
}

}  // namespace

TEST_CASE("an autoscaled fleet bills fewer replica-hours than a fixed max fleet; its cold start shows as SLO "
          "misses in the ramp hour", "[analysis][month]") {
  const auto fixed = analysis::evaluate(make(ramp(nullptr, 4))).summary;
  const auto cold = analysis::evaluate(make(ramp(scaler(600)))).summary;
  const auto warm = analysis::evaluate(make(ramp(scaler(0)))).summary;
  for (const auto* s : {&fixed, &cold, &warm}) {
    REQUIRE(s->complete);
    REQUIRE(s->fleet.hours.size() >= 3);
  }
  // Fixed: 4 replicas × the 3-hour run; every hour meets the SLO.
  CHECK_FALSE(fixed.fleet.autoscaled);
  CHECK(fixed.fleet.replica_hours == Approx(4 * fixed.fleet.hours.back().end_s / 3600).epsilon(1e-9));
  CHECK(fixed.fleet.hours[1].slo_attainment() > 0.99);
  // Autoscaled: one replica in the quiet hours, three to four in the busy one.
  CHECK(cold.fleet.autoscaled);
  CHECK(cold.fleet.hours[0].replicas_billed == Approx(1.0));
  CHECK(cold.fleet.hours[1].replicas_billed > 3);
  CHECK(cold.fleet.hours[2].replicas_billed < 2);
  CHECK(cold.fleet.replica_hours < 0.6 * fixed.fleet.replica_hours);
  // A starting replica is paid for and serves nothing: billed − ready = the cold starts (plus short drains).
  CHECK(cold.fleet.scale_ups >= 2);
  const double starting_h = cold.fleet.replica_hours - cold.fleet.ready_replica_hours;
  CHECK(starting_h >= cold.fleet.scale_ups * 600.0 / 3600 - 1e-6);
  CHECK(starting_h < cold.fleet.scale_ups * 600.0 / 3600 + 0.1);
  // The cold start costs SLO attainment in the ramp hour only; with an instant start it nearly vanishes.
  INFO("ramp hour attainment: cold " << cold.fleet.hours[1].slo_attainment() << ", warm "
                                     << warm.fleet.hours[1].slo_attainment());
  CHECK(cold.fleet.hours[1].slo_attainment() < 0.95);
  CHECK(warm.fleet.hours[1].slo_attainment() > cold.fleet.hours[1].slo_attainment() + 0.1);
  CHECK(cold.fleet.hours[0].slo_attainment() > 0.99);
  CHECK(cold.fleet.hours[2].slo_attainment() > 0.99);
  // Every request is still served; the per-hour table adds up.
  std::int64_t arrivals = 0, completed = 0;
  for (const auto& h : cold.fleet.hours) {
    arrivals += h.arrivals;
    completed += h.completed;
  }
  CHECK(completed == cold.completed_requests);
  CHECK(arrivals == cold.completed_requests + cold.rejected_requests);
  // The bill: period_cost of the replica-hours, and per Mtok of SLO-meeting output tokens.
  const auto& sc = make(ramp(scaler(600))).scenario;
  CHECK(cold.cost.period == Approx(analysis::period_cost(0.5, cold.fleet.replica_hours, cold.cost.period_hours, sc.cost)));
  CHECK(fixed.cost.period == Approx(0.5 * fixed.fleet.replica_hours));
  CHECK(cold.cost.period < fixed.cost.period);
  CHECK(cold.cost.period_monthly == Approx(cold.cost.period * 730 / cold.cost.period_hours));
  CHECK(cold.cost.period_per_mtok_output_slo ==
        Approx(cold.cost.period / (cold.goodput_output_tps * cold.duration_s) * 1e6));
  CHECK(cold.cost.period_per_mtok_output_slo < fixed.cost.period_per_mtok_output_slo);
  // The headline of an autoscaled run is that bill, not hardware.replicas (1) held all the time; a fixed fleet's
  // is its replicas held all the time.
  CHECK(cold.cost.per_hour == Approx(cold.cost.period / cold.cost.period_hours));
  CHECK(cold.cost.per_hour > 1.2 * 0.5);  // more than one replica on average
  CHECK(cold.cost.monthly == Approx(cold.cost.period_monthly));
  CHECK(cold.cost.per_mtok_output_slo == Approx(cold.cost.period_per_mtok_output_slo));
  CHECK(cold.cost.per_mtok_total_slo == Approx(cold.cost.period / (cold.goodput_total_tps * cold.duration_s) * 1e6));
  CHECK(fixed.cost.per_hour == Approx(4 * 0.5));
  CHECK(fixed.cost.monthly == Approx(4 * 0.5 * 730));
}

TEST_CASE("the default scale-up delay is the cold start: weights over the load link plus the engine start",
          "[analysis][month]") {
  Json a = scaler(0);
  a.erase("scale_up_delay_s");
  const auto rs = make(ramp(a));
  const double bytes = static_cast<double>(memory::weight_bytes(rs.model, rs.quant.weights));
  // The guides' example: 80 GB over 1 Gbps = 640 s; llama-3.1-8b's ~16 GB over the default 1 Gbps ≈ 128 s, + 60 s.
  CHECK(engine::weight_load_s(80e9, 1.0) == Approx(640));
  CHECK(engine::scale_up_delay_s(rs) == Approx(bytes * 8 / 1e9 + 60));
  a["load_gbps"] = 25;  // a local NVMe-class read
  a["engine_start_s"] = 30;
  CHECK(engine::scale_up_delay_s(make(ramp(a))) == Approx(bytes * 8 / 25e9 + 30));
  CHECK(engine::weight_load_s(bytes, 1.0) == Approx(bytes * 8 / 1e9));
}

TEST_CASE("bad autoscaler settings are ConfigErrors naming the field", "[analysis][month]") {
  Json a = scaler(600);
  a["min_replicas"] = 5;
  CHECK_THROWS_WITH(make(ramp(a)), Catch::Contains("autoscaler.min_replicas") && Catch::Contains("max_replicas (4)"));
  a = scaler(-1);
  CHECK_THROWS_WITH(make(ramp(a)), Catch::Contains("autoscaler.scale_up_delay_s") && Catch::Contains("-1"));
  a = scaler(600);
  a["scale_down_delay_s"] = -5;
  CHECK_THROWS_WITH(make(ramp(a)), Catch::Contains("autoscaler.scale_down_delay_s"));
  a = scaler(600);
  a["target_utilization"] = 0.5;  // two triggers
  CHECK_THROWS_WITH(make(ramp(a)), Catch::Contains("exactly one trigger"));
  a = scaler(600);
  a["max_replica"] = 3;  // misspelt
  CHECK_THROWS_WITH(make(ramp(a)), Catch::Contains("max_replica"));
}

TEST_CASE("a fleet scaled to zero queues requests until a replica is ready", "[analysis][month]") {
  Json a = scaler(120);
  a["min_replicas"] = 0;
  Json j = ramp(a);
  j["workload"]["arrival"] = {{"process", "piecewise"}, {"rates", {{0, 0.5}, {600, 0}}}};
  const auto s = analysis::evaluate(make(j)).summary;
  REQUIRE(s.complete);
  CHECK(s.completed_requests > 200);
  // The first requests waited for a cold start: TTFT max ≥ 120 s minus the first evaluation's wait.
  CHECK(s.ttft_ms.max > 100'000);
  CHECK(s.fleet.scale_ups >= 1);
  // Billed from the decision to start, ready only after the cold start.
  CHECK(s.fleet.replica_hours - s.fleet.ready_replica_hours >= s.fleet.scale_ups * 120.0 / 3600 - 1e-6);
}

TEST_CASE("timed-out requests are not in the tokens the cost is divided by", "[analysis][month]") {
  Json j = {{"model", "llama-3.1-8b"},
            {"hardware", {{"gpu", "a100-80gb-sxm"}, {"price_per_gpu_hour", 2.0}}},
            {"engine", {{"max_model_len", 4096}}},
            {"workload",
             {{"arrival", {{"process", "poisson"}, {"rate", 20}}},  // ~1.5 x what one A100 serves
              {"input_tokens", {{"dist", "fixed"}, {"value", 512}}},
              {"output_tokens", {{"dist", "fixed"}, {"value", 256}}},
              {"num_requests", 800},
              {"warmup_requests", 0},
              {"timeout_s", 20}}},
            {"slo", {{"ttft_ms", {{"p95", 30000}}}}}};
  const auto s = analysis::evaluate(make(j)).summary;
  REQUIRE(s.timed_out_requests > 0);
  REQUIRE(s.completed_requests > 0);
  // Every completed request meets the loose TTFT target: the good tokens are exactly the completed ones'.
  CHECK(s.goodput_output_tps * s.duration_s == Approx(256.0 * s.completed_requests));
  CHECK(s.cost.per_mtok_output_slo == Approx(2.0 / (256.0 * s.completed_requests / s.duration_s * 3600) * 1e6));
  CHECK(s.cost.period_per_mtok_output_slo == Approx(s.cost.period / (256.0 * s.completed_requests) * 1e6));
}
