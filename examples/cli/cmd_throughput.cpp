// `llmsim throughput`: the maximum throughput of a deployment, as `vllm bench throughput` measures it (every
// request at t = 0, served to the end), with the batch size and KV use it reached.
#include <iostream>

#include "common.hpp"
#include "llmsim/analysis/throughput.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::cli {

namespace {

std::string rate(const Json& v, int decimals = 1) { return v.is_null() ? "-" : fmt(v.get<double>(), decimals); }

void print_human(const analysis::ThroughputResult& r) {
  const Json j = analysis::to_json(r);
  const auto& sc = r.scenario.scenario;
  std::cout << "throughput: " << (sc.name.empty() ? r.scenario.model.id : sc.name) << " | " << r.scenario.model.id
            << " " << r.scenario.quant.weights.id << " on " << j["cards"].get<std::string>() << " ("
            << j["num_gpus"].get<int>() << " GPUs)\n"
            << "engine: " << j["engine"].get<std::string>() << ", max_num_seqs " << sc.engine.max_num_seqs
            << ", max_num_batched_tokens " << sc.engine.max_num_batched_tokens << "\n";
  if (!r.fits) {
    std::cout << "cannot run: " << r.reason << "\n";
    return;
  }
  const auto& s = r.summary;
  const Json& t = j["throughput"];
  const Json& sat = j["saturation"];
  std::cout << sc.workload.num_requests << " requests, all at t = 0, served in " << fmt(s.duration_s, 1) << " s\n\n";
  Table tab({"", "req/s", "input tok/s", "output tok/s", "total tok/s"});
  tab.add({"achieved (requests / elapsed)", rate(t["requests_per_s"], 2), rate(t["input_tokens_per_s"]),
           rate(t["output_tokens_per_s"]), rate(t["total_tokens_per_s"])});
  tab.add({"saturation (while requests waited)", rate(sat["requests_per_s"], 2), rate(sat["input_tokens_per_s"]),
           rate(sat["output_tokens_per_s"]), rate(sat["total_tokens_per_s"])});
  tab.print(std::cout);
  std::cout << "\nthe achieved rate is what `vllm bench throughput` prints; saturation held for "
            << fmt(100 * s.saturation.busy_fraction, 0) << "% of the busy time (the rest is the last batch draining)\n";
  std::cout << "batch size reached: max " << s.batch.max_seqs << " sequences, " << rate(sat["mean_batch"])
            << " on average while saturated; KV cache " << s.kv.capacity_tokens << " tokens/replica, peak "
            << fmt(100 * s.kv.peak_used_fraction, 1) << "%, mean " << fmt(100 * s.kv.mean_used_fraction, 1)
            << "%; preemptions " << s.preemptions << "\n";
  const Json& c = j["cost"];
  std::cout << "cost: $" << fmt(s.cost.per_hour, 2) << "/h; "
            << (c["per_mtok_output"].is_null() ? std::string("-") : "$" + fmt(c["per_mtok_output"].get<double>(), 3))
            << " per million output tokens at this throughput ("
            << (c["per_mtok_total"].is_null() ? std::string("-") : "$" + fmt(c["per_mtok_total"].get<double>(), 3))
            << " per million total)\n";
}

int run_throughput(int argc, char** argv) {
  return guarded("throughput", [&] {
    po::options_description opts("llmsim throughput options");
    po::positional_options_description pos;
    add_scenario_options(opts, pos, "scenario JSON file (its arrivals are replaced: all at t = 0)");
    opts.add_options()
        ("json", "print the result as JSON")
        ("num-requests", po::value<long long>(), "requests at t = 0 (default: the scenario's workload.num_requests)")
        ("quant", po::value<std::string>(), "override quant.weights");
    add_gpu_options(opts);
    po::variables_map vm;
    if (!parse_args(argc, argv, opts, vm,
                    "usage: llmsim throughput FILE.json [--json] [--vllm-args \"vllm serve ...\" | --sglang-args \"...\"] [--num-requests N] [--gpu G] [--price USD] "
                    "[--quant Q] [--set PATH=VALUE]",
                    &pos)) {
      return kOk;
    }
    Json doc = load_scenario(vm);
    if (vm.count("quant")) spec::set_json_path(doc, "quant.weights", vm["quant"].as<std::string>());
    spec::Scenario scenario = spec::scenario_from_json(JsonView(doc, ""));
    apply_gpu_options(scenario, vm);
    print_scenario_warnings(scenario);
    analysis::ThroughputOptions options;
    if (vm.count("num-requests")) {
      const long long n = vm["num-requests"].as<long long>();
      if (n < 1) throw ConfigError("--num-requests", "must be >= 1, got " + std::to_string(n));
      options.num_requests = n;
    }
    const auto result = analysis::max_throughput(scenario, spec::Catalog::builtin(), options);
    if (vm.count("json")) print_json(analysis::to_json(result));
    else print_human(result);
    return kOk;
  });
}

}  // namespace

Command command_throughput() {
  return {"throughput", "maximum throughput (vllm bench throughput: all requests at t = 0), batch size and KV reached",
          run_throughput};
}

}  // namespace llmsim::cli
