#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>

#include "llmsim/core/rng.hpp"
#include "llmsim/metrics/collector.hpp"
#include "llmsim/metrics/fleet.hpp"
#include "llmsim/metrics/latency_histogram.hpp"

using namespace llmsim;
using namespace llmsim::metrics;

namespace {
double exact_percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const auto k = static_cast<std::size_t>(std::ceil(q / 100.0 * static_cast<double>(v.size()))) - 1;
  return v[std::min(k, v.size() - 1)];
}
}  // namespace

TEST_CASE("histogram percentiles are within 1% of the exact order statistics") {
  auto rng = rng_stream(7, "test");
  boost::random::lognormal_distribution<double> d(std::log(200.0), 1.2);
  LatencyHistogram h;
  std::vector<double> v;
  for (int i = 0; i < 200000; ++i) {
    const double x = d(rng);
    v.push_back(x);
    h.add(x);
  }
  double sum = 0;
  for (double x : v) sum += x;
  REQUIRE(h.mean() == Approx(sum / static_cast<double>(v.size())).epsilon(1e-9));
  for (double q : {50.0, 90.0, 95.0, 99.0, 99.9}) {
    const double e = exact_percentile(v, q);
    CHECK(std::abs(h.percentile(q) - e) / e < 0.01);
  }
  REQUIRE(h.percentile(100) == *std::max_element(v.begin(), v.end()));
  const auto s = h.stats({99.9});
  REQUIRE(s.count == 200000);
  REQUIRE(s.quantiles.size() == 1);
}

TEST_CASE("histogram handles weights, zeros, a single sample and emptiness") {
  LatencyHistogram empty;
  REQUIRE(empty.percentile(50) == 0);
  REQUIRE(empty.stats().count == 0);

  LatencyHistogram one;
  one.add(42.0);
  REQUIRE(one.percentile(50) == Approx(42.0));
  REQUIRE(one.percentile(99) == Approx(42.0));

  LatencyHistogram w;
  w.add(10.0, 99.0);  // 99 gaps of 10 ms
  w.add(1000.0, 1.0);
  REQUIRE(w.count() == 100);
  REQUIRE(w.percentile(50) == Approx(10.0).epsilon(0.01));
  REQUIRE(w.percentile(99.5) == Approx(1000.0).epsilon(0.01));
  REQUIRE(w.mean() == Approx((990.0 + 1000.0) / 100));

  LatencyHistogram z;
  for (int i = 0; i < 10; ++i) z.add(0.0);
  z.add(5.0);
  REQUIRE(z.percentile(50) == 0.0);
  REQUIRE(z.percentile(100) == 5.0);
}

TEST_CASE("histogram: the table-driven bin equals Boost's log-axis bin for every kind of value") {
  // The hot path finds the bin without a log (LatencyHistogram::bin); it must be the bin Boost computes, or the
  // percentiles would move. Values at and a few ULPs around every bin edge, at the 1e-9 margins the table trusts,
  // log-uniform draws over the range and beyond it, and the special values.
  std::vector<double> xs = {0.0, -0.0, -1.0, -1e-300, 1e-320, 1e-300, 1e-5, 1e-4, 1e9, 1e10, 1e300,
                            std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::max(),
                            std::numeric_limits<double>::denorm_min()};
  const double lo = std::log(1e-4), hi = std::log(1e9);
  for (int i = 0; i <= LatencyHistogram::bins(); ++i) {
    const double edge = std::exp(lo + (hi - lo) * i / LatencyHistogram::bins());
    for (double e : {edge, edge * (1 + 1e-9), edge * (1 - 1e-9), edge * (1 + 2e-9), edge * (1 - 2e-9)}) {
      double up = e, down = e;
      xs.push_back(e);
      for (int k = 0; k < 4; ++k) {
        up = std::nextafter(up, 2 * up);
        down = std::nextafter(down, 0.0);
        xs.push_back(up);
        xs.push_back(down);
      }
    }
  }
  auto rng = rng_stream(11, "test");
  boost::random::uniform_real_distribution<double> u(std::log(1e-6), std::log(1e11));
  for (int i = 0; i < 300000; ++i) xs.push_back(std::exp(u(rng)));
  std::size_t differ = 0, differ_inline = 0;
  std::size_t ranges = 0, bad_ranges = 0;
  const LatencyHistogram h;
  for (double x : xs) {
    differ += LatencyHistogram::bin(x) != LatencyHistogram::axis_bin(x);
    // add()'s lookup (the whole spans' entries inline): the same bin and range.
    double lo1 = 0, hi1 = 0, lo2 = 0, hi2 = 0;
    differ_inline += h.find_bin(x, &lo1, &hi1) != LatencyHistogram::bin(x, &lo2, &hi2) || lo1 != lo2 || hi1 != hi2;
    // The certain range a histogram reuses for the next sample: both its ends (and x) in x's bin.
    double lo = 0, hi = 0;
    const int b = LatencyHistogram::bin(x, &lo, &hi);
    if (lo < hi) {
      ++ranges;
      bad_ranges += !(lo <= x && x < hi) || LatencyHistogram::axis_bin(lo) != b ||
                    LatencyHistogram::axis_bin(std::nextafter(hi, 0.0)) != b;
    }
  }
  CHECK(differ == 0);
  CHECK(differ_inline == 0);
  CHECK(bad_ranges == 0);
  CHECK(ranges > 300000);
  CHECK(xs.size() > 400000);
  CHECK(LatencyHistogram::bin(0.0) == -1);
  CHECK(LatencyHistogram::bin(std::numeric_limits<double>::quiet_NaN()) == LatencyHistogram::bins());
  CHECK(LatencyHistogram::bin(1.0) == LatencyHistogram::axis_bin(1.0));
}

