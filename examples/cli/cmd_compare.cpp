// `llmsim compare`: every GPU × count × format × engine option for one model, workload and SLO, side by side:
// fits or why not, $/Mtok and the monthly bill at the user's load (and at capacity), latency, scaling, owned hardware,
// with the cheapest SLO-meeting option marked.
#include <algorithm>
#include <cmath>
#include <map>
#include <iostream>
#include <optional>
#include <sstream>

#include "common.hpp"
#include "compare_args.hpp"
#include "output_file.hpp"
#include "signals.hpp"
#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/compare.hpp"
#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/quality.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::cli {

namespace {

std::string cell(const Json& v, int decimals, const std::string& prefix = "") {
  return v.is_null() ? "-" : prefix + fmt(v.get<double>(), decimals);
}

// "rtx4090-24gb awq-int4" -> "WikiText-2 perplexity +0.13 on Llama-2-7B": the table's short form of the caveat.
std::string quality_cell(const analysis::Row& row) {
  if (row.quant == "fp16" || row.quant == "bf16") return "-";
  const auto q = analysis::nearest_quality_delta(row.quant, row.params);
  if (!q) return "not in table";
  const bool ppl = q->metric.find("perplexity") != std::string::npos;
  return (ppl ? "PPL " : "OpenLLM ") + fmt(q->delta, std::abs(q->delta) < 0.01 ? 4 : 2) + " " + q->model;
}

void print_table(const analysis::CompareResult& r, const spec::Scenario& base) {
  const Json doc = analysis::to_json(r);
  const bool closed = r.target_concurrency.has_value();  // capacity is then in users, not an arrival rate
  // With workload.sessions the load is an arrival rate of conversations: every rate below is sessions/s.
  const bool sessions = base.workload.sessions.has_value();
  const std::string qps = sessions ? "sessions/s" : "QPS";
  const std::string cur = money_prefix(base.cost.currency);
  const std::string unit = currency_unit(base.cost.currency);  // heads in the cells' currency (common.hpp)
  const bool owned = std::any_of(r.rows.begin(), r.rows.end(), [](const analysis::Row& row) { return row.owned_monthly_cost.has_value(); });
  const analysis::Row* winner = r.winner ? &r.rows[*r.winner] : nullptr;
  const bool quality = winner && analysis::is_4bit(winner->quant);  // a 4-bit option wins: show what it may cost in quality
  std::vector<std::string> header{"option", "fits", unit + "/Mtok@target", unit + "/month", "replicas", unit + "/Mtok@cap"};
  if (closed) header.insert(header.end(), {"max users", "req/s"});
  else header.push_back("max " + qps);
  header.insert(header.end(), {"goodput tok/s", "TTFT p95", "TPOT p95", "scale eff", "cap/GPU"});
  if (sessions) header.push_back("hit rate");  // what each card's cache keeps of the conversations
  // Options with a host KV tier (+offload<G>): the share of prompt tokens it gave back on top of the GPU's hits.
  const bool host_tier = sessions && std::any_of(doc["rows"].begin(), doc["rows"].end(),
                                                 [](const Json& row) { return !row["host_cache_hit_rate"].is_null(); });
  if (host_tier) header.push_back("host hit");
  if (owned) header.insert(header.end(), {"owned " + unit + "/month", "buy pays back"});
  if (quality) header.push_back("quality (published)");
  header.push_back("note");
  Table t(header);
  std::vector<std::string> links;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const Json& j = doc["rows"][i];
    const auto& row = r.rows[i];
    std::string note = row_note(row, base);
    const bool win = r.winner && *r.winner == i;
    if (win) note = "<- winner" + (note.empty() ? "" : "; " + note);
    else if (j["tied"].get<bool>()) note = "tied with the winner" + (note.empty() ? "" : "; " + note);
    else if (j["pareto"].get<bool>()) note = "pareto" + (note.empty() ? "" : "; " + note);
    // The mark leads the name, which also keeps "2x..." names left-aligned (Table right-aligns digits).
    std::vector<std::string> cells{(win ? "* " : "  ") + row.name, row.fits ? "yes" : "no",
                                   cell(j["cost_per_mtok_output_at_target"], 3, cur), cell(j["monthly_cost"], 0, cur),
                                   cell(j["replicas_needed"], 0), cell(j["cost_per_mtok_output_slo"], 3, cur)};
    if (closed) cells.insert(cells.end(), {cell(j["max_concurrency"], 0), cell(j["max_qps"], 2)});
    else cells.push_back(cell(j["max_qps"], 2));
    cells.insert(cells.end(), {cell(j["goodput_output_tps"], 0), cell(j["ttft_ms"]["p95"], 0), cell(j["tpot_ms"]["p95"], 1),
                               cell(j["scaling_efficiency"], 2), cell(j["capacity_ratio_per_gpu"], 2)});
    if (sessions) cells.push_back(cell(j["prefix_cache_hit_rate"], 2));
    if (host_tier) cells.push_back(cell(j["host_cache_hit_rate"], 2));
    if (owned) {
      const Json& months = j["break_even_months"];
      cells.push_back(cell(j["owned_monthly_cost"], 0, cur));
      cells.push_back(months.is_null() ? (j["owned_monthly_cost"].is_null() ? "-" : "never") : fmt(months.get<double>(), 1) + " months");
    }
    if (quality) cells.push_back(quality_cell(row));
    cells.push_back(note);
    t.add(cells);
    if (!row.interconnect.empty() && row.fits)
      links.push_back(row.name.substr(0, row.name.find(' ')) + ": " + row.interconnect);
  }
  std::cout << "compare: " << base.model << " | SLO";
  // "none" only when no latency target is set anywhere (analysis::has_slo): a tenant class's own SLO counts.
  if (!analysis::has_slo(base)) std::cout << " none (capacity = largest stable load)";
  else if (base.slo.empty()) std::cout << " per tenant class (workload.classes[].slo)";
  for (const auto& s : base.slo.targets)
    std::cout << " " << spec::to_string(s.metric) << " p" << format_value(s.percentile) << " <= " << format_value(s.max_ms);
  const std::string target = closed ? std::to_string(*r.target_concurrency) + " closed-loop users"
                             : r.target_qps > 0 ? fmt(r.target_qps, 2) + " " + qps : std::string("n/a");
  std::cout << " | target " << target << "\n";
  if (!r.sized_at.empty()) std::cout << "sized at " << r.sized_at << " (max " << qps << " and the target are peak rates)\n";
  std::cout << "\n";
  t.print(std::cout);
  if (std::any_of(r.rows.begin(), r.rows.end(), [](const analysis::Row& row) { return row.autoscaled_bill.has_value(); }))
    std::cout << "\nautoscaled: " << unit << "/month and " << unit << "/Mtok@target are each fleet's day simulated with the scenario's autoscaler "
                 "(up to the replicas sized for the peak),\nbilled for the replica-hours it ran, not the fleet held all "
                 "month (the winner's `bill:` line below says which).\n";
  const std::string bound = metrics::capacity_bound(analysis::has_slo(base));
  std::cout << "\n" << unit << "/Mtok@target and " << unit << "/month: the fleet for the target load (" << target
            << "; the fleet simulated whole with its router, as long as the scenario's own run, and grown until\nit "
            << analysis::meets_slo_phrase(base) << "; spares and extras included, " << format_value(base.cost.hours_per_month)
            << " h/month), per million " << metrics::priced_output_tokens(analysis::has_slo(base))
            << "\nat the steady state (simulate's figure divides by the "
            << "whole run, its drain included). "
            << unit << "/Mtok@cap: one replica at its capacity,\nthe floor a fully loaded fleet approaches. "
            << (closed ? "max users = most concurrent closed-loop users one replica serves " + bound + "; req/s =\n"
                         "requests completed per second there. "
                       : sessions ? "max sessions/s = largest arrival rate of conversations one replica serves " + bound +
                                    " (each brings its turns as requests). "
                                  : "max QPS = largest arrival rate (req/s) one replica serves " + bound + ". ")
            << "goodput, TTFT/TPOT at that capacity" << (sessions ? "; hit rate = prefix-cache hit rate there (cached / prompt tokens)" : "")
            << (host_tier ? "; host hit = prompt tokens loaded from the host KV tier (+offload<G>) / prompt tokens" : "")
            << ".\n"
               "scale eff = SLO-meeting output tok/s of N GPUs / (N x that of 1 GPU of the same card, format and knobs), both\n"
               "with the same concurrent users (those 1 GPU carries at its SLO capacity): the field guides' definition.\n"
               "cap/GPU = capacity per GPU against 1 GPU's, each at its own capacity (above 1 when one card is starved of\n"
               "KV room or too slow in prefill for the TTFT target). '-' for 1 GPU or when the 1-GPU option has no capacity.\n";
  // vLLM's auto context, where it is not the model's: each option says what it runs.
  for (const auto& row : r.rows)
    if (row.fits && row.summary && row.summary->max_model_len_note.find("does not fit") != std::string::npos)
      std::cout << "context: " << row.name << " runs "
                << memory::describe_context(row.summary->max_model_len, row.summary->max_model_len_note) << "\n";
  std::vector<std::string> seen;
  for (const auto& l : links)
    if (std::find(seen.begin(), seen.end(), l) == seen.end()) seen.push_back(l);
  if (!seen.empty()) {
    std::cout << "interconnect assumed:";
    for (const auto& l : seen) std::cout << "\n  " << l;
    std::cout << "\n";
  }
  std::string prices;
  std::vector<std::string> seen_gpu;
  bool placeholder = false;
  for (const auto& row : r.rows) {
    if (!row.fits || std::find(seen_gpu.begin(), seen_gpu.end(), row.gpu) != seen_gpu.end()) continue;
    seen_gpu.push_back(row.gpu);
    placeholder = placeholder || row.price_is_placeholder;
    prices += (prices.empty() ? "" : ", ") + row.gpu + " " + cur + fmt(row.price_per_gpu_hour, 2) +
              (row.price_is_placeholder ? " (placeholder)" : "");
  }
  if (!prices.empty())
    std::cout << "prices per GPU-hour (" << base.cost.currency << "): " << prices
              << (placeholder ? "\n  placeholder prices are rough market figures, not quotes: pass --prices gpu=PRICE,..." : "")
              << "\n";
  if (owned || base.cost.electricity_per_kwh) {
    const auto& c = base.cost;
    std::cout << "owned: purchase over " << format_value(c.depreciation_years) << " years, energy at "
              << (c.electricity_per_kwh ? cur + fmt(*c.electricity_per_kwh, 3) : std::string("-")) << "/kWh x PUE "
              << format_value(c.pue) << " (board power: datasheet under load, measured idle), hosting " << cur
              << format_value(c.hosting_per_gpu_month) << "/GPU-month; 'buy pays back' = months until buying has cost "
              << "less than renting.\n";
    std::vector<std::string> why;
    for (const auto& row : r.rows)
      if (row.fits && !row.owned_note.empty() && std::find(why.begin(), why.end(), row.gpu + ": " + row.owned_note) == why.end())
        why.push_back(row.gpu + ": " + row.owned_note);
    for (const auto& w : why) std::cout << "  " << w << "\n";
  } else {
    std::cout << "owned hardware: set cost.electricity_per_kwh (and purchase prices: --purchase-prices gpu=PRICE) to price "
                 "buying beside renting.\n";
  }
  if (winner) {
    const Json& j = doc["rows"][*r.winner];
    std::cout << "winner (" << analysis::to_string(r.rank_by) << "): " << winner->name << " — "
              << cell(j["cost_per_mtok_output_at_target"], 3, cur) << " per million output tokens at " << target << ", "
              << cell(j["monthly_cost"], 0, cur) << "/month for " << cell(j["replicas_needed"], 0) << " replica(s) ("
              << cell(j["cost_per_mtok_output_slo"], 3, cur) << "/Mtok at capacity)\n";
    if (!winner->bill_basis.empty()) std::cout << "  bill: " << winner->bill_basis << "\n";
    if (!r.tie_note.empty()) std::cout << "  " << r.tie_note << "\n";
    if (!r.model_error_note.empty()) std::cout << "  " << r.model_error_note << "\n";
    if (!winner->quality_caveat.empty())
      std::cout << "  " << winner->quant << ": " << winner->quality_caveat
                << (analysis::is_4bit(winner->quant) ? "\n  check your own quality evals before choosing a 4-bit format"
                                                     : "")
                << "\n";
  } else {
    const bool any = std::any_of(r.rows.begin(), r.rows.end(), [](const analysis::Row& row) { return row.meets_slo(); });
    std::cout << "winner: none — " << (any ? "no option's fleet " : "no option ") << analysis::meets_slo_phrase(base)
              << (any ? " at the target load" : "") << "\n";
  }
  for (const auto& row : r.rows)
    if (row.fits && !row.slo_headroom_note.empty()) std::cout << "SLO headroom: " << row.name << ": " << row.slo_headroom_note << "\n";
}

