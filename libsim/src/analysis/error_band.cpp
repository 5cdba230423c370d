// Error bands from the validation residuals (analysis/error_band.hpp). The table is data/error_bands.json, compiled
// in by embed_error_bands.cmake; `make validate` writes it (tests/validation, docs/trust.md "Error bands").
#include "llmsim/analysis/error_band.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "llmsim/core/error.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/perf/provenance.hpp"

namespace llmsim::analysis {

namespace detail {
extern const char* const kErrorBandsJson;  // error_bands_data.cpp (generated)
}

std::string to_string(MetricFamily m) {
  switch (m) {
    case MetricFamily::latency: return "latency";
    case MetricFamily::ttft: return "ttft";
    case MetricFamily::throughput: return "throughput";
  }
  return "latency";
}

MetricFamily parse_metric_family(const std::string& s, const std::string& path) {
  for (auto m : {MetricFamily::latency, MetricFamily::ttft, MetricFamily::throughput})
    if (s == to_string(m)) return m;
  throw ConfigError(path, "unknown metric family '" + s + "' (latency, ttft, throughput)");
}

std::string band_batch_bucket(std::int64_t b) {
  if (b <= 1) return "1";
  if (b < 16) return "2-15";
  if (b < 32) return "16-31";
  if (b < 64) return "32-63";
  return "64+";
}

std::string ErrorBand::describe() const {
  if (!known()) return "typical error unknown in this regime (too few validation measurements)";
  if (cross_validated) {
    char b[64];
    std::snprintf(b, sizeof b, "%.0f%%", 100 * typical);
    return std::string("typical error ±") + b + " with this calibrated profile (" + group + "), from " +
           std::to_string(n) + " cross-validated runs";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * typical);
  return std::string("typical error ±") + buf + " in this regime (" + group + "), from " + std::to_string(n) +
         (blind ? " blind measurements" : " measurements the model was developed on: a lower bound");
}

std::vector<ErrorBandGroup> parse_error_bands(const JsonView& v) {
  v.allow_only({"format", "generated_by", "groups"});
  if (v.string_or("format", "") != "llmsim-error-bands/1") v["format"].fail("expected 'llmsim-error-bands/1'");
  std::vector<ErrorBandGroup> out;
  for (const auto& g : v["groups"].elements()) {
    g.allow_only({"family", "runtime", "batch", "metric", "blind", "n", "median_abs", "p90_abs", "signed_median"});
    ErrorBandGroup e;
    e.family = g.string("family");
    e.runtime = g.string("runtime");
    e.batch = g.string("batch");
    e.metric = g.string("metric");
    e.blind = g.boolean("blind");
    const double n = g.number("n");
    if (!(n >= 0 && n < 1e9 && std::floor(n) == n)) g["n"].fail("must be a count");
    e.n = static_cast<std::size_t>(n);
    e.median_abs = g.number("median_abs");
    e.p90_abs = g.number("p90_abs");
    e.signed_median = g.number("signed_median");
    if (!(e.median_abs >= 0 && e.p90_abs >= e.median_abs)) g.fail("needs 0 <= median_abs <= p90_abs");
    out.push_back(e);
  }
  return out;
}

Json error_bands_to_json(const std::vector<ErrorBandGroup>& groups, const std::string& generated_by) {
  Json arr = Json::array();
  for (const auto& g : groups) {
    // Four decimals: the table is committed, and a re-run must write the same bytes.
    auto r4 = [](double x) { return std::round(x * 1e4) / 1e4; };
    arr.push_back(Json{{"family", g.family}, {"runtime", g.runtime}, {"batch", g.batch}, {"metric", g.metric},
                       {"blind", g.blind}, {"n", g.n}, {"median_abs", r4(g.median_abs)}, {"p90_abs", r4(g.p90_abs)},
                       {"signed_median", r4(g.signed_median)}});
  }
  return Json{{"format", "llmsim-error-bands/1"}, {"generated_by", generated_by}, {"groups", arr}};
}

const std::vector<ErrorBandGroup>& error_band_table() {
  static const std::vector<ErrorBandGroup> t = [] {
    const Json j = parse_json(detail::kErrorBandsJson, "data/error_bands.json");
    return parse_error_bands(JsonView(j, "data/error_bands.json"));
  }();
  return t;
}

ErrorBand error_band(const Regime& r, const std::vector<ErrorBandGroup>& table, std::size_t min_points) {
  const std::string metric = to_string(r.metric), batch = band_batch_bucket(r.batch);
  // From the regime itself to any regime: each level drops the least telling key first.
  const std::string levels[][3] = {{r.family, r.runtime, batch}, {r.family, r.runtime, "*"}, {r.family, "*", "*"},
                                   {"*", "*", "*"}};
  for (const auto& l : levels) {
    for (const bool blind : {true, false}) {
      for (const auto& g : table) {
        if (g.blind != blind || g.n < min_points || g.metric != metric) continue;
        if (g.family != l[0] || g.runtime != l[1] || g.batch != l[2]) continue;
        ErrorBand b;
        b.typical = g.median_abs;
        b.p90 = g.p90_abs;
        b.signed_median = g.signed_median;
        b.n = g.n;
        b.blind = g.blind;
        b.group = g.family + " / " + g.runtime + " / batch " + g.batch + " / " + g.metric;
        return b;
      }
    }
  }
  return {};
}

Regime regime_of(const spec::ResolvedScenario& s, MetricFamily metric, std::int64_t batch) {
  Regime r;
  r.family = perf::family_name(perf::gpu_family(s.gpu));
  r.runtime = spec::to_string(s.scenario.engine.resolved_runtime());
  r.batch = batch;
  r.metric = metric;
  return r;
}

std::optional<ErrorBand> profile_error_band(const spec::ResolvedScenario& s) {
  const std::string& ref = s.scenario.hardware.gpu_profile;
  if (ref.empty()) return std::nullopt;
  perf::HardwareProfile p;
  try {
    p = perf::load_profile(ref, perf::default_profile(s.gpu));
  } catch (const ConfigError&) {
    return std::nullopt;  // the cost model reports a bad profile; the band falls back to the table
  }
  if (!p.cross_validated_error || p.cross_validated_error->values < 1) return std::nullopt;
  if (perf::runtime_mismatch(p, s.scenario.engine.resolved_runtime())) return std::nullopt;
  const auto& cv = *p.cross_validated_error;
  ErrorBand b;
  b.typical = cv.median_abs;
  b.p90 = cv.p90_abs;
  b.signed_median = cv.signed_median;
  b.n = static_cast<std::size_t>(cv.runs);
  b.blind = true;  // each value predicted by a fit that had not seen its run
  b.cross_validated = true;
  b.group = "its leave-one-run-out error over " + std::to_string(cv.values) + " measured values" +
            (p.runtime.empty() ? "" : ", " + p.runtime);
  return b;
}

metrics::ErrorBands error_bands(const spec::ResolvedScenario& s, const metrics::Summary& summary,
                                const std::vector<ErrorBandGroup>& table) {
  metrics::ErrorBands out;
  out.known = true;
  const auto batch = static_cast<std::int64_t>(std::llround(std::max(1.0, summary.batch.mean_seqs)));
  const auto calibrated = profile_error_band(s);
  auto fill = [&](MetricFamily m, metrics::ErrorBandStats& b) {
    const ErrorBand e = calibrated ? *calibrated : error_band(regime_of(s, m, batch), table);
    b.typical = e.typical;
    b.p90 = e.p90;
    b.n = e.n;
    b.blind = e.blind;
    b.group = e.group;
    b.text = e.describe();
  };
  fill(MetricFamily::ttft, out.ttft);
  fill(MetricFamily::latency, out.latency);
  fill(MetricFamily::throughput, out.throughput);
  return out;
}

bool within_error(double a, const ErrorBand& ba, double b, const ErrorBand& bb) {
  if (!ba.known() || !bb.known()) return false;
  return std::abs(a - b) <= std::abs(a) * ba.typical + std::abs(b) * bb.typical;
}

}  // namespace llmsim::analysis
