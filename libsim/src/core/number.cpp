#include "llmsim/core/number.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cmath>

namespace llmsim {

std::optional<double> parse_number(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);  // from_chars takes '-' but not '+'
  if (text.empty()) return std::nullopt;
  bool digit = false;
  for (const char c : text) {
    if (c >= '0' && c <= '9') digit = true;
    else if (c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+') return std::nullopt;  // no inf/nan/hex
  }
  if (!digit) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, std::chars_format::general);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string format_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string format_digits(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

namespace {
// `v` to `digits` significant digits in fixed notation (the integer part whole).
std::string significant_fixed(double v, int digits) {
  if (v == 0 || !std::isfinite(v)) return format_digits(v, digits);
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  return format_fixed(v, std::max(0, digits - 1 - magnitude));
}
}  // namespace

std::pair<std::string, std::string> format_distinct(double a, double b, int digits) {
  for (int d = digits;; ++d) {
    auto pair = std::make_pair(significant_fixed(a, d), significant_fixed(b, d));
    if (pair.first != pair.second || a == b || d >= 6) return pair;
  }
}

}  // namespace llmsim