void write_rows(OutputFile& out, const analysis::CompareResult& r) {
  out.write(analysis::to_json(r).dump(2) + "\n");
  out.commit();
}

int run_compare(int argc, char** argv) {
  return guarded("compare", [&] {
    po::options_description opts("llmsim compare options");
    po::positional_options_description pos;
    add_scenario_options(opts, pos, "base scenario JSON file (model, workload, SLO, cost)");
    add_compare_options(opts);
    opts.add_options()
        ("out", po::value<std::string>(), "also write the JSON result to this file")
        ("json", "print the JSON result instead of the table");
    add_progress_options(opts);
    po::variables_map vm;
    if (!parse_args(argc, argv, opts, vm,
                    "usage: llmsim compare BASE.json --gpus G1,2xG2,... [--quants fp16,awq-int4] "
                    "[--set PATH=VALUE ...] [--vllm-args \"vllm serve ...\" | --sglang-args \"...\"] [--jobs N] [--json] [--out result.json]",
                    &pos)) {
      return kOk;
    }
    Json doc = load_scenario(vm);
    apply_target_qps(doc, vm);
    const spec::Scenario base = spec::scenario_from_json(JsonView(doc, ""));
    print_scenario_warnings(base);
    analysis::CompareOptions o = compare_options(vm);

    CancelScope interrupts;  // first, so that no signal can leave a temporary output file behind
    std::optional<OutputFile> out;  // opened before the work: a missing directory fails now
    if (vm.count("out")) out.emplace(vm["out"].as<std::string>(), "--out");
    o.capacity.cancel = interrupts.flag();  // every capacity search stops within one simulation
    const auto result = analysis::compare(base, o, ProgressLine("compare", "options", vm));
    if (out) write_rows(*out, result);
    if (vm.count("json")) print_json(analysis::to_json(result));
    else print_table(result, base);
    return kOk;
  });
}

}  // namespace

Command command_compare() {
  return {"compare", "GPUs x counts x formats x engine knobs side by side: fits, capacity, $/Mtok, winner, Pareto",
          run_compare};
}

}  // namespace llmsim::cli
