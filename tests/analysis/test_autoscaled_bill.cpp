// An autoscaled deployment's bill in sizing (issue 29): capacity/compare/report size the fleet at the peak with the
// autoscaler off, then bill what the autoscaler would run — the day simulated with it scaling up to the fleet sized —
// as replica-hours × the price; search, which bounds fixed fleets, bills those and says so. And a calibrated
// profile file is read once, not once per simulation.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "llmsim/analysis/autoscaled_bill.hpp"
#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/compare.hpp"
#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/analysis/row.hpp"
#include "llmsim/core/number.hpp"
#include "llmsim/engine/autoscaler.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "scenarios.hpp"

using namespace llmsim;

namespace {

// A day of chat on RTX 4090s that needs a few replicas at its 15:00 peak (1.9 × the base) and one at night.
Json autoscaled_day(int spares = 0) {
  Json j = test::chat_json("rtx4090-24gb");
  j["workload"]["arrival"]["rate"] = 4.0;
  j["workload"]["daily_profile"] = {0.3, 0.2, 0.2, 0.2, 0.2, 0.3, 0.5, 0.8, 1.2, 1.5, 1.6, 1.7,
                                    1.7, 1.7, 1.8, 1.9, 1.8, 1.5, 1.2, 1.0, 0.9, 0.7, 0.5, 0.4};
  j["workload"].erase("num_requests");
  j["autoscaler"] = {{"min_replicas", 1}, {"max_replicas", 12}, {"queue_per_replica", 16}, {"interval_s", 15},
                     {"scale_down_delay_s", 300}};
  j["cost"] = {{"ops_overhead_fraction", 0.1}, {"storage_per_month", 50.0}, {"network_gbps", 10}};
  if (spares > 0) j["failures"] = {{"spares", spares}};
  return j;
}

analysis::RowOptions sized() {
  analysis::RowOptions o;
  o.capacity = true;
  o.capacity_options.replications = 1;
  o.capacity_options.num_requests = 300;
  o.capacity_options.warmup_requests = 30;
  return o;
}

}  // namespace

TEST_CASE("an autoscaled scenario's bill is the replica-hours its simulated day ran x the price", "[analysis][sizing]") {
  const auto rs = test::resolve_json(autoscaled_day());
  const auto row = analysis::evaluate_row(rs, sized());
  REQUIRE(row.capacity);
  REQUIRE(row.capacity->found);
  REQUIRE(row.serving_replicas);
  const int serving = *row.serving_replicas;
  INFO("serving " << serving << ", basis: " << row.bill_basis);
  REQUIRE(serving >= 2);  // else there is nothing to scale
  REQUIRE(row.autoscaled_bill);
  const auto& bill = *row.autoscaled_bill;
  CHECK(bill.max_replicas == serving);
  CHECK(bill.min_replicas == 1);

  // The run billed, simulated here on its own: the whole day with the autoscaler capped at the fleet sized.
  const auto day = analysis::autoscaled_bill_scenario(rs, serving);
  REQUIRE(day.scenario.autoscaler->max_replicas == serving);
  const auto sum = analysis::evaluate(day).summary;
  REQUIRE(sum.fleet.autoscaled);
  // Its replica-hours, from the hour table, and the simulated period (the day and its drain).
  double replica_hours = 0;
  for (const auto& h : sum.fleet.hours) replica_hours += h.replicas_billed * (h.end_s - h.start_s) / 3600;
  const double period_h = sum.fleet.hours.back().end_s / 3600;
  CHECK(period_h == Approx(24.0).margin(1.0));
  CHECK(replica_hours == Approx(sum.fleet.replica_hours).epsilon(1e-6));
  CHECK(bill.replica_hours == Approx(replica_hours).epsilon(1e-6));
  CHECK(sum.fleet.peak_replicas <= serving);
  // The bill: replica-hours × $2/GPU-hour (one GPU a replica) × 1.1 ops overhead, scaled to 730 h, + $50 storage.
  const double expected = replica_hours * 2.0 * 1.1 * 730 / period_h + 50.0;
  CHECK(*row.monthly_cost == Approx(expected).epsilon(1e-6));
  CHECK(bill.monthly_cost == Approx(expected).epsilon(1e-6));
  // The autoscaler ran fewer replicas off the peak than the peak's fleet held all month.
  REQUIRE(row.fixed_monthly_cost);
  CHECK(*row.fixed_monthly_cost == Approx(analysis::units_hourly(rs, *row.replicas_needed) * 730));
  CHECK(*row.monthly_cost < 0.9 * *row.fixed_monthly_cost);
  // Per million SLO-meeting output tokens: the same bill over the tokens that run delivered within the SLO.
  REQUIRE(row.cost_per_mtok_output_at_target);
  const double good = sum.goodput_output_tps * sum.duration_s;
  CHECK(*row.cost_per_mtok_output_at_target == Approx(expected * period_h / 730 / good * 1e6).epsilon(1e-6));
  // Said in words, and in the row's JSON.
  CHECK(row.bill_basis.find("autoscaled") == 0);
  CHECK(row.bill_basis.find("replica-hours") != std::string::npos);
  const Json j = analysis::to_json(row);
  CHECK(j["autoscaled_bill"]["replica_hours"].get<double>() == Approx(replica_hours).epsilon(1e-6));
  CHECK(j["fixed_monthly_cost"].get<double>() == Approx(*row.fixed_monthly_cost));
}

