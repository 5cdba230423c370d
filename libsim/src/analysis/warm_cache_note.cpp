// A measured TTFT below what a cold server could do (result_notes.hpp): `vllm bench serve` re-run per request rate
// against one server with prefix caching on and the same seed re-sends the same prompts, so every run after the first
// is served from the cache the earlier one left (docs/vllm.md "A warm server"). The bound is physical: datasheet peak,
// parameter count, arrival order; no efficiency and no threshold chosen from a measurement.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "llmsim/analysis/result_notes.hpp"
#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/core/number.hpp"

namespace llmsim::analysis {

std::vector<double> cold_ttft_floor_s(const spec::ResolvedScenario& rs,
                                      const std::vector<std::pair<double, std::int64_t>>& requests) {
  const auto& m = rs.model;
  // Linear weights a prompt token passes through: the embedding is a lookup, the LM head runs for the last token only.
  const double weights = static_cast<double>(m.active_param_count() - m.embedding_params() - m.lm_head_params());
  const auto& par = rs.scenario.hardware.parallel;
  const double gpus = static_cast<double>(par.tp) * par.pp * std::max(1, rs.scenario.hardware.replicas);
  // The fastest tensor path the format could take (a larger peak only lowers the floor: it stays a bound).
  const auto& wf = rs.quant.weights;
  const double peak = std::max({rs.gpu.tensor_peak(wf.compute_dtype), rs.gpu.tensor_peak(wf.fallback_compute_dtype),
                                rs.gpu.tensor_peak(spec::DType::fp16), rs.gpu.tensor_peak(spec::DType::bf16)});
  std::vector<double> out;
  if (!(weights > 0 && peak > 0)) return out;
  const double s_per_token = 2 * weights / (peak * gpus);
  double done = 0;
  for (const auto& [arrival, tokens] : requests) {
    done = std::max(done, arrival) + static_cast<double>(tokens) * s_per_token;
    out.push_back(done - arrival);
  }
  return out;
}

std::optional<std::string> warm_server_note(const VllmResult& r, const spec::ResolvedScenario& rs,
                                            const std::vector<std::pair<double, std::int64_t>>& requests) {
  if (!rs.scenario.engine.prefix_caching() || rs.scenario.workload.warm_cache) return std::nullopt;
  const VllmLatencyStat* stat = nullptr;
  for (const auto& l : r.latencies)
    if (l.metric == "ttft" && (l.statistic == "mean" || (l.statistic == "median" && !stat))) stat = &l;
  if (!stat) return std::nullopt;
  const std::vector<double> floor = cold_ttft_floor_s(rs, requests);
  if (floor.empty()) return std::nullopt;
  const double bound_ms = 1e3 * (stat->statistic == "mean"
                                     ? std::accumulate(floor.begin(), floor.end(), 0.0) / static_cast<double>(floor.size())
                                     : numpy_percentile(floor, 50));
  if (!(stat->value_ms < bound_ms)) return std::nullopt;
  const auto ms = [](double x) { return x >= 100 ? std::to_string(std::llround(x)) : format_digits(x, 3); };
  return "measured " + stat->statistic + " TTFT " + ms(stat->value_ms) + " ms is below " + ms(bound_ms) +
         " ms, the least a cold server needs to prefill these prompts in the order sent at "
         "the GPUs' dense peak: was the server warm from an earlier run with the same prompts (same seed and dataset, "
         "prefix caching on)? If so, check again with --warm-cache (workload.warm_cache)";
}

}  // namespace llmsim::analysis
