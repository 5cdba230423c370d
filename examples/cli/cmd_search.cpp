// `llmsim search`: the cheapest deployments meeting the scenario's SLO at a target load (analysis/search.hpp).
#include <algorithm>
#include <iostream>
#include <optional>
#include <string_view>

#include "common.hpp"
#include "scenario_input.hpp"
#include "output_file.hpp"
#include "signals.hpp"
#include "llmsim/analysis/search.hpp"
#include "llmsim/analysis/server_args.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/gpu_option.hpp"

namespace llmsim::cli {

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto comma = s.find(',', start);
    const std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

void print_human(const analysis::SearchResult& r) {
  const Json j = analysis::to_json(r);
  const auto& c = j["counts"];
  const std::string cur = r.currency == "USD" ? "$" : r.currency + " ";
  std::cout << "search: " << fmt(r.target_qps, 2) << " req/s"
            << (r.budget_per_month ? ", budget " + cur + fmt(*r.budget_per_month, 0) + "/month" : std::string()) << "\n"
            << "configurations: " << c["enumerated"] << " enumerated, " << c["invalid"] << " invalid, "
            << c["pruned_memory"] << " pruned by memory, " << c["pruned_budget"] << " by the budget bound, "
            << c["pruned_bound"] << " by branch-and-bound, " << c["simulated"] << " simulated (" << c["screened"]
            << " screened out early, " << c["feasible"] << " feasible), front re-checked: " << c["rechecked"] << "\n";
  if (!r.front.empty()) {
    std::cout << "Pareto front (monthly cost vs P95 TTFT vs P95 TPOT at the target"
              << (r.tied.empty() ? "" : "; * the winner, = tied with it") << "):\n";
    for (std::size_t i = 0; i < r.front.size(); ++i) {
      const auto& m = r.front[i];
      const auto& e = m.evaluation;
      const bool tied = std::find(r.tied.begin(), r.tied.end(), i) != r.tied.end();
      std::cout << (r.winner && *r.winner == i ? "* " : tied ? "= " : "  ") << m.candidate.name << ": " << cur
                << fmt(e.monthly_cost, 0) << "/month, " << e.replicas << " x " << m.candidate.gpus_per_replica
                << " GPU(s), capacity " << fmt(e.capacity_qps, 2) << " req/s per replica, TTFT p95 "
                << fmt(e.ttft_p95_ms, 0) << " ms, TPOT p95 " << fmt(e.tpot_p95_ms, 1) << " ms\n";
    }
  }
  for (const auto& reason : r.reasons) std::cout << reason << "\n";
}

// Until 0.x `--json FILE` wrote the file (`--json -` printed): --json is now a flag as on every command, and the file
// goes to --out. The old form fails to parse (FILE lands as a second argument); say why instead of Boost's words.
void refuse_old_json_file(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const bool valued = a.rfind("--json=", 0) == 0;
    const bool followed = a == "--json" && i + 1 < argc && (argv[i + 1][0] != '-' || std::string_view(argv[i + 1]) == "-");
    if (!valued && !followed) continue;
    const std::string_view file = valued ? a.substr(7) : std::string_view(argv[i + 1]);
    // `--json SCENARIO.json --target-qps 5` is the flag before the positional scenario: only refuse when the
    // scenario is also given elsewhere (another positional word, or --scenario).
    if (!valued) {
      int words = 0;
      bool scenario_flag = false;
      for (int k = 1; k < argc; ++k) {
        const std::string_view w = argv[k];
        if (w == "--scenario" || w.rfind("--scenario=", 0) == 0) scenario_flag = true;
        if (k > 1 && w[0] != '-' && argv[k - 1][0] == '-' && std::string_view(argv[k - 1]) != "--json" &&
            std::string_view(argv[k - 1]).find('=') == std::string_view::npos)
          continue;  // the value of a valued flag
        if (w[0] != '-' || w == "-") ++words;
      }
      if (words + (scenario_flag ? 1 : 0) < 2) continue;
    }
    throw ConfigError("--json", "is a flag now (the result as JSON on stdout), as on every command; write a file "
                                "with --out " + std::string(file == "-" ? "FILE" : file) +
                                (file == "-" ? " (for stdout, --json alone)" : ""));
  }
}