TEST_CASE("an autoscaled bill holds its hot spares all the time", "[analysis][sizing]") {
  const auto without = analysis::evaluate_row(test::resolve_json(autoscaled_day(0)), sized());
  const auto with = analysis::evaluate_row(test::resolve_json(autoscaled_day(1)), sized());
  REQUIRE(without.autoscaled_bill);
  REQUIRE(with.autoscaled_bill);
  REQUIRE(*with.serving_replicas == *without.serving_replicas);
  CHECK(with.autoscaled_bill->spares == 1);
  // One more replica billed for the whole period (the spare idles in standby; the runs are otherwise the same).
  CHECK(with.autoscaled_bill->replica_hours ==
        Approx(without.autoscaled_bill->replica_hours + with.autoscaled_bill->period_hours).epsilon(0.01));
  CHECK(with.bill_basis.find("1 hot spare") != std::string::npos);
}

TEST_CASE("a bill that is not the autoscaled run says what it assumes", "[analysis][sizing]") {
  // search prices fixed fleets (its bounds and screening do): the row says the autoscaler is not billed.
  auto o = sized();
  o.bill_autoscaler = false;
  const auto rs = test::resolve_json(autoscaled_day());
  const auto row = analysis::evaluate_row(rs, o);
  REQUIRE(row.monthly_cost);
  CHECK_FALSE(row.autoscaled_bill);
  CHECK(*row.monthly_cost == *row.fixed_monthly_cost);
  CHECK(row.bill_basis.find("fixed:") == 0);
  CHECK(row.bill_basis.find("autoscaler") != std::string::npos);
  // A fixed deployment: the fleet held all month.
  const auto fixed = analysis::evaluate_row(test::resolve_json(test::chat_json()), sized());
  CHECK_FALSE(fixed.autoscaled_bill);
  CHECK(fixed.bill_basis.find("held all month") != std::string::npos);
  CHECK(analysis::to_json(fixed)["autoscaled_bill"]["monthly_cost"].is_null());
}

TEST_CASE("a calibrated profile file is read once for many simulations, and again when it changes", "[analysis][sizing]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("llmsim_profile_once_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "a100.json";
  fs::copy_file(fs::path(LLMSIM_DATA_DIR) / "profiles" / "a100-80gb-sxm-public.json", file,
                fs::copy_options::overwrite_existing);
  Json j = test::chat_json();
  j["hardware"]["gpu_profile"] = file.string();
  const auto before = perf::profile_file_reads();
  // A capacity search (dozens of simulations) and 20 more rows resolved and simulated on their own, as a sweep does.
  analysis::CapacityOptions o;
  o.replications = 1;
  o.num_requests = 100;
  o.warmup_requests = 10;
  REQUIRE(analysis::find_capacity(test::resolve_json(j), o).found);
  for (int k = 0; k < 20; ++k) {
    j["workload"]["arrival"]["rate"] = 1.0 + k * 0.1;
    REQUIRE(analysis::evaluate(test::resolve_json(j)).summary.fits);
  }
  CHECK(perf::profile_file_reads() - before == 1);
  // An edited file (its size changes) is read again: a stale profile is never used.
  { std::ofstream(file, std::ios::app) << "\n\n"; }
  REQUIRE(analysis::evaluate(test::resolve_json(j)).summary.fits);
  CHECK(perf::profile_file_reads() - before == 2);
  fs::remove_all(dir);
}

