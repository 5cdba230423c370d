// vLLM's benchmark key names in the result JSON (metrics/vllm_keys.hpp) and the running std behind them.
#include <catch2/catch.hpp>

#include <cmath>

#include "llmsim/metrics/collector.hpp"
#include "llmsim/metrics/latency_histogram.hpp"
#include "llmsim/metrics/summary.hpp"
#include "llmsim/metrics/vllm_keys.hpp"

using namespace llmsim;
using namespace llmsim::metrics;

TEST_CASE("latency std is the population std (numpy's np.std, as vLLM reports it)") {
  LatencyHistogram h;
  for (double v : {1.0, 2.0, 3.0, 4.0}) h.add(v);
  CHECK(h.stddev() == Approx(std::sqrt(1.25)).epsilon(1e-12));  // np.std([1,2,3,4]) = 1.1180339887
  CHECK(h.stats().stddev == Approx(std::sqrt(1.25)).epsilon(1e-12));
  // A weight counts as that many samples.
  LatencyHistogram w;
  w.add(1.0, 3.0);
  w.add(5.0, 1.0);
  CHECK(w.stddev() == Approx(std::sqrt(3.0)).epsilon(1e-12));  // np.std([1,1,1,5]) = 1.7320508
  // Stable when the spread is tiny against the mean (a naive E[x²]−mean² loses it).
  LatencyHistogram t;
  for (int i = 0; i < 100000; ++i) t.add(1e6 + (i % 2 ? 0.5 : -0.5));
  CHECK(t.stddev() == Approx(0.5).epsilon(1e-6));
  CHECK(LatencyHistogram().stddev() == 0);
}

TEST_CASE("vLLM's percentile key names") {
  CHECK(vllm_percentile_key(99, "ttft") == "p99_ttft_ms");
  CHECK(vllm_percentile_key(99.9, "e2el") == "p99.9_e2el_ms");
  CHECK(vllm_percentile_key(50, "itl") == "p50_itl_ms");
}

TEST_CASE("the result JSON carries vLLM's keys beside ours, with the same values") {
  spec::SloSpec slo;
  slo.targets.push_back({spec::SloMetric::ttft, 99.9, 1000});
  Collector c({ClassInfo{"default", slo}}, slo);
  // Three requests: arrival 0, first token at 0.1/0.2/0.3 s, 11 tokens each, finish 1.1/1.2/2.3 s.
  const double first[] = {0.1, 0.2, 0.3}, finish[] = {1.1, 1.2, 2.3};
  for (int i = 0; i < 3; ++i) {
    FinishedRequest r;
    r.arrival_s = 0;
    r.admitted_s = 0;
    r.first_token_s = first[i];
    r.finish_s = finish[i];
    r.input_tokens = 100;
    r.output_tokens = 11;
    c.on_request_finished(r);
  }
  metrics::LatencyHistogram::Source gaps;  // one engine replica's
  c.on_token_gap(0.1, 30, gaps);
  c.merge_token_gaps(gaps.moments);
  const Summary s = c.summarize(0, 2.5);
  const Json j = to_json(s);
  // Ours are still there, unchanged.
  REQUIRE(j.contains("ttft_ms"));
  REQUIRE(j.contains("duration_s"));
  CHECK(j["mean_ttft_ms"] == j["ttft_ms"]["mean"]);
  CHECK(j["median_ttft_ms"] == j["ttft_ms"]["p50"]);
  CHECK(j["p99_ttft_ms"] == j["ttft_ms"]["p99"]);
  CHECK(j["p99.9_ttft_ms"] == j["ttft_ms"]["p99.9"]);
  CHECK(j["mean_e2el_ms"] == j["e2e_ms"]["mean"]);
  CHECK(j["mean_itl_ms"].get<double>() == Approx(100));
  CHECK(j["std_itl_ms"].get<double>() == Approx(0).margin(1e-9));
  // TTFT 100/200/300 ms: np.std = 81.6497 ms; TPOT (1.0, 1.0, 2.0 s)/10 = 100/100/200 ms.
  CHECK(j["std_ttft_ms"].get<double>() == Approx(81.6496580927726).epsilon(1e-9));
  CHECK(j["mean_tpot_ms"].get<double>() == Approx(133.3333333).epsilon(1e-6));
  CHECK(j["duration"] == 2.5);
  CHECK(j["completed"] == 3);
  CHECK(j["total_input_tokens"] == 300);
  CHECK(j["total_output_tokens"] == 33);
  CHECK(j["request_throughput"].get<double>() == Approx(3 / 2.5));
  CHECK(j["output_throughput"].get<double>() == Approx(33 / 2.5));
  CHECK(j["total_token_throughput"].get<double>() == Approx(333 / 2.5));
  CHECK(j["request_goodput"] == j["goodput_rps"]);
}
