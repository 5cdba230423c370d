#include "report/report_page.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compare_args.hpp"
#include "llmsim/analysis/capacity.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/slo.hpp"
#include "llmsim/spec/workload.hpp"
#include "report/cache_value.hpp"
#include "report/html.hpp"
#include "report/svg_plot.hpp"

namespace llmsim::cli::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string money(const spec::Scenario& base, double v, int decimals) {
  if (!std::isfinite(v)) return "\u2013";
  return (base.cost.currency == "USD" ? "$" : base.cost.currency + " ") + number(v, decimals);
}

double value(const std::optional<double>& v) { return v ? *v : kNaN; }

std::string slo_text(const spec::Scenario& base) {
  // "no latency target" only when none is set anywhere (analysis::has_slo): a tenant class's own SLO counts.
  if (!analysis::has_slo(base)) return "no latency target (capacity = the largest stable load)";
  if (base.slo.empty()) return "the latency targets of each tenant class (workload.classes[].slo)";
  std::string s;
  for (const auto& t : base.slo.targets) {
    std::string metric = spec::to_string(t.metric);
    metric = metric.substr(0, metric.find('_'));
    for (auto& ch : metric) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    s += (s.empty() ? "" : ", ") + std::string("P") + format_value(t.percentile) + " " + metric + " \u2264 " + number(t.max_ms, 0) + " ms";
  }
  if (base.slo.min_attainment)
    s += (s.empty() ? "" : ", ") + std::string("at least ") + number(*base.slo.min_attainment * 100, 1) + "% of requests within every target";
  return s;
}

// With workload.sessions the load is an arrival rate of conversations (sessions/s), as compare says it.
std::string rate_unit(const spec::Scenario& base) { return base.workload.sessions ? "sessions/s" : "requests/s"; }

std::string target_text(const analysis::CompareResult& r, const spec::Scenario& base) {
  if (r.target_concurrency) return std::to_string(*r.target_concurrency) + " concurrent users";
  const bool peak = r.sized_at.find("peak window") != std::string::npos;  // a daily curve is sized at its peak
  return r.target_qps > 0 ? format_value(r.target_qps) + " " + rate_unit(base) + (peak ? " (the daily peak)" : "")
                          : std::string("no target load");
}

std::string model_text(const ReportInput& in) {
  for (const auto& row : in.result.rows)
    if (row.params > 0) return in.base.model + " (" + sig3(row.params / 1e9) + " B parameters)";
  return in.base.model;
}

// The workload section of the scenario as "arrival: poisson, rate 4; input_tokens: lognormal, mean 512, ...".
std::string describe(const Json& j) {
  if (j.is_object()) {
    std::string s;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.value().is_null()) continue;
      const std::string v = describe(it.value());
      s += (s.empty() ? "" : ", ") + it.key() + (it.value().is_object() ? " (" + v + ")" : " " + v);
    }
    return s;
  }
  if (j.is_array()) {
    std::string s;
    for (const auto& x : j) s += (s.empty() ? "" : ", ") + describe(x);
    return "[" + s + "]";
  }
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number_integer()) return j.dump();
  if (j.is_number()) return format_value(j.get<double>());
  return j.dump();
}

bool meets_at_target(const analysis::Row& r) {
  return r.meets_slo() && r.monthly_cost && (!r.at_target || analysis::run_meets_slo(*r.at_target));
}

double at_capacity_per_mtok(const analysis::Row& r) {
  return r.summary && r.capacity && r.capacity->found ? r.summary->cost.per_mtok_output_slo : kNaN;
}

// Whether row i is tied with the winner (CompareResult::tied: the winner was picked among them by the tie rule).
bool tied_with_winner(const analysis::CompareResult& r, std::size_t i) {
  return r.winner && i != *r.winner && std::find(r.tied.begin(), r.tied.end(), i) != r.tied.end();
}

