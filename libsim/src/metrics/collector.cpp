#include "llmsim/metrics/collector.hpp"

#include <algorithm>

#include "llmsim/core/error.hpp"

namespace llmsim::metrics {

namespace {

std::vector<double> slo_percentiles(const spec::SloSpec& slo, spec::SloMetric metric) {
  std::vector<double> qs;
  for (const auto& t : slo.targets)
    if (t.metric == metric && std::find(qs.begin(), qs.end(), t.percentile) == qs.end()) qs.push_back(t.percentile);
  return qs;
}

}  // namespace

Collector::Collector(std::vector<ClassInfo> classes, spec::SloSpec overall_slo, std::vector<double> extra_percentiles)
    : classes_(std::move(classes)),
      overall_slo_(std::move(overall_slo)),
      extra_percentiles_(std::move(extra_percentiles)),
      per_class_(classes_.size()) {
  LLMSIM_CHECK(!classes_.empty(), "a collector needs at least one tenant class");
}

bool Collector::request_meets(const spec::SloSpec& slo, double ttft_ms, double tpot_ms, bool has_tpot,
                              double e2e_ms) {
  for (const auto& t : slo.targets) {
    switch (t.metric) {
      case spec::SloMetric::ttft:
        if (ttft_ms > t.max_ms) return false;
        break;
      case spec::SloMetric::tpot:
        if (has_tpot && tpot_ms > t.max_ms) return false;
        break;
      case spec::SloMetric::e2e:
        if (e2e_ms > t.max_ms) return false;
        break;
      case spec::SloMetric::itl:
        break;
    }
  }
  return true;
}

bool Collector::on_request_finished(const FinishedRequest& r) {
  LLMSIM_CHECK(r.tenant >= 0 && static_cast<std::size_t>(r.tenant) < per_class_.size(), "tenant index out of range");
  const double ttft_ms = (r.first_token_s - r.arrival_s) * 1e3;
  const double e2e_ms = (r.finish_s - r.arrival_s) * 1e3;
  const double queue_ms = (r.admitted_s - r.arrival_s) * 1e3;
  const bool has_tpot = r.output_tokens > 1;
  const double tpot_ms = has_tpot ? (r.finish_s - r.first_token_s) * 1e3 / static_cast<double>(r.output_tokens - 1) : 0;
  const bool meets = request_meets(classes_[static_cast<std::size_t>(r.tenant)].slo, ttft_ms, tpot_ms, has_tpot, e2e_ms);
  const double out = static_cast<double>(r.output_tokens), in = static_cast<double>(r.input_tokens);
  ++dep_.requests;
  dep_.input_tokens += in;
  dep_.output_tokens += out;
  if (meets) {
    ++dep_.good;
    dep_.good_output_tokens += out;
    dep_.good_total_tokens += in + out;
  }
  if (!r.measured) return meets;
  delivery_in_system_s_ += r.delivery_s;
  auto& c = per_class_[static_cast<std::size_t>(r.tenant)];
  const bool per_class = per_class_.size() > 1;  // one class: its distributions are the overall ones
  ttft_.add(ttft_ms);
  e2e_.add(e2e_ms);
  queue_.add(queue_ms);
  if (has_tpot) tpot_.add(tpot_ms);
  if (per_class) {
    c.ttft.add(ttft_ms);
    c.e2e.add(e2e_ms);
    if (has_tpot) c.tpot.add(tpot_ms);
  }
  ++completed_;
  ++c.completed;
  input_tokens_ += static_cast<double>(r.input_tokens);
  output_tokens_ += static_cast<double>(r.output_tokens);
  if (meets) {
    ++good_;
    ++c.good;
    const double total = out + in;
    good_output_tokens_ += out;
    good_total_tokens_ += total;
    c.good_output_tokens += out;
    c.good_total_tokens += total;
  }
  return meets;
}

void Collector::on_request_lost(double now_s, std::int32_t tenant, bool measured) {
  LLMSIM_CHECK(tenant >= 0 && static_cast<std::size_t>(tenant) < per_class_.size(), "tenant index out of range");
  ++dep_.lost;
  if (!measured) return;
  on_in_system_change(now_s, -1, tenant);
  ++lost_;
  ++per_class_[static_cast<std::size_t>(tenant)].lost;
}

void Collector::mark_window_start(double now_s) {
  window_started_ = true;
  window_start_s_ = now_s;
  dep_at_start_ = dep_;
}

void Collector::mark_steady_end(double now_s) {
  steady_ended_ = true;
  steady_end_s_ = now_s;
  dep_at_end_ = dep_;
  completed_at_steady_end_ = completed_;
}

namespace {

double attainment(std::int64_t good, std::int64_t ended) {
  return ended > 0 ? static_cast<double>(good) / static_cast<double>(ended) : 0.0;
}

/// Every percentile target of `slo` holds, and min_attainment if set. Requests that entered and never finished
/// (`lost`: failed, timed out, unfinished at the end) count as latencies above every target: the p-th percentile
/// over all `completed + lost` requests is the survivors' percentile at p × (completed + lost) / completed, and
/// fails outright when the lost ones are more than the (100 − p) % tail. With nothing lost this is the plain
/// percentile. ITL targets are judged on the gaps that happened.
bool slo_holds(const spec::SloSpec& slo, const LatencyHistogram& ttft, const LatencyHistogram& tpot,
               const LatencyHistogram& itl, const LatencyHistogram& e2e, double attainment, std::int64_t completed,
               std::int64_t lost) {
  // Nothing finished: nothing was met, with or without a latency target (a run that served no request is never
  // reported as meeting anything; without targets a served run meets its empty SLO vacuously).
  if (completed == 0) return false;
  if (slo.empty()) return true;
  for (const auto& t : slo.targets) {
    const LatencyHistogram* h = nullptr;
    switch (t.metric) {
      case spec::SloMetric::ttft: h = &ttft; break;
      case spec::SloMetric::tpot: h = &tpot; break;
      case spec::SloMetric::itl: h = &itl; break;
      case spec::SloMetric::e2e: h = &e2e; break;
    }
    const double n = h->count();
    if (n <= 0) continue;
    const double missing = t.metric == spec::SloMetric::itl ? 0.0 : static_cast<double>(lost);
    const double q = t.percentile * ((n + missing) / n);
    if (q > 100 || h->percentile(q) > t.max_ms) return false;
  }
  if (slo.min_attainment && attainment < *slo.min_attainment) return false;
  return true;
}

}  // namespace

Summary Collector::summarize(double start_s, double end_s) const {
  Summary s;
  const double duration = std::max(0.0, end_s - start_s);
  s.duration_s = duration;
  s.completed_requests = completed_;
  s.mean_in_system = duration > 0 ? (in_system_avg_.integral(end_s) + delivery_in_system_s_) / duration : 0.0;
  if (duration > 0) {
    s.throughput.requests_per_s = static_cast<double>(completed_) / duration;
    s.throughput.input_tokens_per_s = input_tokens_ / duration;
    s.throughput.output_tokens_per_s = output_tokens_ / duration;
    s.throughput.total_tokens_per_s = (input_tokens_ + output_tokens_) / duration;
    s.goodput_rps = static_cast<double>(good_) / duration;
    s.goodput_output_tps = good_output_tokens_ / duration;
    s.goodput_total_tps = good_total_tokens_ / duration;
  }
  // Attainment is over every measured request that entered the system: completed, lost (failed, timed out) and
  // still unfinished when the run ended — a request that never finished did not meet its SLO (docs/result-format.md).
  s.unfinished_requests = in_system_;
  s.slo_attainment = attainment(good_, completed_ + lost_ + in_system_);
  if (window_started_ && steady_ended_) {
    auto& ss = s.steady_state;
    ss.start_s = window_start_s_;
    ss.end_s = steady_end_s_;
    ss.window_s = steady_end_s_ - window_start_s_;
    ss.departures = dep_at_end_.requests - dep_at_start_.requests;
    const double good = static_cast<double>(dep_at_end_.good - dep_at_start_.good);
    const std::int64_t ended = ss.departures + dep_at_end_.lost - dep_at_start_.lost;  // lost ones are misses
    if (ended > 0) ss.slo_attainment = good / static_cast<double>(ended);
    if (ss.window_s > 0) {
      const double w = ss.window_s;
      const double in = dep_at_end_.input_tokens - dep_at_start_.input_tokens;
      const double out = dep_at_end_.output_tokens - dep_at_start_.output_tokens;
      ss.throughput.requests_per_s = static_cast<double>(ss.departures) / w;
      ss.throughput.input_tokens_per_s = in / w;
      ss.throughput.output_tokens_per_s = out / w;
      ss.throughput.total_tokens_per_s = (in + out) / w;
      ss.goodput_rps = good / w;
      ss.goodput_output_tps = (dep_at_end_.good_output_tokens - dep_at_start_.good_output_tokens) / w;
      ss.goodput_total_tps = (dep_at_end_.good_total_tokens - dep_at_start_.good_total_tokens) / w;
    }
    s.drain.duration_s = std::max(0.0, end_s - steady_end_s_);
    s.drain.completed_requests = completed_ - completed_at_steady_end_;
  }

  // Percentiles asked for by any SLO (overall or per class) and by metrics.percentiles are reported with the stats.
  auto with_extra = [&](std::vector<double> qs) {
    for (double q : extra_percentiles_)
      if (std::find(qs.begin(), qs.end(), q) == qs.end()) qs.push_back(q);
    return qs;
  };
  auto wanted = [&](spec::SloMetric m) {
    std::vector<double> qs = slo_percentiles(overall_slo_, m);
    for (const auto& c : classes_)
      for (double q : slo_percentiles(c.slo, m))
        if (std::find(qs.begin(), qs.end(), q) == qs.end()) qs.push_back(q);
    return with_extra(std::move(qs));
  };
  s.ttft_ms = ttft_.stats(wanted(spec::SloMetric::ttft));
  s.tpot_ms = tpot_.stats(wanted(spec::SloMetric::tpot));
  s.itl_ms = itl_.stats(wanted(spec::SloMetric::itl));
  s.e2e_ms = e2e_.stats(wanted(spec::SloMetric::e2e));
  s.queue_ms = queue_.stats();

  s.slo_met = true;
  s.slo_set = std::any_of(classes_.begin(), classes_.end(), [](const auto& c) { return !c.slo.empty(); });
  for (std::size_t i = 0; i < classes_.size(); ++i) {
    const auto& pc = per_class_[i];
    ClassSummary cs;
    cs.name = classes_[i].name;
    cs.completed_requests = pc.completed;
    cs.slo_attainment = attainment(pc.good, pc.completed + pc.lost + pc.in_system);
    cs.goodput_rps = duration > 0 ? static_cast<double>(pc.good) / duration : 0.0;
    const auto& slo = classes_[i].slo;
    const bool own = classes_.size() > 1;
    cs.ttft_ms = (own ? pc.ttft : ttft_).stats(with_extra(slo_percentiles(slo, spec::SloMetric::ttft)));
    cs.tpot_ms = (own ? pc.tpot : tpot_).stats(with_extra(slo_percentiles(slo, spec::SloMetric::tpot)));
    cs.e2e_ms = (own ? pc.e2e : e2e_).stats(with_extra(slo_percentiles(slo, spec::SloMetric::e2e)));
    // A class is judged on its own distributions; ITL is pooled over classes (see docs/engine.md).
    cs.slo_met = slo_holds(slo, own ? pc.ttft : ttft_, own ? pc.tpot : tpot_, itl_, own ? pc.e2e : e2e_,
                           cs.slo_attainment, pc.completed, pc.lost + pc.in_system);
    s.slo_met = s.slo_met && cs.slo_met;
    if (classes_.size() > 1) s.classes.push_back(std::move(cs));
  }
  return s;
}

}  // namespace llmsim::metrics
