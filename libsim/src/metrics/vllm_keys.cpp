#include "llmsim/metrics/vllm_keys.hpp"

#include <cmath>
#include <cstdio>

namespace llmsim::metrics {

std::string vllm_percentile_key(double q, const std::string& metric) {
  // vLLM: p_word = str(int(p)) if int(p) == p else str(p)  (Python's shortest repr: 99.9 -> "99.9").
  char buf[32];
  if (q == std::floor(q)) std::snprintf(buf, sizeof buf, "%.0f", q);
  else std::snprintf(buf, sizeof buf, "%.15g", q);
  return "p" + std::string(buf) + "_" + metric + "_ms";
}

namespace {

void add_metric(Json& j, const std::string& metric, const LatencyStats& l) {
  const auto stat = [&](double v) { return l.count > 0 ? Json(v) : Json(nullptr); };  // no sample: null, not 0
  j["mean_" + metric + "_ms"] = stat(l.mean);
  j["median_" + metric + "_ms"] = stat(l.p50);
  j["std_" + metric + "_ms"] = stat(l.stddev);
  for (const auto& [q, v] : {std::pair{50.0, l.p50}, {90.0, l.p90}, {95.0, l.p95}, {99.0, l.p99}})
    j[vllm_percentile_key(q, metric)] = stat(v);
  for (const auto& [q, v] : l.quantiles) j[vllm_percentile_key(q, metric)] = stat(v);
}

}  // namespace

void add_vllm_keys(Json& j, const Summary& s) {
  const double d = s.duration_s;
  j["duration"] = d;
  j["completed"] = s.completed_requests;
  // Token counts are whole numbers; the summary keeps them as rates over the duration.
  j["total_input_tokens"] = static_cast<std::int64_t>(std::llround(s.throughput.input_tokens_per_s * d));
  j["total_output_tokens"] = static_cast<std::int64_t>(std::llround(s.throughput.output_tokens_per_s * d));
  j["request_throughput"] = s.throughput.requests_per_s;
  // vLLM writes request_goodput only with --goodput (None otherwise): null here without a latency target.
  j["request_goodput"] = s.slo_set ? Json(s.goodput_rps) : Json(nullptr);
  j["output_throughput"] = s.throughput.output_tokens_per_s;
  j["total_token_throughput"] = s.throughput.total_tokens_per_s;
  add_metric(j, "ttft", s.ttft_ms);
  add_metric(j, "tpot", s.tpot_ms);
  add_metric(j, "itl", s.itl_ms);
  add_metric(j, "e2el", s.e2e_ms);
}

}  // namespace llmsim::metrics
