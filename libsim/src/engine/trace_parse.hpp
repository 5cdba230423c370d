#pragma once
// Private to the engine: the pieces of trace parsing shared by workload_source.cpp (CSV layouts, the selection),
// trace_burstgpt.cpp (BurstGPT's filters and failed rows) and trace_mooncake.cpp (Mooncake JSONL, block hashes).
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "llmsim/core/csv.hpp"
#include "llmsim/engine/workload_source.hpp"

namespace llmsim::engine::detail {

/// Rows as read, in file order, after the row-level filters (BurstGPT's model, log type and failed rows).
struct RawTrace {
  Trace trace;
  double first_s = std::numeric_limits<double>::infinity();  ///< earliest time of any valid row, filtered or not
};

/// A whole number of tokens in [lo, 1e9] from `text`: strict decimal (parse_number), so "1,000" or "12abc" is
/// an error at `where`, never a different count.
std::int64_t parse_token_count(std::string_view text, const std::string& where, std::int64_t lo);

/// BurstGPT's row filters: the Model and Log Type columns of `header` matched against the options.
class BurstGptFilter {
 public:
  /// ConfigError at `source:line` when a filter is set and its column is missing.
  BurstGptFilter(const std::vector<std::string>& header, const spec::TraceReplay& options, const std::string& where);
  /// Whether the row passes the model and log-type filters.
  bool keep(const std::vector<std::string>& fields) const;
  /// Whether a row of `output_tokens` (BurstGPT marks a failed request by Response tokens 0) is replayed.
  bool keep_output(std::int64_t output_tokens) const { return output_tokens > 0 || keep_failed_; }

 private:
  int model_col_ = -1, log_col_ = -1;
  std::string model_, log_type_;
  bool keep_failed_ = false;
};

/// Mooncake JSONL: one JSON object per line (blank lines skipped). ConfigError "<source>:<line>: field NAME: ...".
RawTrace parse_mooncake(std::string_view text, const std::string& source, const spec::TraceReplay& options);

}  // namespace llmsim::engine::detail
