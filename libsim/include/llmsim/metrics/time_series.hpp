#pragma once
// The run as a time series (records off, bounded memory): per window of simulated time, arrivals and
// completions, tokens emitted, the waiting queue, the running batch and KV use (time-weighted mean and max),
// and TTFT / E2E percentiles of the requests that finished in it. A load spike's build-up and drain show here.
//
// Memory is bounded whatever the run's length: when the run needs more than `max_windows` windows, adjacent
// windows merge pairwise and the width doubles. Percentiles come from per-window log histograms with bins 10%
// wide (0.01 ms to 1e8 ms), so a window's percentile is within ~5% of the exact order statistic.
#include <array>
#include <cstdint>
#include <vector>

#include "llmsim/core/json_view.hpp"

namespace llmsim::metrics {

struct TimeWindow {
  double start_s = 0, end_s = 0;
  std::int64_t arrivals = 0, completions = 0;
  double output_tokens_per_s = 0;        ///< tokens emitted in the window / its length
  double mean_waiting = 0, max_waiting = 0;  ///< requests queued (not admitted), time-weighted
  double mean_running = 0, max_running = 0;  ///< sequences in the engines' running lists
  double mean_kv_used = 0, max_kv_used = 0;  ///< fraction of the KV blocks held
  /// Of the requests that finished in the window (0 and `has_latency` false when none did).
  bool has_latency = false;
  double ttft_p50_ms = 0, ttft_p95_ms = 0, ttft_p99_ms = 0, e2e_p50_ms = 0, e2e_p95_ms = 0;
};

class TimeSeries {
 public:
  /// `window_s` > 0: windows of that width (doubled when the run would need more than `max_windows`);
  /// 0: automatic, starting at 10 ms and doubling to keep at most 512 windows. ConfigError for negative or
  /// non-finite widths (path "time_series_window_s").
  explicit TimeSeries(double window_s, std::size_t max_windows = 4096);

  void on_arrival(double t_s);
  void on_finish(double t_s, double ttft_ms, double e2e_ms);
  void on_tokens(double t_s, double tokens);
  /// The system's state from `t_s` on (until the next call): waiting requests, running sequences, KV fraction.
  void on_state(double t_s, double waiting, double running, double kv_fraction);

  /// The windows up to `end_s` (state integrals closed there); the last one is cut at `end_s`.
  std::vector<TimeWindow> windows(double end_s) const;
  double window_s() const noexcept { return width_; }

 private:
  static constexpr std::size_t kBins = 242;  // ln(1e10) / ln(1.1): 0.01 ms .. 1e8 ms
  using Hist = std::array<std::uint32_t, kBins>;
  struct Window {
    std::int64_t arrivals = 0, completions = 0;
    double tokens = 0;
    double waiting_int = 0, running_int = 0, kv_int = 0;  // ∫ value dt
    double max_waiting = 0, max_running = 0, max_kv = 0;
    Hist ttft{}, e2e{};
  };
  static std::size_t bin_of(double ms);
  static double percentile(const Hist& h, std::int64_t n, double q);
  Window& at(double t_s);  ///< the window holding t_s, merging windows first when needed
  void integrate_to(double t_s);
  void fold();  ///< merges windows pairwise and doubles the width

  double width_;
  std::size_t max_windows_;
  std::vector<Window> w_;
  double state_t_ = 0, waiting_ = 0, running_ = 0, kv_ = 0;
};

/// `[{start_s, end_s, arrivals, completions, output_tokens_per_s, mean_waiting, max_waiting, mean_running,
/// max_running, mean_kv_used, max_kv_used, ttft_p50_ms, ttft_p95_ms, ttft_p99_ms, e2e_p50_ms, e2e_p95_ms}, ...]`
/// with null latencies in windows where nothing finished.
Json to_json(const std::vector<TimeWindow>& windows);

}  // namespace llmsim::metrics
