#include "llmsim/core/error.hpp"

#include <cmath>
#include <cstdio>

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

ConfigError::ConfigError(std::string path, std::string problem)
    : Error(path.empty() ? problem : path + ": " + problem),
      path_(std::move(path)),
      problems_{what()} {}

ConfigError::ConfigError(std::vector<std::string> problems)
    : Error(join(problems)), problems_(std::move(problems)) {
  if (!problems_.empty()) {
    auto colon = problems_.front().find(':');
    path_ = problems_.front().substr(0, colon);
  }
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
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", v);
  }
  return buf;
}

}  // namespace llmsim