TEST_CASE("collector: throughput, goodput, attainment, SLO verdict and Little's law bookkeeping") {
  spec::SloSpec slo;
  slo.targets.push_back({spec::SloMetric::ttft, 90, 100});  // P90 TTFT <= 100 ms
  slo.targets.push_back({spec::SloMetric::tpot, 50, 50});   // P50 TPOT <= 50 ms (requests: 45 and 20 ms)
  Collector c({ClassInfo{"default", slo}}, slo);
  // 10 requests, one second apart, each 0.5 s long; 9 fast TTFT (50 ms), one slow (300 ms).
  for (int i = 0; i < 10; ++i) {
    const double a = i;
    c.on_in_system_change(a, +1, 0);
    FinishedRequest r;
    r.arrival_s = a;
    r.admitted_s = a + 0.01;
    r.first_token_s = a + (i == 9 ? 0.3 : 0.05);
    r.finish_s = a + 0.5;
    r.input_tokens = 100;
    r.output_tokens = 11;
    c.on_request_finished(r);
    c.on_in_system_change(r.finish_s, -1, 0);
  }
  const Summary s = c.summarize(0.0, 9.5);
  REQUIRE(s.completed_requests == 10);
  REQUIRE(s.throughput.requests_per_s == Approx(10 / 9.5));
  REQUIRE(s.throughput.output_tokens_per_s == Approx(110 / 9.5));
  REQUIRE(s.slo_attainment == Approx(0.9));  // the slow-TTFT request is not good
  REQUIRE(s.goodput_rps == Approx(9 / 9.5));
  REQUIRE(s.goodput_output_tps == Approx(99 / 9.5));
  REQUIRE(s.slo_met);  // P90 TTFT is still a fast one
  REQUIRE(s.mean_in_system == Approx(s.throughput.requests_per_s * s.e2e_ms.mean / 1e3));
  REQUIRE(s.queue_ms.mean == Approx(10.0));
}

TEST_CASE("collector: a percentile target that fails makes slo_met false") {
  spec::SloSpec slo;
  slo.targets.push_back({spec::SloMetric::e2e, 50, 100});
  Collector c({ClassInfo{"default", slo}}, slo);
  FinishedRequest r;
  r.finish_s = 1.0;
  r.first_token_s = 0.5;
  r.output_tokens = 2;
  c.on_request_finished(r);
  const Summary s = c.summarize(0, 1);
  REQUIRE_FALSE(s.slo_met);
  REQUIRE(s.slo_attainment == 0);
  const Json j = to_json(s);
  for (const char* k : {"fits", "reason", "unstable", "completed_requests", "rejected_requests", "preemptions",
                        "duration_s", "mean_in_system", "throughput", "ttft_ms", "tpot_ms", "itl_ms", "e2e_ms",
                        "queue_ms", "slo_attainment", "goodput_rps", "goodput_output_tps", "kv", "utilization", "cost"})
    REQUIRE(j.contains(k));
  REQUIRE(j["e2e_ms"]["p50"].get<double>() == Approx(1000.0));
  REQUIRE(j["e2e_ms"].contains("p95"));
}

