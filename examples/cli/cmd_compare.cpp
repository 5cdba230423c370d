// `llmsim compare`: every GPU × count × format × engine option for one model, workload and SLO, side by side:
// fits or why not, capacity, goodput, latency, $/Mtok, monthly bill, with the cheapest SLO-meeting option marked.
#include <algorithm>
#include <iostream>
#include <optional>
#include <sstream>

#include "common.hpp"
#include "output_file.hpp"
#include "signals.hpp"
#include "llmsim/analysis/compare.hpp"
#include "llmsim/analysis/cost.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::cli {

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::vector<int> int_list(const std::string& s, const std::string& flag) {
  std::vector<int> out;
  for (const auto& item : split_list(s)) {
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || v < 1) throw ConfigError(flag, "expected positive integers, got '" + item + "'");
    out.push_back(v);
  }
  if (out.empty()) throw ConfigError(flag, "empty list");
  return out;
}

std::string cell(const Json& v, int decimals, const std::string& prefix = "") {
  return v.is_null() ? "-" : prefix + fmt(v.get<double>(), decimals);
}

// Notes for one row: why it has no numbers, or what to know about its fleet at the target load.
std::string row_note(const analysis::Row& row, const spec::Scenario& base) {
  std::vector<std::string> notes;
  if (!row.fits) notes.push_back(row.reason);
  else if (!row.meets_slo()) notes.push_back(row.reason.empty() ? "SLO not met" : row.reason);
  if (row.capacity && row.capacity->hit_limit) notes.push_back("search limit reached");
  if (row.at_target && !analysis::run_meets_slo(*row.at_target))
    notes.push_back("SLO NOT met at target load (" + analysis::slo_failures(base, *row.at_target) + ")");
  if (row.replicas_added > 0) notes.push_back("+" + std::to_string(row.replicas_added) + " replica(s) for the SLO at target");
  if (row.num_gpus > 1 && row.meets_slo() && !row.scaling_efficiency) notes.push_back("no 1-GPU capacity to scale from");
  std::string s;
  for (const auto& n : notes) s += (s.empty() ? "" : "; ") + n;
  return s;
}

