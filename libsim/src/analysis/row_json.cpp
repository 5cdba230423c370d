// A row as JSON, and flattened into the CSV columns every row writes (row.hpp): the schema of sweep, capacity and
// compare output (docs/result-format.md). Moved from row.cpp, which evaluates the rows.
#include <cmath>
#include <map>
#include <set>

#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/row.hpp"

namespace llmsim::analysis {

namespace {

Json num(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}

Json latency(const metrics::Summary* s, const metrics::LatencyStats metrics::Summary::*field) {
  Json j = Json::object();
  const metrics::LatencyStats* l = s ? &(s->*field) : nullptr;
  const bool have = l && l->count > 0;
  j["p50"] = have ? Json(l->p50) : Json(nullptr);
  j["p90"] = have ? Json(l->p90) : Json(nullptr);
  j["p95"] = have ? Json(l->p95) : Json(nullptr);
  j["p99"] = have ? Json(l->p99) : Json(nullptr);
  j["mean"] = have ? Json(l->mean) : Json(nullptr);
  return j;
}

std::optional<double> opt(const metrics::Summary* s, double v) {
  if (!s) return std::nullopt;
  return v;
}

// Latency, goodput and per-token cost of one run; every key present, null without a run.
void summary_fields(Json& j, const metrics::Summary* s) {
  j["slo_met"] = s && s->slo_set ? Json(s->slo_met && !s->unstable) : Json(nullptr);
  j["slo_met_note"] = s && !s->slo_set ? Json(metrics::kNoSloNote) : Json(nullptr);
  j["slo_attainment"] = s && s->slo_set ? num(opt(s, s->slo_attainment)) : Json(nullptr);  // no SLO: nothing to attain
  // Goodput counts SLO-meeting requests: null with no target (slo_met_note), not the throughput again.
  const bool good = s && s->slo_set;
  j["goodput_rps"] = good ? num(s->goodput_rps) : Json(nullptr);
  j["goodput_output_tps"] = good ? num(s->goodput_output_tps) : Json(nullptr);
  j["goodput_total_tps"] = good ? num(s->goodput_total_tps) : Json(nullptr);
  j["ttft_ms"] = latency(s, &metrics::Summary::ttft_ms);
  j["tpot_ms"] = latency(s, &metrics::Summary::tpot_ms);
  j["itl_ms"] = latency(s, &metrics::Summary::itl_ms);
  j["e2e_ms"] = latency(s, &metrics::Summary::e2e_ms);
  // Share of the run the GPUs were running iterations: what owned hardware's energy is priced at.
  j["busy_fraction"] = s && s->busy_fraction >= 0 ? Json(s->busy_fraction) : Json(nullptr);
  // Recomputed rather than read from summary.cost so that "no SLO-meeting token" is null, not 0.
  j["cost_per_mtok_output_slo"] = s ? num(cost_per_mtok(s->cost.per_hour, s->goodput_output_tps)) : Json(nullptr);
  j["cost_per_mtok_total_slo"] = s ? num(cost_per_mtok(s->cost.per_hour, s->goodput_total_tps)) : Json(nullptr);
}

void flatten_into(const std::string& prefix, const Json& j, std::vector<std::pair<std::string, Json>>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten_into(prefix.empty() ? it.key() : prefix + "." + it.key(), it.value(), out);
  } else {
    out.emplace_back(prefix, j);
  }
}

}  // namespace

