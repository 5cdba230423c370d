// A workload's offered load: the expected span its arrivals take, its mean offered rate, and the same workload at
// another rate (the rescaling capacity and compare bisect over). workload.cpp validates the fields; this file
// computes with them.
#include "llmsim/spec/workload.hpp"
#include "workload_rate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <variant>
#include <vector>

#include "llmsim/core/error.hpp"
#include "llmsim/core/overloaded.hpp"
#include "timed_events.hpp"

namespace llmsim::spec {

namespace {

/// Expected arrivals of the schedule's segments in [0, t]; the last segment ends at `end` (+inf: never).
double segments_count(const PiecewiseArrivals& a, double t, double end_s) {
  double n = 0;
  for (std::size_t i = 0; i < a.rates.size() && a.rates[i].first < t; ++i) {
    const double end = std::min(t, i + 1 < a.rates.size() ? a.rates[i + 1].first : end_s);
    n += a.rates[i].second * (end - a.rates[i].first);
  }
  return n;
}

/// Time in seconds until a class at the given arrival process has issued `n` requests on average; nullopt for
/// closed loops, traces and offline runs (their spans are not set by a rate).
std::optional<double> expected_span(const ArrivalSpec& a, double n) {
  if (const auto* pw = std::get_if<PiecewiseArrivals>(&a)) {
    // Bisection on the expected count; a schedule that ends (last rate 0, or its last period) stops there.
    const bool repeats = pw->period_s > 0;
    const double last = repeats ? pw->period_s * static_cast<double>(pw->periods) : pw->rates.back().first;
    if ((repeats || pw->rates.back().second <= 0) && piecewise_count(*pw, last) <= n) return last;
    double lo = 0, hi = std::max(1.0, last);
    while (piecewise_count(*pw, hi) < n && hi < 1e300) hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; ++i) {
      const double mid = 0.5 * (lo + hi);
      (piecewise_count(*pw, mid) < n ? lo : hi) = mid;
    }
    return hi;
  }
  return std::visit(Overloaded{
                        [&](const PoissonArrivals& x) -> std::optional<double> { return n / x.rate; },
                        [&](const GammaArrivals& x) -> std::optional<double> { return n / x.rate; },
                        [&](const ConstantArrivals& x) -> std::optional<double> { return n / x.rate; },
                        [&](const OnOffArrivals& x) -> std::optional<double> {
                          return n * (x.on_s + x.off_s) / (x.rate_on * x.on_s + x.rate_off * x.off_s);
                        },
                        [](const auto&) -> std::optional<double> { return std::nullopt; },
                    },
                    a);
}

/// Offered rate of one class over `span` seconds (piecewise: its mean over [0, span]).
std::optional<double> class_rate(const ArrivalSpec& a, double span) {
  return std::visit(Overloaded{
                        [](const PoissonArrivals& x) -> std::optional<double> { return x.rate; },
                        [](const GammaArrivals& x) -> std::optional<double> { return x.rate; },
                        [](const ConstantArrivals& x) -> std::optional<double> { return x.rate; },
                        [](const OnOffArrivals& x) -> std::optional<double> {
                          return (x.rate_on * x.on_s + x.rate_off * x.off_s) / (x.on_s + x.off_s);
                        },
                        [&](const PiecewiseArrivals& x) -> std::optional<double> {
                          return span > 0 ? piecewise_count(x, span) / span : x.rates.front().second;
                        },
                        [](const auto&) -> std::optional<double> { return std::nullopt; },
                    },
                    a);
}

void scale_arrival(ArrivalSpec& a, double factor) {
  std::visit(Overloaded{
                 [&](PoissonArrivals& x) { x.rate *= factor; },
                 [&](GammaArrivals& x) { x.rate *= factor; },
                 [&](ConstantArrivals& x) { x.rate *= factor; },
                 [&](OnOffArrivals& x) {
                   x.rate_on *= factor;
                   x.rate_off *= factor;
                 },
                 [&](PiecewiseArrivals& x) {
                   for (auto& [t, r] : x.rates) r *= factor;
                 },
                 [](auto&) {},
             },
             a);
}

}  // namespace

