#include "llmsim/core/error.hpp"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "llmsim/core/number.hpp"

namespace llmsim {

namespace {
std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += "; ";
    out += s;
  }
  return out;
}
}  // namespace

void detail::check_failed(std::string_view msg, const char* cond, const char* file) {
  throw InternalError("internal check failed: " + std::string(msg) + " [" + cond + "] at " + file);
}

ConfigError::ConfigError(std::string path, std::string problem)
    : Error(path.empty() ? problem : path + ": " + problem),
      path_(std::move(path)),
      problems_{what()} {}

ConfigError::ConfigError(std::vector<std::string> problems)
    : Error(join(problems)), problems_(std::move(problems)) {
  for (auto& p : problems_) p = printable(p, kMaxMessageBytes);
  if (!problems_.empty()) {
    auto colon = problems_.front().find(':');
    path_ = problems_.front().substr(0, colon);
  }
}

namespace {
// Length of the valid UTF-8 sequence starting at s[i] (RFC 3629: no overlongs, no surrogates, <= U+10FFFF), or 0.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c >= 0xE1 && c <= 0xEC) n = 3;
  else if (c == 0xED) n = 3, hi = 0x9F;
  else if (c >= 0xEE && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}
}  // namespace

std::string printable(std::string_view text, std::size_t max_bytes) {
  static const char* hex = "0123456789ABCDEF";
  const std::size_t limit = max_bytes > 3 ? max_bytes - 3 : 0;  // room for "..." when cut
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 4);
  std::size_t keep = 0;  // length of `out` at the last character boundary within `limit`
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    std::string_view piece;
    char esc[4];
    std::size_t n = 1;
    if (c >= 0x20 && c < 0x7F) {
      piece = text.substr(i, 1);
    } else if (n = c >= 0x80 ? utf8_length(text, i) : 0; n > 0) {
      piece = text.substr(i, n);
    } else {  // a control character, DEL, or a byte that does not start valid UTF-8
      n = 1;
      esc[0] = '\\', esc[1] = 'x', esc[2] = hex[c >> 4], esc[3] = hex[c & 15];
      piece = std::string_view(esc, 4);
    }
    i += n;
    if (out.size() + piece.size() > max_bytes) {
      out.resize(keep);
      return out + "...";
    }
    out += piece;
    if (out.size() <= limit) keep = out.size();
  }
  return out;
}

void Problems::add(std::string path, std::string problem) {
  items_.push_back(path.empty() ? problem : path + ": " + problem);
}

void Problems::throw_if_any() const {
  if (!items_.empty()) throw ConfigError(items_);
}

std::string format_value(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < kFixedNotationLimit) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", v);
  }
  return buf;
}

std::string format_given(double v) {
  std::string s = format_value(v);
  if (!std::isfinite(v) || std::strtod(s.c_str(), nullptr) == v) return s;
  char buf[64];
  for (int digits = 7; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace llmsim
