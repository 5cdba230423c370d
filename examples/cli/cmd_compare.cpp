// `llmsim compare`: every GPU × count × format × engine option for one model, workload and SLO, side by side:
// fits or why not, capacity, goodput, latency, $/Mtok, monthly bill, with the cheapest SLO-meeting option marked.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common.hpp"
#include "llmsim/analysis/compare.hpp"
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

void print_table(const analysis::CompareResult& r, const spec::Scenario& base, const analysis::CompareOptions& o) {
  const Json doc = analysis::to_json(r);
  Table t({"option", "fits", "max QPS", "goodput tok/s", "TTFT p95", "TPOT p95", "$/Mtok out", "replicas",
           "$/month", "scaling", "note"});
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const Json& j = doc["rows"][i];
    const auto& row = r.rows[i];
    std::string note;
    if (!row.fits) note = row.reason;
    else if (!row.meets_slo()) note = row.reason.empty() ? "SLO not met" : row.reason;
    else if (row.capacity && row.capacity->hit_limit) note = "search limit reached";
    const bool win = r.winner && *r.winner == i;
    if (win) note = "<- winner" + (note.empty() ? "" : "; " + note);
    else if (j["pareto"].get<bool>()) note = "pareto" + (note.empty() ? "" : "; " + note);
    // The mark leads the name, which also keeps "2x..." names left-aligned (Table right-aligns digits).
    t.add({(win ? "* " : "  ") + row.name, row.fits ? "yes" : "no", cell(j["max_qps"], 2), cell(j["goodput_output_tps"], 0),
           cell(j["ttft_ms"]["p95"], 0), cell(j["tpot_ms"]["p95"], 1), cell(j["cost_per_mtok_output_slo"], 3, "$"),
           j["replicas_needed"].is_null() ? "-" : std::to_string(j["replicas_needed"].get<int>()),
           cell(j["monthly_cost"], 0, "$"), cell(j["scaling_efficiency"], 2), note});
  }
  std::cout << "compare: " << base.model << " | SLO";
  if (base.slo.empty()) std::cout << " none (capacity = largest stable load)";
  for (const auto& s : base.slo.targets)
    std::cout << " " << spec::to_string(s.metric) << " p" << format_value(s.percentile) << " <= " << format_value(s.max_ms);
  std::cout << " | target " << (r.target_qps > 0 ? fmt(r.target_qps, 2) + " QPS" : std::string("n/a")) << "\n\n";
  t.print(std::cout);
  std::cout << "\nmax QPS = largest Poisson rate meeting the SLO on one replica; goodput, TTFT/TPOT and $/Mtok at that "
               "load (SLO-meeting tokens only);\nreplicas and $/month sized for the target load at "
            << format_value(base.cost.hours_per_month) << " h/month; scaling = goodput(N GPUs) / (N x goodput(1 GPU)).\n";
  std::string prices;
  std::vector<std::string> seen;
  const auto& catalog = spec::Catalog::builtin();
  for (const auto& row : r.rows) {
    if (!row.summary || std::find(seen.begin(), seen.end(), row.gpu) != seen.end()) continue;
    seen.push_back(row.gpu);
    const auto gpu = catalog.gpu(row.gpu);
    double price = gpu.price_per_hour;
    bool placeholder = gpu.price_is_placeholder;
    if (auto it = o.prices.find(row.gpu); it != o.prices.end()) price = it->second, placeholder = false;
    else if (row.gpu == base.hardware.gpu && base.hardware.price_per_gpu_hour)
      price = *base.hardware.price_per_gpu_hour, placeholder = false;
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
    std::cout << "winner: none — no option meets the SLO\n";
  }
}

void write_rows(const std::string& file, const analysis::CompareResult& r) {
  std::ofstream out(file);
  if (!out) throw ConfigError("--out", "cannot write '" + file + "'");
  out << analysis::to_json(r).dump(2) << "\n";
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

    const bool quiet = vm.count("quiet") > 0;
    const auto result = analysis::compare(base, o, [quiet](std::size_t done, std::size_t total) {
      if (quiet) return;
      std::cerr << "\rcompare: " << done << "/" << total << " options" << (done == total ? "\n" : "") << std::flush;
    });
    if (vm.count("out")) write_rows(vm["out"].as<std::string>(), result);
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