Json to_json(const Row& r) {
  const metrics::Summary* s = r.summary ? &*r.summary : nullptr;
  Json j = Json::object();  // nlohmann's object is ordered by key; columns are ordered by row_columns()
  j["name"] = r.name;
  j["model"] = r.model;
  j["gpu"] = r.gpu;
  j["quant"] = r.quant;
  j["kv_cache"] = r.kv_cache;
  j["policy"] = r.policy;
  j["num_gpus"] = r.num_gpus;
  j["tp"] = r.tp;
  j["pp"] = r.pp;
  j["replicas"] = r.replicas;
  j["max_num_seqs"] = r.max_num_seqs;
  j["max_num_batched_tokens"] = r.max_num_batched_tokens;
  j["interconnect"] = r.interconnect;
  Json grid = Json::object();
  for (const auto& [path, value] : r.labels) grid[path] = value;
  j["grid"] = grid;
  j["fits"] = r.fits;
  j["reason"] = r.reason;
  // No latency target: nothing to meet, written as null (slo_met_note says why), not as a vacuous true.
  j["meets_slo"] = r.slo_set || !r.fits ? Json(r.meets_slo()) : Json(nullptr);
  j["unstable"] = s ? Json(s->unstable) : Json(nullptr);
  j["load_qps"] = s ? num(r.load_qps) : Json(nullptr);
  j["completed_requests"] = s ? Json(s->completed_requests) : Json(nullptr);
  j["preemptions"] = s ? Json(s->preemptions) : Json(nullptr);
  Json tp = Json::object();
  tp["requests_per_s"] = s ? Json(s->throughput.requests_per_s) : Json(nullptr);
  tp["input_tokens_per_s"] = s ? Json(s->throughput.input_tokens_per_s) : Json(nullptr);
  tp["output_tokens_per_s"] = s ? Json(s->throughput.output_tokens_per_s) : Json(nullptr);
  tp["total_tokens_per_s"] = s ? Json(s->throughput.total_tokens_per_s) : Json(nullptr);
  j["throughput"] = tp;
  summary_fields(j, s);
  j["queue_ms"] = latency(s, &metrics::Summary::queue_ms);
  j["kv_peak_used_fraction"] = s ? Json(s->kv.peak_used_fraction) : Json(nullptr);
  // What a card's cache is worth (sessions, shared prefixes): cached ÷ prompt tokens at admission, null when the
  // run had no prefix-cache lookups.
  j["prefix_cache_hit_rate"] = s && s->kv.prefix_cache_hit_rate() ? Json(*s->kv.prefix_cache_hit_rate()) : Json(nullptr);
  // The host KV tier's share (engine.kv_offload_gb), null without one.
  j["host_cache_hit_rate"] = s && s->kv.host_tier && s->kv.prefix_cache_query_tokens > 0
                                 ? Json(s->kv.host_cache_hit_tokens / s->kv.prefix_cache_query_tokens)
                                 : Json(nullptr);
  j["max_model_len"] = s && s->max_model_len > 0 ? Json(s->max_model_len) : Json(nullptr);
  j["max_model_len_note"] = s ? s->max_model_len_note : std::string();
  j["prefix_cache_note"] = s ? s->prefix_cache_note : std::string();
  // Disaggregated runs: the KV transfer and the decode pool's admission wait (null otherwise); speculative
  // decoding: tokens a decoder emitted per step (null when off).
  const metrics::DisaggregationSummary* d = s && s->disaggregation ? &*s->disaggregation : nullptr;
  j["kv_transfer_ms"] = {{"p50", d ? Json(d->transfer_ms.p50) : Json(nullptr)},
                         {"p95", d ? Json(d->transfer_ms.p95) : Json(nullptr)}};
  j["decode_wait_ms"] = {{"p50", d ? Json(d->decode_wait_ms.p50) : Json(nullptr)},
                         {"p95", d ? Json(d->decode_wait_ms.p95) : Json(nullptr)}};
  j["spec_tokens_per_step"] = s && s->speculative.enabled ? Json(s->speculative.mean_tokens_per_step) : Json(nullptr);
  j["mfu"] = s ? Json(s->mfu) : Json(nullptr);
  j["mbu"] = s ? Json(s->mbu) : Json(nullptr);
  j["cost_per_hour"] = s ? Json(s->cost.per_hour) : Json(nullptr);
  j["cold_start_s"] = s ? Json(s->cost.cold_start_s) : Json(nullptr);
  j["monthly_cost"] = num(r.monthly_cost);
  j["fixed_monthly_cost"] = num(r.fixed_monthly_cost);
  j["bill_basis"] = r.bill_basis;
  j["autoscaled_bill"] = to_json(r.autoscaled_bill);
  j["currency"] = r.currency;
  j["price_per_gpu_hour"] = r.fits ? Json(r.price_per_gpu_hour) : Json(nullptr);
  j["price_is_placeholder"] = r.fits ? Json(r.price_is_placeholder) : Json(nullptr);
  j["cost_per_mtok_output_at_target"] = num(r.cost_per_mtok_output_at_target);
  j["cost_per_mtok_total_at_target"] = num(r.cost_per_mtok_total_at_target);
  j["capacity_ratio_per_gpu"] = num(r.capacity_ratio_per_gpu);
  j["scaling_concurrency"] = r.scaling_concurrency ? Json(*r.scaling_concurrency) : Json(nullptr);
  j["purchase_price_per_gpu"] = num(r.purchase_price_per_gpu);
  j["purchase_price_is_placeholder"] = r.purchase_price_per_gpu ? Json(r.purchase_price_is_placeholder) : Json(nullptr);
  j["owned_cost_per_gpu_hour"] = num(r.owned_cost_per_gpu_hour);
  j["owned_monthly_cost"] = num(r.owned_monthly_cost);
  j["owned_cost_per_mtok_output_at_target"] = num(r.owned_cost_per_mtok_output_at_target);
  j["break_even_months"] = num(r.break_even_months);
  j["owned_note"] = r.owned_note;
  j["quality_caveat"] = r.quality_caveat;

  const CapacityResult* c = r.capacity && r.capacity->found ? &*r.capacity : nullptr;
  j["max_qps"] = c ? Json(c->max_qps) : Json(nullptr);
  j["max_qps_ci95"] = c ? Json::array({c->ci95_lo, c->ci95_hi}) : Json::array({nullptr, nullptr});
  j["max_concurrency"] = c && c->max_concurrency ? Json(*c->max_concurrency) : Json(nullptr);
  j["capacity_evaluations"] = r.capacity ? Json(r.capacity->evaluations) : Json(nullptr);
  j["target_qps"] = r.target_qps > 0 ? Json(r.target_qps) : Json(nullptr);
  j["target_concurrency"] = r.target_concurrency ? Json(*r.target_concurrency) : Json(nullptr);
  j["sized_at"] = r.sized_at;
  j["slo_headroom_note"] = r.slo_headroom_note;
  j["looser_slo"] = {{"factor", r.looser_slo ? Json(r.looser_slo->factor) : Json(nullptr)},
                     {"serving_replicas", r.looser_slo ? Json(r.looser_slo->serving) : Json(nullptr)},
                     {"monthly_cost", r.looser_slo ? Json(r.looser_slo->monthly_cost) : Json(nullptr)}};
  j["replicas_needed"] = r.replicas_needed ? Json(*r.replicas_needed) : Json(nullptr);
  j["serving_replicas"] = r.serving_replicas ? Json(*r.serving_replicas) : Json(nullptr);
  j["scaling_efficiency"] = num(r.scaling_efficiency);
  Json at = Json::object();
  const metrics::Summary* t = r.at_target ? &*r.at_target : nullptr;
  at["load_qps"] = t ? num(r.at_target_load_qps) : Json(nullptr);
  at["concurrency"] = t && r.at_target_concurrency ? Json(*r.at_target_concurrency) : Json(nullptr);
  at["whole_fleet"] = t ? Json(r.at_target_whole_fleet) : Json(nullptr);
  summary_fields(at, t);
  at["prefix_cache_hit_rate"] = t && t->kv.prefix_cache_hit_rate() ? Json(*t->kv.prefix_cache_hit_rate()) : Json(nullptr);
  j["at_target"] = at;
  return j;
}

