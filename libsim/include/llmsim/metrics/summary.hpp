#pragma once
// The one output: what `llmsim simulate --json` prints and Python's Result.summary holds.
// Field names are a contract (DESIGN.md "Result format"): add, never rename.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmsim/core/json_view.hpp"
#include "llmsim/metrics/fleet.hpp"

namespace llmsim::metrics {

/// Mean and percentiles of one latency, in milliseconds. All 0 when there were no samples (count = 0).
struct LatencyStats {
  double mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0;
  double stddev = 0;  ///< population standard deviation (vLLM's std_*_ms)
  std::int64_t count = 0;
  double max = 0;
  /// Percentile q in (0,100] from the underlying histogram (filled by the metrics collector): the extra (q, value)
  /// pairs asked for by the SLO and by the scenario's metrics.percentiles.
  std::vector<std::pair<double, double>> quantiles;
};

struct Throughput {
  double requests_per_s = 0, input_tokens_per_s = 0, output_tokens_per_s = 0, total_tokens_per_s = 0;
};

struct KvStats {
  std::int64_t capacity_tokens = 0;
  double peak_used_fraction = 0, mean_used_fraction = 0;
  /// Prefix caching (measured requests, every admission, re-admissions after preemption included, as vLLM's
  /// PrefixCacheStats counts): prompt tokens looked up and found cached. JSON hit rate null when none were
  /// looked up (caching off).
  double prefix_cache_query_tokens = 0, prefix_cache_hit_tokens = 0;
  /// Host KV tier (engine.kv_offload_gb; engine/kv_host_tier.hpp), absent when off: its size over all replicas,
  /// prompt tokens loaded from it at those admissions instead of recomputed (after the GPU's hits), those it held
  /// that the load rule recomputed, and GiB copied device-to-host (write-through) and host-to-device (loads).
  bool host_tier = false;
  double host_capacity_gb = 0;
  double host_cache_hit_tokens = 0, host_recomputed_tokens = 0;
  double host_stored_gb = 0, host_loaded_gb = 0;
  /// Cached ÷ looked-up prompt tokens; nullopt when nothing was looked up (the one rule: JSON, compare, report).
  std::optional<double> prefix_cache_hit_rate() const {
    if (prefix_cache_query_tokens <= 0) return std::nullopt;
    return prefix_cache_hit_tokens / prefix_cache_query_tokens;
  }
};

struct CostSummary {
  /// The headline (per_hour .. monthly): a fixed deployment's GPUs + extras held all the time; an autoscaled fleet's
  /// own bill (per_hour = period ÷ period_hours, monthly = period_monthly, per Mtok over the run's SLO-meeting tokens).
  double per_hour = 0;                ///< USD/h (cost.currency)
  double per_mtok_output_slo = 0;     ///< USD per million output tokens of SLO-meeting requests (0 = none met)
  double per_mtok_total_slo = 0;      ///< USD per million input+output tokens of SLO-meeting requests
  double monthly = 0;                 ///< USD per month (hours_per_month)
  double cold_start_s = 0;            ///< weight download time at cost.network_gbps
  /// The run's own bill (analysis::period_cost of fleet.replica_hours): what the simulated period cost as the
  /// fleet was held (autoscaled: its replica-hours; fixed: every replica all the time), that bill scaled to
  /// hours_per_month, and per million SLO-meeting output tokens of the run (failed and timed-out requests never
  /// count). 0 when the run has no duration; per_mtok 0 when no request met the SLO.
  double period = 0, period_hours = 0, period_monthly = 0, period_per_mtok_output_slo = 0;
};

/// Per tenant class (only when the workload has several).
struct ClassSummary {
  std::string name;
  std::int64_t completed_requests = 0;
  double slo_attainment = 0, goodput_rps = 0;
  bool slo_met = true;
  LatencyStats ttft_ms, tpot_ms, e2e_ms;
};

/// The load offered over the run: measured arrivals over the time they took to arrive (realized, not nominal).
struct OfferedLoad {
  std::int64_t arrivals = 0;          ///< measured requests that arrived (rejected ones included)
  double window_s = 0;                ///< first to last measured arrival (0: all at once, e.g. offline)
  double requests_per_s = 0;          ///< arrivals / window_s; 0 when the window is 0 (JSON null)
};

/// The service rate while requests were waiting: iterations formed with requests left in the queue (the
/// batch at its token budget, max_num_seqs or KV limit). Rates are per deployment: the per-engine rate over
/// those iterations times the engines (replicas × batches in flight). All 0 when never saturated (JSON null).
struct Saturation {
  /// Output tokens emitted and prompt tokens computed in those iterations, per second of them; requests/s = the
  /// work they completed per second in requests: 1 / (mean output × their decode seconds per output token + prompt
  /// tokens computed per request × their prefill seconds per prompt token), docs/engine.md. Over a long saturated
  /// stretch that is output tokens/s / mean output; in a short one (a spike's backlog, a batch filling up) the
  /// prompt side runs ahead, and its work is counted.
  Throughput throughput;
  double time_s = 0;                  ///< summed over engines
  double busy_fraction = 0;           ///< of the engines' busy time
  std::int64_t iterations = 0;
  double mean_batch = 0;              ///< sequences per iteration, time-weighted, while saturated
};

/// Sequences per iteration over the run (prefill chunks + decodes; static padding included).
struct BatchStats {
  std::int64_t max_seqs = 0;
  double mean_seqs = 0;               ///< time-weighted over busy time
};

/// How far to trust one kind of predicted number (analysis/error_band.hpp fills it): the typical |relative error|
/// of llmsim's predictions of public measurements in the same regime. n = 0: unknown (too few measurements).
struct ErrorBandStats {
  double typical = 0, p90 = 0;
  std::size_t n = 0;
  bool blind = false;   ///< from sources that set no constant (else a lower bound: sources the model was tuned on)
  std::string group;    ///< the regime the residuals come from ("hopper_hbm / vllm-v1 / batch * / latency")
  std::string text;     ///< "typical error ±9% in this regime (...), from 140 blind measurements"
};
/// The bands of a run's TTFT, its per-token latencies (TPOT, ITL, E2E) and its throughputs; `known` false when the
/// run was not priced by analysis::evaluate (JSON null).
struct ErrorBands {
  bool known = false;
  ErrorBandStats ttft, latency, throughput;
};

/// Speculative decoding over the run (docs/speculative-decoding.md); `enabled` false = off (JSON null).
struct SpeculativeStats {
  bool enabled = false;
  std::string method;                 ///< "draft" | "ngram" | "eagle" | "mtp"
  int num_speculative_tokens = 0;     ///< k
  double acceptance_rate = 0;         ///< α the run assumed (the workload's or the method's default)
  double steps = 0;                   ///< verification steps (iterations with decoders), all replicas
  double mean_tokens_per_step = 0;    ///< tokens a decoder emitted per step: 1 + mean accepted (≈ (1−α^{k+1})/(1−α))
  double mean_accepted_tokens = 0;    ///< proposals accepted per decoder per step
  double proposer_time_fraction = 0;  ///< share of the replicas' busy time spent in the proposer (draft GPU time)
};

/// The steady state: from the first to the last measured arrival, every request that finished (warm-up
/// included) divided by that window — unbiased for a stationary system, unlike the whole run, whose drain tail
/// has no arrivals. Goodput counts the finished requests that met their SLO. Empty (window 0) for offline runs.
struct SteadyState {
  double start_s = 0, end_s = 0, window_s = 0;
  std::int64_t departures = 0;
  Throughput throughput;
  double goodput_rps = 0, goodput_output_tps = 0, goodput_total_tps = 0;
  double slo_attainment = 0;          ///< of those departures
};

/// After the last measured arrival: the time until the last measured request finished, and those it took.
struct DrainTail {
  double duration_s = 0;
  std::int64_t completed_requests = 0;
};

/// One pool of a disaggregated deployment (docs/disaggregation.md) or one member of a heterogeneous fleet
/// (hardware.fleet, docs/fleets.md): what it is and how busy it was.
struct PoolSummary {
  std::string role;                   ///< "prefill" or "decode"; "fleet" for a fleet member
  std::string gpu;                    ///< resolved GPU id
  std::int64_t gpus = 0, replicas = 0;  ///< GPUs of the pool (tp × pp × replicas) and its replicas
  double price_per_gpu_hour = 0;      ///< in cost.currency
  double busy_fraction = 0;           ///< of the run, the pool's replicas were running iterations
  double mfu = 0, mbu = 0;            ///< over the pool's busy time
  double kv_mean_used_fraction = 0;
  std::int64_t kv_capacity_tokens = 0;  ///< per replica (each of its concurrent batches' share summed)
  /// Requests per second the pool sustains while saturated (prefill: prompt tokens/s ÷ mean prompt; decode:
  /// output tokens/s ÷ mean output); 0 when it never saturated.
  double saturation_requests_per_s = 0;
};

/// Disaggregated prefill/decode: the KV transfers and the decode pool's admission queue (measured requests).
struct DisaggregationSummary {
  std::string link;                   ///< link kind
  double link_gbps = 0, link_latency_us = 0;
  std::string transfer;               ///< after_prefill | layerwise
  LatencyStats transfer_ms;           ///< prefill end to KV arrival: link queueing + latency + bytes ÷ bandwidth
  LatencyStats decode_wait_ms;        ///< KV arrival to admission on a decode replica (its KV blocks free)
  double mean_transfer_mb = 0;        ///< KV bytes moved per request, MB (1e6)
  std::vector<PoolSummary> pools;     ///< prefill, decode
};

/// One turn index of a session workload (measured turns; SessionStats fills it).
struct TurnSummary {
  std::int32_t turn = 1;              ///< 1-based index in its session
  bool and_later = false;             ///< the last bucket: this turn and every later one
  std::int64_t completed = 0, lost = 0;  ///< completed; timed out, failed or rejected
  double mean_input_tokens = 0;       ///< prompt (system + kept history + new message) of the completed ones
  double prefix_hit_rate = 0;         ///< their prompt tokens found cached at first admission ÷ prompt tokens
  LatencyStats ttft_ms;
};

/// workload.sessions only (JSON "sessions", else absent): the conversations and their cache reuse.
struct SessionSummary {
  // Every count is of measured sessions (their first turn measured), so started = finished + in_progress; a session
  // started in the warm-up is in none of them, even when its later turns are measured (issue 29: finished counted
  // warm-up sessions too and exceeded started).
  std::int64_t started = 0;           ///< sessions whose first turn was measured
  std::int64_t finished = 0;          ///< of those, the ones that had all their turns by the end
  /// of those, the ones still in conversation when the run stopped (num_requests reached, horizon): their later
  /// turns were never issued
  std::int64_t in_progress = 0;
  std::int64_t peak_active = 0;       ///< most sessions in progress at once (the driver's memory bound)
  std::int64_t dropped_turns = 0;     ///< history turns dropped by the truncation rule (max_model_len)
  double sessions_per_s = 0;          ///< started ÷ the offered window (offered.window_s)
  double requests_per_s = 0;          ///< measured turn arrivals ÷ the same window (= offered.requests_per_s)
  double turns_per_session = 0;       ///< turns the started sessions sent ÷ started
  /// Σ cached ÷ Σ prompt tokens over measured completed turns at their first admission (kv.prefix_cache_hit_rate
  /// counts every admission, re-admissions after preemption too).
  double prefix_hit_rate = 0;
  std::vector<TurnSummary> by_turn;
};

/// How the warm-up requests ended (Summary::warmup).
struct WarmupCounts {
  std::int64_t arrivals = 0, rejected = 0, completed = 0, failed = 0, timed_out = 0, unfinished = 0;
};

struct Summary {
  bool fits = true;
  std::string reason;                 ///< why it cannot run (fits = false), why unstable, or why incomplete
  bool unstable = false;              ///< arrivals faster than service: the number in system kept growing
  /// Every issued request was served to its end (false: the run hit workload.horizon_s, the memory bound on
  /// requests in the system, the clock's range, or stopped at overload for a capacity search).
  bool complete = true;
  std::string engine;                 ///< the engine and version the policy models ("vLLM V1 (0.11 scheduler)")
  /// The context the run served (engine.max_model_len, or vLLM's auto fitted to the KV cache) and, under auto,
  /// why (memory::context_note: "auto: the model's 131,072 does not fit"; "" when the user set it).
  int max_model_len = 0;
  std::string max_model_len_note;
  /// Why the prefix cache made no lookups although the scenario asked for it (spec::ResolvedScenario::
  /// prefix_caching_off: "prefix caching is off: vLLM 0.10.2 disables it for a hybrid ..."); "" otherwise. Also one
  /// of `warnings`; a sweep row carries it beside its empty prefix_cache_hit_rate.
  std::string prefix_cache_note;
  /// What the user must know about how the run was priced (a calibrated profile fitted on another runtime);
  /// JSON "warnings", present only when not empty.
  std::vector<std::string> warnings;
  std::int64_t completed_requests = 0, rejected_requests = 0, clipped_requests = 0, preemptions = 0;
  /// Requests lost to a replica failure (hardware.failures.on_failure = "fail") and cancelled by the client's
  /// timeout (workload.timeout_s): not completed, never in goodput or the tokens the cost is divided by. Their
  /// tokens already produced are work paid for and thrown away (wasted_output_tokens).
  std::int64_t failed_requests = 0, timed_out_requests = 0, requeued_requests = 0;
  /// Measured requests still in the system when the run ended (workload.horizon_s, a bound, an overload stop):
  /// misses for slo_attainment.
  std::int64_t unfinished_requests = 0;
  /// The warm-up requests (the first workload.warmup_requests), which no other field counts: how each ended.
  /// arrivals = rejected + completed + failed + timed_out + unfinished, as for the measured ones (offered.arrivals =
  /// rejected_requests + completed_requests + failed_requests + timed_out_requests + unfinished_requests).
  WarmupCounts warmup;
  double wasted_output_tokens = 0;
  FleetSummary fleet;
  double duration_s = 0;              ///< the run: first measured arrival to the last event
  double mean_in_system = 0;          ///< time-average of requests arrived and not finished (over the run)
  Throughput throughput;              ///< achieved over the run: measured completions (and their tokens) / duration_s
  OfferedLoad offered;
  Saturation saturation;
  BatchStats batch;
  SpeculativeStats speculative;
  SteadyState steady_state;
  DrainTail drain;
  LatencyStats ttft_ms, tpot_ms, itl_ms, e2e_ms, queue_ms;
  /// Measured requests that met every per-request threshold ÷ measured requests that entered the system
  /// (completed + failed + timed out + unfinished at the end; rejected ones never entered).
  double slo_attainment = 0;
  bool slo_met = true;                ///< every percentile target (and min_attainment) holds
  /// False when no latency target is set (the scenario's slo and every class's are empty): slo_met is then vacuous,
  /// and the JSON writes it as null with slo_met_note (docs/result-format.md), never as a met SLO.
  bool slo_set = true;
  double goodput_rps = 0, goodput_output_tps = 0, goodput_total_tps = 0;
  KvStats kv;
  double mfu = 0, mbu = 0;            ///< model FLOPs / bandwidth utilisation over busy time
  /// Fraction of the run the replicas' GPUs were running iterations (board power under load); < 0 = unknown
  /// (synthetic service). Prices owned hardware's energy (analysis/ownership.hpp).
  double busy_fraction = -1;
  std::int64_t iterations = 0;
  CostSummary cost;
  ErrorBands error_band;              ///< filled by analysis::evaluate
  std::vector<ClassSummary> classes;
  std::optional<DisaggregationSummary> disaggregation;  ///< with scenario.disaggregation only
  /// hardware.fleet only: each member, in the fleet's order, measured on its own replicas (its busy fraction prices
  /// its owned energy; kv.capacity_tokens above is the smallest member's, the longest context every member holds).
  std::vector<PoolSummary> fleet_pools;
  std::optional<SessionSummary> sessions;  ///< workload.sessions only
};

/// The DESIGN.md result object (plus extra fields).
/// Every unstable run's `reason` begins with this label (the run monitor writes it: engine/run_monitor.hpp), so a
/// reader that prints the reason as it is says "unstable" once.
inline constexpr std::string_view kUnstableLabel = "unstable: ";
/// What `slo_met_note` (result JSON, rows) and the tables say in place of a verdict when no latency target is set.
/// It stands for every field that counts the requests meeting the SLO: slo_met, slo_attainment and the goodput_*
/// rates (and vLLM's request_goodput), all null then, since every request would "meet" an empty SLO.
inline constexpr const char* kNoSloNote =
    "no SLO set: no latency target in slo or any class, so nothing to meet (no SLO verdict, attainment or goodput)";
/// The tokens a cost per million divides by, as the outputs say it: "SLO-meeting output tokens", or with no latency
/// target "output tokens (no SLO set: every finished request counts)" — cost_per_mtok_*_slo then prices all of them
/// (docs/analysis.md), and calling them SLO-meeting would claim a target nobody set (attack11).
inline std::string priced_output_tokens(bool slo_set) {
  return slo_set ? "SLO-meeting output tokens" : "output tokens (no SLO set: every finished request counts)";
}
/// How the largest load a replica serves (max_qps) is bounded, as the outputs say it: "inside the SLO", or with no
/// latency target "stably (no SLO set)": the capacity search then finds the largest load whose queue stays bounded.
inline std::string capacity_bound(bool slo_set) { return slo_set ? "inside the SLO" : "stably (no SLO set)"; }
/// Why a run was unstable, without the label: for a reader that heads its own line with the word ("UNSTABLE: ",
/// "the simulated run was unstable: "). The reason as it is when it carries no label; "" for a stable run.
std::string unstable_cause(const Summary& s);
/// The reason of an unstable run, labelled once ("unstable: ..."); "" for a stable run.
std::string unstable_reason(const Summary& s);

Json to_json(const Summary& s);
Json to_json(const LatencyStats& l);

}  // namespace llmsim::metrics
