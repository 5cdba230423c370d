#pragma once
// `--fail-if 'FIELD OP VALUE'`: a condition on result rows that turns into exit status 1 for CI.
#include <string>
#include <utility>
#include <vector>

#include "llmsim/core/json_view.hpp"

namespace llmsim::analysis {

enum class CompareOp { lt, le, gt, ge, eq, ne };
std::string to_string(CompareOp op);  ///< "<", "<=", ">", ">=", "==", "!="

struct FailIf {
  std::string field;   ///< a row column (analysis::row_columns()), e.g. "ttft_ms.p95"
  CompareOp op = CompareOp::gt;
  Json value;          ///< number, bool (true/false) or string (== and != only)
  std::string text;    ///< as given
};

/// Parses "FIELD OP VALUE" (spaces optional). ConfigError at `path` for a malformed condition, an unknown
/// field (listing the valid ones and close matches) or an ordering operator on a non-number.
FailIf parse_fail_if(const std::string& text, const std::vector<std::string>& valid_fields,
                     const std::string& path = "--fail-if");

/// True when `value` makes the condition hold, i.e. the row violates the bound. A null value (an option
/// that does not fit has no latency) never triggers: add `fits == false` to fail on those.
bool triggers(const FailIf& condition, const Json& value);

/// The conditions a flattened row triggers, as "FIELD OP VALUE (got X)".
std::vector<std::string> violations(const std::vector<FailIf>& conditions,
                                    const std::vector<std::pair<std::string, Json>>& flat_row);

}  // namespace llmsim::analysis
