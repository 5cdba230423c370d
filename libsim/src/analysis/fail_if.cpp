#include "llmsim/analysis/fail_if.hpp"

#include <cctype>
#include <cmath>

#include "llmsim/analysis/row.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/core/number.hpp"

namespace llmsim::analysis {

std::string to_string(CompareOp op) {
  switch (op) {
    case CompareOp::lt: return "<";
    case CompareOp::le: return "<=";
    case CompareOp::gt: return ">";
    case CompareOp::ge: return ">=";
    case CompareOp::eq: return "==";
    case CompareOp::ne: return "!=";
  }
  return "?";
}

namespace {

std::string trim(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

const char* kind_name(ValueKind k) {
  switch (k) {
    case ValueKind::number: return "a number";
    case ValueKind::boolean: return "true or false";
    case ValueKind::string: return "a string";
    case ValueKind::any: return "any value";
  }
  return "?";
}

ValueKind kind_of(const Json& v) {
  if (v.is_boolean()) return ValueKind::boolean;
  if (v.is_number()) return ValueKind::number;
  if (v.is_string()) return ValueKind::string;
  return ValueKind::any;
}

// A row with every optional part present, so that each column's value shows its kind (a column still null here
// is one this file does not know: `any`).
Row full_row() {
  metrics::Summary s;
  for (auto* l : {&s.ttft_ms, &s.tpot_ms, &s.itl_ms, &s.e2e_ms, &s.queue_ms}) l->count = 1;
  s.goodput_output_tps = s.goodput_total_tps = 1;
  s.cost.per_hour = 1;
  Row r;
  r.summary = s;
  r.at_target = s;
  r.at_target_load_qps = 1;
  r.at_target_concurrency = 1;
  CapacityResult c;
  c.found = true;
  c.max_concurrency = 1;
  r.capacity = c;
  r.load_qps = r.target_qps = 1;
  r.target_concurrency = 1;
  r.replicas_needed = 1;
  r.monthly_cost = r.scaling_efficiency = 1;
  return r;
}

// VALUE as the field's kind takes it; ConfigError otherwise.
Json typed_value(const std::string& value, ValueKind kind, CompareOp op, const FailIf& f, const std::string& path) {
  const bool ordering = op != CompareOp::eq && op != CompareOp::ne;
  std::string unquoted = value;
  const bool quoted = value.size() >= 2 && (value.front() == '\'' || value.front() == '"') && value.back() == value.front();
  if (quoted) unquoted = value.substr(1, value.size() - 2);
  const auto number = quoted ? std::nullopt : parse_number(value);
  auto refuse = [&](const std::string& why) {
    throw ConfigError(path, "'" + f.field + "' holds " + kind_name(kind) + ": " + why + " in '" + f.text + "'");
  };
  switch (kind) {
    case ValueKind::number:
      if (!number) refuse("'" + value + "' is not a number");
      return *number;
    case ValueKind::boolean:
      if (ordering) refuse("compare it with == or !=, not " + to_string(op));
      if (value == "true") return true;
      if (value == "false") return false;
      refuse("expected true or false (lower case), got '" + value + "'");
      return nullptr;
    case ValueKind::string:
      if (ordering) refuse("compare it with == or !=, not " + to_string(op));
      return unquoted;
    case ValueKind::any:
      if (!quoted && value == "true") return true;
      if (!quoted && value == "false") return false;
      if (number) return *number;
      if (ordering) throw ConfigError(path, "'" + to_string(op) + "' needs a number, got '" + value + "' in '" + f.text + "'");
      return unquoted;
  }
  return nullptr;
}

template <class T>
bool apply(CompareOp op, const T& a, const T& b) {
  switch (op) {
    case CompareOp::lt: return a < b;
    case CompareOp::le: return a <= b;
    case CompareOp::gt: return a > b;
    case CompareOp::ge: return a >= b;
    case CompareOp::eq: return a == b;
    case CompareOp::ne: return a != b;
  }
  return false;
}

std::string shown(const Json& v) {
  if (v.is_number()) return format_value(v.get<double>());
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

RowSchema row_schema(const std::vector<std::string>& label_paths, const std::vector<std::vector<Json>>& label_values) {
  Row full = full_row();
  for (std::size_t k = 0; k < label_paths.size(); ++k) full.labels.emplace_back(label_paths[k], nullptr);
  RowSchema schema;
  for (const auto& [column, value] : flatten(full)) {
    ValueKind kind = kind_of(value);
    for (std::size_t k = 0; k < label_paths.size(); ++k) {
      if (label_paths[k] != column) continue;
      kind = ValueKind::any;  // a label: its grid values decide
      bool first = true;
      if (k < label_values.size())
        for (const auto& v : label_values[k]) {
          if (v.is_null()) continue;
          const ValueKind vk = kind_of(v);
          kind = first || vk == kind ? vk : ValueKind::any;
          first = false;
        }
    }
    schema.emplace_back(column, kind);
  }
  return schema;
}

FailIf parse_fail_if(const std::string& text, const RowSchema& schema, const std::string& path) {
  static const std::pair<const char*, CompareOp> ops[] = {{"<=", CompareOp::le}, {">=", CompareOp::ge},
                                                          {"==", CompareOp::eq}, {"!=", CompareOp::ne},
                                                          {"<", CompareOp::lt},  {">", CompareOp::gt}};
  // The first operator character splits FIELD from VALUE; two-character operators win over one.
  const std::size_t at = text.find_first_of("<>=!");
  if (at == std::string::npos)
    throw ConfigError(path, "expected 'FIELD OP VALUE' with OP one of < <= > >= == !=, got '" + text + "'");
  FailIf f;
  f.text = text;
  std::size_t op_len = 0;
  for (const auto& [sym, op] : ops) {
    const std::string s = sym;
    if (text.compare(at, s.size(), s) == 0) {
      f.op = op;
      op_len = s.size();
      break;
    }
  }
  if (op_len == 0) throw ConfigError(path, "unknown operator in '" + text + "' (valid: < <= > >= == !=)");
  f.field = trim(text.substr(0, at));
  const std::string value = trim(text.substr(at + op_len));
  if (f.field.empty()) throw ConfigError(path, "missing FIELD before '" + to_string(f.op) + "' in '" + text + "'");
  if (value.empty()) throw ConfigError(path, "missing VALUE after '" + to_string(f.op) + "' in '" + text + "'");
  if (value.find_first_of("<>=!") == 0)
    throw ConfigError(path, "unknown operator in '" + text + "' (valid: < <= > >= == !=)");
  const std::pair<std::string, ValueKind>* column = nullptr;
  for (const auto& c : schema)
    if (c.first == f.field) column = &c;
  if (!column) {
    std::vector<std::string> names;
    for (const auto& c : schema) names.push_back(c.first);
    throw ConfigError(path, unknown_name_message("field", f.field, names));
  }
  f.value = typed_value(value, column->second, f.op, f, path);
  return f;
}

FailIf parse_fail_if(const std::string& text, const std::vector<std::string>& valid_fields, const std::string& path) {
  const RowSchema known = row_schema();
  RowSchema schema;
  for (const auto& field : valid_fields) {
    ValueKind kind = ValueKind::any;
    for (const auto& [c, k] : known)
      if (c == field) kind = k;
    schema.emplace_back(field, kind);
  }
  return parse_fail_if(text, schema, path);
}

bool triggers(const FailIf& c, const Json& value, bool allow_missing) {
  if (value.is_null()) return !allow_missing;  // no number cannot show the bound holds
  if (c.value.is_number()) {
    if (value.is_number()) return apply(c.op, value.get<double>(), c.value.get<double>());
    return c.op == CompareOp::ne;  // a label of another kind is never equal to a number
  }
  if (c.value.is_boolean()) {
    if (value.is_boolean()) return apply(c.op, value.get<bool>(), c.value.get<bool>());
    return c.op == CompareOp::ne;
  }
  const std::string want = c.value.get<std::string>();
  const std::string got = value.is_string() ? value.get<std::string>() : value.dump();
  return apply(c.op, got, want);
}

std::vector<std::string> violations(const std::vector<FailIf>& conditions,
                                    const std::vector<std::pair<std::string, Json>>& flat_row, bool allow_missing) {
  std::vector<std::string> out;
  for (const auto& c : conditions) {
    for (const auto& [key, value] : flat_row) {
      if (key != c.field || !triggers(c, value, allow_missing)) continue;
      out.push_back(c.field + " " + to_string(c.op) + " " + shown(c.value) + " (got " +
                    (value.is_null() ? std::string("no value") : shown(value)) + ")");
    }
  }
  return out;
}

void require_values(const std::vector<FailIf>& conditions,
                    const std::vector<std::vector<std::pair<std::string, Json>>>& flat_rows, const std::string& path) {
  if (flat_rows.empty()) return;
  // A verdict on the SLO where no SLO is set would pass or fail on a field that says nothing (issue 29): an error
  // naming the field, whatever the other rows hold.
  // The fields that are a verdict on the SLO or count what met it (slo_met, meets_slo, slo_attainment, goodput_*,
  // also under at_target, steady_state and autoscaled_bill): with no target every request "meets" it, so they are
  // null with the note.
  auto on_slo = [](const std::string& field) {
    const std::string last = field.substr(field.rfind('.') == std::string::npos ? 0 : field.rfind('.') + 1);
    return last == "slo_met" || last == "meets_slo" || last == "slo_attainment" || last.rfind("goodput_", 0) == 0 ||
           last == "request_goodput";
  };
  for (const auto& c : conditions) {
    if (!on_slo(c.field)) continue;
    for (std::size_t i = 0; i < flat_rows.size(); ++i)
      for (const auto& [key, value] : flat_rows[i])
        if (key == "slo_met_note" && value.is_string())
          throw ConfigError(path, "'" + c.text + "': '" + c.field +
                                      (c.field.find("slo_attainment") != std::string::npos || c.field.find("goodput") != std::string::npos
                                           ? "' has no value in row "
                                                                                           : "' has no verdict in row ") +
                                      std::to_string(i) + " (" +
                                      value.get<std::string>() + "); set a latency target (slo.ttft_ms.p95, slo.tpot_ms.p95, ...) or bound "
                                      "another field (unstable == true, ttft_ms.p95 > ...)");
  }
  for (const auto& c : conditions) {
    bool any = false;
    for (const auto& row : flat_rows)
      for (const auto& [key, value] : row) any = any || (key == c.field && !value.is_null());
    if (any) continue;
    const bool capacity_column = c.field.rfind("max_", 0) == 0 || c.field.rfind("at_target", 0) == 0 ||
                                 c.field == "replicas_needed" || c.field == "capacity_evaluations";
    throw ConfigError(path, "'" + c.field + "' has no value in any row, so '" + c.text + "' checks nothing" +
                                (capacity_column ? " (capacity columns are filled by --capacity)" : ""));
  }
}

}  // namespace llmsim::analysis
