#include <catch2/catch.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/scenario.hpp"

using namespace llmsim;
using namespace llmsim::spec;

namespace {
Workload parse_workload(const Json& w) {
  return scenario_from_json(JsonView(Json{{"workload", w}}, "")).workload;
}
}  // namespace

TEST_CASE("every arrival process and length distribution parses") {
  const Json arrivals[] = {
      {{"process", "poisson"}, {"rate", 2}},
      {{"process", "gamma"}, {"rate", 2}, {"cv", 4}},
      {{"process", "constant"}, {"rate", 2}},
      {{"process", "onoff"}, {"rate_on", 4}, {"on_s", 10}, {"off_s", 10}},
      {{"process", "closed"}, {"concurrency", 8}, {"think_time_s", 0.5}},
      {{"process", "trace"}, {"path", "trace.csv"}, {"time_scale", 2}}};
  for (std::size_t i = 0; i < std::size(arrivals); ++i) {
    INFO(arrivals[i].dump());
    CHECK(parse_workload({{"arrival", arrivals[i]}}).arrival.index() == i);
  }
  const Json lengths[] = {{{"dist", "fixed"}, {"value", 128}},
                          {{"dist", "uniform"}, {"min", 1}, {"max", 10}},
                          {{"dist", "normal"}, {"mean", 100}, {"stddev", 10}},
                          {{"dist", "lognormal"}, {"mean", 100}, {"sigma", 0.5}},
                          {{"dist", "empirical"}, {"path", "lens.csv"}, {"column", "input"}}};
  for (std::size_t i = 0; i < std::size(lengths); ++i) {
    INFO(lengths[i].dump());
    CHECK(parse_workload({{"input_tokens", lengths[i]}}).input_tokens.index() == i);
  }
  CHECK_THROWS_WITH(parse_workload({{"input_tokens", {{"dist", "uniform"}, {"min", 10}, {"max", 5}}}}),
                    Catch::Contains("workload.input_tokens.max"));
  CHECK_THROWS_WITH(parse_workload({{"input_tokens", {{"dist", "empirical"}}}}), Catch::Contains("values"));
  CHECK_THROWS_WITH(parse_workload({{"arrival", {{"process", "closed"}, {"concurrency", -2}}}}),
                    Catch::Contains("workload.arrival.concurrency"));
}

TEST_CASE("offered_rate and with_rate keep the class mix") {
  Workload w;
  w.arrival = PoissonArrivals{3};
  CHECK(*offered_rate(w) == 3);
  CHECK(std::get<PoissonArrivals>(with_rate(w, 7.5).arrival).rate == 7.5);
  CHECK(w.effective_classes().size() == 1);
  CHECK(w.effective_classes()[0].name == "default");

  w.classes = {TenantClass{}, TenantClass{}};
  w.classes[0].name = "a";
  w.classes[0].arrival = GammaArrivals{1, 3};
  w.classes[1].name = "b";
  w.classes[1].arrival = OnOffArrivals{4, 10, 30, 0};  // mean 1/s
  CHECK(*offered_rate(w) == Approx(2.0));
  const Workload w2 = with_rate(w, 10);
  CHECK(*offered_rate(w2) == Approx(10));
  CHECK(std::get<GammaArrivals>(w2.classes[0].arrival).rate == Approx(5));
  CHECK(std::get<GammaArrivals>(w2.classes[0].arrival).cv == 3);
  CHECK(std::get<OnOffArrivals>(w2.classes[1].arrival).rate_on == Approx(20));

  Workload closed;
  closed.arrival = ClosedLoop{4, 0};
  CHECK_FALSE(offered_rate(closed));
  CHECK(std::get<ClosedLoop>(with_rate(closed, 12.4).arrival).concurrency == 12);
  Workload trace;
  trace.arrival = TraceReplay{"t.csv", 1, {}};
  CHECK_FALSE(offered_rate(trace));
  CHECK_THROWS_AS(with_rate(trace, 2), ConfigError);
  CHECK_THROWS_AS(with_rate(w, -1), ConfigError);
}