void print_table(const analysis::CompareResult& r, const spec::Scenario& base, const analysis::CompareOptions& o) {
  const Json doc = analysis::to_json(r);
  const bool closed = r.target_concurrency.has_value();  // capacity is then in users, not an arrival rate
  std::vector<std::string> header{"option", "fits"};
  if (closed) header.insert(header.end(), {"max users", "req/s"});
  else header.push_back("max QPS");
  header.insert(header.end(), {"goodput tok/s", "TTFT p95", "TPOT p95", "$/Mtok out", "replicas", "$/month",
                               "scale eff", "note"});
  Table t(header);
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const Json& j = doc["rows"][i];
    const auto& row = r.rows[i];
    std::string note = row_note(row, base);
    const bool win = r.winner && *r.winner == i;
    if (win) note = "<- winner" + (note.empty() ? "" : "; " + note);
    else if (j["pareto"].get<bool>()) note = "pareto" + (note.empty() ? "" : "; " + note);
    // The mark leads the name, which also keeps "2x..." names left-aligned (Table right-aligns digits).
    std::vector<std::string> cells{(win ? "* " : "  ") + row.name, row.fits ? "yes" : "no"};
    if (closed) cells.insert(cells.end(), {cell(j["max_concurrency"], 0), cell(j["max_qps"], 2)});
    else cells.push_back(cell(j["max_qps"], 2));
    cells.insert(cells.end(), {cell(j["goodput_output_tps"], 0), cell(j["ttft_ms"]["p95"], 0), cell(j["tpot_ms"]["p95"], 1),
                               cell(j["cost_per_mtok_output_slo"], 3, "$"), cell(j["replicas_needed"], 0),
                               cell(j["monthly_cost"], 0, "$"), cell(j["scaling_efficiency"], 2), note});
    t.add(cells);
  }
  std::cout << "compare: " << base.model << " | SLO";
  if (base.slo.empty()) std::cout << " none (capacity = largest stable load)";
  for (const auto& s : base.slo.targets)
    std::cout << " " << spec::to_string(s.metric) << " p" << format_value(s.percentile) << " <= " << format_value(s.max_ms);
  std::cout << " | target "
            << (closed ? std::to_string(*r.target_concurrency) + " closed-loop users"
                : r.target_qps > 0 ? fmt(r.target_qps, 2) + " QPS" : std::string("n/a"))
            << "\n\n";
  t.print(std::cout);
  std::cout << (closed ? "\nmax users = most concurrent closed-loop users one replica serves inside the SLO; req/s = "
                        "requests completed per second there;\n"
                      : "\nmax QPS = largest arrival rate (req/s) one replica serves inside the SLO;\n")
            << "goodput, TTFT/TPOT and $/Mtok at that load (SLO-meeting tokens only); replicas and $/month: enough\n"
               "replicas that each meets the SLO at its share of the target, at "
            << format_value(base.cost.hours_per_month)
            << " h/month.\nscale eff = goodput at SLO capacity of N GPUs / (N x that of 1 GPU of the same card, format and "
               "knobs);\nabove 1 when one card is starved (less KV room, so preemptions; or a prefill too slow for the "
               "TTFT target); '-' for 1 GPU\nor when the 1-GPU option has no capacity.\n";
  std::string prices;
  std::vector<std::string> seen;
  const auto& catalog = spec::Catalog::builtin();
  for (const auto& row : r.rows) {
    if (!row.summary || std::find(seen.begin(), seen.end(), row.gpu) != seen.end()) continue;
    seen.push_back(row.gpu);
    const auto gpu = catalog.gpu(row.gpu);
    // The same rule compare() billed with.
    const auto given = analysis::price_on_gpu(base.hardware.gpu, base.hardware.price_per_gpu_hour, row.gpu,
                                              analysis::price_for(o.prices, row.gpu));
    const double price = given.value_or(gpu.price_per_hour);
    const bool placeholder = !given && gpu.price_is_placeholder;
    prices += (prices.empty() ? "" : ", ") + row.gpu + " $" + fmt(price, 2) + (placeholder ? " (placeholder)" : "");
  }
  if (!prices.empty())
    std::cout << "prices per GPU-hour: " << prices << (prices.find("placeholder") != std::string::npos
                                                         ? "\n  placeholders are rough market figures: pass --prices gpu=USD,..."
                                                         : "")
              << "\n";
  if (r.winner) {
    const auto& w = r.rows[*r.winner];
    const Json& j = doc["rows"][*r.winner];
    std::cout << "winner (" << analysis::to_string(r.rank_by) << "): " << w.name << " — "
              << cell(j["monthly_cost"], 0, "$") << "/month for " << cell(j["replicas_needed"], 0) << " replica(s), "
              << cell(j["cost_per_mtok_output_slo"], 3, "$") << " per million output tokens at capacity\n";
  } else {
    const bool any = std::any_of(r.rows.begin(), r.rows.end(), [](const analysis::Row& row) { return row.meets_slo(); });
    std::cout << "winner: none — " << (any ? "no option's fleet meets the SLO at the target load" : "no option meets the SLO")
              << "\n";
  }
}

void write_rows(OutputFile& out, const analysis::CompareResult& r) {
  out.write(analysis::to_json(r).dump(2) + "\n");
  out.commit();
}

