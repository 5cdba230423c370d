#pragma once
// Service-level objectives: latency targets at a percentile, and the per-request test behind goodput.
#include <optional>
#include <string>
#include <vector>

namespace llmsim::spec {

enum class SloMetric { ttft, tpot, itl, e2e };
std::string to_string(SloMetric m);  ///< "ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"

/// P<percentile> of <metric> must be <= max_ms. JSON: {"ttft_ms": {"p95": 2000}}.
struct SloTarget {
  SloMetric metric = SloMetric::ttft;
  double percentile = 95;  ///< in (0, 100]
  double max_ms = 2000;
};

/// The number of a percentile key written "p50", "p95", "p99.9" (an SLO's keys, vLLM's p99_ttft_ms): 'p', then digits
/// with at most one inner '.'. nullopt for anything else — also what strtod would take besides ("p0x5f" is hex for
/// 95, "p1e1", "pinf", " p95", "p+95"). The caller checks the range (0, 100]. The one reader of percentile keys (the
/// scenario's SLO and vLLM's files).
std::optional<double> parse_percentile_key(const std::string& key);

struct SloSpec {
  std::vector<SloTarget> targets;
  /// When set, the SLO also requires this fraction of requests to be good (meet every max_ms themselves).
  std::optional<double> min_attainment;
  bool empty() const noexcept { return targets.empty() && !min_attainment; }
  void validate(const std::string& path = "slo") const;
};

}  // namespace llmsim::spec
