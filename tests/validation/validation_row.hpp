#pragma once
// One comparison of the validation report: a public measurement, its conditions, and llmsim's prediction of it
// through the public C++ API. docs/trust.md describes the sets and how each metric is predicted.
#include <cstdint>
#include <string>
#include <vector>

namespace llmsim::validation {

/// What a row measures: whole-engine quantities (static batches, steps, tokens/s), one operator of one layer,
/// or one collective. Groups by batch, context, TP, GPU, weights and KV dtype are formed over engine rows;
/// operator and collective rows are grouped by set, GPU and TP under their own kind (docs/trust.md).
enum class Kind { engine, op, collective };
const char* to_string(Kind k);

struct Row {
  std::string set;      ///< "lmdeploy", "vidur-ops", ...
  std::string source_url;  ///< the source's public address where known (perf::is_blind_source reads it)
  std::string where;    ///< file:line of the measurement (traceability)
  Kind kind = Kind::engine;
  std::string engine;   ///< "vllm", "sglang", "lmdeploy-turbomind", "gpt-fast", "llama.cpp", "nccl"
  std::string runtime;  ///< the runtime llmsim prices the row as (spec::Runtime name; "" for op/collective rows)
  std::string gpu;      ///< catalogue id
  std::string model;    ///< catalogue id, file, or operator name for op rows
  std::string weights;  ///< weight format id ("" for collectives)
  std::string kv_dtype; ///< "fp16", "bf16", "fp8" ("" where no KV is involved)
  std::string metric;   ///< "output_tok_per_s", "batch_latency_s", "allreduce_s", ...
  int tp = 1;
  std::int64_t batch = 0, input = 0, output = 0;  ///< 0 = not applicable
  double context = -1;        ///< mean cached context of what was measured (tokens); < 0 = not applicable
  double message_bytes = 0;   ///< collectives
  double measured = 0, predicted = 0;
  bool higher_is_better = false;  ///< throughput-like metric (tokens/s) rather than a time
  /// False: printed with `note` but left out of every group, tolerance and bias check (an excluded measurement,
  /// or an engine llmsim does not model there).
  bool scored = true;
  std::string note;

  /// Error on the time scale: predicted time / measured time − 1 (for tokens/s, measured / predicted − 1).
  /// > 0: llmsim is slower (more pessimistic) than the measurement; < 0: faster.
  double time_error() const;
  /// predicted / measured − 1 in the metric's own units (what the folded-in reference checks always used).
  double native_error() const { return predicted / measured - 1.0; }
};

/// Median and nearest-rank percentile (q in [0, 1]) of a copy; 0 for an empty vector.
double median(std::vector<double> v);
double percentile(std::vector<double> v, double q);

}  // namespace llmsim::validation