std::vector<std::string> row_columns(const std::vector<std::string>& label_paths) {
  // The columns of an empty row are the schema: every key is always written.
  Row empty;
  empty.fits = false;
  std::vector<std::string> cols;
  std::set<std::string> seen;
  const Json j = to_json(empty);
  std::vector<std::pair<std::string, Json>> flat;
  // Money at the user's load leads; what it is at capacity, owned and the caveats follow.
  static const char* order[] = {"name", "model", "gpu", "quant", "kv_cache", "policy", "num_gpus", "tp", "pp",
                                "replicas", "interconnect", "max_num_seqs", "max_num_batched_tokens", "fits", "reason",
                                "meets_slo", "unstable", "currency", "cost_per_mtok_output_at_target",
                                "cost_per_mtok_total_at_target", "monthly_cost", "bill_basis", "fixed_monthly_cost",
                                "autoscaled_bill", "replicas_needed", "serving_replicas", "target_qps",
                                "target_concurrency", "sized_at", "slo_headroom_note", "looser_slo", "load_qps", "max_qps", "max_qps_ci95", "max_concurrency",
                                "capacity_evaluations", "scaling_efficiency", "scaling_concurrency",
                                "capacity_ratio_per_gpu", "price_per_gpu_hour", "price_is_placeholder", "cost_per_hour",
                                "cost_per_mtok_output_slo", "cost_per_mtok_total_slo", "purchase_price_per_gpu",
                                "purchase_price_is_placeholder", "owned_cost_per_gpu_hour", "owned_monthly_cost",
                                "owned_cost_per_mtok_output_at_target", "break_even_months", "owned_note",
                                "quality_caveat", "busy_fraction", "cold_start_s", "completed_requests", "preemptions",
                                "throughput", "slo_met", "slo_met_note", "slo_attainment", "goodput_rps", "goodput_output_tps",
                                "goodput_total_tps", "ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "queue_ms",
                                "kv_peak_used_fraction", "prefix_cache_hit_rate", "prefix_cache_note", "host_cache_hit_rate", "max_model_len", "max_model_len_note", "kv_transfer_ms", "decode_wait_ms", "spec_tokens_per_step",
                                "mfu", "mbu", "at_target"};
  std::vector<std::string> row_keys;
  for (const char* key : order) {
    if (std::string(key) == "max_qps_ci95") {
      row_keys.push_back("max_qps_ci95_lo");
      row_keys.push_back("max_qps_ci95_hi");
      continue;
    }
    flat.clear();
    flatten_into(key, j.at(key), flat);
    for (auto& [k, v] : flat) row_keys.push_back(k);
  }
  // Grid labels come first under their own paths; a row column of the same name (e.g. "model") gives way.
  for (const auto& p : label_paths)
    if (seen.insert(p).second) cols.push_back(p);
  for (auto& k : row_keys)
    if (!seen.count(k)) cols.push_back(k);
  return cols;
}

std::vector<std::pair<std::string, Json>> flatten(const Row& row) {
  const Json j = to_json(row);
  std::map<std::string, Json> by_key;
  std::vector<std::pair<std::string, Json>> flat;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "grid") continue;
    if (it.key() == "max_qps_ci95") {
      by_key["max_qps_ci95_lo"] = it.value()[0];
      by_key["max_qps_ci95_hi"] = it.value()[1];
      continue;
    }
    flat.clear();
    flatten_into(it.key(), it.value(), flat);
    for (auto& [k, v] : flat) by_key[k] = v;
  }
  std::vector<std::string> label_paths;
  for (const auto& l : row.labels) label_paths.push_back(l.first);
  const Json& grid = j.at("grid");
  std::vector<std::pair<std::string, Json>> out;
  for (const auto& col : row_columns(label_paths)) {
    if (grid.contains(col)) out.emplace_back(col, grid.at(col));
    else out.emplace_back(col, by_key.at(col));
  }
  return out;
}

}  // namespace llmsim::analysis
