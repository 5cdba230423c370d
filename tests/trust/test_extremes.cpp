// Extreme but syntactically valid inputs (issue 17, engine layer): each either runs correctly or is refused
// with a ConfigError naming the field — never a hang, an InternalError ("event scheduled in the past"), an
// allocation failure, or a number the clock's precision has silently eaten. The single-file reproductions also
// live in malformed/ (library and CLI); these need a run or a generated input.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "llmsim/core/error.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/serving_path.hpp"
#include "trust_util.hpp"

using namespace llmsim;

namespace {

Json base(const Json& workload, const Json& engine = Json::object()) {
  Json e = {{"max_model_len", 8192}};
  for (auto it = engine.begin(); it != engine.end(); ++it) e[it.key()] = it.value();
  return Json{{"model", "llama-3.1-8b"}, {"hardware", {{"gpu", "a100-80gb-sxm"}}}, {"engine", e}, {"workload", workload}};
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("the clock keeps its precision at every accepted rate, and refuses the range where it would not",
          "[extremes]") {
  // One request arriving at 1e8 s (rate 1e-8): its TTFT is still exactly the prefill time and the serving path.
  const Json one = {{"arrival", {{"process", "constant"}, {"rate", 1e-8}}},
                    {"input_tokens", {{"dist", "fixed"}, {"value", 512}}},
                    {"output_tokens", {{"dist", "fixed"}, {"value", 8}}},
                    {"num_requests", 1}, {"warmup_requests", 0}};
  Json j = base(one);
  j["slo"] = {{"ttft_ms", {{"p95", 1}}}};
  const auto rs = trust::resolve_json(j);
  const auto s = engine::simulate(rs).summary;
  perf::BatchShape prefill;
  prefill.add_prefill(512, 0, true);
  const double ttft_ms =
      (perf::make_cost_model(rs).iteration_time(prefill) + perf::serving_path_latency_s(rs.scenario.engine, false, 512)) * 1e3;
  REQUIRE(s.completed_requests == 1);
  CHECK(s.ttft_ms.p50 == Approx(ttft_ms).epsilon(1e-5));
  CHECK_FALSE(s.slo_met);  // a 1 ms TTFT target is missed, not passed by a latency rounded to 0
  // 2000 requests at 1e-11 or 1e-15 req/s would need 2e14+ s: refused, naming the rate.
  for (double rate : {1e-11, 1e-15}) {
    Json w = one;
    w["arrival"] = {{"process", "poisson"}, {"rate", rate}};
    w["num_requests"] = 2000;
    CHECK_THROWS_WITH(trust::resolve_json(base(w)), Catch::Contains("workload.arrival.rate") && Catch::Contains("1e9 s"));
  }
  // A capacity-style rescale to such a rate is caught again by the engine (the scenario changed after resolve).
  auto tiny = rs;
  tiny.scenario.workload = spec::with_rate(tiny.scenario.workload, 1e-15);
  tiny.scenario.workload.num_requests = 2000;
  CHECK_THROWS_WITH(engine::simulate(tiny), Catch::Contains("workload.arrival.rate"));
}

TEST_CASE("on/off arrivals: no hang at any accepted phase length, and the horizon is honoured", "[extremes]") {
  // One arrival per million on phases of 1 µs: the old sampler looped once per phase (~10^9 turns here); the
  // time change is O(1) per arrival.
  const Json sparse = {{"arrival", {{"process", "onoff"}, {"rate_on", 1.0}, {"on_s", 1e-6}, {"off_s", 1e-3}}},
                       {"input_tokens", {{"dist", "fixed"}, {"value", 16}}},
                       {"output_tokens", {{"dist", "fixed"}, {"value", 2}}},
                       {"num_requests", 50}, {"warmup_requests", 0}};
  const auto t0 = std::chrono::steady_clock::now();
  const auto s = engine::simulate(trust::resolve_json(base(sparse))).summary;
  CHECK(seconds_since(t0) < 5);
  CHECK(s.completed_requests == 50);
  CHECK(s.offered.requests_per_s == Approx(1e-6 / 1.001e-3).epsilon(0.5));  // ~1e-3 req/s
  // A long off phase with a horizon inside it: the run stops at the horizon.
  Json off = sparse;
  off["arrival"] = {{"process", "onoff"}, {"rate_on", 2.0}, {"on_s", 10}, {"off_s", 1e9}};
  off["num_requests"] = 100;
  off["horizon_s"] = 50;
  const auto h = engine::simulate(trust::resolve_json(base(off))).summary;
  CHECK(h.duration_s <= 50);
  CHECK(h.completed_requests > 5);
  CHECK(h.completed_requests < 40);
}

TEST_CASE("prefix groups and tenant classes are bounded or lazy, never allocated up front", "[extremes]") {
  // A billion prefix groups: each request draws one, and only drawn groups get a cache entry.
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 4.0}}},
                  {"input_tokens", {{"dist", "fixed"}, {"value", 600}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", 20}}},
                  {"prefix_tokens", 512}, {"prefix_groups", 1000000000},
                  {"num_requests", 300}, {"warmup_requests", 0}};
  const auto t0 = std::chrono::steady_clock::now();
  const auto s = engine::simulate(trust::resolve_json(base(w, {{"enable_prefix_caching", true}}))).summary;
  CHECK(seconds_since(t0) < 5);
  CHECK(s.completed_requests == 300);
  // 10^5 tenant classes: refused at once, naming the field (per-class statistics are 72 KB each).
  Json many = {{"classes", Json::array()}, {"num_requests", 10}};
  for (int i = 0; i < 100000; ++i)
    many["classes"].push_back({{"name", "c" + std::to_string(i)}, {"arrival", {{"process", "poisson"}, {"rate", 1}}}});
  // Refused by resolve(), before the engine's collector could allocate any per-class statistics. (No wall-clock
  // bound here: building and checking 10^5 classes took 18 s under the sanitizers on a loaded 2-core machine.)
  CHECK_THROWS_WITH(trust::resolve_json(base(many)), Catch::Contains("workload.classes") && Catch::Contains("1024"));
}

