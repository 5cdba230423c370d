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
  closed.arrival = ClosedLoop{4, 0, {}};
  CHECK_FALSE(offered_rate(closed));
  CHECK(std::get<ClosedLoop>(with_rate(closed, 12.4).arrival).concurrency == 12);
  Workload trace;
  trace.arrival = TraceReplay{"t.csv", 1, {}};
  CHECK_FALSE(offered_rate(trace));
  CHECK_THROWS_AS(with_rate(trace, 2), ConfigError);
  CHECK_THROWS_AS(with_rate(w, -1), ConfigError);
}

TEST_CASE("one bound per field: a lognormal's sigma is refused by the scenario where the sampler would refuse it") {
  // The class: two checks of one field with different bounds (validation took sigma up to 10, the sampler 5, so 7
  // passed the first and failed later, with another message).
  for (const char* field : {"input_tokens", "output_tokens"}) {
    CAPTURE(field);
    CHECK_NOTHROW(parse_workload({{field, {{"dist", "lognormal"}, {"mean", 100}, {"sigma", kMaxLogNormalSigma}}}}));
    CHECK_THROWS_WITH(parse_workload({{field, {{"dist", "lognormal"}, {"mean", 100}, {"sigma", kMaxLogNormalSigma + 0.1}}}}),
                      Catch::Contains(std::string("workload.") + field + ".sigma") &&
                          Catch::Contains("must be in [0, 5], got 5.1"));
  }
}

TEST_CASE("percentile keys are read one way: digits and one '.', never what a number parser also takes") {
  // The class: "p0x5f" was read as p95 (hex) in the SLO while vLLM files refused it.
  CHECK(parse_percentile_key("p95") == 95.0);
  CHECK(parse_percentile_key("p99.9") == 99.9);
  CHECK(parse_percentile_key("p100") == 100.0);
  for (const char* odd : {"p0x5f", "p1e1", "pinf", "pnan", "p+95", "p-5", "p 95", "p.5", "p95.", "p9.9.9", "p", "95", "P95"}) {
    CAPTURE(odd);
    CHECK_FALSE(parse_percentile_key(odd).has_value());
    const Json sc{{"slo", {{"ttft_ms", {{odd, 100}}}}}};
    CHECK_THROWS_WITH(scenario_from_json(JsonView(sc, "")), Catch::Contains("expected a percentile key"));
  }
  CHECK_THROWS_WITH(scenario_from_json(JsonView(Json{{"slo", {{"ttft_ms", {{"p150", 100}}}}}}, "")),
                    Catch::Contains("percentile must be in (0, 100], got 150"));
}

TEST_CASE("a closed loop's client start offsets parse, round-trip through the scenario's JSON, and are optional") {
  const Workload w = parse_workload(
      {{"arrival", {{"process", "closed"}, {"concurrency", 8}, {"start_offsets_s", {0.0, 3.5}}}}});
  const auto& cl = std::get<ClosedLoop>(w.arrival);
  REQUIRE(cl.start_offsets_s.size() == 2);
  CHECK(cl.start_offsets_s[1] == 3.5);
  Scenario s;
  s.workload = w;
  const Scenario back = scenario_from_json(JsonView(to_json(s), ""));
  CHECK(std::get<ClosedLoop>(back.workload.arrival).start_offsets_s == cl.start_offsets_s);
  // Without offsets the JSON is what it always was (no empty list written).
  Scenario plain;
  plain.workload.arrival = ClosedLoop{4, 0, {}};
  CHECK_FALSE(to_json(plain)["workload"]["arrival"].contains("start_offsets_s"));
  CHECK_THROWS_WITH(parse_workload({{"arrival", {{"process", "closed"}, {"concurrency", 1}, {"start_offsets_s", {0.0, 1.0}}}}}),
                    Catch::Contains("workload.arrival.start_offsets_s"));
}

TEST_CASE("with_rate under a closed loop's client count keeps the clients its users land in (capacity's bisection)") {
  // attack12: capacity, compare and sweep --capacity size a closed loop by its concurrency from 1 up; with four
  // clients (start_offsets_s) the runs below four users were refused ("names 4 clients, more than the loop's 1
  // users") although the scenario itself was valid. User u of N joins client u·G/N, so the clients kept are those.
  const Workload w = parse_workload(
      {{"arrival", {{"process", "closed"}, {"concurrency", 8}, {"start_offsets_s", {0.0, 1.0, 2.0, 3.0}}}}});
  const std::vector<std::pair<double, std::vector<double>>> cases{
      {1, {0.0}}, {2, {0.0, 2.0}}, {3, {0.0, 1.0, 2.0}}, {4, {0.0, 1.0, 2.0, 3.0}}, {16, {0.0, 1.0, 2.0, 3.0}}};
  for (const auto& [users, kept] : cases) {
    const Workload at = with_rate(w, users);
    const auto& cl = std::get<ClosedLoop>(at.arrival);
    CHECK(cl.concurrency == static_cast<int>(users));
    CHECK(cl.start_offsets_s == kept);
    CHECK_NOTHROW(at.validate("workload"));
  }
}

TEST_CASE("workload.ignore_eos: read, written back, false unless stated, a boolean", "[workload][ignore_eos]") {
  Json doc = {{"model", "llama-3.1-8b"}, {"hardware", {{"gpu", "a100-80gb-sxm"}}}, {"workload", Json::object()}};
  CHECK_FALSE(scenario_from_json(JsonView(doc, "")).workload.ignore_eos);
  doc["workload"]["ignore_eos"] = true;
  const Scenario s = scenario_from_json(JsonView(doc, ""));
  CHECK(s.workload.ignore_eos);
  CHECK(to_json(s)["workload"]["ignore_eos"] == true);
  CHECK(scenario_from_json(JsonView(to_json(s), "")).workload.ignore_eos);
  // --set's path: the same field.
  Json set = doc;
  set["workload"].erase("ignore_eos");
  set_json_path(set, "workload.ignore_eos", true);
  CHECK(scenario_from_json(JsonView(set, "")).workload.ignore_eos);
  doc["workload"]["ignore_eos"] = "yes";
  CHECK_THROWS_WITH(scenario_from_json(JsonView(doc, "")), Catch::Contains("workload.ignore_eos"));
}
