// Closed-loop clients that start apart (workload.arrival.start_offsets_s): parallel `vllm bench serve` clients each
// send their C requests at their own start, not all at t = 0. What that changes is the start-up wave: every prompt
// of every client queued at once for prefill.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "llmsim/core/error.hpp"
#include "llmsim/engine/simulator.hpp"
#include "engine_test_util.hpp"

using namespace llmsim;
using engine::SimulationOptions;
using engine::simulate;
using test::make;
using test::scenario;

namespace {

/// `users` closed-loop users of 4000-token prompts and 50-token replies on one A100, split into clients that start
/// at `offsets` (none: all at t = 0).
engine::SimulationResult staggered_run(int users, const std::vector<double>& offsets) {
  Json arrival = {{"process", "closed"}, {"concurrency", users}};
  if (!offsets.empty()) arrival["start_offsets_s"] = offsets;
  Json w = {{"arrival", arrival},
            {"input_tokens", {{"dist", "fixed"}, {"value", 4000}}},
            {"output_tokens", {{"dist", "fixed"}, {"value", 50}}},
            {"num_requests", 10 * users}, {"warmup_requests", 0}};
  SimulationOptions opt;
  opt.record_requests = true;
  return simulate(make(scenario(w)), opt);
}

/// The longest time to first token of the requests sent before `until_s`.
double longest_early_ttft(const engine::SimulationResult& r, double until_s) {
  double worst = 0;
  for (const auto& q : r.requests)
    if (q.arrival_s < until_s) worst = std::max(worst, q.first_token_s - q.arrival_s);
  return worst;
}

}  // namespace

TEST_CASE("closed-loop clients start at their offsets: client g's users send nothing before start_offsets_s[g]") {
  // 10 users in 4 clients: users u·4/10 -> clients of 3, 2, 3, 2 users (0,1,2 | 3,4 | 5,6,7 | 8,9).
  const auto r = staggered_run(10, {0.0, 2.0, 4.0, 6.0});
  REQUIRE(r.summary.completed_requests == 100);
  int at0 = 0, at2 = 0, at4 = 0, at6 = 0;
  double first_after0 = 1e9;
  for (const auto& q : r.requests) {
    at0 += q.arrival_s == 0.0;
    at2 += q.arrival_s == 2.0;
    at4 += q.arrival_s == 4.0;
    at6 += q.arrival_s == 6.0;
    if (q.arrival_s > 0) first_after0 = std::min(first_after0, q.arrival_s);
  }
  CHECK(at0 == 3);
  CHECK(at2 >= 2);
  CHECK(at4 >= 3);
  CHECK(at6 >= 2);
  // Before 2 s only the first client's users send (their next requests after a reply of 50 tokens).
  int before2 = 0;
  for (const auto& q : r.requests) before2 += q.arrival_s < 2.0;
  const auto together = staggered_run(10, {});
  int together_before2 = 0, together_at0 = 0;
  for (const auto& q : together.requests) {
    together_before2 += q.arrival_s < 2.0;
    together_at0 += q.arrival_s == 0.0;
  }
  CHECK(together_at0 == 10);
  CHECK(before2 < together_before2);
  CHECK(first_after0 > 0);
}

TEST_CASE("clients that start apart meet a smaller start-up wave than the same users started together") {
  // 32 users of 4000-token prompts: started together, the last of the first 32 prompts waits behind 31 prefills;
  // four clients of 8 started 3 s apart each queue 8 at a time.
  const auto together = staggered_run(32, {}), apart = staggered_run(32, {0.0, 3.0, 6.0, 9.0});
  REQUIRE(together.summary.completed_requests == 320);
  REQUIRE(apart.summary.completed_requests == 320);
  const double wave_together = longest_early_ttft(together, 0.5), wave_apart = longest_early_ttft(apart, 0.5);
  INFO("longest TTFT of the first wave: together " << wave_together << " s, apart " << wave_apart << " s");
  CHECK(wave_together > 2.5 * wave_apart);
  // The offsets shift work, not remove it: the same requests complete, each with the same lengths.
  CHECK(together.summary.completed_requests == apart.summary.completed_requests);
}

TEST_CASE("start_offsets_s: more clients than users, or an offset outside the clock, is a ConfigError naming it") {
  Json w = {{"arrival", {{"process", "closed"}, {"concurrency", 2}, {"start_offsets_s", {0.0, 1.0, 2.0}}}},
            {"num_requests", 10}};
  CHECK_THROWS_WITH(make(scenario(w)), Catch::Contains("workload.arrival.start_offsets_s"));
  w["arrival"]["start_offsets_s"] = {0.0, -1.0};
  CHECK_THROWS_WITH(make(scenario(w)), Catch::Contains("workload.arrival.start_offsets_s[1]"));
  w["arrival"]["start_offsets_s"] = {0.0, 2e9};
  CHECK_THROWS_WITH(make(scenario(w)), Catch::Contains("start_offsets_s[1]"));
}
