#pragma once
// A result file of vLLM's serving benchmark: `vllm bench serve --save-result` (vllm/benchmarks/serve.py)
// or `python benchmarks/benchmark_serving.py --save-result` before it. Keys read, across versions (0.4 to
// 0.11+): date, backend, model_id, tokenizer_id, num_prompts, request_rate ("inf" or a number), burstiness,
// max_concurrency, duration, completed, failed, total_input_tokens, total_output_tokens,
// request_throughput, request_goodput, input_throughput (older), output_throughput, total_token_throughput,
// {mean,median,std}_<m>_ms and p<q>_<m>_ms for m in ttft, tpot, itl, e2el (named "latency" before E2EL),
// and the per-request input_lens / output_lens / ttfts when saved. Python's NaN / Infinity literals are accepted.
// Also read: SGLang's `python -m sglang.bench_serving` output (the same client lineage: {mean,median,std,p<q>}_
// e2e_latency_ms for E2EL, total_throughput, "concurrency" = mean requests in flight, random_input_len /
// random_output_len), JSON-lines files (`--append-result`, SGLang's --output-file: one run per line), and
// latency-only summaries: no duration or throughputs, but latency statistics, a request count (completed or
// num_prompts) and the lengths (total_*_tokens, or random_input_len / input_len and the output's).
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
  std::string source;                   ///< file name (with " line N" for a line of a JSON-lines file), for messages
  int line = 0;                         ///< the line of a JSON-lines file the run is on (1-based); 0 = whole file
  std::string client = "vllm";          ///< the benchmark client that wrote it: "vllm" | "sglang" (bench_serving)
  std::string date, backend, model_id, tokenizer_id;
  std::int64_t num_prompts = 0, completed = 0, failed = 0;
  std::optional<double> request_rate;   ///< requests/s; empty = "inf" (every request sent at once)
  double burstiness = 1.0;              ///< Gamma shape of the inter-arrival gaps (1 = Poisson)
  std::optional<int> max_concurrency;   ///< the client's cap on requests in flight
  double duration_s = 0;                ///< 0 = the file states none (a latency-only summary)
  std::int64_t total_input_tokens = 0, total_output_tokens = 0;  ///< 0 when not stated (see mean_*_len)
  /// Mean prompt and output length per completed request: from the totals, else the stated random_input_len /
  /// input_len (and the output's) of a summary without totals.
  std::int64_t mean_input_len = 0, mean_output_len = 0;
  std::string version;                  ///< the engine release the file states ("0.5.4"; vllm_version, version,
                                        ///< server_info.version), else ""
  std::vector<double> ttfts_s;          ///< per-request TTFT in seconds, in request order, when saved (else empty)
  std::vector<VllmScalar> scalars;      ///< duration, completed, totals and throughputs present in the file
  std::vector<VllmLatencyStat> latencies;
  std::vector<std::int64_t> input_lens, output_lens;  ///< per request, when saved (else empty)
  /// The dataset the client sampled, as the file states it ("" / 0 / empty when it does not): dataset_name,
  /// random_input_len, random_output_len, random_range_ratio.
  std::string dataset_name;
  std::int64_t random_input_len = 0, random_output_len = 0;
  std::optional<double> random_range_ratio;
  /// Per-request send times (s, in request order) when they are known: reproduced from the client's sampler
  /// (analysis/client_sampler.hpp), else empty (check draws them).
  std::vector<double> arrivals_s;
  /// How the per-request lists were obtained when the file does not save them ("" = saved, or none).
  std::string lists_from;
  /// The lists were drawn from the dataset's length distribution (analysis/dataset_requests.hpp), not reproduced
  /// request by request.
  bool lists_drawn = false;
};

/// Parses result text. ConfigError "<source>: ..." naming the field for a malformed file, and saying what
/// the file looks like when it is another tool's output (SGLang's bench_serving, LLMPerf, GenAI-Perf, ...).
VllmResult parse_vllm_result(std::string_view text, const std::string& source);
/// Reads and parses a result file.
VllmResult read_vllm_result(const std::string& path);

/// Every run of the text: one for a JSON document, one per non-blank line for JSON lines (`vllm bench serve
/// --append-result`, SGLang bench_serving's --output-file), each with `line` set and its source "<source> line N".
/// ConfigError naming the line for a line that is not a result.
std::vector<VllmResult> parse_vllm_results(std::string_view text, const std::string& source);
std::vector<VllmResult> read_vllm_results(const std::string& path);
/// The run on line `line` (1-based) of a JSON-lines file, or the single run of a JSON document (line 1).
/// ConfigError "--run" listing the lines that hold runs otherwise.
const VllmResult& pick_vllm_run(const std::vector<VllmResult>& runs, int line);

/// Splits a latency key: "p99.9_e2el_ms" -> {"p", 99.9, "e2el"}; "mean_latency_ms" -> {"mean", 0, "e2el"};
/// SGLang's "p90_e2e_latency_ms" -> {"p", 90, "e2el"}.
std::optional<VllmLatencyStat> parse_vllm_latency_key(const std::string& key);

}  // namespace llmsim::analysis
