#pragma once
// What traffic arrives: arrival process, prompt/output length distributions, tenant classes.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "llmsim/spec/dataset_lengths.hpp"
#include "llmsim/spec/prompt_pool.hpp"
#include "llmsim/spec/sessions.hpp"
#include "llmsim/spec/slo.hpp"
#include "llmsim/spec/workload_lengths.hpp"

namespace llmsim::spec {

// ---- arrival processes (rates in requests per second) ----
struct PoissonArrivals { double rate = 1.0; };
struct GammaArrivals { double rate = 1.0; double cv = 2.0; };   ///< inter-arrival coefficient of variation
struct ConstantArrivals { double rate = 1.0; };
/// Poisson at rate_on for on_s seconds, then rate_off for off_s seconds, repeating.
struct OnOffArrivals { double rate_on = 2.0; double on_s = 60; double off_s = 60; double rate_off = 0; };
/// N users, each sends its next request think_time_s after its previous one finished. `start_offsets_s`, when given,
/// splits the users into that many clients of (as near as possible) equal size — user u of N belongs to client
/// u·G/N — and client g sends its first requests at start_offsets_s[g] instead of t = 0: parallel benchmark clients
/// that did not start together (each `vllm bench serve` client's start is its result file's `date` less its
/// `duration`). Empty: every user starts at t = 0.
struct ClosedLoop {
  int concurrency = 1;
  double think_time_s = 0;
  std::vector<double> start_offsets_s;
};
/// One request of an inline trace: arrival (s), prompt tokens (>= 1), output tokens (>= 0; 0 runs as 1).
struct TraceRequest { double arrival_s = 0; std::int64_t input_tokens = 1, output_tokens = 1; };
/// Trace file formats: `auto` tells them apart by content (a JSON line is Mooncake, a CSV header names its layout).
inline const std::vector<std::string> kTraceFormats{"auto", "plain", "azure", "splitwise", "burstgpt", "mooncake"};
/// Replays a trace file: CSV plain (arrival_time_s,input_tokens,output_tokens), Azure
/// (TIMESTAMP,ContextTokens,GeneratedTokens), Splitwise (arrived_at,num_prefill_tokens,num_decode_tokens), BurstGPT
/// (Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type) or Mooncake JSONL (timestamp in ms,
/// input_length, output_length, hash_ids: one id per `hash_block_tokens` prompt tokens, equal ids = equal prefix
/// blocks, which drive prefix-cache hits); or, when `requests` is non-empty, those requests (JSON "requests":
/// [[arrival_s, input, output], ...]) — the per-request lengths of a vLLM benchmark result replay this way.
/// Selection, in this order: the BurstGPT filters, the time window (seconds on the trace's own clock from its
/// first row, before time_scale), then the row window (rows left after the filters, in time order).
struct TraceReplay {
  std::string path;
  double time_scale = 1.0;  ///< arrival times are divided by time_scale
  std::vector<TraceRequest> requests;
  std::string format = "auto";          ///< one of kTraceFormats
  std::string model{};                  ///< BurstGPT: keep rows of this Model ("ChatGPT", "GPT-4"; "" = all)
  std::string log_type{};               ///< BurstGPT: "Conversation" or "API" (its "... log" values; "" = all)
  bool keep_failed = false;             ///< BurstGPT: replay failed rows (Response tokens 0) as 1-token replies
  double start_s = 0, duration_s = 0;   ///< time window [start_s, start_s + duration_s); duration 0 = to the end
  std::int64_t start_row = 0, max_rows = 0;  ///< row window; max_rows 0 = all
  int hash_block_tokens = 512;          ///< Mooncake: prompt tokens per hash id (the published traces: 512)
};
/// Every request present at t = 0, as `vllm bench throughput` (the offline LLM class) runs them. With several
/// offline classes the requests interleave in proportion to `weight`.
struct OfflineArrivals { double weight = 1.0; };
/// Poisson with a rate that is piecewise constant in time: `rates` = [(from_s, req/s), ...] with from_s strictly
/// increasing from 0; the last rate holds for ever (0 ends the arrivals). E.g. a 3x one-minute spike:
/// [(0, 4), (60, 12), (120, 4)].
///
/// A compiled daily profile repeats one period: with `period_s` > 0, `rates` covers [0, period_s) (its last rate
/// holds until period_s) and the schedule repeats `periods` times, then the arrivals end. Its memory and the work of
/// every count are one period's, whatever the number of days (a day of 10,000 CSV rows over years of days was
/// expanded day by day: gigabytes, minutes).
struct PiecewiseArrivals {
  std::vector<std::pair<double, double>> rates{{0.0, 1.0}};
  double period_s = 0;        ///< > 0: `rates` is one period, repeated
  std::int64_t periods = 1;   ///< how many (period_s > 0)
};
using ArrivalSpec = std::variant<PoissonArrivals, GammaArrivals, ConstantArrivals, OnOffArrivals, ClosedLoop,
                                 TraceReplay, OfflineArrivals, PiecewiseArrivals>;

/// The simulated clock is a double in seconds; up to this time it resolves better than 0.2 µs, so latencies of
/// milliseconds keep 5+ significant digits. Every time a scenario implies (expected arrival span, think
/// times, horizon, trace times) must stay below it, or validation names the field.
inline constexpr double kMaxSimulatedSeconds = 1e9;
/// Most tenant classes, and most closed-loop users over all classes, a workload may have: beyond these the
/// per-class statistics and per-user state would be allocated up front for no realistic scenario.
inline constexpr int kMaxClasses = 1024;
inline constexpr std::int64_t kMaxUsers = 1'000'000;

/// One class of traffic with its own arrivals, lengths and (optionally) its own SLO.
struct TenantClass {
  std::string name;
  ArrivalSpec arrival = PoissonArrivals{};
  LengthDist input_tokens = LogNormalLength{};
  LengthDist output_tokens = FixedLength{};
  std::optional<SloSpec> slo;        ///< falls back to the scenario's slo
  std::int64_t prefix_tokens = 0;    ///< shared prompt prefix length (prefix caching)
  int prefix_groups = 0;             ///< requests pick one of this many shared prefixes (0 = none)
  /// Lengths drawn jointly from a named dataset (Workload::dataset); input_tokens/output_tokens then describe its
  /// marginals (normal with the fitted mean and sd, bounded by the client's filters) for the sizing hints.
  std::optional<DatasetSpec> dataset;
};

enum class TooLongPolicy { clip, reject };  ///< what happens to a request longer than max_model_len

/// The OpenAI-compatible endpoint the client sends to (`vllm bench serve --endpoint`, JSON "workload.endpoint"):
/// "/v1/completions" (a prompt, `--backend vllm` / `openai`) or "/v1/chat/completions" (messages the server renders
/// with the model's chat template, `--backend openai-chat`; perf/chat_render.hpp).
enum class Endpoint { completions, chat_completions };
std::string to_string(Endpoint e);
/// "/v1/completions" | "/v1/chat/completions" (also without the "/v1" prefix); ConfigError at `path` otherwise.
Endpoint parse_endpoint(const std::string& s, const std::string& path = "workload.endpoint");

/// A day's load shape: multipliers of each open-loop class's Poisson base rate, either 24 hourly values
/// (`hourly`, JSON `"daily_profile": [24 numbers]`) or breakpoints (seconds into the day, multiplier) read from a
/// CSV (`points`, JSON `{"csv": "file"}` with columns time_s,rate; the rate column is a multiplier of the base
/// rate, so a base rate of 1 req/s makes it an absolute rate). Compiled onto PiecewiseArrivals (one rule:
/// compile_daily_profile) and repeated for Workload::days.
struct DailyProfile {
  std::vector<double> hourly;
  std::vector<std::pair<double, double>> points;
  std::string csv;  ///< the file `points` came from (kept for the scenario's JSON)
  bool empty() const noexcept { return hourly.empty() && points.empty(); }
};
inline constexpr double kSecondsPerDay = 86400.0;
/// workload.warmup_requests when a scenario leaves it unset: min(100, num_requests / 10), 0 for fewer than 10.
constexpr std::int64_t default_warmup_requests(std::int64_t num_requests) noexcept {
  return num_requests / 10 < 100 ? (num_requests > 0 ? num_requests / 10 : 0) : 100;
}
/// workload.num_requests when a daily profile is given without one: the most allowed, so the days end the run.
inline constexpr std::int64_t kDailyProfileRequests = 10'000'000'000LL;  ///< what happens to a request longer than max_model_len

struct Workload {
  // The single-class form; `classes`, when non-empty, replaces it.
  ArrivalSpec arrival = PoissonArrivals{};
  LengthDist input_tokens = LogNormalLength{1150, 1.0};
  LengthDist output_tokens = LogNormalLength{210, 0.86};
  std::int64_t prefix_tokens = 0;
  int prefix_groups = 0;
  std::vector<TenantClass> classes;

