// Short runs (issue 29): overload judged with fewer than 200 arrivals (the growth check's minimum), and a trace's
// unset warm-up scaled to the rows it replays.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/engine/simulator.hpp"
#include "llmsim/spec/scenario.hpp"
#include "engine_test_util.hpp"

using namespace llmsim;
using engine::simulate;
using test::make;
using test::scenario;

namespace {

const Json kInput = {{"dist", "lognormal"}, {"mean", 800}, {"sigma", 0.8}};
const Json kOutput = {{"dist", "lognormal"}, {"mean", 200}, {"sigma", 0.6}};

/// The engine's saturation throughput (req/s) for these lengths: a long run offered far more than it serves.
double saturation_rps() {
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 1000.0}}}, {"input_tokens", kInput},
                  {"output_tokens", kOutput}, {"num_requests", 1500}, {"warmup_requests", 0}, {"seed", 3}};
  const auto s = simulate(make(scenario(w))).summary;
  REQUIRE(s.unstable);  // the long run's growth check
  REQUIRE(s.saturation.throughput.requests_per_s > 0);
  return s.saturation.throughput.requests_per_s;
}

metrics::Summary short_run(double rate, std::int64_t n, std::uint64_t seed) {
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", rate}}}, {"input_tokens", kInput},
                  {"output_tokens", kOutput}, {"num_requests", n}, {"seed", seed}};
  return simulate(make(scenario(w))).summary;
}

/// An inline trace of `rows` requests, evenly spaced at `rate` req/s.
Json trace_arrival(std::int64_t rows, double rate) {
  Json reqs = Json::array();
  for (std::int64_t i = 0; i < rows; ++i)
    reqs.push_back(Json::array({static_cast<double>(i) / rate, 600 + 37 * (i % 11), 150 + 13 * (i % 7)}));
  return Json{{"process", "trace"}, {"requests", reqs}};
}

}  // namespace

TEST_CASE("a short run is judged: light load stays stable, 8x overload is flagged with both rates", "[engine][overload]") {
  const double mu = saturation_rps();
  for (std::uint64_t seed : {1, 2, 3}) {
    for (std::int64_t n : {60, 100, 150}) {
      INFO("seed " << seed << ", " << n << " requests, saturation " << mu << " req/s");
      const auto light = short_run(0.3 * mu, n, seed);
      INFO(light.reason);
      CHECK(light.complete);
      CHECK_FALSE(light.unstable);
      // Near saturation but below it: a short run's queue is noise, not drift.
      CHECK_FALSE(short_run(0.7 * mu, n, seed).unstable);
      if (n < 100) continue;  // 60 arrivals: too few to tell drift from noise (3√n + 8 of 60 is 31)
      const auto over = short_run(8 * mu, n, seed);
      INFO(over.reason);
      CHECK(over.complete);
      CHECK(over.unstable);
      CHECK_FALSE(over.slo_met);
      CHECK(over.reason.find("short run") != std::string::npos);
      CHECK(over.reason.find("waiting") != std::string::npos);
      CHECK(over.throughput.requests_per_s < 0.5 * over.offered.requests_per_s);
    }
  }
}

TEST_CASE("a short trace replay offered faster than it is served is flagged", "[engine][overload][trace]") {
  const double mu = saturation_rps();
  Json w = {{"arrival", trace_arrival(150, 8 * mu)}};
  auto s = simulate(make(scenario(w))).summary;
  INFO(s.reason);
  CHECK(s.unstable);
  CHECK(s.reason.find("150 arrivals") != std::string::npos);
  w = {{"arrival", trace_arrival(150, 0.3 * mu)}};
  s = simulate(make(scenario(w))).summary;
  INFO(s.reason);
  CHECK_FALSE(s.unstable);
}

TEST_CASE("a trace's unset warm-up scales with the rows it replays, not num_requests", "[engine][trace][warmup]") {
  // 150 rows under the default num_requests (2000): default_warmup_requests(150) = 15 left out, not 100.
  Json w = {{"arrival", trace_arrival(150, 1.0)}};
  auto rs = make(scenario(w));
  REQUIRE(rs.scenario.workload.num_requests == 2000);
  auto s = simulate(rs).summary;
  CHECK(s.warmup.arrivals == spec::default_warmup_requests(150));
  CHECK(s.warmup.arrivals == 15);
  CHECK(s.completed_requests == 135);
  // Written back and read again, it stays unset (the key is left out) and gives the same run.
  const Json written = spec::to_json(rs.scenario);
  CHECK_FALSE(written.at("workload").contains("warmup_requests"));
  auto again = make(written);
  CHECK(simulate(again).summary.warmup.arrivals == 15);
  // num_requests below the rows bounds it: 50 of them, 5 warm-up.
  w["num_requests"] = 50;
  s = simulate(make(scenario(w))).summary;
  CHECK(s.warmup.arrivals == 5);
  CHECK(s.completed_requests == 45);
  // A warm-up the scenario sets is kept, and written back.
  w = {{"arrival", trace_arrival(150, 1.0)}, {"warmup_requests", 100}};
  rs = make(scenario(w));
  CHECK(simulate(rs).summary.warmup.arrivals == 100);
  CHECK(spec::to_json(rs.scenario).at("workload").at("warmup_requests") == 100);
  // A long trace keeps min(100, rows / 10).
  w = {{"arrival", trace_arrival(3000, 5.0)}, {"num_requests", 2500}};
  CHECK(simulate(make(scenario(w))).summary.warmup.arrivals == 100);
}