// `tie_note` is the comparison's tie note when the row is tied with the winner, else empty: a tied row lost by the
// tie rule (the lossless format, the cheaper card), never by a difference inside the noise (issue 29).
std::string why_not(const analysis::Row& r, const analysis::Row* winner, const spec::Scenario& base, analysis::RankBy by,
                    const std::string& tie_note) {
  if (!r.fits) return "cannot run: " + r.reason;
  if (!r.meets_slo()) return "misses the SLO at every load tried: " + (r.reason.empty() ? std::string("SLO not met") : r.reason);
  if (!meets_at_target(r)) return row_note(r, base);
  if (!winner) return row_note(r, base);
  if (!tie_note.empty()) return "tied with the winner: " + tie_note;
  if (by != analysis::RankBy::monthly_cost) {
    const bool target = by == analysis::RankBy::cost_per_mtok;
    const double mine = target ? value(r.cost_per_mtok_output_at_target) : at_capacity_per_mtok(r);
    const double best = target ? value(winner->cost_per_mtok_output_at_target) : at_capacity_per_mtok(*winner);
    return analysis::meets_slo_phrase(base) + " but costs " + money(base, mine, 3) + " per million output tokens " +
           (target ? "at the target load" : "at capacity") + ", against the winner's " + money(base, best, 3);
  }
  if (r.monthly_cost && winner->monthly_cost) {
    const double extra = *r.monthly_cost - *winner->monthly_cost;
    if (extra > 0)
      return analysis::meets_slo_phrase(base) + " but costs " + money(base, *r.monthly_cost, 0) + "/month, " + money(base, extra, 0) + " (" +
             number(100 * extra / *winner->monthly_cost, 0) + "%) more";
    return "same monthly bill, but a dearer token at the target load (" +
           money(base, value(r.cost_per_mtok_output_at_target), 3) + " against " +
           money(base, value(winner->cost_per_mtok_output_at_target), 3) + " per million)";
  }
  return row_note(r, base);
}

std::string price_cell_text(const analysis::Row& r, const spec::Scenario& base) {
  return money(base, r.price_per_gpu_hour, 2) + (r.price_is_placeholder ? " (placeholder)" : "");
}

