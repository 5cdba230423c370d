#pragma once
// The metrics observer of a run: the engine reports finished requests, inter-token gaps and changes of the
// number of requests in the system; summarize() turns them into the Summary. Memory is independent of the
// run length (histograms of fixed size, running sums).
#include <cstdint>
#include <string>
#include <vector>

#include "llmsim/metrics/latency_histogram.hpp"
#include "llmsim/metrics/summary.hpp"
#include "llmsim/spec/slo.hpp"

namespace llmsim::metrics {

/// One tenant class as the collector sees it: its name and the SLO its requests are judged by.
struct ClassInfo {
  std::string name;
  spec::SloSpec slo;
};

/// A request that finished. Times in seconds of simulated time.
struct FinishedRequest {
  std::int32_t tenant = 0;
  double arrival_s = 0, admitted_s = 0, first_token_s = 0, finish_s = 0;
  std::int64_t input_tokens = 0, output_tokens = 0;
  bool measured = true;  ///< false for warm-up requests: they count as departures only (steady-state rates)
  /// Seconds the client waited for the tokens after the engine had finished the request (the serving path,
  /// perf/serving_path.hpp; `finish_s` includes it): the request is in the system that much longer.
  double delivery_s = 0;
};

/// Integral of a piecewise-constant quantity over time.
class TimeIntegral {
 public:
  /// The quantity becomes `value` at time `now_s` (now_s never decreases).
  void set(double now_s, double value) {
    if (started_) integral_ += value_ * (now_s - last_s_);
    else { started_ = true; start_s_ = now_s; }
    last_s_ = now_s;
    value_ = value;
  }
  double value() const noexcept { return value_; }
  /// ∫ value dt from the first set() to `end_s`.
  double integral(double end_s) const { return started_ ? integral_ + value_ * (end_s - last_s_) : 0.0; }
  double start_s() const noexcept { return start_s_; }
  bool started() const noexcept { return started_; }

 private:
  bool started_ = false;
  double start_s_ = 0, last_s_ = 0, value_ = 0, integral_ = 0;
};

class Collector {
 public:
  /// `classes` in tenant order (at least one); `overall_slo` is the scenario's SLO (its percentiles are
  /// reported in the overall stats); `extra_percentiles` (the scenario's metrics.percentiles, validated there) are
  /// reported beside them in every TTFT, TPOT, ITL and E2E object, overall and per class.
  Collector(std::vector<ClassInfo> classes, spec::SloSpec overall_slo, std::vector<double> extra_percentiles = {});

  /// A request finished with all its tokens: a departure for the steady-state window, and, when measured
  /// (post-warm-up), a sample of every statistic.
  /// Returns whether the request met every per-request SLO threshold (its "good" flag).
  bool on_request_finished(const FinishedRequest& r);
  /// The measured window opens at the first measured arrival (`now_s`).
  void mark_window_start(double now_s);
  /// The steady state ends at the last measured arrival (`now_s`): later completions form the drain tail.
  void mark_steady_end(double now_s);
  /// `weight` inter-token gaps of `gap_s` each (one per sequence that received a token after that gap).
  /// `weight` sequences got a token `gap_s` after their previous one: the histogram's bins here, the moments into the
  /// engine replica's own `source` (each replica's gaps summed in its own order, whatever the interleaving of the
  /// replicas' steps), merged in replica order by merge_token_gaps() before summarize().
  void on_token_gap(double gap_s, double weight, LatencyHistogram::Source& source) { itl_.add(gap_s * 1e3, weight, source); }
  void merge_token_gaps(const LatencyMoments& moments) { itl_.merge_moments(moments); }
  /// A measured request of class `tenant` entered (+1) or left (−1) the system at `now_s`.
  void on_in_system_change(double now_s, int delta, std::int32_t tenant) {
    in_system_ += delta;
    in_system_avg_.set(now_s, in_system_);
    per_class_[static_cast<std::size_t>(tenant)].in_system += delta;
  }
  /// A request of class `tenant` left at `now_s` without finishing: lost with a failed replica or cancelled by its
  /// client's timeout. It leaves the system and, when measured, is a miss for SLO attainment.
  void on_request_lost(double now_s, std::int32_t tenant, bool measured);
  std::int64_t in_system() const noexcept { return in_system_; }
  std::int64_t completed() const noexcept { return completed_; }

  /// The latency, throughput and SLO part of the Summary over the window [start_s, end_s]
  /// (KV, utilisation, counters of rejections and preemptions are filled by the engine).
  Summary summarize(double start_s, double end_s) const;

  /// Whether one request meets every per-request threshold of `slo` (ITL targets are judged on the
  /// distribution only: a per-request ITL maximum is not tracked).
  static bool request_meets(const spec::SloSpec& slo, double ttft_ms, double tpot_ms, bool has_tpot,
                            double e2e_ms);

 private:
  struct PerClass {
    LatencyHistogram ttft, tpot, e2e;
    std::int64_t completed = 0, good = 0;
    std::int64_t lost = 0;       ///< measured requests that failed or timed out
    std::int64_t in_system = 0;  ///< measured requests arrived and not yet ended
    double good_output_tokens = 0, good_total_tokens = 0;
  };
  /// Departures of every request (warm-up included) and those that met their class's SLO.
  struct Departures {
    std::int64_t requests = 0, good = 0, lost = 0;
    double input_tokens = 0, output_tokens = 0, good_output_tokens = 0, good_total_tokens = 0;
  };
  std::vector<ClassInfo> classes_;
  spec::SloSpec overall_slo_;
  std::vector<double> extra_percentiles_;
  Departures dep_, dep_at_start_, dep_at_end_;
  bool window_started_ = false, steady_ended_ = false;
  double window_start_s_ = 0, steady_end_s_ = 0;
  std::int64_t completed_at_steady_end_ = 0;
  std::vector<PerClass> per_class_;
  LatencyHistogram ttft_, tpot_, itl_, e2e_, queue_;
  std::int64_t completed_ = 0, good_ = 0, lost_ = 0;
  double input_tokens_ = 0, output_tokens_ = 0, good_output_tokens_ = 0, good_total_tokens_ = 0;
  std::int64_t in_system_ = 0;
  TimeIntegral in_system_avg_;
  double delivery_in_system_s_ = 0;  ///< Σ delivery_s of measured completions: in the system after the engine
};

}  // namespace llmsim::metrics
