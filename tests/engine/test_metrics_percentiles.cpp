// The scenario's metrics.percentiles (spec/metrics.hpp): extra percentiles of TTFT, TPOT, ITL and E2E that the
// collector reports beside the fixed ones and the SLO's, overall and per class, in the result JSON and vLLM's keys.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include "engine_test_util.hpp"
#include "llmsim/core/rng.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/metrics/collector.hpp"

using namespace llmsim;

namespace {

/// The nearest-rank percentile of a sample (what the histogram approximates within ~0.5 %).
double pct_nearest_rank(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const auto k = static_cast<std::size_t>(std::ceil(q / 100.0 * static_cast<double>(v.size()))) - 1;
  return v[std::min(k, v.size() - 1)];
}

/// The value a latency object reports for percentile q; FAIL when it is not there (or there twice).
double pct_reported(const metrics::LatencyStats& l, double q) {
  int found = 0;
  double v = 0;
  for (const auto& [pq, pv] : l.quantiles)
    if (pq == q) {
      ++found;
      v = pv;
    }
  INFO("percentile " << q);
  REQUIRE(found == 1);
  return v;
}

/// Every extra percentile of `l` within 1 % of the sample's (the histogram's bins are 1 % wide).
void pct_check(const metrics::LatencyStats& l, const std::vector<double>& sample, const std::vector<double>& qs) {
  REQUIRE(l.count == static_cast<std::int64_t>(sample.size()));
  for (double q : qs) {
    const double exact = pct_nearest_rank(sample, q);
    INFO("q " << q << " exact " << exact);
    CHECK(std::abs(pct_reported(l, q) - exact) <= 0.01 * exact);
  }
}

}  // namespace

TEST_CASE("metrics.percentiles: the collector reports them for TTFT, TPOT, ITL and E2E, overall and per class",
          "[metrics]") {
  const std::vector<double> extra = {12.5, 75, 99.9, 95};  // 95 is a fixed one too: reported once in the JSON
  spec::SloSpec slo;
  slo.targets.push_back({spec::SloMetric::ttft, 99, 1e9});
  metrics::Collector c({metrics::ClassInfo{"a", slo}, metrics::ClassInfo{"b", {}}}, slo, extra);
  auto rng = rng_stream(11, "test");
  boost::random::lognormal_distribution<double> lat(std::log(0.3), 1.0), step(std::log(0.02), 0.5);
  boost::random::uniform_int_distribution<int> len(1, 300), weight(1, 5);
  std::vector<double> ttft, tpot, e2e, itl;
  std::map<int, std::vector<double>> ttft_c, tpot_c, e2e_c;
  for (int i = 0; i < 4000; ++i) {
    metrics::FinishedRequest r;
    r.tenant = i % 2;
    r.arrival_s = 0.1 * i;
    r.admitted_s = r.arrival_s + 0.01;
    r.first_token_s = r.arrival_s + lat(rng);
    r.output_tokens = len(rng);
    r.input_tokens = 100;
    r.finish_s = r.first_token_s + step(rng) * static_cast<double>(r.output_tokens - 1);
    c.on_in_system_change(r.arrival_s, +1, r.tenant);
    c.on_request_finished(r);
    c.on_in_system_change(r.finish_s, -1, r.tenant);
    const double t = (r.first_token_s - r.arrival_s) * 1e3, e = (r.finish_s - r.arrival_s) * 1e3;
    ttft.push_back(t);
    e2e.push_back(e);
    ttft_c[r.tenant].push_back(t);
    e2e_c[r.tenant].push_back(e);
    if (r.output_tokens > 1) {
      const double p = (r.finish_s - r.first_token_s) * 1e3 / static_cast<double>(r.output_tokens - 1);
      tpot.push_back(p);
      tpot_c[r.tenant].push_back(p);
    }
  }
  metrics::LatencyHistogram::Source source;
  for (int i = 0; i < 20000; ++i) {
    const double gap = step(rng);
    const int w = weight(rng);
    c.on_token_gap(gap, w, source);
    for (int k = 0; k < w; ++k) itl.push_back(gap * 1e3);
  }
  c.merge_token_gaps(source.moments);
  const metrics::Summary s = c.summarize(0, 400);
  pct_check(s.ttft_ms, ttft, extra);
  pct_check(s.tpot_ms, tpot, extra);
  pct_check(s.itl_ms, itl, extra);
  pct_check(s.e2e_ms, e2e, extra);
  CHECK(pct_reported(s.ttft_ms, 99) > 0);  // the SLO's percentile is still there, once
  CHECK(pct_reported(s.ttft_ms, 95) == s.ttft_ms.p95);  // the same histogram, the same rule
  CHECK(s.queue_ms.quantiles.empty());  // queueing delay is not one of the four
  REQUIRE(s.classes.size() == 2);
  for (int k = 0; k < 2; ++k) {
    INFO("class " << k);
    pct_check(s.classes[k].ttft_ms, ttft_c[k], extra);
    pct_check(s.classes[k].tpot_ms, tpot_c[k], extra);
    pct_check(s.classes[k].e2e_ms, e2e_c[k], extra);
  }
  // In the result JSON as "p12.5" (and p95 once), and among vLLM's keys as "p12.5_itl_ms".
  const Json j = metrics::to_json(s);
  CHECK(j["itl_ms"]["p12.5"].get<double>() == pct_reported(s.itl_ms, 12.5));
  CHECK(j["tpot_ms"]["p99.9"].get<double>() == pct_reported(s.tpot_ms, 99.9));
  CHECK(j["e2e_ms"]["p75"].get<double>() == pct_reported(s.e2e_ms, 75));
  CHECK(j["ttft_ms"]["p95"].get<double>() == s.ttft_ms.p95);
  CHECK(j["p12.5_itl_ms"].get<double>() == pct_reported(s.itl_ms, 12.5));
  CHECK(j["p99.9_e2el_ms"].get<double>() == pct_reported(s.e2e_ms, 99.9));
  CHECK(j["classes"][1]["ttft_ms"]["p75"].get<double>() == pct_reported(s.classes[1].ttft_ms, 75));
  CHECK_FALSE(j["queue_ms"].contains("p75"));
}