  std::int64_t num_requests = 2000;     ///< stop after this many arrivals (open loop) / completions (closed)
  std::int64_t warmup_requests = 100;   ///< first requests excluded from statistics (unset in JSON: default_warmup_requests)
  /// warmup_requests was left unset (JSON): the engine lowers it to default_warmup_requests of the requests the run
  /// issues, which a trace's rows can bound below num_requests (known once the trace is read).
  bool warmup_default = false;
  double horizon_s = 0;                 ///< also stop at this simulated time (0 = no limit)
  /// Client timeout: a request not finished this many seconds after its arrival is cancelled wherever it is
  /// (counted as timed out, its KV freed; engine/timeouts.hpp). 0 = off.
  double timeout_s = 0;
  std::uint64_t seed = 1;
  /// The server's prefix cache already holds this benchmark's prompts at t = 0, as an earlier run of the same
  /// requests on the same server left it (`vllm bench serve` re-run per request rate with the same seed): its
  /// blocks in the earlier run's release order, capacity-bounded by the KV pool (engine/warm_cache.hpp). Needs a
  /// replayed trace (the prompts' identities) and prefix caching.
  bool warm_cache = false;
  /// The client asked the server to ignore the end-of-sequence token, so every request generates exactly its
  /// output_tokens (its max_tokens): SGLang's `bench_serving` sends it unless --disable-ignore-eos, `vllm bench
  /// serve` only with --ignore-eos. A server that knows it may plan on it: SGLang with the radix cache off admits
  /// such requests by their exact future KV (spec/sglang_admission.hpp). Default false (traffic that stops at EOS).
  bool ignore_eos = false;
  TooLongPolicy too_long = TooLongPolicy::clip;
  /// The endpoint the requests are sent to; the chat endpoint renders each prompt in the API server first.
  Endpoint endpoint = Endpoint::completions;
  DailyProfile daily_profile;           ///< empty = the arrival processes as given
  int days = 1;                         ///< the daily profile repeats this many days, then arrivals end
  /// Speculative decoding: probability that the target accepts each proposed token, in [0, 1]; unset = the
  /// method's cited default (spec::default_acceptance_rate). Ignored when engine.speculative is absent.
  std::optional<double> speculative_acceptance_rate;
  /// LoRA (engine.enable_lora): how many distinct adapters the requests name, spread evenly over them; a step reads
  /// the A and B of as many as it has sequences, up to this (perf/lora_kernels.hpp). Unset = 1 with LoRA on; at most
  /// engine.max_loras (more would need vLLM's swapping from host memory, max_cpu_loras, which is not modelled).
  /// Refused without engine.enable_lora.
  std::optional<int> lora_adapters;
  /// Conversations instead of independent requests (spec/sessions.hpp): `arrival` is then the sessions' arrival
  /// process (sessions/s), input_tokens/output_tokens/prefix_* are unused and `classes` must be empty;
  /// num_requests and warmup_requests count turns (each turn is one request).
  std::optional<SessionSpec> sessions;
  /// A fixed pool of prompts sent round robin (spec/prompt_pool.hpp: inference-perf's shared_prefix data): request n
  /// sends pool prompt n mod size, its first system_tokens tokens its group's. The lengths are still input_tokens /
  /// output_tokens (or a trace's rows); one class only, no sessions, no prefix_tokens/prefix_groups.
  std::optional<PromptPool> prompt_pool;
  /// Each request's prompt and output lengths drawn together from a named dataset's length distribution
  /// (spec/dataset_lengths.hpp: "sharegpt", conditioned on input_mean / output_mean and the benchmark client's
  /// filters) instead of input_tokens / output_tokens, which are then unused. The single-class form with an
  /// open-loop, closed-loop or offline arrival process; no classes, sessions, prompt pool or trace.
  std::optional<DatasetSpec> dataset;

