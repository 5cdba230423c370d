// Timed events a run schedules whatever its load are bounded before it starts (issue 29: every loop needs a bound).
// 20 requests at 1e-6 req/s span 2e7 s: an autoscaler evaluating every 10 ms there was 2e9 evaluations, a simulate
// that never ended; 300 requests there with 5 replicas failing every 18 s, tens of millions of failures (attack8).
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/scenario.hpp"
#include "scenario_error.hpp"

using namespace llmsim;
using namespace llmsim::spec;

namespace {

Json sparse_run(double rate) {
  return {{"model", "llama-3.1-8b"},
          {"hardware", {{"gpu", "rtx4090-24gb"}}},
          {"workload", {{"arrival", {{"process", "poisson"}, {"rate", rate}}}, {"num_requests", 20}}}};
}

}  // namespace

TEST_CASE("autoscaler evaluations and failures a run schedules are bounded, naming the field", "[spec][timed_events]") {
  Json scaled = sparse_run(1e-6);
  scaled["autoscaler"] = {{"min_replicas", 1}, {"max_replicas", 3}, {"interval_s", 0.01}, {"queue_per_replica", 16}};
  const std::string e1 = test::scenario_error_of(scaled);
  INFO(e1);
  CHECK(e1.find("autoscaler.interval_s") == 0);
  CHECK(e1.find("evaluations") != std::string::npos);

  Json failing = sparse_run(1e-7);  // 2e8 s: ~5.6e7 failures of 5 replicas every 18 s
  failing["hardware"]["replicas"] = 3;
  failing["failures"] = {{"mtbf_h", 0.005}, {"mttr_h", 0.002}, {"spares", 2}};
  const std::string e2 = test::scenario_error_of(failing);
  INFO(e2);
  CHECK(e2.find("failures.mtbf_h") == 0);
  CHECK(e2.find("5 replicas") != std::string::npos);  // 3 serving + 2 spares fail

  // The same mechanisms over a run of ordinary length, or cut by a horizon, are accepted.
  for (Json ok : {scaled, failing}) {
    ok["workload"]["arrival"]["rate"] = 4.0;
    CHECK(test::scenario_error_of(ok).empty());
  }
  scaled["workload"]["horizon_s"] = 86400;
  failing["workload"]["horizon_s"] = 86400;
  CHECK(test::scenario_error_of(scaled).empty());
  CHECK(test::scenario_error_of(failing).empty());
}

TEST_CASE("a month of an hourly-failing fleet behind a 1 s autoscaler is well within the bounds", "[spec][timed_events]") {
  Json month = sparse_run(1.0);
  month["workload"].erase("num_requests");
  month["workload"]["arrival"]["rate"] = 2.0;
  month["workload"]["daily_profile"] = Json::array();
  for (int h = 0; h < 24; ++h) month["workload"]["daily_profile"].push_back(h < 8 ? 0.2 : 1.5);
  month["workload"]["days"] = 30;
  month["autoscaler"] = {{"min_replicas", 1}, {"max_replicas", 100}, {"interval_s", 1}, {"queue_per_replica", 16}};  // 2.6e6 evaluations
  month["failures"] = {{"mtbf_h", 1}, {"mttr_h", 0.5}, {"spares", 4}};  // ~75,000 failures
  CHECK(test::scenario_error_of(month).empty());
}