int run_search(int argc, char** argv) {
  return guarded("search", [&] {
    po::options_description opts("llmsim search options");
    po::positional_options_description pos;
    add_scenario_options(opts, pos, "scenario JSON file (model, workload, SLO; its hardware is searched over)");
    opts.add_options()
        ("target-qps", po::value<double>()->required(), "the load (req/s) the deployment must carry within the SLO")
        ("budget", po::value<double>(), "drop configurations whose monthly bill exceeds this (cost.currency)")
        ("gpus", po::value<std::string>(), "comma-separated GPU options for the hardware.gpu axis (default: six cards x 1/2/4/8 GPUs, TP and PP)")
        ("axis", po::value<std::vector<std::string>>()->composing(),
         "PATH=[v1,v2,...] (JSON list), repeatable: replaces the default axes (hardware.gpu stays unless an axis or the scenario places the cards: a pool, a fleet); an object value over a section merges into the base's (engine=[{\"max_num_seqs\":64}] keeps its other fields; null clears one)")
        ("jobs,j", po::value<int>()->default_value(1), "threads (the result does not depend on it)")
        ("json", "print the result as JSON instead of the text")
        ("out", po::value<std::string>(), "also write the JSON result to this file");
    add_progress_options(opts);
    po::variables_map vm;
    try {
      if (!parse_args(argc, argv, opts, vm,
                      "usage: llmsim search SCENARIO.json --target-qps Q [--budget PER_MONTH] [--gpus G1,G2,...] "
                      "[--axis PATH=[...] ...] [--set PATH=VALUE ...] [--vllm-args \"vllm serve ...\" | --sglang-args \"...\"] [--jobs N] [--json] [--out result.json]",
                      &pos)) {
        return kOk;
      }
    } catch (const ConfigError&) {
      refuse_old_json_file(argc, argv);
      throw;
    }
    const Json file = read_scenario_json(vm["scenario"].as<std::string>());  // once: it may be a pipe
    const Json doc = load_scenario(file, vm);
    print_scenario_warnings(spec::scenario_from_json(JsonView(doc, "")));
    analysis::SearchOptions o;
    o.target_qps = vm["target-qps"].as<double>();
    if (vm.count("budget")) o.budget_per_month = vm["budget"].as<double>();
    o.jobs = vm["jobs"].as<int>();
    std::vector<std::string> gpus;
    if (vm.count("gpus")) {
      gpus = split_list(vm["gpus"].as<std::string>());
      if (gpus.empty()) throw ConfigError("--gpus", "must list at least one GPU option");
      for (const auto& g : gpus) spec::parse_gpu_option(g, "--gpus");
    }
    o.axes = analysis::default_search_axes_for(doc, gpus);
    if (vm.count("axis")) {
      std::vector<analysis::SearchAxis> given;
      for (const auto& text : vm["axis"].as<std::vector<std::string>>()) {
        const auto [path, value] = parse_set(text, "--axis");
        if (!value.is_array()) throw ConfigError("--axis " + path, "must be a JSON list of values, got " + value.dump());
        given.push_back({path, std::vector<Json>(value.begin(), value.end())});
      }
      o.axes = analysis::with_default_gpu_axis(std::move(given), gpus, doc);
    }
    {  // the fields the command line sets on top of the file are not overridden by an axis (search.hpp)
      std::vector<std::pair<std::string, Json>> sets;
      const std::string vllm = server_command_line(vm, "vllm-args"), sglang = server_command_line(vm, "sglang-args");
      if (!vllm.empty() || !sglang.empty())
        sets = analysis::server_arg_sets(vllm, sglang, file).sets;
      if (vm.count("set"))
        for (const auto& text : vm["set"].as<std::vector<std::string>>()) sets.push_back(parse_set(text));
      std::vector<std::string> given, notes;
      if (vm.count("axis"))
        for (const auto& text : vm["axis"].as<std::vector<std::string>>()) given.push_back(parse_set(text, "--axis").first);
      o.axes = analysis::search_axes_for_sets(std::move(o.axes), given, sets, notes);
      for (const auto& n : notes) std::cerr << "note: " << n << "\n";
    }
    std::optional<OutputFile> out;  // opened before the work: a missing directory fails now
    if (vm.count("out")) out.emplace(vm["out"].as<std::string>(), "--out");
    ProgressLine progress("search", "configurations", vm);
    o.progress = [&](std::size_t done, std::size_t total) { progress(done, total); };
    CancelScope interrupts;
    o.cancel = interrupts.flag();
    const auto result = analysis::search(doc, o, spec::Catalog::builtin());
    if (out) {
      out->write(analysis::to_json(result).dump(2) + "\n");
      out->commit();
    }
    if (vm.count("json")) print_json(analysis::to_json(result));
    else print_human(result);
    return kOk;
  });
}

}  // namespace

Command command_search() {
  return {"search", "cheapest deployments meeting the SLO at --target-qps: pruned enumeration, capacity per survivor, "
                    "Pareto front and winner",
          run_search};
}

}  // namespace llmsim::cli
