#include "llmsim/analysis/fail_if.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"

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

Json parse_value(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  if (!text.empty()) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end && *end == '\0' && std::isfinite(v)) return v;
  }
  std::string s = text;
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front()) s = s.substr(1, s.size() - 2);
  return s;
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

}  // namespace

FailIf parse_fail_if(const std::string& text, const std::vector<std::string>& valid_fields, const std::string& path) {
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
  if (op_len == 0)
    throw ConfigError(path, "unknown operator in '" + text + "' (valid: < <= > >= == !=)");
  f.field = trim(text.substr(0, at));
  const std::string value = trim(text.substr(at + op_len));
  if (f.field.empty()) throw ConfigError(path, "missing FIELD before '" + to_string(f.op) + "' in '" + text + "'");
  if (value.empty()) throw ConfigError(path, "missing VALUE after '" + to_string(f.op) + "' in '" + text + "'");
  if (value.find_first_of("<>=!") == 0)
    throw ConfigError(path, "unknown operator in '" + text + "' (valid: < <= > >= == !=)");
  bool known = false;
  for (const auto& v : valid_fields) known = known || v == f.field;
  if (!known) throw ConfigError(path, unknown_name_message("field", f.field, valid_fields));
  f.value = parse_value(value);
  if (!f.value.is_number() && f.op != CompareOp::eq && f.op != CompareOp::ne)
    throw ConfigError(path, "'" + to_string(f.op) + "' needs a number, got '" + value + "' in '" + text + "'");
  return f;
}

bool triggers(const FailIf& c, const Json& value) {
  if (value.is_null()) return false;
  if (c.value.is_number()) {
    if (value.is_number()) return apply(c.op, value.get<double>(), c.value.get<double>());
    if (value.is_boolean()) return apply(c.op, value.get<bool>() ? 1.0 : 0.0, c.value.get<double>());
    return c.op == CompareOp::ne;  // a string is never equal to a number
  }
  if (c.value.is_boolean()) {
    if (value.is_boolean()) return apply(c.op, value.get<bool>(), c.value.get<bool>());
    if (value.is_number()) return apply(c.op, value.get<double>() != 0, c.value.get<bool>());
    return c.op == CompareOp::ne;
  }
  const std::string want = c.value.get<std::string>();
  const std::string got = value.is_string() ? value.get<std::string>() : value.dump();
  return apply(c.op, got, want);
}

std::vector<std::string> violations(const std::vector<FailIf>& conditions,
                                    const std::vector<std::pair<std::string, Json>>& flat_row) {
  std::vector<std::string> out;
  for (const auto& c : conditions) {
    for (const auto& [key, value] : flat_row) {
      if (key != c.field) continue;
      if (triggers(c, value)) out.push_back(c.field + " " + to_string(c.op) + " " +
                                            (c.value.is_string() ? c.value.get<std::string>() : c.value.dump()) +
                                            " (got " + (value.is_string() ? value.get<std::string>() : value.dump()) + ")");
    }
  }
  return out;
}

}  // namespace llmsim::analysis
