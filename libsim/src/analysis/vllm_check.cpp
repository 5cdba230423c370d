// vLLM result -> scenario -> simulation -> the file's metrics by vLLM's definitions. The metric formulas
// follow calculate_metrics() of vllm/benchmarks/serve.py (benchmark_serving.py before it), summarised in
// ../shared/reference/serving-engines.md §4. The scenario a result stands for is built in vllm_check_scenario.cpp.
#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/spec/multi_step.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/analysis/result_notes.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/number.hpp"

namespace llmsim::analysis {

namespace {

/// Numbers of a sample as numpy computes them (np.mean, np.median, np.std with ddof 0, np.percentile).
struct Sample {
  std::vector<double> v;
  double mean() const { return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }
  double stddev() const {
    if (v.empty()) return 0.0;
    const double m = mean();
    double s = 0;
    for (double x : v) s += (x - m) * (x - m);
    return std::sqrt(s / static_cast<double>(v.size()));
  }
  std::optional<double> stat(const VllmLatencyStat& s) const {
    if (s.statistic == "mean") return mean();
    if (s.statistic == "median") return numpy_percentile(v, 50);
    if (s.statistic == "std") return stddev();
    return numpy_percentile(v, s.percentile);
  }
};

/// The predicted ITL statistic from the run's ITL distribution (the engine keeps a histogram of every gap,
/// not the gaps): mean, median, std, and the percentiles it reports.
std::optional<double> itl_stat(const metrics::LatencyStats& l, const VllmLatencyStat& s) {
  if (s.statistic == "mean") return l.mean;
  if (s.statistic == "median") return l.p50;
  if (s.statistic == "std") return l.stddev;
  if (s.percentile == 50) return l.p50;
  if (s.percentile == 90) return l.p90;
  if (s.percentile == 95) return l.p95;
  if (s.percentile == 99) return l.p99;
  for (const auto& [q, v] : l.quantiles)
    if (q == s.percentile) return v;
  return std::nullopt;
}

}  // namespace

double numpy_percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(q, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (rank - static_cast<double>(lo));
}

namespace {
// The requests that completed in the measured run. vLLM's failed requests (an error response, output 0 in the
// lists) never produced the latencies the file reports, and llmsim does not model failures: they are left out of
// the simulation, and the note says so. When the file cannot say which requests failed (more zero-output entries
// than failures), they stay in, and the note says that.
VllmResult served_requests(const VllmResult& r, std::vector<std::string>& notes) {
  if (r.failed <= 0) return r;
  VllmResult s = r;
  if (r.input_lens.empty()) {
    notes.push_back(std::to_string(r.failed) + " requests failed in the measured run: only the " +
                    std::to_string(r.completed) + " completed ones are simulated (llmsim does not model failures)");
    return s;
  }
  const auto zeros = std::count(r.output_lens.begin(), r.output_lens.end(), std::int64_t{0});
  if (zeros != r.failed) {
    notes.push_back(std::to_string(r.failed) + " requests failed in the measured run, but " + std::to_string(zeros) +
                    " have output 0 in the file, so which ones failed is unknown: all " +
                    std::to_string(r.input_lens.size()) + " are simulated as served (llmsim does not model failures)");
    return s;
  }
  s.input_lens.clear();
  s.output_lens.clear();
  s.arrivals_s.clear();
  for (std::size_t i = 0; i < r.input_lens.size(); ++i) {
    if (r.output_lens[i] == 0) continue;
    s.input_lens.push_back(r.input_lens[i]);
    s.output_lens.push_back(r.output_lens[i]);
    if (i < r.arrivals_s.size()) s.arrivals_s.push_back(r.arrivals_s[i]);
  }
  notes.push_back(std::to_string(r.failed) + " requests failed in the measured run (" +
                  (r.lists_from.empty() ? "output 0 in the file" : "drawn with 0 output tokens: max_tokens 0") +
                  "): they are left out, and the " + std::to_string(s.input_lens.size()) +
                  " completed ones are simulated (llmsim does not model failures)");
  return s;
}
}  // namespace

PreparedVllmCheck prepare_vllm_check(const VllmResult& measured, const VllmCheckOptions& o,
                                     const spec::Catalog& catalog) {
  PreparedVllmCheck p;
  VllmCheck& c = p.check;
  c.source = measured.source;
  c.line = measured.line;
  p.served = served_requests(measured, c.notes);
  c.scenario = vllm_check_scenario(p.served, o, catalog, c.notes);
  p.resolved = spec::resolve(c.scenario, catalog);
  const auto& resolved = p.resolved;
  // quant.weights "auto" shown as the format planned (the checkpoint's), with what resolving assumed.
  c.scenario.weights = resolved.scenario.weights;
  // ... and the engine knobs and GPU split resolving chose (the scenario keeps 0 = "the engine's default").
  c.scenario.engine = resolved.scenario.engine;
  c.scenario.hardware.parallel = resolved.scenario.hardware.parallel;
  c.notes.insert(c.notes.end(), resolved.notes.begin(), resolved.notes.end());
  return p;
}

VllmCheck check_vllm_result(const VllmResult& measured, const VllmCheckOptions& o, const spec::Catalog& catalog) {
  return check_vllm_result(measured, prepare_vllm_check(measured, o, catalog));
}

VllmCheck check_vllm_result(const VllmResult& measured, const PreparedVllmCheck& prepared,
                            const std::string& gpu_profile) {
  VllmCheck c = prepared.check;
  const VllmResult& r = prepared.served;
  spec::ResolvedScenario own;  // a copy only when the profile changes
  if (!gpu_profile.empty()) {
    own = prepared.resolved;
    own.scenario.hardware.gpu_profile = gpu_profile;
    c.scenario.hardware.gpu_profile = gpu_profile;
  }
  const spec::ResolvedScenario& resolved = gpu_profile.empty() ? prepared.resolved : own;
  engine::SimulationOptions opt;
  opt.record_requests = true;
  const auto result = evaluate(resolved, opt);
  c.fits = result.summary.fits;
  c.reason = result.summary.reason;
  c.max_model_len = result.summary.fits ? result.summary.max_model_len : 0;
  c.max_model_len_note = result.summary.max_model_len_note;
  c.not_modelled = unmodelled_engine_path(resolved).value_or("");
  if (result.summary.unstable) c.notes.push_back("the simulated run was unstable: " + metrics::unstable_cause(result.summary));
  // What the summary warns about (a GPU profile fitted on another runtime) is a note of the comparison too.
  for (const auto& w : result.summary.warnings) c.notes.push_back("warning: " + w);

  // Per-request numbers as vLLM's client computes them. Request i of the file is the i-th issued (ids follow
  // the trace order). A request that streamed no text (output 0) was timed by clients before vLLM 0.11 with
  // TTFT 0 — the measured mean includes those zeros, so the predicted one does too.
  const bool lists = !r.input_lens.empty();
  std::int64_t zero_out = 0;
  if (lists) zero_out = std::count(r.output_lens.begin(), r.output_lens.end(), std::int64_t{0});
  const bool replayed = std::holds_alternative<spec::TraceReplay>(c.scenario.workload.arrival);
  Sample ttft, tpot, e2el;
  double t0 = 0, t1 = 0, in_tokens = 0, out_tokens = 0;
  bool first = true;
  for (const auto& q : result.requests) {
    const auto k = static_cast<std::size_t>(q.id);
    const bool empty = replayed && lists && k < r.output_lens.size() && r.output_lens[k] == 0;
    const double out = empty ? 0.0 : static_cast<double>(q.output_tokens);
    ttft.v.push_back(empty ? 0.0 : (q.first_token_s - q.arrival_s) * 1e3);
    e2el.v.push_back((q.finish_s - q.arrival_s) * 1e3);
    if (out > 1) tpot.v.push_back((q.finish_s - q.first_token_s) * 1e3 / (out - 1));
    in_tokens += q.input_tokens;
    out_tokens += out;
    t0 = first ? q.arrival_s : std::min(t0, q.arrival_s);
    t1 = first ? q.finish_s : std::max(t1, q.finish_s);
    first = false;
  }
  const double completed = static_cast<double>(result.requests.size());
  const double duration = t1 - t0;
  double busy = 0;  // request-seconds in flight: SGLang's "concurrency" is their sum over the duration
  for (double x : e2el.v) busy += x / 1e3;
  if (zero_out > 0 && replayed) {
    c.notes.push_back(std::to_string(zero_out) + " requests streamed no text (output_lens 0): vLLM's client " +
                      "recorded TTFT 0 for them, so the predicted TTFT statistics count them as 0 too");
  }
  if (c.fits && result.requests.size() != static_cast<std::size_t>(c.scenario.workload.num_requests)) {
    c.notes.push_back("only " + std::to_string(result.requests.size()) + " of " +
                      std::to_string(c.scenario.workload.num_requests) + " requests finished in the simulation");
  }
  // ITL per streamed chunk: multi-step scheduling (--num-scheduler-steps n, vLLM 0.6) or stream batching
  // sends several tokens per chunk, so the client sees fewer, longer gaps than tokens.
  double mean_itl = 0, mean_tpot = 0;
  for (const auto& l : r.latencies) {
    if (l.statistic == "mean" && l.metric == "itl") mean_itl = l.value_ms;
    if (l.statistic == "mean" && l.metric == "tpot") mean_tpot = l.value_ms;
  }
  // Multi-step windows whose tokens arrive together (vLLM 0.6.0-0.6.2, spec/multi_step.hpp) are simulated: the
  // predicted ITL is per chunk then, and compares.
  spec::MultiStep multi_step;
  try {
    if (c.fits) multi_step = spec::multi_step_for(c.scenario.engine);
  } catch (const ConfigError&) {  // the simulation resolved the engine and took it; this copy is the scenario's
  }
  const bool predicted_per_chunk = multi_step.steps > 1 && !multi_step.stream_each_step;
  const bool chunked_itl = mean_tpot > 0 && mean_itl > 1.5 * mean_tpot && !predicted_per_chunk;
  if (predicted_per_chunk) {
    c.notes.push_back("multi-step scheduling (" + std::to_string(multi_step.steps) + " steps per scheduler call) " +
                      "streams each window's tokens as one chunk in this release: the predicted ITL is per chunk, "
                      "as the client's");
  } else if (chunked_itl) {
    c.notes.push_back("measured ITL is " + format_digits(mean_itl / mean_tpot, 2) + "x the TPOT: tokens were streamed " +
                      "several per chunk (multi-step scheduling or stream batching), so ITL counts chunks and is " +
                      "not comparable with llmsim's per-token ITL; compare TPOT");
  }

  if (r.duration_s <= 0) {
    c.notes.push_back("a latency-only summary: the file states no duration, so the run's throughput and duration "
                      "are not compared; only the statistics it states are");
  }
  if (const auto stall = start_stall_note(measured)) c.notes.push_back(*stall);
  if (c.fits && replayed) {
    std::vector<const engine::RequestRecord*> order;  // the order sent: arrival, then id (the file's order)
    for (const auto& q : result.requests) order.push_back(&q);
    std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
      return a->arrival_s != b->arrival_s ? a->arrival_s < b->arrival_s : a->id < b->id;
    });
    std::vector<std::pair<double, std::int64_t>> sent;  // (arrival, prompt tokens)
    for (const auto* q : order) sent.emplace_back(q->arrival_s, q->input_tokens);
    if (const auto warm = warm_server_note(r, resolved, sent)) c.notes.push_back(*warm);
  }
  auto row = [&](const std::string& key, double measured, std::optional<double> predicted, std::string note = "") {
    VllmCheckRow x{key, measured, c.fits ? predicted : std::nullopt, std::nullopt, std::move(note)};
    if (x.predicted && measured != 0 && std::isfinite(*x.predicted)) x.rel_error = (*x.predicted - measured) / measured;
    c.rows.push_back(std::move(x));
  };
  for (const auto& s : r.scalars) {
    std::optional<double> p;
    std::string note;
    if (duration > 0) {
      if (s.key == "duration") p = duration;
      else if (s.key == "completed") p = completed;
      else if (s.key == "total_input_tokens") p = in_tokens;
      else if (s.key == "total_output_tokens") p = out_tokens;
      else if (s.key == "request_throughput") p = completed / duration;
      else if (s.key == "input_throughput") p = in_tokens / duration;
      else if (s.key == "output_throughput") p = out_tokens / duration;
      else if (s.key == "total_token_throughput" || s.key == "total_throughput") p = (in_tokens + out_tokens) / duration;
      else if (s.key == "concurrency") p = busy / duration;
      else if (s.key == "failed") note = s.value > 0 ? "failures are not modelled: the failed requests are left out" : "";
      else note = "needs the --goodput SLO of the run, which the file does not record";
    }
    row(s.key, s.value, p, note);
  }
  for (const auto& l : r.latencies) {
    std::optional<double> p;
    std::string note;
    if (l.metric == "ttft") p = ttft.stat(l);
    else if (l.metric == "tpot") p = tpot.stat(l);
    else if (l.metric == "e2el") p = e2el.stat(l);
    else {
      p = itl_stat(result.summary.itl_ms, l);
      if (!p) note = "llmsim keeps ITL p50/p90/p95/p99 only";
      if (chunked_itl) note = "measured per streamed chunk, predicted per token";
    }
    row(l.key, l.value_ms, p, note);
  }
  return c;
}

