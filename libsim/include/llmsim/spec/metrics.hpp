#pragma once
// The scenario's `metrics` section: what the result reports beyond its fixed statistics. JSON:
// {"percentiles": [75, 99.9]} — like vLLM's `vllm bench serve --metric-percentiles`.
#include <string>
#include <vector>

#include "llmsim/core/json_view.hpp"

namespace llmsim::spec {

struct MetricsSpec {
  /// Extra percentiles of TTFT, TPOT, ITL and E2E, reported in every latency object (overall and per tenant class)
  /// beside mean/p50/p90/p95/p99 and those an SLO asks for: "p75" there, "p75_ttft_ms" among vLLM's keys. Each in
  /// (0, 100) (p100 is `max`), no value twice, at most kMaxPercentiles. Reporting them costs nothing per request
  /// (the collector's histograms hold every percentile).
  std::vector<double> percentiles;
  static constexpr std::size_t kMaxPercentiles = 100;
  bool empty() const noexcept { return percentiles.empty(); }
  /// Every problem with its path ("metrics.percentiles[2]"), one ConfigError.
  void validate(const std::string& path = "metrics") const;
};

/// The `metrics` object (ConfigError with its path for unknown keys or a value that is not an array of numbers).
MetricsSpec metrics_from_json(const JsonView& v);
Json to_json(const MetricsSpec& m);

}  // namespace llmsim::spec
