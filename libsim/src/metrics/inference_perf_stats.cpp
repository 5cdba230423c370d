#include "llmsim/metrics/inference_perf_stats.hpp"

#include <algorithm>
#include <cmath>

#include "llmsim/core/error.hpp"

namespace llmsim::metrics {

namespace {
void check_length(std::int64_t n) {
  if (n < 1) throw ConfigError("inference-perf reply length", "must be >= 1 token, got " + std::to_string(n));
}
}  // namespace

double inference_perf_tpot_scale(std::int64_t n) {
  check_length(n);
  return static_cast<double>(n - 1) / static_cast<double>(2 * n + 1);
}

InferencePerfItl inference_perf_itl(const std::string& statistic, double percentile, std::int64_t n) {
  check_length(n);
  InferencePerfItl r;
  if (statistic == "mean") {
    r.mean = true;
    r.scale = inference_perf_tpot_scale(n);
    r.predictable = n > 1;
    if (!r.predictable) r.why = "a 1-token reply has no token gap: every gap is the client's own";
    return r;
  }
  double p = percentile;
  if (statistic == "median") p = 50;
  else if (statistic != "p") throw ConfigError("inference-perf ITL statistic", "unknown: '" + statistic + "'");
  if (!(p > 0 && p <= 100)) {
    throw ConfigError("inference-perf ITL percentile", "must be in (0, 100], got " + std::to_string(p));
  }
  const double N = static_cast<double>(n);
  const double q = (p / 100.0 * (2 * N + 1) - (N + 2)) / (N - 1) * 100.0;  // n = 1: -inf or NaN, not > 0
  if (!(q > 0)) {
    r.why = "inference-perf stamps every SSE line, blank separators included: " + std::to_string(n + 2) + " of a " +
            std::to_string(n) + "-token reply's " + std::to_string(2 * n + 1) +
            " gaps are microseconds (the client parsing the event it just stamped), so this percentile is one of "
            "them, a client time, not a token gap";
    return r;
  }
  r.predictable = true;
  r.token_percentile = std::min(100.0, std::round(q * 1000.0) / 1000.0);
  return r;
}

}  // namespace llmsim::metrics
