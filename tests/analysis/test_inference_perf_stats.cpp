// inference-perf's streaming statistics from vLLM's per-token ones (metrics/inference_perf_stats.hpp): replayed
// against the client's own arithmetic on synthetic streams — 2n + 2 stamps per n-token reply, a blank line
// microseconds after each data line — so a wrong count of stamps or of short gaps moves the predictions.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/metrics/inference_perf_stats.hpp"

using namespace llmsim;
using namespace llmsim::metrics;

namespace {

/// Requests of n tokens with token gaps drawn uniform in [5, 30] ms, streamed as inference-perf stamps them.
struct IpStreams {
  std::vector<double> token_gaps;  ///< vLLM's ITL sample (every gap between a request's tokens)
  std::vector<double> vllm_tpot;   ///< vLLM's TPOT per request: (last token − first) / (n − 1)
  std::vector<double> ip_gaps;     ///< inference-perf's ITL sample: every gap between stamps
  std::vector<double> ip_tpot;     ///< inference-perf's TPOT per request
};

IpStreams ip_streams(int requests, int n) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> gap(5.0, 30.0), parse(0.005, 0.1);
  IpStreams s;
  for (int r = 0; r < requests; ++r) {
    std::vector<double> tokens{100.0};
    for (int k = 1; k < n; ++k) tokens.push_back(tokens.back() + gap(rng));
    std::vector<double> stamps;
    for (double t : tokens) {
      stamps.push_back(t);                 // "data: {...}" arrives with the token
      stamps.push_back(t + parse(rng));    // its blank line, stamped after json.loads of the event
    }
    stamps.push_back(stamps.back() + parse(rng));  // "data: [DONE]"
    stamps.push_back(stamps.back() + parse(rng));  // its blank line
    for (std::size_t k = 1; k < tokens.size(); ++k) s.token_gaps.push_back(tokens[k] - tokens[k - 1]);
    s.vllm_tpot.push_back((tokens.back() - tokens.front()) / (n - 1));
    for (std::size_t k = 1; k < stamps.size(); ++k) s.ip_gaps.push_back(stamps[k] - stamps[k - 1]);
    s.ip_tpot.push_back((stamps.back() - stamps.front()) / static_cast<double>(stamps.size() - 1));
  }
  return s;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

}  // namespace

TEST_CASE("inference-perf's TPOT and ITL mean follow vLLM's by (n - 1)/(2n + 1)") {
  for (int n : {20, 248}) {
    const auto s = ip_streams(400, n);
    CHECK(inference_perf_tpot_scale(n) == Approx((n - 1.0) / (2.0 * n + 1.0)));
    // Within the microseconds of the last two lines: 0.2 ms over 2n + 1 gaps.
    CHECK(mean_of(s.ip_tpot) == Approx(mean_of(s.vllm_tpot) * inference_perf_tpot_scale(n)).margin(0.2 / n));
    const auto m = inference_perf_itl("mean", 0, n);
    REQUIRE(m.predictable);
    REQUIRE(m.mean);
    CHECK(mean_of(s.ip_gaps) == Approx(mean_of(s.token_gaps) * m.scale).margin(0.2 / n));
    // About half, not the token gap: the statistic a per-token comparison would get wrong by 2x.
    CHECK(m.scale < 0.5);
  }
}

TEST_CASE("inference-perf's ITL percentiles: the upper ones are token-gap percentiles, the lower ones client time") {
  for (int n : {20, 248}) {
    const auto s = ip_streams(1000, n);
    for (double p : {75.0, 90.0, 95.0, 99.0, 99.9}) {
      INFO("n " << n << " p" << p);
      const auto r = inference_perf_itl("p", p, n);
      REQUIRE(r.predictable);
      CHECK_FALSE(r.mean);
      CHECK(r.token_percentile > 0);
      CHECK(r.token_percentile < p);  // the short gaps below push every percentile of the tokens' down
      const double measured = analysis::numpy_percentile(s.ip_gaps, p);
      const double predicted = analysis::numpy_percentile(s.token_gaps, r.token_percentile);
      // Token gaps are uniform on 25 ms: 0.15 ms is 0.6 percentile points, the stamped gaps 0.005-0.1 ms short
      // (n = 20: one short gap miscounted moves p75 by 5 points, 1.3 ms).
      CHECK(predicted == Approx(measured).margin(0.15));
    }
    for (const auto& [stat, p] : {std::pair<std::string, double>{"median", 0}, {"p", 25}, {"p", 0.1}, {"p", 50}}) {
      INFO("n " << n << " " << stat << " " << p);
      const auto r = inference_perf_itl(stat, p, n);
      CHECK_FALSE(r.predictable);
      CHECK(r.why.find("blank separators") != std::string::npos);
      // The client's statistic there is indeed a short gap, not a token gap (>= 5 ms).
      CHECK(analysis::numpy_percentile(s.ip_gaps, stat == "median" ? 50 : p) < 1.0);
    }
  }
  // p75 of 248-token replies is the tokens' p49.7: (0.75 · 497 − 250) / 247.
  CHECK(inference_perf_itl("p", 75, 248).token_percentile == Approx(49.696).margin(1e-3));
}

TEST_CASE("inference-perf statistics refuse a bad length, statistic or percentile by name") {
  CHECK_THROWS_AS(inference_perf_tpot_scale(0), ConfigError);
  CHECK_THROWS_WITH(inference_perf_itl("mean", 0, -3), Catch::Contains("reply length"));
  CHECK_THROWS_WITH(inference_perf_itl("std", 0, 10), Catch::Contains("unknown: 'std'"));
  CHECK_THROWS_WITH(inference_perf_itl("p", 0, 10), Catch::Contains("percentile"));
  CHECK_THROWS_WITH(inference_perf_itl("p", 101, 10), Catch::Contains("percentile"));
  // One token: every gap is the client's own.
  CHECK_FALSE(inference_perf_itl("mean", 0, 1).predictable);
  CHECK_FALSE(inference_perf_itl("p", 99.9, 1).predictable);
  CHECK(inference_perf_tpot_scale(1) == 0);
}