int run_compare(int argc, char** argv) {
  return guarded("compare", [&] {
    analysis::CapacityOptions defaults;
    po::options_description opts("llmsim compare options");
    opts.add_options()
        ("scenario", po::value<std::string>()->required(), "base scenario JSON file (model, workload, SLO, cost)")
        ("gpus", po::value<std::string>(), "comma list: rtx4090-24gb,2xrtx4090-24gb,a100-80gb-sxm,4xh100-80gb-sxm@pp "
                                           "(NxGPU = N cards, tensor parallel; @pp = pipeline)")
        ("quants", po::value<std::string>(), "comma list of weight formats (default: the scenario's)")
        ("policies", po::value<std::string>(), "comma list of scheduler policies: vllm,chunked,static")
        ("max-num-seqs", po::value<std::string>(), "comma list of engine.max_num_seqs values")
        ("max-num-batched-tokens", po::value<std::string>(), "comma list of engine.max_num_batched_tokens values")
        ("prices", po::value<std::string>(), "comma list gpu=USD per GPU-hour, overriding catalogue placeholders")
        ("target-qps", po::value<double>(), "load to size the fleet for (default cost.target_qps, else the offered rate)")
        ("rank-by", po::value<std::string>()->default_value("monthly_cost"), "winner criterion: monthly_cost or cost_per_mtok")
        ("jobs,j", po::value<int>()->default_value(1), "threads")
        ("replications", po::value<int>()->default_value(defaults.replications), "independent seeds for the 95% CI")
        ("rel-tol", po::value<double>()->default_value(defaults.rel_tol), "relative tolerance of the capacity bisection")
        ("requests", po::value<long long>()->default_value(defaults.num_requests), "requests per simulation (at most the scenario's)")
        ("out", po::value<std::string>(), "also write the JSON result to this file")
        ("quiet,q", "no progress on stderr")
        ("json", "print the JSON result instead of the table");
    po::variables_map vm;
    if (!parse_args(argc, argv, opts, vm,
                    "usage: llmsim compare --scenario base.json --gpus G1,2xG2,... [--quants fp16,awq-int4] "
                    "[--jobs N] [--json] [--out result.json]")) {
      return kOk;
    }
    Json doc = read_json_file(vm["scenario"].as<std::string>());
    if (vm.count("target-qps")) spec::set_json_path(doc, "cost.target_qps", vm["target-qps"].as<double>());
    const spec::Scenario base = spec::scenario_from_json(JsonView(doc, ""));

    analysis::CompareOptions o;
    if (vm.count("gpus")) {
      o.gpus = split_list(vm["gpus"].as<std::string>());
      if (o.gpus.empty()) throw ConfigError("--gpus", "empty list");
    }
    if (vm.count("quants")) {
      o.quants = split_list(vm["quants"].as<std::string>());
      if (o.quants.empty()) throw ConfigError("--quants", "empty list");
    }
    if (vm.count("policies")) o.policies = split_list(vm["policies"].as<std::string>());
    if (vm.count("max-num-seqs")) o.max_num_seqs = int_list(vm["max-num-seqs"].as<std::string>(), "--max-num-seqs");
    if (vm.count("max-num-batched-tokens"))
      o.max_num_batched_tokens = int_list(vm["max-num-batched-tokens"].as<std::string>(), "--max-num-batched-tokens");
    if (vm.count("prices")) {
      for (const auto& item : split_list(vm["prices"].as<std::string>())) {
        const auto eq = item.find('=');
        if (eq == std::string::npos) throw ConfigError("--prices", "expected gpu=USD, got '" + item + "'");
        char* end = nullptr;
        const std::string value = item.substr(eq + 1);
        const double price = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0') throw ConfigError("--prices", "expected a number after '=', got '" + item + "'");
        o.prices[item.substr(0, eq)] = price;
      }
    }
    o.rank_by = analysis::parse_rank_by(vm["rank-by"].as<std::string>());
    o.jobs = vm["jobs"].as<int>();
    o.capacity.replications = vm["replications"].as<int>();
    o.capacity.rel_tol = vm["rel-tol"].as<double>();
    o.capacity.num_requests = vm["requests"].as<long long>();
    o.capacity.warmup_requests = std::min<std::int64_t>(o.capacity.warmup_requests, o.capacity.num_requests / 10);

    CancelScope interrupts;  // first, so that no signal can leave a temporary output file behind
    std::optional<OutputFile> out;  // opened before the work: a missing directory fails now
    if (vm.count("out")) out.emplace(vm["out"].as<std::string>(), "--out");
    o.capacity.cancel = interrupts.flag();  // every capacity search stops within one simulation
    const bool quiet = vm.count("quiet") > 0;
    const auto result = analysis::compare(base, o, [quiet](std::size_t done, std::size_t total) {
      if (quiet) return;
      std::cerr << "\rcompare: " << done << "/" << total << " options" << (done == total ? "\n" : "") << std::flush;
    });
    if (out) write_rows(*out, result);
    if (vm.count("json")) print_json(analysis::to_json(result));
    else print_table(result, base, o);
    return kOk;
  });
}

}  // namespace

Command command_compare() {
  return {"compare", "GPUs x counts x formats x engine knobs side by side: fits, capacity, $/Mtok, winner, Pareto",
          run_compare};
}

}  // namespace llmsim::cli
