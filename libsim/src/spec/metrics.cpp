#include "llmsim/spec/metrics.hpp"

#include "llmsim/core/error.hpp"
#include "llmsim/spec/slo.hpp"
#include "scenario_json.hpp"

namespace llmsim::spec {

void MetricsSpec::validate(const std::string& path) const {
  Problems p;
  const std::string at = path + ".percentiles";
  if (percentiles.size() > kMaxPercentiles) {
    p.add(at, "at most " + std::to_string(kMaxPercentiles) + " percentiles, got " + std::to_string(percentiles.size()));
    p.throw_if_any();
  }
  for (std::size_t i = 0; i < percentiles.size(); ++i) {
    const double q = percentiles[i];
    const std::string qp = at + "[" + std::to_string(i) + "]";
    if (!(q > 0 && q < 100)) {
      p.add(qp, "a percentile must be in (0, 100) (p100 is the max, reported already), got " + format_given(q));
      continue;
    }
    // Its key in every output is "p" + the number as given ("p99.9"): one the key reader takes back (an SLO, a vLLM
    // file), not "p1e-05" (parse_percentile_key refuses exponents).
    if (const auto back = parse_percentile_key("p" + format_given(q)); !back || *back != q) {
      p.add(qp, "must be a plain decimal whose key reads back (p" + format_given(q) +
                    " has an exponent: write at least 0.0001), got " + format_given(q));
      continue;
    }
    for (std::size_t k = 0; k < i; ++k) {
      if (percentiles[k] == q) {
        p.add(qp, "duplicates " + at + "[" + std::to_string(k) + "], got " + format_given(q));
        break;
      }
    }
  }
  p.throw_if_any();
}

MetricsSpec metrics_from_json(const JsonView& v) {
  v.allow_only(detail::kMetricsKeys);
  MetricsSpec m;
  if (v.has("percentiles") && !v["percentiles"].json().is_null())
    for (const auto& e : v["percentiles"].elements()) m.percentiles.push_back(e.as_number());
  return m;
}

Json to_json(const MetricsSpec& m) { return Json{{"percentiles", m.percentiles}}; }

}  // namespace llmsim::spec