TEST_CASE("a short run sent while no replica is up is judged by the requests waiting for one too",
          "[engine][overload][failures]") {
  // attack6: 150 requests at 8x saturation, sent during an outage of the only replica, were called stable — the
  // requests held for a replica (Simulation::pending_) were not counted as waiting at the last arrival.
  const double mu = saturation_rps();
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 8 * mu}}}, {"input_tokens", kInput},
                  {"output_tokens", kOutput}, {"num_requests", 150}, {"seed", 1}};
  Json j = scenario(w);
  const double last_arrival_s = 150 / (8 * mu);
  j["failures"] = {{"outages", Json::array({Json::array({0.0, 2 * last_arrival_s})})}};
  const auto s = simulate(make(j)).summary;
  INFO(s.reason);
  REQUIRE(s.complete);
  CHECK(s.unstable);
  CHECK(s.reason.find("short run") != std::string::npos);
  CHECK(s.throughput.requests_per_s < 0.5 * s.offered.requests_per_s);
  // The same load at 0.3x saturation through a short outage stays stable: the queue it leaves drains.
  Json light = j;
  light["workload"]["arrival"]["rate"] = 0.3 * mu;
  light["failures"]["outages"] = Json::array({Json::array({0.0, 1.0})});
  const auto l = simulate(make(light)).summary;
  INFO(l.reason);
  CHECK_FALSE(l.unstable);
}

TEST_CASE("a warm-up that takes every row of a trace is refused, naming the field", "[engine][trace][warmup]") {
  // attack6: a 2-row trace with warmup_requests 2 ran, measured nothing, and printed a run of zeros with exit 0.
  for (const std::int64_t rows : {2, 40}) {
    Json w = {{"arrival", trace_arrival(rows, 1.0)}, {"warmup_requests", rows}};
    INFO(rows << " rows");
    CHECK_THROWS_WITH(simulate(make(scenario(w))), Catch::Contains("workload.warmup_requests") &&
                                                       Catch::Contains(std::to_string(rows) + " requests the trace replays"));
    w["warmup_requests"] = rows - 1;  // one measured request is a result
    CHECK(simulate(make(scenario(w))).summary.completed_requests == 1);
  }
  // num_requests below the rows bounds the replay, and the warm-up with it.
  Json w = {{"arrival", trace_arrival(40, 1.0)}, {"num_requests", 10}, {"warmup_requests", 10}};
  CHECK_THROWS_WITH(simulate(make(scenario(w))), Catch::Contains("workload.warmup_requests"));
}

TEST_CASE("a speculative run cut at its horizon counts only the steps that delivered tokens", "[engine][speculative]") {
  // attack6: a run stopped by workload.horizon_s with a speculative step in flight counted that step's sequences but
  // not its tokens: mean_tokens_per_step 0.86, mean_accepted_tokens -0.14 (at least one token per sequence-step).
  for (const double horizon_s : {0.3, 1.0, 3.0}) {
    const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 400.0}}}, {"input_tokens", kInput},
                    {"output_tokens", kOutput}, {"num_requests", 300}, {"seed", 1},
                    {"speculative_acceptance_rate", 0.3}, {"horizon_s", horizon_s}};
    const Json engine = {{"speculative", {{"method", "draft"}, {"draft_model", "llama-3.2-1b"}, {"num_speculative_tokens", 1}}}};
    const auto s = simulate(make(scenario(w, engine))).summary;
    INFO("horizon " << horizon_s << " s: " << s.speculative.steps << " steps, " << s.speculative.mean_tokens_per_step
                    << " tokens per sequence-step");
    REQUIRE(s.speculative.enabled);
    CHECK_FALSE(s.complete);
    if (s.speculative.steps == 0) continue;
    CHECK(s.speculative.mean_tokens_per_step >= 1.0);
    CHECK(s.speculative.mean_tokens_per_step <= 2.0);  // one proposed token: at most it and the bonus token
    CHECK(s.speculative.mean_accepted_tokens >= 0.0);
  }
}