TEST_CASE("metrics.percentiles: a run reports them as computed over its recorded requests, and nothing else moves",
          "[metrics]") {
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 6.0}}},
                  {"input_tokens", {{"dist", "lognormal"}, {"mean", 600}, {"sigma", 0.9}}},
                  {"output_tokens", {{"dist", "lognormal"}, {"mean", 150}, {"sigma", 0.8}}},
                  {"num_requests", 1500}, {"warmup_requests", 100}, {"seed", 3}};
  Json plain = test::scenario(w);
  Json asked = plain;
  const std::vector<double> extra = {25, 50, 99.5, 66.6};
  asked["metrics"] = {{"percentiles", extra}};
  engine::SimulationOptions opt;
  opt.record_requests = true;
  const auto r = engine::simulate(test::make(asked), opt);
  const auto base = engine::simulate(test::make(plain), opt);
  std::vector<double> ttft, tpot, e2e;
  for (const auto& q : r.requests) {
    if (q.warmup || q.outcome != engine::RequestOutcome::completed) continue;
    ttft.push_back((q.first_token_s - q.arrival_s) * 1e3);
    e2e.push_back((q.finish_s - q.arrival_s) * 1e3);
    if (q.output_tokens > 1) tpot.push_back((q.finish_s - q.first_token_s) * 1e3 / (q.output_tokens - 1));
  }
  REQUIRE(ttft.size() == 1400);
  pct_check(r.summary.ttft_ms, ttft, extra);
  pct_check(r.summary.tpot_ms, tpot, extra);
  pct_check(r.summary.e2e_ms, e2e, extra);
  // ITL's gaps are not recorded one by one: its extra percentiles come from the same histogram as p50.
  CHECK(pct_reported(r.summary.itl_ms, 50) == r.summary.itl_ms.p50);
  const double p25 = pct_reported(r.summary.itl_ms, 25), p995 = pct_reported(r.summary.itl_ms, 99.5);
  CHECK(p25 <= r.summary.itl_ms.p50);
  CHECK(p995 >= r.summary.itl_ms.p99);
  CHECK(p995 <= r.summary.itl_ms.max);
  // Reporting more changes nothing else: the run without the option is the same but for the added keys.
  Json a = metrics::to_json(r.summary), b = metrics::to_json(base.summary);
  for (const char* m : {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"}) {
    for (const char* k : {"p25", "p66.6", "p99.5"}) {
      CHECK(a[m].contains(k));
      a[m].erase(k);
    }
  }
  for (const char* m : {"ttft", "tpot", "itl", "e2el"})
    for (const char* k : {"p25_", "p66.6_", "p99.5_"}) a.erase(std::string(k) + m + "_ms");
  CHECK(a == b);
}