  /// The tenant classes, the single-class form turned into one class named "default"; with a daily profile
  /// each class's Poisson arrivals become the compiled piecewise schedule (compile_daily_profile).
  std::vector<TenantClass> effective_classes() const;
  /// Every field on its own, then the derived quantities (check_derived). One ConfigError with every problem.
  void validate(const std::string& path = "workload") const;
  /// Quantities derived from several fields: the simulated time the arrivals and think times imply stays
  /// within kMaxSimulatedSeconds (names the rate / think_time_s), closed-loop users total <= kMaxUsers, an
  /// offline class is not mixed with other processes.
  void check_derived(const std::string& path = "workload") const;
};

/// Mean offered arrival rate (requests/s) summed over classes; nullopt for closed loop, traces and offline
/// runs. A piecewise schedule's rate is its mean over the time it takes to issue num_requests (or until its
/// rate drops to 0 for good).
std::optional<double> offered_rate(const Workload& w);
/// True when every class is offline (all requests at t = 0): the engine then takes the offline entry point's
/// defaults (spec::effective_engine).
bool offline_workload(const Workload& w);
/// Checks one arrival process on its own (rates, CVs, phase lengths, schedule order); ConfigError at `path`.
void validate_arrival(const ArrivalSpec& a, const std::string& path);
/// The piecewise schedule of a Poisson base rate under a daily profile over `days` days: one day's breakpoints at
/// each hour (or CSV time) at base_rate × multiplier, repeated `days` times (period_s 86400), then 0 (the arrivals
/// end).
PiecewiseArrivals compile_daily_profile(const DailyProfile& profile, int days, double base_rate);
/// Reads a daily profile CSV (columns time_s and rate; strict numbers): ConfigError naming `path` for a file
/// that cannot be read and "file:line:field" for a bad row. Validation of the values is DailyProfile's.
DailyProfile read_daily_profile_csv(const std::string& file, const std::string& path);
/// The busiest moment of a daily profile: its largest multiplier and when in the day it starts (the first such).
struct DailyPeak {
  double multiplier = 1;
  double start_s = 0;
};
/// nullopt for an empty profile.
std::optional<DailyPeak> daily_peak(const DailyProfile& profile);
/// What sizing simulates (capacity, compare, report, search): the workload as given, or with a daily profile its
/// peak window as a stationary load — each Poisson class at its base rate × the peak multiplier, the profile,
/// its days and its day-long request count dropped (the Workload default's count instead) — since a fleet sized
/// for the first minutes after midnight misses its SLO at the peak. One rule: every sizing path calls it.
Workload sizing_workload(const Workload& w);
/// Says where sizing_workload sizes: "" without a daily profile, else "the daily profile's peak window (15:00,
/// 1.9 x the base rate)".
std::string sizing_window(const Workload& w);
/// Expected number of arrivals of a piecewise schedule in [0, t].
double piecewise_count(const PiecewiseArrivals& a, double t);
/// The same workload with its open-loop rates scaled so the total offered rate is `rate` (class mix kept);
/// a closed loop gets concurrency = round(rate). ConfigError for trace replay, offline runs or rate <= 0.
Workload with_rate(const Workload& w, double rate);

}  // namespace llmsim::spec
