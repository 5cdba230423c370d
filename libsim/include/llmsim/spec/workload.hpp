#pragma once
// What traffic arrives: arrival process, prompt/output length distributions, tenant classes.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "llmsim/spec/slo.hpp"

namespace llmsim::spec {

// ---- arrival processes (rates in requests per second) ----
struct PoissonArrivals { double rate = 1.0; };
struct GammaArrivals { double rate = 1.0; double cv = 2.0; };   ///< inter-arrival coefficient of variation
struct ConstantArrivals { double rate = 1.0; };
/// Poisson at rate_on for on_s seconds, then rate_off for off_s seconds, repeating.
struct OnOffArrivals { double rate_on = 2.0; double on_s = 60; double off_s = 60; double rate_off = 0; };
/// N users, each sends its next request think_time_s after its previous one finished.
struct ClosedLoop { int concurrency = 1; double think_time_s = 0; };
/// One request of an inline trace: arrival (s), prompt tokens (>= 1), output tokens (>= 0; 0 runs as 1).
struct TraceRequest { double arrival_s = 0; std::int64_t input_tokens = 1, output_tokens = 1; };
/// Replays a CSV trace: plain (arrival_time_s,input_tokens,output_tokens), Azure
/// (TIMESTAMP,ContextTokens,GeneratedTokens) or Splitwise (arrived_at,num_prefill_tokens,num_decode_tokens);
/// or, when `requests` is non-empty, those requests (JSON "requests": [[arrival_s, input, output], ...]) — the
/// per-request lengths of a vLLM benchmark result replay this way, with no file.
struct TraceReplay {
  std::string path;
  double time_scale = 1.0;  ///< arrival times are divided by time_scale
  std::vector<TraceRequest> requests;
};
using ArrivalSpec =
    std::variant<PoissonArrivals, GammaArrivals, ConstantArrivals, OnOffArrivals, ClosedLoop, TraceReplay>;

// ---- length distributions (tokens) ----
struct FixedLength { std::int64_t value = 256; };
struct UniformLength { std::int64_t min = 1, max = 512; };            ///< inclusive
struct NormalLength { double mean = 512, stddev = 128; std::int64_t min = 1, max = 0; }; ///< max 0 = model limit
/// Lognormal with the given arithmetic mean and sigma of ln(x) (the form DESIGN.md's scenario uses).
struct LogNormalLength { double mean = 512, sigma = 0.8; };
/// Draws uniformly from measured values (inline, or a CSV file's column).
struct EmpiricalLength { std::vector<std::int64_t> values; std::string path; std::string column; };
using LengthDist = std::variant<FixedLength, UniformLength, NormalLength, LogNormalLength, EmpiricalLength>;

/// One class of traffic with its own arrivals, lengths and (optionally) its own SLO.
struct TenantClass {
  std::string name;
  ArrivalSpec arrival = PoissonArrivals{};
  LengthDist input_tokens = LogNormalLength{};
  LengthDist output_tokens = FixedLength{};
  std::optional<SloSpec> slo;        ///< falls back to the scenario's slo
  std::int64_t prefix_tokens = 0;    ///< shared prompt prefix length (prefix caching)
  int prefix_groups = 0;             ///< requests pick one of this many shared prefixes (0 = none)
};

enum class TooLongPolicy { clip, reject };  ///< what happens to a request longer than max_model_len

struct Workload {
  // The single-class form; `classes`, when non-empty, replaces it.
  ArrivalSpec arrival = PoissonArrivals{};
  LengthDist input_tokens = LogNormalLength{1150, 1.0};
  LengthDist output_tokens = LogNormalLength{210, 0.86};
  std::int64_t prefix_tokens = 0;
  int prefix_groups = 0;
  std::vector<TenantClass> classes;

  std::int64_t num_requests = 2000;     ///< stop after this many arrivals (open loop) / completions (closed)
  std::int64_t warmup_requests = 100;   ///< first requests excluded from statistics
  double horizon_s = 0;                 ///< also stop at this simulated time (0 = no limit)
  std::uint64_t seed = 1;
  TooLongPolicy too_long = TooLongPolicy::clip;

  /// The tenant classes, the single-class form turned into one class named "default".
  std::vector<TenantClass> effective_classes() const;
  void validate(const std::string& path = "workload") const;
};

/// Mean offered arrival rate (requests/s) summed over classes; nullopt for closed loop or traces.
std::optional<double> offered_rate(const Workload& w);
/// The same workload with its open-loop rates scaled so the total offered rate is `rate` (class mix kept);
/// a closed loop gets concurrency = round(rate). ConfigError for trace replay or rate <= 0.
Workload with_rate(const Workload& w, double rate);

}  // namespace llmsim::spec
