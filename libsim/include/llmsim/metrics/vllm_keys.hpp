#pragma once
// vLLM's benchmark key names in the result JSON, added beside llmsim's own (never replacing them), so a
// script written for `vllm bench serve --save-result` output reads `llmsim simulate --json` unchanged.
// Definitions follow vllm/benchmarks/serve.py (benchmarks/benchmark_serving.py before it): TTFT, TPOT
// (per request, outputs > 1 token), ITL (every inter-token gap), E2EL (request latency); mean, median,
// std (population, numpy's default) and the percentiles p50, p90, p95, p99 plus any an SLO asked for,
// named as vLLM names them ("p99_ttft_ms", "p99.9_ttft_ms"); throughputs over the measured duration.
#include <string>

#include "llmsim/core/json_view.hpp"
#include "llmsim/metrics/summary.hpp"

namespace llmsim::metrics {

/// vLLM's name for percentile q of `metric` ("ttft", "tpot", "itl", "e2el"): "p99_ttft_ms", "p99.9_ttft_ms".
std::string vllm_percentile_key(double q, const std::string& metric);

/// Adds the vLLM-named keys of `s` to the result object `j` (duration, completed, total_input_tokens,
/// total_output_tokens, request_throughput, request_goodput, output_throughput, total_token_throughput,
/// and {mean,median,std,pXX}_{ttft,tpot,itl,e2el}_ms).
void add_vllm_keys(Json& j, const Summary& s);

}  // namespace llmsim::metrics
