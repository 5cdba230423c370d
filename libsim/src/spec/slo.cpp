#include "llmsim/spec/slo.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "llmsim/core/error.hpp"

namespace llmsim::spec {

std::optional<double> parse_percentile_key(const std::string& key) {
  if (key.size() < 2 || key[0] != 'p' || key[1] == '.' || key.back() == '.') return std::nullopt;
  if (key.find_first_not_of("0123456789.", 1) != std::string::npos) return std::nullopt;
  if (std::count(key.begin(), key.end(), '.') > 1) return std::nullopt;
  char* end = nullptr;
  const double q = std::strtod(key.c_str() + 1, &end);
  if (end != key.c_str() + key.size()) return std::nullopt;
  return q;
}

std::string to_string(SloMetric m) {
  switch (m) {
    case SloMetric::ttft: return "ttft_ms";
    case SloMetric::tpot: return "tpot_ms";
    case SloMetric::itl: return "itl_ms";
    case SloMetric::e2e: return "e2e_ms";
  }
  throw InternalError("unknown SloMetric " + std::to_string(static_cast<int>(m)));
}

void SloSpec::validate(const std::string& path) const {
  Problems p;
  for (const auto& t : targets) {
    const std::string tp = path + "." + to_string(t.metric) + ".p" + format_value(t.percentile);
    if (!(t.percentile > 0 && t.percentile <= 100)) {
      p.add(tp, "percentile must be in (0, 100], got " + format_given(t.percentile));
    }
    if (!(t.max_ms > 0) || !std::isfinite(t.max_ms)) p.add(tp, "must be > 0 ms, got " + format_given(t.max_ms));
  }
  if (min_attainment && !(*min_attainment > 0 && *min_attainment <= 1)) {
    p.add(path + ".min_attainment", "must be in (0, 1], got " + format_given(*min_attainment));
  }
  p.throw_if_any();
}

}  // namespace llmsim::spec
