// Notes from a result file's own numbers (result_notes.hpp). The thresholds are stated there and in docs/vllm.md.
#include "llmsim/analysis/result_notes.hpp"

#include <algorithm>
#include <cstdio>

#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/number.hpp"
#include "llmsim/spec/runtime_version.hpp"

namespace llmsim::analysis {

std::optional<std::string> start_stall_note(const VllmResult& r) {
  std::vector<double> t;
  for (double x : r.ttfts_s)
    if (x > 0) t.push_back(x);  // a failed request's TTFT is written as 0
  if (t.size() < 8) return std::nullopt;
  const double median = numpy_percentile(t, 50);
  const double bar = std::max(5 * median, median + 1.0);
  std::size_t lead = 0;
  double worst = 0;
  for (double x : t) {
    if (x <= bar) break;
    ++lead;
    worst = std::max(worst, x);
  }
  if (lead == 0 || lead > t.size() / 4 || worst < 2.0) return std::nullopt;
  double rest = 0;
  for (std::size_t i = lead; i < t.size(); ++i) rest = std::max(rest, t[i]);
  return "artefact in the measured run: the first " + std::to_string(lead) + " request" + (lead > 1 ? "s'" : "'s") +
         " TTFT (up to " + format_digits(worst, 3) + " s) is far above the rest (median " + format_digits(median * 1e3, 3) +
         " ms, the others at most " + format_digits(rest, 3) + " s): a stall at the start (model load, compilation, CUDA-graph "
         "capture or a cold cache) that llmsim does not model; it inflates the measured TTFT mean, std and upper "
         "percentiles and the duration";
}

std::optional<std::string> version_hint(const VllmResult& r, const spec::Scenario& s) {
  if (s.engine.runtime_release) return std::nullopt;
  const bool sglang = r.backend.rfind("sglang", 0) == 0;
  const spec::Runtime simulated = s.engine.resolved_runtime();
  if (!r.version.empty()) {
    const std::string release = (sglang ? "sglang==" : "vllm==") + r.version;
    try {
      const auto v = spec::runtime_for_version(spec::parse_engine_version(release, "version"), "version");
      if (v.runtime == simulated) return std::nullopt;
      return "the file states release " + r.version + ", which runs '" + spec::to_string(v.runtime) +
             "', not the simulated '" + spec::to_string(simulated) + "': pass --engine-version " + r.version +
             " (Python engine_version=) to price that release";
    } catch (const ConfigError&) {
      return std::nullopt;  // a version string llmsim cannot place: the default note already asks for the release
    }
  }
  // vLLM writes date as "%Y%m%d-%H%M%S". Before 0.8.0 (2025-03-18) no release ran V1 by default.
  if (!sglang && simulated == spec::Runtime::vllm_v1 && r.date.size() >= 8 &&
      std::all_of(r.date.begin(), r.date.begin() + 8, [](char c) { return c >= '0' && c <= '9'; }) &&
      r.date.substr(0, 8) < "20250318") {
    const std::string day = r.date.substr(0, 4) + "-" + r.date.substr(4, 2) + "-" + r.date.substr(6, 2);
    return "the run is dated " + day + ", before vLLM 0.8.0 (2025-03-18) made the V1 engine the default, but it is "
           "simulated on 'vllm-v1': pass the release it used with --engine-version (e.g. 0.5.4; Python "
           "engine_version=)";
  }
  return std::nullopt;
}

}  // namespace llmsim::analysis