const char* kStyle = R"(
body{font-family:-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;margin:2em auto;max-width:1200px;color:#222;line-height:1.45;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em} h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #ddd;padding-bottom:.2em}
.headline{font-size:1.2em;background:#eef6ee;border-left:6px solid #59a14f;padding:.8em 1em;margin:1em 0}
.headline.none{background:#fbeeee;border-left-color:#e15759}
.warning{background:#fff6dd;border-left:6px solid #edc948;padding:.6em 1em;margin:1em 0}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em} th,td{border:1px solid #ddd;padding:.3em .55em;vertical-align:top}
th{background:#f3f3f3;text-align:left} td.num{text-align:right;white-space:nowrap} td:first-child{white-space:nowrap} td.note{min-width:11em}
tr.winner td{background:#eef6ee;font-weight:bold} td.bad{color:#b22} td.placeholder{color:#9a6b00}
.badge{display:inline-block;background:#edc948;color:#222;border-radius:3px;padding:0 .35em;font-size:.8em;font-weight:bold}
.plots{display:flex;flex-wrap:wrap;gap:1em} .plots figure{margin:0} figcaption{font-size:.85em;color:#555;max-width:640px}
dl{margin:.4em 0} dt{font-weight:bold;margin-top:.4em} dd{margin-left:1.2em}
.small{font-size:.85em;color:#555}
)";

}  // namespace

bool uses_placeholder_prices(const analysis::CompareResult& result) {
  return std::any_of(result.rows.begin(), result.rows.end(),
                     [](const analysis::Row& r) { return r.fits && r.price_is_placeholder; });
}

std::string headline(const ReportInput& in) {
  const auto& r = in.result;
  const std::size_t meeting =
      static_cast<std::size_t>(std::count_if(r.rows.begin(), r.rows.end(), [](const auto& row) { return meets_at_target(row); }));
  const std::string question = "For " + in.base.model + " at " + target_text(r, in.base) + " with " + slo_text(in.base);
  if (!r.winner) {
    std::size_t fits = static_cast<std::size_t>(std::count_if(r.rows.begin(), r.rows.end(), [](const auto& row) { return row.fits; }));
    return question + ", none of the " + std::to_string(r.rows.size()) + " option(s) compared " +
           analysis::meets_slo_phrase(in.base) + " (" + std::to_string(fits) + " can run at all): " +
           (analysis::has_slo(in.base) ? "relax the SLO, " : "") + "shorten the requests, or try larger GPUs.";
  }
  const analysis::Row& w = r.rows[*r.winner];
  std::string s = question + ", rent " + w.name + ": " + money(in.base, value(w.monthly_cost), 0) + " per month for " +
                  std::to_string(w.replicas_needed.value_or(1)) + " replica(s) of " + std::to_string(w.num_gpus) +
                  " GPU(s), " + money(in.base, value(w.cost_per_mtok_output_at_target), 3) +
                  " per million output tokens. " + std::to_string(meeting) + " of " + std::to_string(r.rows.size()) +
                  " options " + analysis::meets_slo_phrase(in.base, true) + " at this load";
  const analysis::Row* next = nullptr;
  bool next_tied = false;
  for (std::size_t i = 0; i < r.rows.size(); ++i)
    if (i != *r.winner && meets_at_target(r.rows[i]) &&
        (!next || value(r.rows[i].monthly_cost) < value(next->monthly_cost))) {
      next = &r.rows[i];
      next_tied = tied_with_winner(r, i);
    }
  if (next && w.monthly_cost && next->monthly_cost && *w.monthly_cost > 0) {
    const double more = *next->monthly_cost / *w.monthly_cost - 1;
    // A tied runner-up lost by the tie rule, which the headline says (was "(the winner's tokens are cheaper)" for
    // a $/Mtok difference inside the noise, against compare's own tie note).
    s += "; the next cheapest, " + next->name + ", costs " + money(in.base, *next->monthly_cost, 0) + " per month" +
         (next_tied ? (std::fabs(more) < 0.005 ? std::string(" too") : std::string()) + " — a " + r.tie_note
          : std::fabs(more) < 0.005 ? std::string(" too (the winner's tokens are cheaper)")
                                    : " (" + std::string(more > 0 ? "+" : "") + number(100 * more, 0) + "%)");
  }
  s += ".";
  if (const std::string cache = cache_value_sentence(in.base, r); !cache.empty()) s += " " + cache;
  if (!w.bill_basis.empty()) s += " The bill: " + w.bill_basis + ".";
  if (uses_placeholder_prices(r)) s += " Prices are catalogue placeholders, not quotes: set yours before deciding.";
  return s;
}

std::string render_report(const ReportInput& in) {
  const auto& base = in.base;
  const auto& r = in.result;
  const bool closed = r.target_concurrency.has_value();
  const analysis::Row* winner = r.winner ? &r.rows[*r.winner] : nullptr;
  const bool placeholder = uses_placeholder_prices(r);
  std::string o;
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  o += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  o += "<title>llmsim report: " + escape(base.model) + "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  o += "<h1>Which GPUs should serve " + escape(base.model) + "?</h1>\n";
  o += "<p class=\"small\">llmsim report from " + escape(in.source.empty() ? "a scenario" : in.source) +
       ": predictions of a simulator (a roofline cost model under a discrete-event serving engine), not measurements.</p>\n";
  o += std::string("<p id=\"headline\" class=\"headline") + (winner ? "" : " none") + "\">" + escape(headline(in)) + "</p>\n";
  if (placeholder)
    o += "<p id=\"placeholder-warning\" class=\"warning\"><span class=\"badge\">PLACEHOLDER PRICES</span> Some options are "
         "priced at the catalogue's rough market figures, not quotes. Every cost below depends on them: re-run with "
         "<code>--prices gpu=PRICE,&hellip;</code> (per GPU-hour) before deciding.</p>\n";

  // The question.
  o += "<h2 id=\"question\">The question</h2>\n<dl>\n";
  o += "<dt>Model</dt><dd>" + escape(model_text(in)) + ", weights " + escape(base.weights) + ", KV cache " +
       escape(base.kv_cache) + "</dd>\n";
  {
    // What a reader needs of the workload: arrivals and lengths (classes when there are several); not the run knobs.
    const Json w = spec::to_json(base)["workload"];
    std::string traffic;
    // Sessions draw their own lengths: the request lengths beside them would only mislead.
    const bool sessions = w.contains("sessions") && !w["sessions"].is_null();
    for (const char* key : {"arrival", "sessions", "classes", "input_tokens", "output_tokens", "trace"})
      if (w.contains(key) && !w[key].is_null() && !(w[key].is_array() && w[key].empty()) &&
          !(sessions && std::string(key).find("_tokens") != std::string::npos))
        traffic += (traffic.empty() ? "" : "; ") + std::string(key) + ": " + describe(w[key]);
    o += "<dt>Traffic</dt><dd>" + escape(traffic.empty() ? describe(w) : traffic) + "</dd>\n";
  }
  o += "<dt>Target load</dt><dd>" + escape(target_text(r, in.base)) + " (the fleet is sized for it" +
       (r.sized_at.empty() ? std::string() : ": " + r.sized_at) + ")</dd>\n";
  o += "<dt>Latency target (SLO)</dt><dd>" + escape(slo_text(base)) + "</dd>\n";
  {  // vLLM's auto context where an option cannot hold the model's: what each runs, said as everywhere else
    std::string ctx;
    for (const auto& row : r.rows)
      if (row.fits && row.summary && row.summary->max_model_len_note.find("does not fit") != std::string::npos)
        ctx += (ctx.empty() ? "" : "; ") + row.name + ": " +
               memory::describe_context(row.summary->max_model_len, row.summary->max_model_len_note);
    if (!ctx.empty()) o += "<dt>Context</dt><dd id=\"context\">" + escape(ctx) + "</dd>\n";
  }
  o += "<dt>Options compared</dt><dd>" + std::to_string(r.rows.size()) + ", ranked by " + escape(analysis::to_string(r.rank_by)) +
       "</dd>\n</dl>\n";

  // The options table.
  o += "<h2 id=\"options\">The options</h2>\n";
  {
    const bool sessions = base.workload.sessions.has_value();
    std::vector<std::string> header{"option", "fits", "meets SLO", "monthly bill", "replicas", "per Mtok at target",
                                    "per Mtok at capacity", closed ? "max users" : sessions ? "max sessions/s" : "max QPS",
                                    "P95 TTFT (ms)", "P95 TPOT (ms)", "GPU-hour", "note"};
    if (sessions) header.insert(header.end() - 2, "hit rate");  // what each card's cache keeps of the conversations
    std::vector<std::vector<Cell>> rows;
    std::vector<std::string> classes;
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
      const auto& row = r.rows[i];
      const bool win = r.winner && *r.winner == i;
      const bool ok = meets_at_target(row);
      const auto* s = row.summary ? &*row.summary : nullptr;
      const double cap = !row.capacity || !row.capacity->found ? kNaN
                         : closed && row.capacity->max_concurrency ? *row.capacity->max_concurrency
                                                                  : row.capacity->max_qps;
      rows.push_back({text_cell((win ? "\u2605 " : "") + row.name), text_cell(row.fits ? "yes" : "no", row.fits ? "" : "bad"),
                      text_cell(ok ? "yes" : "no", ok ? "" : "bad"), number_cell(money(base, value(row.monthly_cost), 0)),
                      number_cell(row.replicas_needed ? std::to_string(*row.replicas_needed) : "\u2013"),
                      number_cell(money(base, value(row.cost_per_mtok_output_at_target), 3)),
                      number_cell(money(base, at_capacity_per_mtok(row), 3)),
                      number_cell(closed ? number(cap, 0) : sig3(cap)),
                      number_cell(s && s->ttft_ms.count > 0 ? number(s->ttft_ms.p95, 0) : "\u2013"),
                      number_cell(s && s->tpot_ms.count > 0 ? number(s->tpot_ms.p95, 1) : "\u2013"),
                      number_cell(row.fits ? price_cell_text(row, base) : "\u2013", row.price_is_placeholder ? "placeholder" : ""),
                      text_cell(row_note(row, base), "note")});
      if (sessions)
        rows.back().insert(rows.back().end() - 2,
                           number_cell(s && s->kv.prefix_cache_hit_rate() ? number(*s->kv.prefix_cache_hit_rate(), 2) : "\u2013"));
      classes.push_back(win ? "winner" : "");
    }
    o += table(header, rows, classes);
    const bool slo_set = analysis::has_slo(base);
    o += "<p class=\"small\">Monthly bill and per-Mtok at target: the fleet sized for the target load (replicas that each " +
         escape(analysis::meets_slo_phrase(base, true)) + " at their share), " + escape(number(base.cost.hours_per_month, 0)) +
         " h/month, per million " + (slo_set ? "SLO-meeting " : "") + "output tokens. At capacity: one replica at the largest "
         "load it serves " + (slo_set ? "inside the SLO" : "stably") + ", the floor a "
         "fully loaded fleet approaches. Latencies are at that capacity" +
         std::string(sessions ? ", and so is the hit rate (prompt tokens found in the prefix cache \u00f7 looked up)" : "") +
         ".</p>\n";
  }

  // The winner and why.
  o += "<h2 id=\"winner\">The winner and why</h2>\n";
  if (winner) {
    o += "<p><strong>" + escape(winner->name) + "</strong> is the cheapest option (" + escape(analysis::to_string(r.rank_by)) +
         ") whose fleet " + escape(analysis::meets_slo_phrase(in.base)) + " at " + escape(target_text(r, in.base)) + ": " +
         escape(money(base, value(winner->monthly_cost), 0)) + " per month for " +
         std::to_string(winner->replicas_needed.value_or(1)) + " replica(s), " +
         escape(money(base, value(winner->cost_per_mtok_output_at_target), 3)) + " per million output tokens at that load.";
    if (!winner->quality_caveat.empty()) o += " " + escape(winner->quant + ": " + winner->quality_caveat);
    o += "</p>\n";
    if (!winner->slo_headroom_note.empty()) o += "<p id=\"slo-headroom\"><strong>SLO headroom:</strong> " + escape(winner->slo_headroom_note) + ".</p>\n";
    if (!r.tie_note.empty()) o += "<p id=\"tie\">" + escape(r.tie_note) + ".</p>\n";
    if (!r.model_error_note.empty()) o += "<p id=\"model-error\">" + escape(r.model_error_note) + ".</p>\n";
  } else {
    o += "<p><strong>No winner:</strong> no option's fleet " + escape(analysis::meets_slo_phrase(in.base)) + " at the target load.</p>\n";
  }
  {
    std::vector<std::vector<Cell>> rows;
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
      if (r.winner && *r.winner == i) continue;
      rows.push_back({text_cell(r.rows[i].name), text_cell(why_not(r.rows[i], winner, base, r.rank_by, tied_with_winner(r, i) ? r.tie_note : std::string()))});
    }
    if (!rows.empty()) o += "<p>Why not the others:</p>\n" + table({"option", "why not"}, rows);
  }

  // Cost at the user's load and at capacity.
  o += "<h2 id=\"cost\">Cost at your load and at capacity</h2>\n";
  {
    std::vector<std::vector<Cell>> rows;
    std::vector<std::string> classes;
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
      const auto& row = r.rows[i];
      if (!row.fits) continue;
      rows.push_back({text_cell(row.name), number_cell(money(base, value(row.monthly_cost), 0)),
                      number_cell(money(base, value(row.cost_per_mtok_output_at_target), 3)),
                      number_cell(money(base, at_capacity_per_mtok(row), 3)),
                      number_cell(std::to_string(row.num_gpus) + " \u00d7 " + price_cell_text(row, base),
                                  row.price_is_placeholder ? "placeholder" : "")});
      classes.push_back(r.winner && *r.winner == i ? "winner" : "");
    }
    if (rows.empty()) o += "<p>No option can run, so nothing has a cost.</p>\n";
    else
      o += table({"option", "monthly bill at target", "per Mtok at target", "per Mtok at capacity", "GPUs per replica \u00d7 GPU-hour"},
                 rows, classes);
  }
  // Owned hardware beside rental (analysis/ownership.hpp), as `compare` prints it: only when the scenario prices
  // energy (cost.electricity_per_kwh); otherwise one line says how to get it.
  {
    const auto& c = base.cost;
    std::vector<std::vector<Cell>> rows;
    std::vector<std::string> notes;
    for (const auto& row : r.rows) {
      if (!row.fits) continue;
      if (row.owned_monthly_cost) {
        const std::string payback = row.break_even_months ? number(*row.break_even_months, 1) + " months" : "never";
        rows.push_back({text_cell(row.name),
                        number_cell(row.purchase_price_per_gpu ? money(base, *row.purchase_price_per_gpu, 0) : "\u2013",
                                    row.purchase_price_is_placeholder ? "placeholder" : ""),
                        number_cell(money(base, value(row.owned_cost_per_gpu_hour), 3)),
                        number_cell(money(base, *row.owned_monthly_cost, 0)),
                        number_cell(money(base, value(row.owned_cost_per_mtok_output_at_target), 3)),
                        number_cell(money(base, value(row.monthly_cost), 0)), text_cell(payback)});
      } else if (!row.owned_note.empty()) {
        const std::string n = row.gpu + ": " + row.owned_note;
        if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
      }
    }
    if (!rows.empty()) {
      o += "<h3 id=\"owned\">Owning the cards instead of renting</h3>\n";
      o += table({"option", "price per card", "owned GPU-hour", "owned monthly bill", "owned per Mtok at target",
                  "rented monthly bill", "buying pays back after"}, rows);
      o += "<p class=\"small\">Purchase spread over " + escape(format_value(c.depreciation_years)) +
           " years, energy at " + escape(money(base, value(c.electricity_per_kwh), 3)) + "/kWh \u00d7 PUE " +
           escape(format_value(c.pue)) + " (board power under load from the datasheet, idle as measured), hosting " +
           escape(money(base, c.hosting_per_gpu_month, 0)) + " per GPU-month.</p>\n";
    } else if (!c.electricity_per_kwh) {
      o += "<p class=\"small\">Owned hardware is not priced: set cost.electricity_per_kwh (and purchase prices) in the "
           "scenario to see buying beside renting.</p>\n";
    }
    for (const auto& n : notes) o += "<p class=\"small\">Owned: " + escape(n) + "</p>\n";
  }
  Chart cost;
  cost.title = "Cost per million SLO-meeting output tokens vs capacity";
  cost.x_label = closed ? "capacity per replica (concurrent users inside the SLO)"
                        : "capacity per replica (max " + std::string(base.workload.sessions ? "sessions/s" : "QPS") + " inside the SLO)";
  cost.y_label = "cost per Mtok at capacity (" + base.cost.currency + ")";
  cost.empty_text = "no option met the SLO at any load";
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const auto& row = r.rows[i];
    if (!row.fits || !row.capacity || !row.capacity->found || !row.summary) continue;
    Series s;
    s.name = row.name + (row.price_is_placeholder ? " (placeholder price)" : "");
    s.color = palette(i);
    s.line = false;
    s.emphasis = r.winner && *r.winner == i;
    const double cap = closed && row.capacity->max_concurrency ? *row.capacity->max_concurrency : row.capacity->max_qps;
    s.points.emplace_back(cap, row.summary->cost.per_mtok_output_slo);
    s.labels.push_back(s.emphasis ? "winner: " + row.name : "");  // the legend names the others (labels would collide)
    cost.series.push_back(std::move(s));
  }
  o += "<div class=\"plots\" id=\"cost-vs-capacity\"><figure>" + render_svg(cost) +
       "<figcaption>Lower right is better: more load per replica, cheaper tokens. Each point is one replica at its "
       "capacity; the winner is drawn larger." +
       std::string(placeholder ? " Placeholder prices move every point up or down." : "") + "</figcaption></figure></div>\n";

  o += cache_value_section(base, r);  // sessions: the hit rate and TTFT per card (what more memory buys)

  // Latency against load.
  o += "<h2 id=\"latency\">Latency as load grows</h2>\n";
  o += "<p>Each option's P95 latency as the offered load rises to its capacity and past it. Where a line stops and an "
       "\u00d7 sits on the top edge, the queue grew without bound (saturation): there is no steady latency there, only a "
       "wait that grows with the run.</p>\n<div class=\"plots\">\n";
  for (const auto metric : {spec::SloMetric::ttft, spec::SloMetric::tpot}) {
    Chart c;
    const bool ttft = metric == spec::SloMetric::ttft;
    c.title = ttft ? "P95 time to first token vs load" : "P95 time per output token vs load";
    c.x_label = closed ? "concurrent users (per replica)" : "offered load per replica (" + rate_unit(base) + ")";
    c.y_label = ttft ? "P95 TTFT (ms)" : "P95 TPOT (ms)";
    c.log_y = ttft;
    c.empty_text = "no option can run";
    for (const auto& t : base.slo.targets)
      if (t.metric == metric)
        c.references.push_back({t.max_ms, "SLO: P" + format_value(t.percentile) + " \u2264 " + number(t.max_ms, 0) + " ms"});
    for (const auto& curve : in.curves) {
      if (curve.points.empty()) continue;
      const auto& row = r.rows[curve.row];
      Series s;
      s.name = row.name;
      s.color = palette(curve.row);
      s.emphasis = r.winner && *r.winner == curve.row;
      for (const auto& p : curve.points) {
        if (p.unstable) s.saturated_x.push_back(p.load);
        else s.points.emplace_back(p.load, ttft ? p.ttft_p95_ms : p.tpot_p95_ms);
      }
      c.series.push_back(std::move(s));
    }
    o += std::string("<figure id=\"latency-") + (ttft ? "ttft" : "tpot") + "\">" + render_svg(c) + "</figure>\n";
  }
  o += "</div>\n";
  std::string missing;
  for (const auto& curve : in.curves)
    if (curve.points.empty() && !curve.note.empty())
      missing += (missing.empty() ? "" : "; ") + r.rows[curve.row].name + ": " + curve.note;
  if (!missing.empty()) o += "<p class=\"small\">Not drawn: " + escape(missing) + ".</p>\n";
  if (!base.slo.targets.empty() &&
      std::any_of(base.slo.targets.begin(), base.slo.targets.end(), [](const auto& t) { return t.percentile != 95; }))
    o += "<p class=\"small\">The curves show P95; the SLO lines are drawn at their own percentile's limit.</p>\n";

  // Assumptions.
  o += "<h2 id=\"assumptions\">Assumptions</h2>\n<ul>\n";
  {
    std::vector<std::string> seen;
    std::string prices;
    for (const auto& row : r.rows) {
      if (!row.fits || std::find(seen.begin(), seen.end(), row.gpu) != seen.end()) continue;
      seen.push_back(row.gpu);
      prices += std::string(prices.empty() ? "" : ", ") + escape(row.gpu) + " " + escape(money(base, row.price_per_gpu_hour, 2)) +
                (row.price_is_placeholder ? " <span class=\"badge\">placeholder</span>" : " (given)");
    }
    if (!prices.empty())
      o += "<li>Rental price per GPU-hour (" + escape(base.cost.currency) + "): " + prices +
           (placeholder ? ". Placeholders are rough market figures, not quotes." : ".") + "</li>\n";
    o += "<li>" + escape(number(base.cost.hours_per_month, 0)) + " billed hours per month; spare replicas " +
         escape(number(base.cost.spare_fraction * 100, 0)) + "%, operations overhead " +
         escape(number(base.cost.ops_overhead_fraction * 100, 0)) + "%, storage " +
         escape(money(base, base.cost.storage_per_month, 0)) + " and network " + escape(money(base, base.cost.network_per_month, 0)) +
         " per month.</li>\n";
    std::vector<std::string> links;
    for (const auto& row : r.rows)
      if (row.fits && !row.interconnect.empty()) {
        const std::string l = row.name.substr(0, row.name.find(' ')) + ": " + row.interconnect;
        if (std::find(links.begin(), links.end(), l) == links.end()) links.push_back(l);
      }
    for (const auto& l : links) o += "<li>Interconnect assumed: " + escape(l) + ".</li>\n";
    std::string engine;
    for (const auto& row : r.rows)
      if (row.summary && !row.summary->engine.empty()) {
        engine = row.summary->engine;
        break;
      }
    o += "<li>Serving engine modelled: " + escape(engine.empty() ? std::string("-") : engine) + " (policy, max_num_seqs, "
         "max_num_batched_tokens as each option lists them; one replica per option, fleets sized by replicas).</li>\n";
    o += "<li>Capacity: largest load meeting the SLO, by bisection to " + escape(sig3(in.options.capacity.rel_tol * 100)) +
         "% over " + std::to_string(in.options.capacity.replications) + " seed(s), " +
         std::to_string(in.options.capacity.num_requests) + " requests per simulation (at most the scenario's).</li>\n";
    std::vector<std::string> caveats;
    for (const auto& row : r.rows)
      if (row.fits && !row.quality_caveat.empty()) {
        const std::string c = row.quant + ": " + row.quality_caveat;
        if (std::find(caveats.begin(), caveats.end(), c) == caveats.end()) caveats.push_back(c);
      }
    for (const auto& c : caveats) o += "<li>Quality is not modelled \u2014 " + escape(c) + "</li>\n";
    for (const auto& row : r.rows)
      if (row.fits && !row.slo_headroom_note.empty() && !(winner && &row == winner))
        o += "<li>SLO headroom of " + escape(row.name) + ": " + escape(row.slo_headroom_note) + ".</li>\n";
    o += "<li>These are predictions. Before trusting them on your setup, compare one measured run: "
         "<code>llmsim check --vllm-result bench.json</code>.</li>\n";
  }
  o += "</ul>\n";
  o += "<p class=\"small\">Made by <code>llmsim report</code>. The page is self-contained: no scripts, fonts or images from "
       "the network.</p>\n</body>\n</html>\n";
  return o;
}

}  // namespace llmsim::cli::report
