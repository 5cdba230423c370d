#include "report/cache_value.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "report/html.hpp"

namespace llmsim::cli::report {

namespace {

constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

double hit_rate(const metrics::Summary* s) {
  return s && s->kv.prefix_cache_hit_rate() ? *s->kv.prefix_cache_hit_rate() : kNoValue;
}
double ttft_p95(const metrics::Summary* s) { return s && s->ttft_ms.count > 0 ? s->ttft_ms.p95 : kNoValue; }
const metrics::Summary* at_target(const analysis::Row& r) { return r.at_target ? &*r.at_target : nullptr; }
const metrics::Summary* at_capacity(const analysis::Row& r) {
  return r.summary && r.capacity && r.capacity->found ? &*r.summary : nullptr;
}
std::int64_t kv_tokens(const analysis::Row& r) { return r.summary ? r.summary->kv.capacity_tokens : 0; }

std::string rate(double v) { return std::isfinite(v) ? number(v, 2) : "\u2013"; }
std::string ms(double v) { return std::isfinite(v) ? number(v, 0) : "\u2013"; }
std::string money(const spec::Scenario& base, const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return "\u2013";
  return (base.cost.currency == "USD" ? "$" : base.cost.currency + " ") + number(*v, 3);
}

// The fitting options with a run at the target, by KV cache per replica (smallest first).
std::vector<const analysis::Row*> by_cache(const analysis::CompareResult& result) {
  std::vector<const analysis::Row*> rows;
  for (const auto& r : result.rows)
    if (r.fits && r.summary) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) { return kv_tokens(*a) < kv_tokens(*b); });
  return rows;
}

}  // namespace

std::string cache_value_sentence(const spec::Scenario& base, const analysis::CompareResult& result) {
  if (!base.workload.sessions) return "";
  const auto rows = by_cache(result);
  std::vector<const analysis::Row*> at_load;  // those with a run at the user's load
  for (const auto* r : rows)
    if (at_target(*r)) at_load.push_back(r);
  if (at_load.size() < 2 || kv_tokens(*at_load.front()) == kv_tokens(*at_load.back())) return "";
  const auto& a = *at_load.front();
  const auto& b = *at_load.back();
  const auto side = [&](const analysis::Row& r) {
    return r.name + " (" + number(static_cast<double>(kv_tokens(r)), 0) + " KV tokens per replica)";
  };
  return "From " + side(a) + " to " + side(b) + ", at your load: prefix-cache hit rate " + rate(hit_rate(at_target(a))) +
         " \u2192 " + rate(hit_rate(at_target(b))) + ", P95 TTFT " + ms(ttft_p95(at_target(a))) + " \u2192 " +
         ms(ttft_p95(at_target(b))) + " ms, per million output tokens " + money(base, a.cost_per_mtok_output_at_target) +
         " \u2192 " + money(base, b.cost_per_mtok_output_at_target) + ".";
}

std::string cache_value_section(const spec::Scenario& base, const analysis::CompareResult& result) {
  if (!base.workload.sessions) return "";
  std::string o = "<h2 id=\"sessions\">What the cache keeps of the conversations</h2>\n";
  o += "<p>Each turn of a conversation re-sends its whole history. Whatever of it is still in the prefix cache is not "
       "computed again: a larger KV cache keeps more histories through the users' think time, so turns start sooner "
       "and cost less GPU time.</p>\n";
  std::vector<std::vector<Cell>> rows;
  std::vector<std::string> classes;
  for (const auto* r : by_cache(result)) {
    const bool win = result.winner && &result.rows[*result.winner] == r;
    const auto* cap = at_capacity(*r);
    rows.push_back({text_cell(r->name), number_cell(number(static_cast<double>(kv_tokens(*r)), 0)),
                    number_cell(rate(hit_rate(at_target(*r)))), number_cell(ms(ttft_p95(at_target(*r)))),
                    number_cell(money(base, r->cost_per_mtok_output_at_target)),
                    number_cell(cap ? sig3(r->capacity->max_qps) : "\u2013"), number_cell(rate(hit_rate(cap))),
                    number_cell(ms(ttft_p95(cap)))});
    classes.push_back(win ? "winner" : "");
  }
  if (rows.empty()) return o + "<p>No option can run.</p>\n";
  o += table({"option", "KV cache per replica (tokens)", "hit rate at your load", "P95 TTFT at your load (ms)",
              "per Mtok at target", "max sessions/s per replica", "hit rate at capacity", "P95 TTFT at capacity (ms)"},
             rows, classes);
  const std::string sentence = cache_value_sentence(base, result);
  if (!sentence.empty()) o += "<p id=\"cache-value\"><strong>" + escape(sentence) + "</strong></p>\n";
  o += "<p class=\"small\">Hit rate: prompt tokens found in the prefix cache \u00f7 prompt tokens looked up, over every "
       "admission of the measured turns (vLLM's prefix-cache statistics). At your load: the fleet sized for the target "
       "(its replicas behind the scenario's router); at capacity: one replica at the largest session rate it serves "
       "inside the SLO, where the caches are fullest.</p>\n";
  return o;
}

}  // namespace llmsim::cli::report