TEST_CASE("derived sizes and times: swap space, trace time scale, think time", "[extremes]") {
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 2.0}}}, {"num_requests", 50}, {"warmup_requests", 0}};
  // Swap space far beyond any host but within the bound: the host block count saturates, the run is normal.
  const auto big = engine::simulate(trust::resolve_json(
                       base(w, {{"policy", "vllm-v0"}, {"preemption", "swap"}, {"swap_space_gb", 1e6}}))).summary;
  CHECK(big.completed_requests == 50);
  CHECK_THROWS_WITH(trust::resolve_json(base(w, {{"policy", "vllm-v0"}, {"swap_space_gb", 1e17}})),
                    Catch::Contains("engine.swap_space_gb"));
  // A trace divided by a denormal time scale: its times leave the clock's range, refused naming time_scale.
  const std::string path = "/tmp/llmsim_extremes_trace.csv";
  {
    std::ofstream f(path);
    f << "arrival_time_s,input_tokens,output_tokens\n0,100,10\n2.5,100,10\n";
  }
  Json tr = w;
  tr["arrival"] = {{"process", "trace"}, {"path", path}, {"time_scale", 5e-324}};
  CHECK_THROWS_WITH(engine::simulate(trust::resolve_json(base(tr))), Catch::Contains("workload.arrival.time_scale"));
  tr["arrival"]["time_scale"] = 1e-8;  // 2.5 s / 1e-8 = 2.5e8 s: inside the range, runs
  CHECK(engine::simulate(trust::resolve_json(base(tr))).summary.completed_requests == 2);
  std::remove(path.c_str());
  // Think time: 1.7e308 refused; a long but representable one runs, its latencies intact.
  Json cl = w;
  cl["arrival"] = {{"process", "closed"}, {"concurrency", 2}, {"think_time_s", 1.7e308}};
  CHECK_THROWS_WITH(trust::resolve_json(base(cl)), Catch::Contains("workload.arrival.think_time_s"));
  cl["arrival"]["think_time_s"] = 1e6;
  cl["num_requests"] = 10;
  const auto s = engine::simulate(trust::resolve_json(base(cl))).summary;
  CHECK(s.completed_requests == 10);
  CHECK(s.ttft_ms.p50 > 1);
}

TEST_CASE("rate schedules: bad ones name the field, good ones are scaled by with_rate keeping their shape",
          "[extremes]") {
  auto err = [](const Json& rates) {
    try {
      trust::resolve_json(base({{"arrival", {{"process", "piecewise"}, {"rates", rates}}}}));
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(err(Json::parse("[[0, 4], [60, 12], [30, 4]]")), Catch::Contains("workload.arrival.rates[2][0]"));
  CHECK_THAT(err(Json::parse("[[0, 4], [60, -12]]")), Catch::Contains("workload.arrival.rates[1][1]"));
  CHECK_THAT(err(Json::array()), Catch::Contains("workload.arrival.rates"));
  CHECK_THAT(err(Json::parse("[[5, 4]]")), Catch::Contains("workload.arrival.rates[0][0]"));
  CHECK_THAT(err(Json::parse("[[0, 0], [10, 0]]")), Catch::Contains("every rate is 0"));
  CHECK_THAT(err(Json::parse("[[0, 4], [60]]")), Catch::Contains("workload.arrival.rates[1]"));
  // The offered rate of a schedule is its mean over the time num_requests take; with_rate scales every rate.
  spec::Workload w;
  w.arrival = spec::PiecewiseArrivals{{{0, 4}, {60, 12}, {120, 4}}};
  w.num_requests = 960;  // 240 in the first minute, 720 in the second: done at 120 s
  CHECK(*spec::offered_rate(w) == Approx(8));
  const auto doubled = spec::with_rate(w, 16);
  CHECK(*spec::offered_rate(doubled) == Approx(16).epsilon(1e-9));
  const auto& r = std::get<spec::PiecewiseArrivals>(doubled.arrival).rates;
  CHECK(r[1].second / r[0].second == Approx(3));
  // A schedule that ends (rate 0) issues what it has: the run ends with fewer requests, complete.
  const Json ends = {{"arrival", {{"process", "piecewise"}, {"rates", {{0, 2}, {30, 0}}}}},
                     {"input_tokens", {{"dist", "fixed"}, {"value", 64}}},
                     {"output_tokens", {{"dist", "fixed"}, {"value", 8}}},
                     {"num_requests", 1000}, {"warmup_requests", 0}};
  const auto s = engine::simulate(trust::resolve_json(base(ends))).summary;
  CHECK(s.complete);
  CHECK(s.completed_requests == Approx(60).margin(25));
}
