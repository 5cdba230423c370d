#include "llmsim/metrics/summary.hpp"
#include "llmsim/metrics/vllm_keys.hpp"

#include <cmath>
#include <cstdio>

namespace llmsim::metrics {

namespace {
// "p99.9" for extra SLO percentiles; whole numbers print without decimals ("p95").
std::string percentile_key(double q) {
  char buf[32];
  if (q == std::floor(q)) std::snprintf(buf, sizeof buf, "p%.0f", q);
  else std::snprintf(buf, sizeof buf, "p%g", q);
  return buf;
}
}  // namespace

Json to_json(const LatencyStats& l) {
  Json j = {{"mean", l.mean}, {"p50", l.p50}, {"p90", l.p90}, {"p95", l.p95}, {"p99", l.p99},
            {"max", l.max}, {"count", l.count}};
  for (const auto& [q, v] : l.quantiles) {
    const auto key = percentile_key(q);
    if (!j.contains(key)) j[key] = v;
  }
  return j;
}

Json to_json(const Summary& s) {
  Json j;
  j["fits"] = s.fits;
  j["reason"] = s.reason;
  j["unstable"] = s.unstable;
  j["completed_requests"] = s.completed_requests;
  j["rejected_requests"] = s.rejected_requests;
  j["clipped_requests"] = s.clipped_requests;
  j["preemptions"] = s.preemptions;
  j["iterations"] = s.iterations;
  j["duration_s"] = s.duration_s;
  j["mean_in_system"] = s.mean_in_system;
  j["throughput"] = {{"requests_per_s", s.throughput.requests_per_s},
                     {"input_tokens_per_s", s.throughput.input_tokens_per_s},
                     {"output_tokens_per_s", s.throughput.output_tokens_per_s},
                     {"total_tokens_per_s", s.throughput.total_tokens_per_s}};
  j["ttft_ms"] = to_json(s.ttft_ms);
  j["tpot_ms"] = to_json(s.tpot_ms);
  j["itl_ms"] = to_json(s.itl_ms);
  j["e2e_ms"] = to_json(s.e2e_ms);
  j["queue_ms"] = to_json(s.queue_ms);
  j["slo_attainment"] = s.slo_attainment;
  j["slo_met"] = s.slo_met;
  j["goodput_rps"] = s.goodput_rps;
  j["goodput_output_tps"] = s.goodput_output_tps;
  j["goodput_total_tps"] = s.goodput_total_tps;
  j["kv"] = {{"capacity_tokens", s.kv.capacity_tokens},
             {"peak_used_fraction", s.kv.peak_used_fraction},
             {"mean_used_fraction", s.kv.mean_used_fraction}};
  j["utilization"] = {{"mfu", s.mfu}, {"mbu", s.mbu}};
  j["utilization"]["busy_fraction"] = s.busy_fraction >= 0 ? Json(s.busy_fraction) : Json(nullptr);
  j["cost"] = {{"per_hour", s.cost.per_hour},
               {"per_mtok_output_slo", s.cost.per_mtok_output_slo},
               {"per_mtok_total_slo", s.cost.per_mtok_total_slo},
               {"monthly", s.cost.monthly},
               {"cold_start_s", s.cost.cold_start_s}};
  if (!s.classes.empty()) {
    Json classes = Json::array();
    for (const auto& c : s.classes) {
      classes.push_back({{"name", c.name},
                         {"completed_requests", c.completed_requests},
                         {"slo_attainment", c.slo_attainment},
                         {"slo_met", c.slo_met},
                         {"goodput_rps", c.goodput_rps},
                         {"ttft_ms", to_json(c.ttft_ms)},
                         {"tpot_ms", to_json(c.tpot_ms)},
                         {"e2e_ms", to_json(c.e2e_ms)}});
    }
    j["classes"] = std::move(classes);
  }
  add_vllm_keys(j, s);  // vLLM's benchmark key names beside ours (metrics/vllm_keys.hpp)
  return j;
}

}  // namespace llmsim::metrics
