#pragma once
// Private to the spec layer: the scenario's JSON field lists and the per-section readers and writers shared by
// scenario.cpp (top level, hardware, cost), scenario_paths.cpp (set_json_path), workload_json.cpp and engine_json.cpp.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/deployment.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/slo.hpp"
#include "llmsim/spec/workload.hpp"

namespace llmsim::spec::detail {

/// Whether `k` is one of `keys` (a section's field names).
inline bool contains(const std::vector<std::string>& keys, const std::string& k) {
  for (const auto& x : keys)
    if (x == k) return true;
  return false;
}

// ---- field lists: the parsers, writers and set_json_path share them ----
inline const std::vector<std::string> kTopKeys{"name", "model", "quant", "hardware", "engine", "workload", "slo", "metrics", "cost", "autoscaler", "failures", "disaggregation"};
inline const std::vector<std::string> kMetricsKeys{"percentiles"};
inline const std::vector<std::string> kFailureKeys{"mtbf_h", "mttr_h", "outages", "on_failure", "max_retries", "spares"};
inline const std::vector<std::string> kAutoscalerKeys{"min_replicas", "max_replicas", "target_utilization", "queue_per_replica",
                                                  "interval_s", "scale_up_delay_s", "scale_down_delay_s", "load_gbps",
                                                  "engine_start_s"};
inline const std::vector<std::string> kQuantKeys{"weights", "kv_cache"};
inline const std::vector<std::string> kHardwareKeys{"gpu",      "gpu_profile", "tp",
                                                   "pp",       "replicas",    "router",
                                                   "price_per_gpu_hour", "purchase_price_per_gpu", "fleet",
                                                   "pp_layer_partition"};
/// A member of hardware.fleet: a pool written like the hardware section, plus its engine overrides.
inline const std::vector<std::string> kFleetMemberKeys{"gpu", "gpu_profile", "tp", "pp", "replicas",
                                                       "price_per_gpu_hour", "purchase_price_per_gpu", "engine"};
inline const std::vector<std::string> kEngineKeys{"policy", "max_num_seqs", "max_num_batched_tokens", "block_size",
                                           "gpu_memory_utilization", "preemption", "max_model_len", "watermark",
                                           "swap_space_gb", "enable_prefix_caching", "cuda_graphs", "api_server", "max_concurrent_batches", "cpu_offload_gb",
                                           "kv_offload_gb", "async_scheduling", "num_scheduler_steps", "multi_step_stream_outputs", "cuda_graph_max_bs", "enable_lora", "max_loras", "max_lora_rank",
                                           "runtime", "synthetic_service", "speculative"};
inline const std::vector<std::string> kSpeculativeKeys{"method", "draft_model", "num_speculative_tokens"};
inline const std::vector<std::string> kSyntheticKeys{"kind", "mean_s", "cv"};
inline const std::vector<std::string> kWorkloadKeys{"arrival", "input_tokens", "output_tokens", "prefix_tokens", "prefix_groups",
                                             "classes", "num_requests", "warmup_requests", "horizon_s", "timeout_s", "seed", "too_long",
                                             "daily_profile", "days", "speculative_acceptance_rate", "lora_adapters",
                                             "sessions", "prompt_pool", "warm_cache", "dataset", "endpoint", "ignore_eos"};
inline const std::vector<std::string> kDatasetKeys{"name", "input_mean", "output_mean"};
inline const std::vector<std::string> kPromptPoolKeys{"groups", "prompts_per_group", "system_tokens", "shuffle"};
inline const std::vector<std::string> kSessionKeys{"preset", "turns", "system_tokens", "system_prompts", "user_tokens",
                                                   "output_tokens", "think_time_ms", "max_output_tokens"};
inline const std::vector<std::string> kClassKeys{"name", "arrival", "input_tokens", "output_tokens", "slo", "prefix_tokens",
                                          "prefix_groups"};
inline const std::vector<std::string> kCostKeys{"storage_per_month", "network_per_month", "ops_overhead_fraction", "spare_fraction",
                                         "hours_per_month", "target_qps", "network_gbps", "currency",
                                         "electricity_per_kwh", "pue", "depreciation_years", "hosting_per_gpu_month"};
inline const std::vector<std::string> kSloMetrics{"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"};
inline const std::map<std::string, std::vector<std::string>> kArrivalKeys{
    {"poisson", {"process", "rate"}},
    {"gamma", {"process", "rate", "cv"}},
    {"constant", {"process", "rate"}},
    {"onoff", {"process", "rate_on", "on_s", "off_s", "rate_off"}},
    {"closed", {"process", "concurrency", "think_time_s", "start_offsets_s"}},
    {"trace", {"process", "path", "time_scale", "requests", "format", "model", "log_type", "failed", "start_s",
               "duration_s", "start_row", "max_rows", "hash_block_tokens"}},
    {"offline", {"process", "weight"}},
    {"piecewise", {"process", "rates"}}};
inline const std::map<std::string, std::vector<std::string>> kLengthKeys{
    {"fixed", {"dist", "value"}},
    {"uniform", {"dist", "min", "max"}},
    {"normal", {"dist", "mean", "stddev", "min", "max"}},
    {"lognormal", {"dist", "mean", "sigma"}},
    {"empirical", {"dist", "values", "path", "column"}}};

inline const Json kEmptyObject = Json::object();

/// An int field (range-checked), or `fallback` when absent.
int read_int(const JsonView& v, std::string_view key, int fallback);
std::vector<std::string> keys_of(const std::map<std::string, std::vector<std::string>>& m);
/// Every field name of every variant, once each, in first-seen order.
std::vector<std::string> union_of(const std::map<std::string, std::vector<std::string>>& m);

// ---- workload_json.cpp ----
ArrivalSpec read_arrival(const JsonView& v);
LengthDist read_length(const JsonView& v);
SloSpec read_slo(const JsonView& v);
Workload read_workload(const JsonView& v);
Json arrival_json(const ArrivalSpec& a);
Json length_json(const LengthDist& d);
Json slo_json(const SloSpec& s);
Json workload_json(const Workload& w);  ///< full form: every field

// ---- scenario.cpp: the hardware section (also a pool's form, spec/pool.hpp) ----
Deployment read_hardware(const JsonView& v);
Json hardware_json(const Deployment& d);  ///< full form: every field

// ---- engine_json.cpp ----
EngineConfig read_engine(const JsonView& v);
Json engine_json(const EngineConfig& e);  ///< full form: every field

}  // namespace llmsim::spec::detail
