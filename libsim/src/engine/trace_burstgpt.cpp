// BurstGPT (github.com/HPMLL/BurstGPT, arXiv:2401.17644): a CSV of LLM requests served through Azure OpenAI,
// header `Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type` — Timestamp in seconds from the
// trace's start, Model "ChatGPT" or "GPT-4", Log Type "Conversation log" or "API log". Its README documents the
// failures: BurstGPT_1.csv / _2.csv keep requests that failed, marked by `Response tokens` 0, and the
// `..._without_fails_...` files drop them. We drop them by default too, so both files replay the same workload;
// `failed: "keep"` replays them as a prompt with a 1-token reply (the prefill was still offered).
// The time, token and layout parsing is the CSV trace reader's (workload_source.cpp); this file holds what is
// BurstGPT's own: the filters and the failed rows.
#include <algorithm>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "trace_parse.hpp"

namespace llmsim::engine::detail {

namespace {

int find_column(const std::vector<std::string>& header, std::string_view name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (to_lower(header[i]) == to_lower(name)) return static_cast<int>(i);
  return -1;
}

// "Conversation" matches the column's "Conversation log" (and the full value matches itself), any case.
bool log_type_matches(const std::string& value, const std::string& wanted) {
  const std::string v = to_lower(value), w = to_lower(wanted);
  return v == w || v == w + " log";
}

}  // namespace

BurstGptFilter::BurstGptFilter(const std::vector<std::string>& header, const spec::TraceReplay& options,
                               const std::string& where)
    : model_(options.model), log_type_(options.log_type), keep_failed_(options.keep_failed) {
  if (!model_.empty() && (model_col_ = find_column(header, "Model")) < 0)
    throw ConfigError(where, "model filter '" + printable(model_, 60) + "' but the header has no Model column");
  if (!log_type_.empty() && (log_col_ = find_column(header, "Log Type")) < 0)
    throw ConfigError(where, "log_type filter '" + printable(log_type_, 60) + "' but the header has no Log Type column");
}

bool BurstGptFilter::keep(const std::vector<std::string>& f) const {
  if (model_col_ >= 0 && (static_cast<std::size_t>(model_col_) >= f.size() ||
                          to_lower(f[static_cast<std::size_t>(model_col_)]) != to_lower(model_)))
    return false;
  if (log_col_ >= 0 && (static_cast<std::size_t>(log_col_) >= f.size() ||
                        !log_type_matches(f[static_cast<std::size_t>(log_col_)], log_type_)))
    return false;
  return true;
}

}  // namespace llmsim::engine::detail
