#include "llmsim/metrics/time_series.hpp"

#include <algorithm>
#include <cmath>

#include "llmsim/core/error.hpp"

namespace llmsim::metrics {

namespace {
constexpr double kSeriesLowMs = 0.01;
constexpr double kRatio = 1.1;
}  // namespace

TimeSeries::TimeSeries(double window_s, std::size_t max_windows)
    : width_(window_s > 0 ? window_s : 0.01), max_windows_(window_s > 0 ? max_windows : 512) {
  if (!(window_s >= 0) || !std::isfinite(window_s))
    throw ConfigError("time_series_window_s", "must be >= 0 (0 = automatic), got " + format_given(window_s));
  LLMSIM_CHECK(max_windows_ >= 2, "a time series needs room for two windows");
}

std::size_t TimeSeries::bin_of(double ms) {
  if (!(ms > kSeriesLowMs)) return 0;
  const double i = std::floor(std::log(ms / kSeriesLowMs) / std::log(kRatio));
  return static_cast<std::size_t>(std::min(i, static_cast<double>(kBins - 1)));
}

double TimeSeries::percentile(const Hist& h, std::int64_t n, double q) {
  const double target = q / 100.0 * static_cast<double>(n);
  double cum = 0;
  for (std::size_t i = 0; i < kBins; ++i) {
    cum += h[i];
    if (cum >= target && h[i] > 0) return kSeriesLowMs * std::pow(kRatio, static_cast<double>(i) + 0.5);  // bin's middle
  }
  return kSeriesLowMs * std::pow(kRatio, static_cast<double>(kBins) - 0.5);
}

void TimeSeries::fold() {
  for (std::size_t i = 0; i < w_.size(); i += 2) {
    Window m = w_[i];
    if (i + 1 < w_.size()) {
      const Window& b = w_[i + 1];
      m.arrivals += b.arrivals;
      m.completions += b.completions;
      m.tokens += b.tokens;
      m.waiting_int += b.waiting_int;
      m.running_int += b.running_int;
      m.kv_int += b.kv_int;
      m.max_waiting = std::max(m.max_waiting, b.max_waiting);
      m.max_running = std::max(m.max_running, b.max_running);
      m.max_kv = std::max(m.max_kv, b.max_kv);
      for (std::size_t k = 0; k < kBins; ++k) {
        m.ttft[k] += b.ttft[k];
        m.e2e[k] += b.e2e[k];
      }
    }
    w_[i / 2] = m;
  }
  w_.resize((w_.size() + 1) / 2);
  width_ *= 2;
}

TimeSeries::Window& TimeSeries::at(double t_s) {
  while (t_s / width_ >= static_cast<double>(max_windows_)) fold();
  const auto i = static_cast<std::size_t>(std::max(0.0, std::floor(t_s / width_)));
  if (i >= w_.size()) {
    // A new window starts with the state carried in, so its max is at least the current value.
    const std::size_t from = w_.size();
    w_.resize(i + 1);
    for (std::size_t k = from; k <= i; ++k) {
      w_[k].max_waiting = waiting_;
      w_[k].max_running = running_;
      w_[k].max_kv = kv_;
    }
  }
  return w_[i];
}

void TimeSeries::integrate_to(double t_s) {
  if (!(t_s > state_t_)) return;
  at(t_s);  // folds first if needed, so the indices below are stable
  double t = state_t_;
  for (auto i = static_cast<std::size_t>(std::floor(t / width_)); t < t_s && i < w_.size(); ++i) {
    const double end = std::min(t_s, static_cast<double>(i + 1) * width_);
    if (end > t) {
      Window& w = w_[i];
      w.waiting_int += waiting_ * (end - t);
      w.running_int += running_ * (end - t);
      w.kv_int += kv_ * (end - t);
      t = end;
    }
  }
  state_t_ = t_s;
}

void TimeSeries::on_arrival(double t_s) { ++at(t_s).arrivals; }

void TimeSeries::on_finish(double t_s, double ttft_ms, double e2e_ms) {
  Window& w = at(t_s);
  ++w.completions;
  ++w.ttft[bin_of(ttft_ms)];
  ++w.e2e[bin_of(e2e_ms)];
}

void TimeSeries::on_tokens(double t_s, double tokens) { at(t_s).tokens += tokens; }

void TimeSeries::on_state(double t_s, double waiting, double running, double kv_fraction) {
  integrate_to(t_s);
  waiting_ = waiting;
  running_ = running;
  kv_ = kv_fraction;
  Window& w = at(t_s);
  w.max_waiting = std::max(w.max_waiting, waiting);
  w.max_running = std::max(w.max_running, running);
  w.max_kv = std::max(w.max_kv, kv_fraction);
}

std::vector<TimeWindow> TimeSeries::windows(double end_s) const {
  TimeSeries closed = *this;  // close the integrals at end_s without changing this one
  closed.integrate_to(end_s);
  if (end_s > 0) closed.at(std::nextafter(end_s, 0.0));
  std::vector<TimeWindow> out;
  out.reserve(closed.w_.size());
  for (std::size_t i = 0; i < closed.w_.size(); ++i) {
    const Window& w = closed.w_[i];
    TimeWindow t;
    t.start_s = static_cast<double>(i) * closed.width_;
    t.end_s = std::min(end_s, t.start_s + closed.width_);
    const double len = t.end_s - t.start_s;
    if (len <= 0) break;
    t.arrivals = w.arrivals;
    t.completions = w.completions;
    t.output_tokens_per_s = w.tokens / len;
    t.mean_waiting = w.waiting_int / len;
    t.mean_running = w.running_int / len;
    t.mean_kv_used = w.kv_int / len;
    t.max_waiting = w.max_waiting;
    t.max_running = w.max_running;
    t.max_kv_used = w.max_kv;
    if (w.completions > 0) {
      t.has_latency = true;
      t.ttft_p50_ms = percentile(w.ttft, w.completions, 50);
      t.ttft_p95_ms = percentile(w.ttft, w.completions, 95);
      t.ttft_p99_ms = percentile(w.ttft, w.completions, 99);
      t.e2e_p50_ms = percentile(w.e2e, w.completions, 50);
      t.e2e_p95_ms = percentile(w.e2e, w.completions, 95);
    }
    out.push_back(t);
  }
  return out;
}

Json to_json(const std::vector<TimeWindow>& windows) {
  Json out = Json::array();
  for (const auto& w : windows) {
    auto lat = [&](double v) { return w.has_latency ? Json(v) : Json(nullptr); };
    out.push_back({{"start_s", w.start_s}, {"end_s", w.end_s}, {"arrivals", w.arrivals},
                   {"completions", w.completions}, {"output_tokens_per_s", w.output_tokens_per_s},
                   {"mean_waiting", w.mean_waiting}, {"max_waiting", w.max_waiting},
                   {"mean_running", w.mean_running}, {"max_running", w.max_running},
                   {"mean_kv_used", w.mean_kv_used}, {"max_kv_used", w.max_kv_used},
                   {"ttft_p50_ms", lat(w.ttft_p50_ms)}, {"ttft_p95_ms", lat(w.ttft_p95_ms)},
                   {"ttft_p99_ms", lat(w.ttft_p99_ms)}, {"e2e_p50_ms", lat(w.e2e_p50_ms)},
                   {"e2e_p95_ms", lat(w.e2e_p95_ms)}});
  }
  return out;
}

}  // namespace llmsim::metrics
