#include "validation_row.hpp"

#include <algorithm>
#include <cmath>

namespace llmsim::validation {

const char* to_string(Kind k) {
  switch (k) {
    case Kind::engine: return "engine";
    case Kind::op: return "ops";
    case Kind::collective: return "collective";
  }
  return "?";
}

double Row::time_error() const { return higher_is_better ? measured / predicted - 1.0 : predicted / measured - 1.0; }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double rank = std::floor(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[static_cast<std::size_t>(std::min<double>(static_cast<double>(v.size() - 1), rank))];
}

}  // namespace llmsim::validation
