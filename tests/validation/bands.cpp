#include "bands.hpp"

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/perf/provenance.hpp"
#include "llmsim/spec/catalog.hpp"
#include "report.hpp"

namespace llmsim::validation {

analysis::MetricFamily metric_family(const std::string& m) {
  if (m.find("per_s") != std::string::npos || m.find("throughput") != std::string::npos)
    return analysis::MetricFamily::throughput;
  if (m.find("prefill") != std::string::npos || m.find("ttft") != std::string::npos)
    return analysis::MetricFamily::ttft;
  return analysis::MetricFamily::latency;
}

bool row_is_blind(const Row& r) { return perf::is_blind_source(r.set, r.source_url); }

std::vector<analysis::ErrorBandGroup> band_groups(const std::vector<Row>& rows) {
  using Key = std::tuple<std::string, std::string, std::string, std::string, bool>;  // family, runtime, batch, metric, blind
  std::map<Key, std::vector<double>> errors;
  std::map<std::string, std::string> family_of;  // gpu id -> family
  for (const Row& r : rows) {
    if (!r.scored || r.kind != Kind::engine || r.runtime.empty()) continue;
    auto f = family_of.find(r.gpu);
    if (f == family_of.end()) {
      f = family_of.emplace(r.gpu, perf::family_name(perf::gpu_family(spec::Catalog::builtin().gpu(r.gpu)))).first;
    }
    const std::string metric = analysis::to_string(metric_family(r.metric));
    const std::string batch = analysis::band_batch_bucket(r.batch);
    const bool blind = row_is_blind(r);
    const double e = r.time_error();
    // A serving run (batch 0) has no client batch: it joins only the levels without one.
    if (r.batch > 0) errors[Key{f->second, r.runtime, batch, metric, blind}].push_back(e);
    for (const Key& k : {Key{f->second, r.runtime, "*", metric, blind}, Key{f->second, "*", "*", metric, blind},
                         Key{"*", "*", "*", metric, blind}})
      errors[k].push_back(e);
  }
  std::vector<analysis::ErrorBandGroup> out;
  for (const auto& [k, e] : errors) {
    if (e.size() < 3) continue;
    analysis::ErrorBandGroup g;
    std::tie(g.family, g.runtime, g.batch, g.metric, g.blind) = k;
    std::vector<double> a;
    for (double x : e) a.push_back(std::abs(x));
    g.n = e.size();
    g.median_abs = median(a);
    g.p90_abs = percentile(a, 0.9);
    g.signed_median = median(e);
    out.push_back(g);
  }
  return out;
}

void print_blind_headline(std::FILE* out, const std::vector<Row>& blind) {
  std::vector<double> abs_e, e;
  std::set<std::string> sources;
  for (const Row& r : blind) {
    if (!r.scored || r.kind != Kind::engine) continue;
    e.push_back(r.time_error());
    abs_e.push_back(std::abs(r.time_error()));
    sources.insert(r.set);
  }
  std::fprintf(out, "\nBLIND SOURCES (set no constant, not developed on): the headline\n");
  if (e.empty()) {
    std::fprintf(out, "  none yet: every scored row comes from a source the model was developed on\n");
    return;
  }
  const double med = median(abs_e), p90 = percentile(abs_e, 0.9);
  std::fprintf(out, "  %zu scored values from %zu sources: median |error| %.1f%%, p90 %.1f%%, signed median %+.1f%%\n",
               e.size(), sources.size(), 100 * med, 100 * p90, 100 * median(e));
  const Bounds target;  // the same +-5 % per group of >= 10 points
  const auto groups = group_stats(blind);
  print_groups(out, groups, target);
  const auto v = violations(groups, Bounds{target.min_points, target.max_signed_median, 1.0, 1.0, {}});
  std::fprintf(out, "  target median <= 6%%: %s (%.1f%%); p90 <= 15%%: %s (%.1f%%); groups within +-5%%: %s (%zu biased)\n",
               med <= 0.06 ? "met" : "NOT MET", 100 * med, p90 <= 0.15 ? "met" : "NOT MET", 100 * p90,
               v.empty() ? "met" : "NOT MET", v.size());
  for (const auto& s : v) std::fprintf(out, "    %s\n", s.c_str());
}

}  // namespace llmsim::validation