TEST_CASE("fleet meter: each arrival lands in floor(t / hour)'s bucket, at the edges too") {
  // The meter caches the range of times its last bucket covers; the edges must fall exactly as floor(t / 3600) does.
  metrics::FleetMeter m;
  m.on_fleet(0, 1, 1);
  std::vector<std::int64_t> expected(40, 0);
  for (int k = 1; k < 40; ++k) {
    const double edge = 3600.0 * k;
    for (double t : {std::nextafter(edge, 0.0), edge, std::nextafter(edge, 1e300), edge - 0.5, edge + 0.5}) {
      m.on_arrival(t);
      ++expected[static_cast<std::size_t>(std::floor(t / 3600.0))];
    }
  }
  const auto s = m.summarize(40 * 3600.0, 0);
  REQUIRE(s.hours.size() >= 40);
  std::size_t differ = 0;
  for (std::size_t h = 0; h < 40; ++h) differ += s.hours[h].arrivals != expected[h];
  CHECK(differ == 0);
}

TEST_CASE("collector: a run that completed nothing meets nothing, with or without an SLO") {
  // With no SLO there is no verdict to write (issue 29: it read as met): the JSON has null and the note; the bool a
  // caller reads inside llmsim still says a run that served none met nothing (session 40's attack: slo_met was true
  // with every request timed out and no SLO).
  for (const bool with_slo : {false, true}) {
    INFO(with_slo);
    spec::SloSpec slo;
    if (with_slo) slo.targets.push_back({spec::SloMetric::ttft, 90, 1e9});
    Collector none({ClassInfo{"default", slo}}, slo);
    none.on_in_system_change(0.0, +1, 0);
    const Summary empty = none.summarize(0, 1);
    REQUIRE(empty.completed_requests == 0);
    CHECK_FALSE(empty.slo_met);
    CHECK(empty.slo_set == with_slo);
    if (with_slo) {
      CHECK_FALSE(to_json(empty)["slo_met"].get<bool>());
      CHECK(to_json(empty)["slo_met_note"].is_null());
    } else {
      CHECK(to_json(empty)["slo_met"].is_null());
      CHECK_THAT(to_json(empty)["slo_met_note"].get<std::string>(), Catch::StartsWith("no SLO set"));
    }
    Collector one({ClassInfo{"default", slo}}, slo);
    FinishedRequest r;
    r.finish_s = 1.0;
    r.first_token_s = 0.5;
    r.output_tokens = 2;
    one.on_request_finished(r);
    CHECK(one.summarize(0, 1).slo_met);
  }
}

TEST_CASE("collector: with no SLO set, every attainment in the JSON is null, not a vacuous 1.0") {
  // Issue 29 (tidy): slo_met became null with no target, but slo_attainment (overall, steady state, per class) still
  // read 1.0: every request "met" an empty SLO. Written as null beside slo_met_note; with a target, numbers again.
  for (const bool with_slo : {false, true}) {
    INFO(with_slo);
    spec::SloSpec slo;
    if (with_slo) slo.targets.push_back({spec::SloMetric::ttft, 90, 1e9});
    Collector c({ClassInfo{"a", slo}, ClassInfo{"b", slo}}, slo);
    for (int i = 0; i < 4; ++i) {
      FinishedRequest r;
      r.tenant = i % 2;
      r.arrival_s = 0.1 * i;
      r.first_token_s = 0.1 * i + 0.05;
      r.finish_s = 0.1 * i + 0.2;
      r.output_tokens = 4;
      c.on_request_finished(r);
    }
    const Json j = to_json(c.summarize(0, 1));
    REQUIRE(j["completed_requests"] == 4);
    CHECK(j["slo_attainment"].is_number() == with_slo);
    CHECK(j["slo_attainment"].is_null() == !with_slo);
    if (j.contains("steady_state") && j["steady_state"]["departures"].get<std::int64_t>() > 0)
      CHECK(j["steady_state"]["slo_attainment"].is_null() == !with_slo);
    REQUIRE(j["classes"].size() == 2);
    for (const auto& k : j["classes"]) CHECK(k["slo_attainment"].is_null() == !with_slo);
    if (with_slo) CHECK(j["slo_attainment"].get<double>() == 1.0);
  }
}
