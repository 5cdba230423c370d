#pragma once
// A result file of vLLM's serving benchmark: `vllm bench serve --save-result` (vllm/benchmarks/serve.py)
// or `python benchmarks/benchmark_serving.py --save-result` before it. Keys read, across versions (0.4 to
// 0.11+): date, backend, model_id, tokenizer_id, num_prompts, request_rate ("inf" or a number), burstiness,
// max_concurrency, duration, completed, failed, total_input_tokens, total_output_tokens,
// request_throughput, request_goodput, input_throughput (older), output_throughput, total_token_throughput,
// {mean,median,std}_<m>_ms and p<q>_<m>_ms for m in ttft, tpot, itl, e2el (named "latency" before E2EL),
// and the per-request input_lens / output_lens when saved. Python's NaN / Infinity literals are accepted.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmsim/core/json_view.hpp"

namespace llmsim::analysis {

/// One latency statistic of the file: "p99_ttft_ms" is {metric "ttft", statistic "p", percentile 99}.
struct VllmLatencyStat {
  std::string key;        ///< as written in the file
  std::string metric;     ///< ttft | tpot | itl | e2el
  std::string statistic;  ///< mean | median | std | p
  double percentile = 0;  ///< for "p"
  double value_ms = 0;
};

/// A counter or rate of the file (completed, duration, request_throughput, ...), in file order.
struct VllmScalar {
  std::string key;
  double value = 0;
};

struct VllmResult {
  std::string source;                   ///< file name, for messages
  std::string date, backend, model_id, tokenizer_id;
  std::int64_t num_prompts = 0, completed = 0, failed = 0;
  std::optional<double> request_rate;   ///< requests/s; empty = "inf" (every request sent at once)
  double burstiness = 1.0;              ///< Gamma shape of the inter-arrival gaps (1 = Poisson)
  std::optional<int> max_concurrency;   ///< the client's cap on requests in flight
  double duration_s = 0;
  std::int64_t total_input_tokens = 0, total_output_tokens = 0;
  std::vector<VllmScalar> scalars;      ///< duration, completed, totals and throughputs present in the file
  std::vector<VllmLatencyStat> latencies;
  std::vector<std::int64_t> input_lens, output_lens;  ///< per request, when saved (else empty)
};

/// Parses result text. ConfigError "<source>: ..." naming the field for a malformed file, and saying what
/// the file looks like when it is another tool's output (SGLang's bench_serving, LLMPerf, GenAI-Perf, ...).
VllmResult parse_vllm_result(std::string_view text, const std::string& source);
/// Reads and parses a result file.
VllmResult read_vllm_result(const std::string& path);

/// Splits a latency key: "p99.9_e2el_ms" -> {"p", 99.9, "e2el"}; "mean_latency_ms" -> {"mean", 0, "e2el"}.
std::optional<VllmLatencyStat> parse_vllm_latency_key(const std::string& key);

}  // namespace llmsim::analysis