std::optional<double> check_error(const VllmCheck& c, const std::string& key) {
  for (const auto& r : c.rows)
    if (r.key == key) return r.rel_error;
  return std::nullopt;
}

std::optional<double> median_abs_error(const VllmCheck& c) {
  std::vector<double> e;
  for (const auto& r : c.rows) {
    const bool copied = r.key == "completed" || r.key == "failed" || r.key == "total_input_tokens" ||
                        r.key == "total_output_tokens";
    if (r.rel_error && r.note.empty() && !copied) e.push_back(std::abs(*r.rel_error));
  }
  if (e.empty()) return std::nullopt;
  return numpy_percentile(e, 50);
}

Json to_json(const VllmCheck& c) {
  Json rows = Json::array();
  for (const auto& r : c.rows) {
    rows.push_back({{"key", r.key},
                    {"measured", r.measured},
                    {"predicted", r.predicted ? Json(*r.predicted) : Json()},
                    {"rel_error", r.rel_error ? Json(*r.rel_error) : Json()},
                    {"note", r.note}});
  }
  // The context as simulated, not the -1 that asks for vLLM's auto (issue 29): the number, and the note saying it
  // came from auto (the scenario's own number is echoed as given).
  Json scenario = spec::to_json(c.scenario);
  if (c.max_model_len > 0 && c.scenario.engine.max_model_len_auto()) scenario["engine"]["max_model_len"] = c.max_model_len;
  return Json{{"source", c.source},
              {"line", c.line},
              {"fits", c.fits},
              {"reason", c.reason},
              {"max_model_len", c.max_model_len > 0 ? Json(c.max_model_len) : Json(nullptr)},
              {"max_model_len_note", c.max_model_len_note},
              {"scenario", scenario},
              {"rows", rows},
              {"notes", c.notes}};
}

}  // namespace llmsim::analysis
