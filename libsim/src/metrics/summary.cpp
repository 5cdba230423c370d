#include "llmsim/metrics/summary.hpp"
#include "llmsim/metrics/vllm_keys.hpp"

#include <cmath>
#include <cstdio>

#include "llmsim/core/error.hpp"

namespace llmsim::metrics {

namespace {
// "p99.9" for extra percentiles (an SLO's, metrics.percentiles); whole numbers print without decimals ("p95"), and a
// percentile of more than 6 significant digits with as many as it takes, so two percentiles never share a key.
std::string percentile_key(double q) { return "p" + format_given(q); }
Json or_null(double v, bool present) { return present ? Json(v) : Json(nullptr); }

Json rates_json(const Throughput& t, bool present) {
  return {{"requests_per_s", or_null(t.requests_per_s, present)},
          {"input_tokens_per_s", or_null(t.input_tokens_per_s, present)},
          {"output_tokens_per_s", or_null(t.output_tokens_per_s, present)},
          {"total_tokens_per_s", or_null(t.total_tokens_per_s, present)}};
}
Json pools_json(const std::vector<PoolSummary>& pools) {
  Json out = Json::array();
  for (const auto& p : pools)
    out.push_back({{"role", p.role}, {"gpu", p.gpu}, {"gpus", p.gpus}, {"replicas", p.replicas},
                   {"price_per_gpu_hour", p.price_per_gpu_hour}, {"busy_fraction", p.busy_fraction},
                   {"mfu", p.mfu}, {"mbu", p.mbu}, {"kv_mean_used_fraction", p.kv_mean_used_fraction},
                   {"kv_capacity_tokens", p.kv_capacity_tokens},
                   {"saturation_requests_per_s", p.saturation_requests_per_s}});
  return out;
}

}  // namespace

Json to_json(const LatencyStats& l) {
  // No sample, no statistic: null, never a 0 a reader (or a --fail-if bound) would take for a latency.
  const auto stat = [&](double v) { return l.count > 0 ? Json(v) : Json(nullptr); };
  Json j = {{"mean", stat(l.mean)}, {"p50", stat(l.p50)}, {"p90", stat(l.p90)}, {"p95", stat(l.p95)},
            {"p99", stat(l.p99)}, {"max", stat(l.max)}, {"count", l.count}};
  for (const auto& [q, v] : l.quantiles) {
    const auto key = percentile_key(q);
    if (!j.contains(key)) j[key] = stat(v);
  }
  return j;
}

std::string unstable_cause(const Summary& s) {
  if (!s.unstable) return "";
  const std::string_view r = s.reason;
  return std::string(r.starts_with(kUnstableLabel) ? r.substr(kUnstableLabel.size()) : r);
}

std::string unstable_reason(const Summary& s) { return s.unstable ? std::string(kUnstableLabel) + unstable_cause(s) : ""; }

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
  j["complete"] = s.complete;
  j["engine"] = s.engine;
  if (!s.warnings.empty()) j["warnings"] = s.warnings;
  j["throughput"] = rates_json(s.throughput, true);  // numbers always (0 when nothing finished), as before
  j["offered"] = {{"arrivals", s.offered.arrivals},
                  {"window_s", s.offered.window_s},
                  {"requests_per_s", or_null(s.offered.requests_per_s, s.offered.window_s > 0)}};
  {
    const bool sat = s.saturation.time_s > 0;
    Json sj = rates_json(s.saturation.throughput, sat);
    sj["time_s"] = s.saturation.time_s;
    sj["busy_fraction"] = s.saturation.busy_fraction;
    sj["iterations"] = s.saturation.iterations;
    sj["mean_batch"] = or_null(s.saturation.mean_batch, sat);
    j["saturation"] = std::move(sj);
  }
  j["batch"] = {{"max_seqs", s.batch.max_seqs}, {"mean_seqs", s.batch.mean_seqs}};
  if (s.speculative.enabled) {
    const auto& sp = s.speculative;
    j["speculative"] = {{"method", sp.method},
                        {"num_speculative_tokens", sp.num_speculative_tokens},
                        {"acceptance_rate", sp.acceptance_rate},
                        {"steps", sp.steps},
                        {"mean_tokens_per_step", sp.mean_tokens_per_step},
                        {"mean_accepted_tokens", sp.mean_accepted_tokens},
                        {"proposer_time_fraction", sp.proposer_time_fraction}};
  } else {
    j["speculative"] = nullptr;
  }
  {
    const bool has = s.steady_state.window_s > 0;
    Json ss = rates_json(s.steady_state.throughput, has);
    ss["start_s"] = s.steady_state.start_s;
    ss["end_s"] = s.steady_state.end_s;
    ss["window_s"] = s.steady_state.window_s;
    ss["departures"] = s.steady_state.departures;
    ss["goodput_rps"] = or_null(s.steady_state.goodput_rps, has && s.slo_set);
    ss["goodput_output_tps"] = or_null(s.steady_state.goodput_output_tps, has && s.slo_set);
    ss["goodput_total_tps"] = or_null(s.steady_state.goodput_total_tps, has && s.slo_set);
    ss["slo_attainment"] = or_null(s.steady_state.slo_attainment, s.slo_set && s.steady_state.departures > 0);
    j["steady_state"] = std::move(ss);
  }
  j["drain"] = {{"duration_s", s.drain.duration_s}, {"completed_requests", s.drain.completed_requests}};
  j["ttft_ms"] = to_json(s.ttft_ms);
  j["tpot_ms"] = to_json(s.tpot_ms);
  j["itl_ms"] = to_json(s.itl_ms);
  j["e2e_ms"] = to_json(s.e2e_ms);
  j["queue_ms"] = to_json(s.queue_ms);
  // With no latency target there is nothing to meet: no verdict and no attainment (every request would count as
  // meeting it, 1.0), null with the reason, never a vacuous true.
  j["slo_attainment"] = s.slo_set ? Json(s.slo_attainment) : Json(nullptr);
  j["slo_met"] = s.slo_set ? Json(s.slo_met) : Json(nullptr);
  j["slo_met_note"] = s.slo_set ? Json(nullptr) : Json(kNoSloNote);
  // Goodput is the rate of SLO-meeting requests: with no target it would be the throughput again under another
  // name, so null with the same note (issue 29).
  j["goodput_rps"] = or_null(s.goodput_rps, s.slo_set);
  j["goodput_output_tps"] = or_null(s.goodput_output_tps, s.slo_set);
  j["goodput_total_tps"] = or_null(s.goodput_total_tps, s.slo_set);
  j["max_model_len"] = s.max_model_len;
  j["max_model_len_note"] = s.max_model_len_note;
  j["kv"] = {{"capacity_tokens", s.kv.capacity_tokens},
             {"peak_used_fraction", s.kv.peak_used_fraction},
             {"mean_used_fraction", s.kv.mean_used_fraction},
             {"prefix_cache_hit_rate", s.kv.prefix_cache_hit_rate() ? Json(*s.kv.prefix_cache_hit_rate()) : Json(nullptr)},
             {"prefix_cache_hit_tokens", s.kv.prefix_cache_hit_tokens},
             {"prefix_cache_query_tokens", s.kv.prefix_cache_query_tokens}};
  if (s.kv.host_tier) {
    j["kv"]["host_cache_hit_rate"] = s.kv.prefix_cache_query_tokens > 0
                                         ? Json(s.kv.host_cache_hit_tokens / s.kv.prefix_cache_query_tokens)
                                         : Json(nullptr);
    j["kv"]["host_cache_hit_tokens"] = s.kv.host_cache_hit_tokens;
    j["kv"]["offload"] = {{"capacity_gb", s.kv.host_capacity_gb},
                          {"stored_gb", s.kv.host_stored_gb},
                          {"loaded_gb", s.kv.host_loaded_gb},
                          {"recomputed_tokens", s.kv.host_recomputed_tokens}};
  }
  j["utilization"] = {{"mfu", s.mfu}, {"mbu", s.mbu}};
  j["utilization"]["busy_fraction"] = s.busy_fraction >= 0 ? Json(s.busy_fraction) : Json(nullptr);
  if (s.error_band.known) {
    auto band = [](const ErrorBandStats& b) {
      return Json{{"typical", b.typical}, {"p90", b.p90}, {"n", b.n}, {"blind", b.blind}, {"group", b.group},
                  {"text", b.text}};
    };
    j["error_band"] = {{"ttft", band(s.error_band.ttft)}, {"latency", band(s.error_band.latency)},
                       {"throughput", band(s.error_band.throughput)}};
  } else {
    j["error_band"] = nullptr;
  }
  j["cost"] = {{"per_hour", s.cost.per_hour},
               {"per_mtok_output_slo", s.cost.per_mtok_output_slo},
               {"per_mtok_total_slo", s.cost.per_mtok_total_slo},
               {"monthly", s.cost.monthly},
               {"cold_start_s", s.cost.cold_start_s},
               {"period", s.cost.period},
               {"period_hours", s.cost.period_hours},
               {"period_monthly", s.cost.period_monthly},
               {"period_per_mtok_output_slo", s.cost.period_per_mtok_output_slo}};
  j["failed_requests"] = s.failed_requests;
  j["timed_out_requests"] = s.timed_out_requests;
  j["unfinished_requests"] = s.unfinished_requests;
  j["warmup"] = {{"arrivals", s.warmup.arrivals},   {"rejected", s.warmup.rejected},   {"completed", s.warmup.completed},
                 {"failed", s.warmup.failed},       {"timed_out", s.warmup.timed_out}, {"unfinished", s.warmup.unfinished}};
  j["requeued_requests"] = s.requeued_requests;
  j["wasted_output_tokens"] = s.wasted_output_tokens;
  Json hours = Json::array();
  for (const auto& h : s.fleet.hours) {
    const double a = h.slo_attainment();
    hours.push_back({{"start_s", h.start_s}, {"end_s", h.end_s}, {"arrivals", h.arrivals}, {"completed", h.completed},
                     {"good", h.good}, {"failed", h.failed}, {"timed_out", h.timed_out},
                     {"rejected", h.rejected}, {"slo_attainment", a >= 0 && s.slo_set ? Json(a) : Json(nullptr)}, {"replicas_billed", h.replicas_billed},
                     {"replicas_ready", h.replicas_ready}});
  }
  j["fleet"] = {{"autoscaled", s.fleet.autoscaled},
                {"replica_hours", s.fleet.replica_hours},
                {"ready_replica_hours", s.fleet.ready_replica_hours},
                {"idle_replica_hours", s.fleet.idle_replica_hours},
                {"scale_ups", s.fleet.scale_ups},
                {"scale_downs", s.fleet.scale_downs},
                {"peak_replicas", s.fleet.peak_replicas},
                {"scale_up_delay_s", s.fleet.scale_up_delay_s},
                {"failures", s.fleet.failures},
                {"hours", std::move(hours)}};
  if (s.disaggregation) {
    const auto& d = *s.disaggregation;
    Json pools = pools_json(d.pools);
    j["disaggregation"] = {{"link", d.link},
                           {"link_gbps", d.link_gbps},
                           {"link_latency_us", d.link_latency_us},
                           {"transfer", d.transfer},
                           {"transfer_ms", to_json(d.transfer_ms)},
                           {"decode_wait_ms", to_json(d.decode_wait_ms)},
                           {"mean_transfer_mb", d.mean_transfer_mb},
                           {"pools", std::move(pools)}};
  }
  if (!s.fleet_pools.empty()) j["fleet_pools"] = pools_json(s.fleet_pools);
  if (s.sessions) {
    const auto& ss = *s.sessions;
    Json turns = Json::array();
    for (const auto& t : ss.by_turn)
      turns.push_back({{"turn", t.turn}, {"and_later", t.and_later}, {"completed", t.completed}, {"lost", t.lost},
                       {"mean_input_tokens", t.mean_input_tokens}, {"prefix_hit_rate", t.prefix_hit_rate},
                       {"ttft_ms", to_json(t.ttft_ms)}});
    j["sessions"] = {{"started", ss.started},
                     {"finished", ss.finished},
                     {"in_progress", ss.in_progress},
                     {"peak_active", ss.peak_active},
                     {"dropped_turns", ss.dropped_turns},
                     {"sessions_per_s", ss.sessions_per_s},
                     {"requests_per_s", ss.requests_per_s},
                     {"turns_per_session", ss.turns_per_session},
                     {"prefix_hit_rate", ss.prefix_hit_rate},
                     {"by_turn", std::move(turns)}};
  }
  // vLLM's benchmark names (vllm bench serve), as aliases of the fields above.
  j["request_throughput"] = s.throughput.requests_per_s;
  j["output_throughput"] = s.throughput.output_tokens_per_s;
  j["total_token_throughput"] = s.throughput.total_tokens_per_s;
  for (const auto& [name, l] : {std::pair{"ttft", &s.ttft_ms}, std::pair{"tpot", &s.tpot_ms},
                                std::pair{"itl", &s.itl_ms}, std::pair{"e2el", &s.e2e_ms}}) {
    const std::string n = name;
    j["mean_" + n + "_ms"] = l->mean;
    j["median_" + n + "_ms"] = l->p50;
    j["p99_" + n + "_ms"] = l->p99;
  }
  if (!s.classes.empty()) {
    Json classes = Json::array();
    for (const auto& c : s.classes) {
      classes.push_back({{"name", c.name},
                         {"completed_requests", c.completed_requests},
                         {"slo_attainment", s.slo_set ? Json(c.slo_attainment) : Json(nullptr)},
                         {"slo_met", s.slo_set ? Json(c.slo_met) : Json(nullptr)},
                         {"goodput_rps", or_null(c.goodput_rps, s.slo_set)},
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