TEST_CASE("an autoscaled day that misses the SLO is said by the row, and the option never wins", "[analysis][sizing]") {
  // The same day with an autoscaler that waits for 5,000 queued requests a replica before adding one: the fleet
  // sized at the peak meets the SLO held fixed, but the day the bill simulates queues for hours (scale-up lag).
  Json lag = autoscaled_day();
  lag["autoscaler"]["queue_per_replica"] = 5000;
  lag["autoscaler"]["interval_s"] = 600;
  const auto rs = test::resolve_json(lag);
  const auto row = analysis::evaluate_row(rs, sized());
  REQUIRE(row.capacity);
  REQUIRE(row.capacity->found);
  REQUIRE(row.autoscaled_bill);
  INFO("basis: " << row.bill_basis);
  REQUIRE_FALSE(row.autoscaled_bill->slo_met);
  CHECK_FALSE(row.autoscaled_bill->reason.empty());
  CHECK_FALSE(row.meets_slo());
  CHECK(row.reason.find("autoscaled day billed misses the SLO") != std::string::npos);
  // The lag is the cause, and the words say so because the same day held at the fleet sized meets it.
  CHECK(row.autoscaled_bill->miss_cause.find("adds replicas after the load has risen") != std::string::npos);
  CHECK(row.reason.find(row.autoscaled_bill->miss_cause) != std::string::npos);
  const Json j = analysis::to_json(row);
  CHECK(j["meets_slo"] == false);
  CHECK(j["autoscaled_bill"]["slo_met"] == false);
  CHECK(j["autoscaled_bill"]["reason"] == row.autoscaled_bill->reason);
  // The prompt autoscaler's day meets it: the row does, with no reason.
  const auto ok = analysis::evaluate_row(test::resolve_json(autoscaled_day()), sized());
  REQUIRE(ok.autoscaled_bill);
  CHECK(ok.autoscaled_bill->slo_met);
  CHECK(ok.meets_slo());
  CHECK(analysis::to_json(ok)["autoscaled_bill"]["reason"] == "");
  CHECK(analysis::to_json(ok)["autoscaled_bill"]["miss_cause"] == "");
  CHECK(j["autoscaled_bill"]["miss_cause"] == row.autoscaled_bill->miss_cause);
  // compare: the lagging option alone has no winner (its billed day fails), though its fixed fleet would pass.
  analysis::CompareOptions co;
  co.capacity = sized().capacity_options;
  const auto c = analysis::compare(rs.scenario, co);
  REQUIRE(c.rows.size() == 1);
  CHECK_FALSE(c.rows[0].meets_slo());
  CHECK_FALSE(c.winner.has_value());
}

