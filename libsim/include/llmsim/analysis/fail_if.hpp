#pragma once
// `--fail-if 'FIELD OP VALUE'`: a condition on result rows that turns into exit status 1 for CI. A CI gate
// must not pass vacuously, so conditions are checked against the row schema before anything runs (field
// names and value types), a row without a value for the field violates the bound (unless allowed), and a
// field that has no value in any row is an error.
#include <string>
#include <utility>
#include <vector>

#include "llmsim/core/json_view.hpp"

namespace llmsim::analysis {

enum class CompareOp { lt, le, gt, ge, eq, ne };
std::string to_string(CompareOp op);  ///< "<", "<=", ">", ">=", "==", "!="

/// What a column holds: numbers (any operator, a numeric VALUE), booleans (== and != with true or false,
/// exactly), strings (== and !=), or any (a grid label whose values mix kinds: the VALUE's own kind).
enum class ValueKind { number, boolean, string, any };

/// Columns a condition may name, with their kinds, in column order.
using RowSchema = std::vector<std::pair<std::string, ValueKind>>;

/// The schema of result rows (analysis::row_columns()) whose grid labels are `label_paths`; each label's kind
/// is the common kind of its values over the points (`label_values[k]` for path k; mixed kinds: any).
RowSchema row_schema(const std::vector<std::string>& label_paths = {},
                     const std::vector<std::vector<Json>>& label_values = {});

struct FailIf {
  std::string field;   ///< a row column (analysis::row_columns()), e.g. "ttft_ms.p95"
  CompareOp op = CompareOp::gt;
  Json value;          ///< number, bool (true/false) or string (== and != only)
  std::string text;    ///< as given
};

/// Parses "FIELD OP VALUE" (spaces optional) against `schema`. ConfigError at `path` for a malformed condition,
/// an unknown field (listing the valid ones and close matches), or a VALUE or operator the field's kind does not
/// take: `fits == maybe`, `fits == FALSE`, `fits < 1`, `max_qps == fast`, `gpu > a` are all errors.
FailIf parse_fail_if(const std::string& text, const RowSchema& schema, const std::string& path = "--fail-if");
/// The same with the kinds of row_schema() for the columns it knows and `any` for the others (grid labels).
FailIf parse_fail_if(const std::string& text, const std::vector<std::string>& valid_fields,
                     const std::string& path = "--fail-if");

/// True when `value` violates the bound, i.e. makes the condition hold. A null value (a row without that number:
/// the option does not fit, completed nothing, or ran no capacity search) violates it unless `allow_missing`.
bool triggers(const FailIf& condition, const Json& value, bool allow_missing = false);

/// The conditions a flattened row triggers, as "FIELD OP VALUE (got X)".
std::vector<std::string> violations(const std::vector<FailIf>& conditions,
                                    const std::vector<std::pair<std::string, Json>>& flat_row,
                                    bool allow_missing = false);

/// ConfigError at `path` when a condition's field is null in every one of `flat_rows` (a bound that checks
/// nothing, e.g. max_qps without a capacity search), naming the condition; also when a condition on slo_met,
/// meets_slo or slo_attainment (at_target.*, autoscaled_bill.* too) meets a row whose scenario sets no SLO (its
/// slo_met_note), naming the field and the row. Nothing to
/// check in no rows.
void require_values(const std::vector<FailIf>& conditions,
                    const std::vector<std::vector<std::pair<std::string, Json>>>& flat_rows,
                    const std::string& path = "--fail-if");

}  // namespace llmsim::analysis
