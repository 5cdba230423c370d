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

// Fixed notation only where it reads as a number: from 1e15 on a double's integer digits stop being exact (2^53 is
// ~9.007e15) and "%f" runs to 309 digits. A char[64] cut them off: an offered rate of 1e300 req/s was printed as a
// 63-digit figure, 237 orders of magnitude short. There (and for inf/nan) the "%.6g" form format_value uses.
std::string format_fixed(double v, int decimals) {
  if (!std::isfinite(v) || std::fabs(v) >= kFixedNotationLimit) return format_digits(v, 6);
  const int n = std::snprintf(nullptr, 0, "%.*f", decimals, v);
  std::string out(static_cast<std::size_t>(std::max(n, 0)), '\0');
  std::snprintf(out.data(), out.size() + 1, "%.*f", decimals, v);
  return out;
}

std::string format_digits(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// `v` to `digits` significant digits in fixed notation (the integer part whole); below 1e-4 (a fixed form of 1e-300
// is 300 zeros) and from 1e15 on (format_fixed), scientific.
std::string format_significant(double v, int digits) {
  if (v == 0 || !std::isfinite(v)) return format_digits(v, digits);
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  if (magnitude < -4 || std::fabs(v) >= kFixedNotationLimit) return format_digits(v, digits);
  return format_fixed(v, std::max(0, digits - 1 - magnitude));
}

std::string format_fixed_nonzero(double v, int decimals) {
  if (v != 0 && std::isfinite(v) && std::fabs(v) < 0.5 * std::pow(10.0, -decimals)) return format_significant(v, 2);
  return format_fixed(v, decimals);
}

std::pair<std::string, std::string> format_distinct(double a, double b, int digits) {
  for (int d = digits;; ++d) {
    auto pair = std::make_pair(format_significant(a, d), format_significant(b, d));
    if (pair.first != pair.second || a == b || d >= 6) return pair;
  }
}

}  // namespace llmsim
