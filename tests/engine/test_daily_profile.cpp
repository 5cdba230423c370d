// workload.daily_profile: 24 hourly multipliers (or a CSV of breakpoints) of the Poisson base rate, compiled onto
// the piecewise schedule and repeated for workload.days.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "engine_test_util.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/simulator.hpp"

using namespace llmsim;
using llmsim::test::make;
using llmsim::test::scenario;

namespace {

Json day_workload(double base_rate, const Json& profile) {
  return {{"arrival", {{"process", "poisson"}, {"rate", base_rate}}},
          {"input_tokens", {{"dist", "fixed"}, {"value", 64}}},
          {"output_tokens", {{"dist", "fixed"}, {"value", 8}}},
          {"daily_profile", profile},
          {"warmup_requests", 0}};
}

// A day that is quiet at night and peaks in the afternoon (shape only; the test checks what it implies).
const std::vector<double> kShape{0.2, 0.1, 0.1, 0.1, 0.1, 0.2, 0.4, 0.8, 1.2, 1.6, 1.8, 2.0,
                                 2.0, 2.0, 2.2, 2.4, 2.2, 1.8, 1.4, 1.0, 0.8, 0.6, 0.4, 0.3};

}  // namespace

TEST_CASE("a daily profile compiles to an hourly piecewise schedule repeated for each day, then ends") {
  spec::DailyProfile p;
  p.hourly = kShape;
  const auto a = spec::compile_daily_profile(p, 2, 0.5);
  REQUIRE(a.rates.size() == 49);
  CHECK(a.rates[0] == std::pair<double, double>{0.0, 0.1});
  CHECK(a.rates[15] == std::pair<double, double>{15 * 3600.0, 1.2});
  CHECK(a.rates[24 + 15] == std::pair<double, double>{86400.0 + 15 * 3600.0, 1.2});
  CHECK(a.rates.back() == std::pair<double, double>{2 * 86400.0, 0.0});
  // The offered rate is the day's mean: base × mean multiplier.
  double mean = 0;
  for (double m : kShape) mean += m / 24;
  auto w = make(scenario(day_workload(0.5, kShape))).scenario.workload;
  CHECK(w.num_requests == spec::kDailyProfileRequests);
  CHECK(*spec::offered_rate(w) == Approx(0.5 * mean).epsilon(1e-9));
  // with_rate scales the base and keeps the shape (the capacity search relies on it).
  const auto w2 = spec::with_rate(w, 2 * 0.5 * mean);
  CHECK(*spec::offered_rate(w2) == Approx(2 * 0.5 * mean).epsilon(1e-6));
}

TEST_CASE("a simulated day follows the curve hour by hour and ends with the day") {
  Json w = day_workload(0.05, kShape);
  engine::SimulationOptions opt;
  opt.time_series_window_s = 3600;
  const auto r = engine::simulate(make(scenario(w)), opt);
  const auto& s = r.summary;
  REQUIRE(s.complete);
  double expected = 0;
  for (double m : kShape) expected += 0.05 * m * 3600;
  CHECK(static_cast<double>(s.completed_requests) == Approx(expected).epsilon(0.05));
  REQUIRE(r.time_series.size() >= 24);
  // Busy afternoon hours get about 2.4 / 0.1 = 24× the arrivals of the quiet night hours.
  const auto night = r.time_series[2].arrivals + r.time_series[3].arrivals + r.time_series[4].arrivals;
  const auto peak = r.time_series[14].arrivals + r.time_series[15].arrivals + r.time_series[16].arrivals;
  INFO("night " << night << ", peak " << peak);
  CHECK(night == Approx(0.05 * 0.3 * 3600).epsilon(0.35));
  CHECK(peak == Approx(0.05 * 6.8 * 3600).epsilon(0.1));
  for (const auto& x : r.time_series)
    if (x.start_s >= 86400 + 600) CHECK(x.arrivals == 0);
  // Two days issue twice the requests.
  w["days"] = 2;
  const auto two = engine::simulate(make(scenario(w))).summary;
  CHECK(static_cast<double>(two.completed_requests) == Approx(2 * expected).epsilon(0.05));
}

TEST_CASE("bad daily profiles are ConfigErrors naming the field and the value") {
  std::vector<double> short_day(kShape.begin(), kShape.end() - 1);
  CHECK_THROWS_WITH(make(scenario(day_workload(1, short_day))),
                    Catch::Contains("workload.daily_profile") && Catch::Contains("24") && Catch::Contains("got 23"));
  auto negative = kShape;
  negative[5] = -1;
  CHECK_THROWS_WITH(make(scenario(day_workload(1, negative))),
                    Catch::Contains("workload.daily_profile[5]") && Catch::Contains("-1"));
  CHECK_THROWS_WITH(make(scenario(day_workload(1, std::vector<double>(24, 0.0)))), Catch::Contains("every multiplier is 0"));
  Json w = day_workload(1, kShape);
  w["days"] = 0;
  CHECK_THROWS_WITH(make(scenario(w)), Catch::Contains("workload.days"));
  w = day_workload(1, kShape);
  w["arrival"] = {{"process", "gamma"}, {"rate", 1}, {"cv", 2}};
  CHECK_THROWS_WITH(make(scenario(w)), Catch::Contains("workload.arrival.process") && Catch::Contains("poisson"));
  w = day_workload(1, kShape);
  w.erase("daily_profile");
  w["days"] = 3;
  CHECK_THROWS_WITH(make(scenario(w)), Catch::Contains("workload.days"));
}

TEST_CASE("a daily profile CSV gives breakpoints; a bad row names the file and line") {
  const std::string good = "test_daily_profile_good.csv", bad = "test_daily_profile_bad.csv";
  {
    std::ofstream(good) << "time_s,rate\n0,0.5\n43200,2\n";
    std::ofstream(bad) << "time_s,rate\n0,0.5\n3600,1,5x\n7200,abc\n";
  }
  const auto w = make(scenario(day_workload(0.1, {{"csv", good}}))).scenario.workload;
  REQUIRE(w.daily_profile.points.size() == 2);
  CHECK(*spec::offered_rate(w) == Approx(0.1 * 1.25).epsilon(1e-9));
  CHECK_THROWS_WITH(make(scenario(day_workload(0.1, {{"csv", bad}}))),
                    Catch::Contains(bad + ":4:2") && Catch::Contains("abc"));
  CHECK_THROWS_WITH(make(scenario(day_workload(0.1, {{"csv", "no-such-profile.csv"}}))),
                    Catch::Contains("workload.daily_profile.csv"));
  std::remove(good.c_str());
  std::remove(bad.c_str());
}
