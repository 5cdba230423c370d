#pragma once
// The one output: what `llmsim simulate --json` prints and Python's Result.summary holds.
// Field names are a contract (DESIGN.md "Result format"): add, never rename.
#include <cstdint>
#include <string>
#include <vector>

#include "llmsim/core/json_view.hpp"

namespace llmsim::metrics {

/// Mean and percentiles of one latency, in milliseconds. All 0 when there were no samples (count = 0).
struct LatencyStats {
  double mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0;
  double stddev = 0;  ///< population standard deviation (vLLM's std_*_ms)
  std::int64_t count = 0;
  double max = 0;
  /// Percentile q in (0,100] from the underlying histogram (filled by the metrics collector).
  std::vector<std::pair<double, double>> quantiles;  ///< extra (q, value) pairs asked by the SLO
};

struct Throughput {
  double requests_per_s = 0, input_tokens_per_s = 0, output_tokens_per_s = 0, total_tokens_per_s = 0;
};

struct KvStats {
  std::int64_t capacity_tokens = 0;
  double peak_used_fraction = 0, mean_used_fraction = 0;
};

struct CostSummary {
  double per_hour = 0;                ///< all GPUs of the deployment + extras, USD/h
  double per_mtok_output_slo = 0;     ///< USD per million output tokens of SLO-meeting requests (0 = none met)
  double per_mtok_total_slo = 0;      ///< USD per million input+output tokens of SLO-meeting requests
  double monthly = 0;                 ///< USD per month (hours_per_month)
  double cold_start_s = 0;            ///< weight download time at cost.network_gbps
};

/// Per tenant class (only when the workload has several).
struct ClassSummary {
  std::string name;
  std::int64_t completed_requests = 0;
  double slo_attainment = 0, goodput_rps = 0;
  bool slo_met = true;
  LatencyStats ttft_ms, tpot_ms, e2e_ms;
};

struct Summary {
  bool fits = true;
  std::string reason;                 ///< why it cannot run (fits = false) or why unstable
  bool unstable = false;              ///< queue grew without bound: arrivals faster than service
  std::int64_t completed_requests = 0, rejected_requests = 0, clipped_requests = 0, preemptions = 0;
  double duration_s = 0;              ///< simulated time of the measured window
  double mean_in_system = 0;          ///< time-average of requests arrived and not finished (measured window)
  Throughput throughput;
  LatencyStats ttft_ms, tpot_ms, itl_ms, e2e_ms, queue_ms;
  double slo_attainment = 0;          ///< fraction of measured requests meeting every per-request threshold
  bool slo_met = true;                ///< every percentile target (and min_attainment) holds
  double goodput_rps = 0, goodput_output_tps = 0, goodput_total_tps = 0;
  KvStats kv;
  double mfu = 0, mbu = 0;            ///< model FLOPs / bandwidth utilisation over busy time
  /// Fraction of the run the replicas' GPUs were running iterations (board power under load); < 0 = unknown
  /// (synthetic service). Prices owned hardware's energy (analysis/ownership.hpp).
  double busy_fraction = -1;
  std::int64_t iterations = 0;
  CostSummary cost;
  std::vector<ClassSummary> classes;
};

/// The DESIGN.md result object (plus extra fields).
Json to_json(const Summary& s);
Json to_json(const LatencyStats& l);

}  // namespace llmsim::metrics
