// `llmsim check --vllm-result bench.json [--scenario F | --vllm-args "vllm serve ..."] --gpu ID`: a measured
// vLLM benchmark run beside llmsim's prediction for it, metric by metric (analysis/vllm_check.hpp).
#include <iostream>

#include "common.hpp"
#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/core/error.hpp"
#include "output_file.hpp"
#include "signals.hpp"

namespace llmsim::cli {
namespace {

std::string shown(const std::string& key, double v) {
  if (key == "completed" || key == "failed" || (key.rfind("total_", 0) == 0 && key.find("throughput") == std::string::npos)) {
    return fmt(v, 0);
  }
  return fmt(v, 2);
}

void print_human(const analysis::VllmResult& r, const analysis::VllmCheck& c) {
  const auto& s = c.scenario;
  std::cout << "vLLM result: " << r.source << " (" << (r.date.empty() ? "no date" : r.date) << ", backend "
            << (r.backend.empty() ? "?" : r.backend) << ", " << (r.model_id.empty() ? "model ?" : r.model_id) << ", "
            << r.completed << " completed, request_rate "
            << (r.request_rate ? fmt(*r.request_rate, 2) + "/s" : std::string("inf"))
            << (r.max_concurrency ? ", max_concurrency " + std::to_string(*r.max_concurrency) : std::string()) << ")\n";
  std::cout << "simulated:   " << s.model << " " << s.weights << " (KV " << s.kv_cache << ") on "
            << s.hardware.replicas << " x " << s.hardware.parallel.gpus() << " " << s.hardware.gpu << " (tp "
            << s.hardware.parallel.tp << ", pp " << s.hardware.parallel.pp << "), policy "
            << spec::to_string(s.engine.policy) << ", max_num_seqs " << s.engine.max_num_seqs
            << ", max_num_batched_tokens " << s.engine.max_num_batched_tokens << "\n\n";
  if (!c.fits) std::cout << "cannot run: " << c.reason << "\n\n";
  Table t({"metric", "measured", "predicted", "error", "note"});
  for (const auto& row : c.rows) {
    t.add({row.key, shown(row.key, row.measured), row.predicted ? shown(row.key, *row.predicted) : "n/a",
           row.rel_error ? (*row.rel_error >= 0 ? "+" : "") + fmt(100 * *row.rel_error, 1) + "%" : "",
           row.note});
  }
  t.print(std::cout);
  if (!c.notes.empty()) {
    std::cout << "\nnotes:\n";
    for (const auto& n : c.notes) std::cout << "  - " << n << "\n";
  }
}

int run(int argc, char** argv) {
  return guarded("check", [&] {
    po::options_description opts("llmsim check options");
    opts.add_options()
        ("vllm-result", po::value<std::string>()->required(),
         "result JSON of `vllm bench serve --save-result` (or benchmarks/benchmark_serving.py --save-result)")
        ("scenario", po::value<std::string>(), "a (partial) scenario to start from: GPU, price, engine knobs")
        ("vllm-args", po::value<std::string>(), "the measured server's command line: \"vllm serve MODEL -tp 2 ...\"")
        ("model", po::value<std::string>(), "catalogue id or config.json (overrides the file's model_id)")
        ("gpu", po::value<std::string>(), "the GPU the run used (the file does not record it)")
        ("engine-version", po::value<std::string>(),
         "the vLLM release the run used (0.5.4; or sglang==0.4.9): priced with that release's kernels and scheduler")
        ("json", "print the comparison as JSON")
        ("scenario-out", po::value<std::string>(), "also write the simulated scenario here (runs with `llmsim simulate`)");
    po::positional_options_description pos;
    pos.add("vllm-result", 1);
    po::variables_map vm;
    if (!parse_args(argc, argv, opts, vm,
                    "usage: llmsim check --vllm-result BENCH.json --gpu ID [--vllm-args \"vllm serve MODEL ...\"] "
                    "[--scenario F] [--model ID] [--json] [--scenario-out F]",
                    &pos)) {
      return static_cast<int>(kOk);
    }
    const auto result = analysis::read_vllm_result(vm["vllm-result"].as<std::string>());
    analysis::VllmCheckOptions o;
    if (vm.count("scenario")) o.scenario = read_json_file(vm["scenario"].as<std::string>());
    if (vm.count("vllm-args")) o.vllm_args = vm["vllm-args"].as<std::string>();
    if (vm.count("model")) o.model = vm["model"].as<std::string>();
    if (vm.count("gpu")) o.gpu = vm["gpu"].as<std::string>();
    if (vm.count("engine-version")) o.engine_version = vm["engine-version"].as<std::string>();
    const auto check = analysis::check_vllm_result(result, o);
    if (vm.count("scenario-out")) {
      // Through a temporary file renamed over the target, as every output file: a full disk or a kill mid-write
      // leaves the previous file whole, never a truncated scenario.
      CancelScope interrupts;
      OutputFile f(vm["scenario-out"].as<std::string>(), "--scenario-out");
      f.write(spec::to_json(check.scenario).dump(2) + "\n");
      f.commit();
    }
    if (vm.count("json")) print_json(analysis::to_json(check));
    else print_human(result, check);
    return static_cast<int>(kOk);
  });
}

}  // namespace

Command command_check() {
  return {"check", "compare a vLLM benchmark result (vllm bench serve --save-result) with llmsim's prediction", run};
}

}  // namespace llmsim::cli