TEST_CASE("one cold start: simulate, capacity and the autoscaler quote the same figure, whatever sets it",
          "[analysis][sizing][cold_start]") {
  // The last session's `capacity` said "cold start 128 s" (the weights alone, from the search's run with the
  // autoscaler off) where `simulate` said "starts of 188 s" (weights + the engine start). One rule
  // (engine::cold_start_s) for every output, on the user's deployment.
  Json base = test::chat_json("rtx4090-24gb");
  base["workload"]["num_requests"] = 300;
  base["workload"]["warmup_requests"] = 30;
  base["workload"]["arrival"]["rate"] = 2.0;
  const auto plain = test::resolve_json(base);
  const double weights_s = static_cast<double>(memory::weight_bytes(plain.model, plain.quant.weights)) * 8 / 1e9;
  struct Case {
    Json autoscaler;
    double expected_s;
  };
  const Json as = {{"min_replicas", 1}, {"max_replicas", 3}, {"queue_per_replica", 16}, {"interval_s", 15}};
  Json own_link = as, given = as;
  own_link["load_gbps"] = 25.0;
  own_link["engine_start_s"] = 30.0;
  given["scale_up_delay_s"] = 5.0;
  for (const auto& c : {Case{nullptr, weights_s + 60}, Case{as, weights_s + 60}, Case{own_link, weights_s / 25 + 30},
                        Case{given, 5.0}}) {
    Json j = base;
    if (!c.autoscaler.is_null()) j["autoscaler"] = c.autoscaler;
    const auto rs = test::resolve_json(j);
    INFO("autoscaler " << c.autoscaler.dump());
    CHECK(engine::cold_start_s(rs) == Approx(c.expected_s));
    const auto sim = analysis::evaluate(rs).summary;
    CHECK(sim.cost.cold_start_s == Approx(c.expected_s));
    if (!c.autoscaler.is_null()) CHECK(sim.fleet.scale_up_delay_s == Approx(c.expected_s));
    const auto row = analysis::evaluate_row(rs, sized());
    REQUIRE(row.summary);
    CHECK(row.summary->cost.cold_start_s == Approx(c.expected_s));
    CHECK(analysis::to_json(row)["cold_start_s"].get<double>() == Approx(c.expected_s));
  }
}

TEST_CASE("an autoscaled bill's words give its hours at the precision their size needs", "[analysis][sizing]") {
  // The class: a zero presented as a result. A short autoscaled run (a few hundred requests, minutes of simulated
  // time) billed thousands a month over "0.0 replica-hours billed" and "simulated for 0.03 h"; the hours are now
  // printed with the digits they need, as simulate's fleet line prints them.
  Json j = test::chat_json("rtx4090-24gb");
  j["workload"]["arrival"]["rate"] = 4.0;
  j["workload"]["num_requests"] = 200;
  j["autoscaler"] = {{"min_replicas", 1}, {"max_replicas", 3}, {"queue_per_replica", 4}};
  j["failures"] = {{"spares", 1}};
  const auto row = analysis::evaluate_row(test::resolve_json(j), sized());
  REQUIRE(row.autoscaled_bill);
  const auto& b = *row.autoscaled_bill;
  REQUIRE(b.replica_hours > 0);
  REQUIRE(b.replica_hours < 0.1);
  INFO(row.bill_basis);
  CHECK(row.bill_basis.find(" 0.0 replica-hours") == std::string::npos);
  CHECK(row.bill_basis.find(format_fixed(b.replica_hours, 4) + " replica-hours billed") != std::string::npos);
  CHECK(row.bill_basis.find("simulated for " + format_fixed(b.period_hours, 4) + " h") != std::string::npos);
}

TEST_CASE("an autoscaled day's miss is blamed on the autoscaler only when the fleet held fixed meets the same day",
          "[analysis][sizing]") {
  // Failures that take replicas down for half an hour at a time: the day misses the SLO with or without the
  // autoscaler. The words once blamed the scale-up lag whatever the cause ("the fleet held fixed at the peak meets
  // it"); the held-fixed day is simulated now, and says otherwise.
  for (const bool can_scale : {true, false}) {
    Json j = autoscaled_day();
    j["failures"] = {{"mtbf_h", 1.0}, {"mttr_h", 0.5}};
    if (!can_scale) j["autoscaler"]["min_replicas"] = 12;  // min(12, serving) = serving: it never scales
    const auto row = analysis::evaluate_row(test::resolve_json(j), sized());
    REQUIRE(row.autoscaled_bill);
    INFO("can scale " << can_scale << ", basis: " << row.bill_basis << "; cause: " << row.autoscaled_bill->miss_cause);
    REQUIRE_FALSE(row.autoscaled_bill->slo_met);
    const std::string& cause = row.autoscaled_bill->miss_cause;
    CHECK(cause.find("adds replicas after the load has risen") == std::string::npos);
    CHECK(cause.find(can_scale ? "misses it too" : "never scaled") != std::string::npos);
    CHECK(cause.find("failures") != std::string::npos);
    CHECK(row.reason.find(cause) != std::string::npos);
  }
}