namespace detail {

std::optional<double> workload_span(const std::vector<TenantClass>& classes, double n) {
  bool piecewise = false;
  double total = 0;
  for (const auto& c : classes) {
    piecewise = piecewise || std::holds_alternative<PiecewiseArrivals>(c.arrival);
    const auto r = class_rate(c.arrival, 0);
    if (!r) return std::nullopt;
    total += *r;
  }
  if (!piecewise) return total > 0 ? std::optional<double>(n / total) : std::nullopt;
  if (classes.size() == 1) return expected_span(classes.front().arrival, n);
  // Several classes with a schedule among them: bisection on the summed expected count.
  auto count = [&](double t) {
    double c = 0;
    for (const auto& k : classes) c += t * *class_rate(k.arrival, t);
    return c;
  };
  // When every class's schedule ends (a daily profile's days: each class's rate scaled by it), the run ends with the
  // last of them, as expected_span says of one class: fewer arrivals than n then is the run, not a span of 1e300 s
  // (the tenant classes of a daily profile were refused: "1e10 requests at 7.5e-291 req/s take 1.3e300 s").
  double end = 0;
  bool all_end = true;
  for (const auto& k : classes) {
    const auto* pw = std::get_if<PiecewiseArrivals>(&k.arrival);
    const bool ends = pw && (pw->period_s > 0 || pw->rates.back().second <= 0);
    all_end = all_end && ends;
    if (ends) end = std::max(end, pw->period_s > 0 ? pw->period_s * static_cast<double>(pw->periods) : pw->rates.back().first);
  }
  if (all_end && count(end) <= n) return end;
  double lo = 0, hi = 1;
  while (count(hi) < n && hi < 1e300) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (count(mid) < n ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace detail

double piecewise_count(const PiecewiseArrivals& a, double t) {
  if (a.period_s <= 0) return segments_count(a, t, std::numeric_limits<double>::infinity());
  // Whole periods, then the part of the next one (none after the last period: the arrivals ended).
  const double per_period = segments_count(a, a.period_s, a.period_s);
  const double whole = std::min(std::floor(std::max(t, 0.0) / a.period_s), static_cast<double>(a.periods));
  const double rest = whole < static_cast<double>(a.periods) ? segments_count(a, t - whole * a.period_s, a.period_s) : 0;
  return whole * per_period + rest;
}

namespace detail {
std::optional<double> arrival_span_s(const Workload& w) {
  auto span = workload_span(w.effective_classes(), static_cast<double>(std::max<std::int64_t>(1, w.num_requests)));
  if (w.horizon_s > 0) span = span ? std::min(*span, w.horizon_s) : w.horizon_s;
  return span;
}
}  // namespace detail

std::optional<double> offered_rate(const Workload& w) {
  const auto classes = w.effective_classes();
  const auto span = detail::workload_span(classes, static_cast<double>(std::max<std::int64_t>(1, w.num_requests)));
  if (!span) return std::nullopt;
  double total = 0;
  for (const auto& c : classes) total += *class_rate(c.arrival, *span);
  return total;
}

Workload with_rate(const Workload& w, double rate) {
  if (!(std::isfinite(rate) && rate > 0)) throw ConfigError("workload.arrival.rate", "must be > 0, got " + format_given(rate));
  Workload out = w;
  auto classes = w.effective_classes();
  bool any_trace = false, all_closed = true, any_closed = false, any_offline = false;
  for (const auto& c : classes) {
    any_trace = any_trace || std::holds_alternative<TraceReplay>(c.arrival);
    any_offline = any_offline || std::holds_alternative<OfflineArrivals>(c.arrival);
    const bool closed = std::holds_alternative<ClosedLoop>(c.arrival);
    all_closed = all_closed && closed;
    any_closed = any_closed || closed;
  }
  if (any_trace) throw ConfigError("workload.arrival", "a trace replay has its own arrival times; its rate cannot be set");
  if (any_offline) throw ConfigError("workload.arrival", "an offline run puts every request at t = 0; it has no rate to set");
  if (any_closed && !all_closed) {
    throw ConfigError("workload.classes", "cannot set one rate for a mix of open- and closed-loop classes");
  }
  auto each = [&](auto&& fn) {
    if (out.classes.empty()) fn(out.arrival, 0);
    else for (std::size_t i = 0; i < out.classes.size(); ++i) fn(out.classes[i].arrival, i);
  };
  if (all_closed) {
    // Users keep the classes' shares of the concurrency.
    double total = 0;
    for (const auto& c : classes) total += std::get<ClosedLoop>(c.arrival).concurrency;
    each([&](ArrivalSpec& a, std::size_t i) {
      const double share = std::get<ClosedLoop>(classes[i].arrival).concurrency / total;
      auto& loop = std::get<ClosedLoop>(a);
      loop.concurrency =
          std::max(1, static_cast<int>(std::lround(std::min(rate * share, static_cast<double>(kMaxUsers)))));
      // Fewer users than the scenario's clients (start_offsets_s): the clients no user lands in are gone. User u of
      // N joins client u·G/N (engine::WorkloadDriver), so the N clients kept are those, each user keeping its start.
      const auto groups = static_cast<std::int64_t>(loop.start_offsets_s.size());
      if (groups > loop.concurrency) {
        std::vector<double> kept;
        for (std::int64_t u = 0; u < loop.concurrency; ++u)
          kept.push_back(loop.start_offsets_s[static_cast<std::size_t>(u * groups / loop.concurrency)]);
        loop.start_offsets_s = std::move(kept);
      }
    });
    return out;
  }
  // One factor for every class keeps the mix. Stationary processes need one step; a piecewise schedule's mean
  // rate depends on the span num_requests take, so the factor is refined until the offered rate matches.
  for (int iter = 0; iter < 60; ++iter) {
    const double current = *offered_rate(out);
    const double k = rate / current;
    if (std::abs(k - 1) < 1e-12) break;
    each([&](ArrivalSpec& a, std::size_t) { scale_arrival(a, k); });
  }
  return out;
}

}  // namespace llmsim::spec
