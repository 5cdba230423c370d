// `llmsim check --vllm-result bench.json [--scenario F] [--vllm-args "vllm serve ..." | --sglang-args "..."] --gpu ID`: a
// measured vLLM or SGLang serving benchmark run beside llmsim's prediction for it, metric by metric
// (analysis/vllm_check.hpp). A JSON-lines file (--append-result) gets a table with one row per run, or one run's
// comparison with --run N.
#include <algorithm>
#include <iostream>

#include "common.hpp"
#include "scenario_input.hpp"
#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/memory/memory_plan.hpp"
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
  std::cout << (r.client == "sglang" ? "SGLang bench_serving result: " : "vLLM result: ") << r.source << " (" << (r.date.empty() ? "no date" : r.date) << ", backend "
            << (r.backend.empty() ? "?" : r.backend) << ", " << (r.model_id.empty() ? "model ?" : r.model_id) << ", "
            << r.completed << " completed, request_rate "
            << (r.request_rate ? fmt(*r.request_rate, 2) + "/s" : std::string("inf"))
            << (r.max_concurrency ? ", max_concurrency " + std::to_string(*r.max_concurrency) : std::string()) << ")\n";
  std::cout << "simulated:   " << s.model << " " << s.weights << " (KV " << s.kv_cache << ") on "
            << s.hardware.replicas << " x " << s.hardware.parallel.gpus() << " " << s.hardware.gpu << " (tp "
            << s.hardware.parallel.tp << ", pp " << s.hardware.parallel.pp << "), policy "
            << spec::to_string(s.engine.policy) << ", max_num_seqs " << s.engine.max_num_seqs
            << ", max_num_batched_tokens " << s.engine.max_num_batched_tokens
            << (c.max_model_len > 0 ? ", " + memory::describe_context(c.max_model_len, c.max_model_len_note) : "") << "\n\n";
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

std::string pct(std::optional<double> e) {
  return e ? (*e >= 0 ? "+" : "") + fmt(100 * *e, 1) + "%" : "";
}

/// One row per run of a JSON-lines file: its load, and the headline errors.
void print_runs(const std::vector<analysis::VllmResult>& runs, const std::vector<analysis::VllmCheck>& checks) {
  std::cout << runs.front().source.substr(0, runs.front().source.rfind(" line ")) << ": " << runs.size()
            << " runs, one per line (pick one with --run LINE for its full comparison and notes)\n\n";
  Table t({"line", "rate", "max_conc", "completed", "req/s err", "out tok/s err", "mean TTFT err", "p99 TTFT err",
           "mean TPOT err", "median |err|", "note"});
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    const auto& c = checks[i];
    std::string first_p99;  // p99_ttft_ms, or the highest TTFT percentile the file states
    for (const auto& l : r.latencies)
      if (l.metric == "ttft" && l.statistic == "p" && (first_p99.empty() || l.percentile == 99)) first_p99 = l.key;
    t.add({std::to_string(r.line), r.request_rate ? fmt(*r.request_rate, 3) : std::string("inf"),
           r.max_concurrency ? std::to_string(*r.max_concurrency) : std::string("-"), std::to_string(r.completed),
           pct(analysis::check_error(c, "request_throughput")), pct(analysis::check_error(c, "output_throughput")),
           pct(analysis::check_error(c, "mean_ttft_ms")), first_p99.empty() ? "" : pct(analysis::check_error(c, first_p99)),
           pct(analysis::check_error(c, "mean_tpot_ms")),
           analysis::median_abs_error(c) ? fmt(100 * *analysis::median_abs_error(c), 1) + "%" : "",
           c.fits ? "" : "cannot run: " + c.reason});
  }
  t.print(std::cout);
  std::cout << "\nerror = (predicted - measured) / measured; median |err| over the engine's metrics the run states\n";
  // The notes every run shares (how the file became a scenario, a release hint); the others come with --run.
  std::vector<std::string> common = checks.front().notes;
  for (const auto& c : checks) {
    std::vector<std::string> kept;
    for (const auto& n : common)
      if (std::find(c.notes.begin(), c.notes.end(), n) != c.notes.end()) kept.push_back(n);
    common = std::move(kept);
  }
  if (!common.empty()) {
    std::cout << "\nnotes (every run):\n";
    for (const auto& n : common) std::cout << "  - " << n << "\n";
  }
}

int run_check(int argc, char** argv) {
  return guarded("check", [&] {
    po::options_description opts("llmsim check options");
    opts.add_options()
        ("vllm-result", po::value<std::string>()->required(),
         "result of `vllm bench serve --save-result` (or benchmark_serving.py), one run per line with "
         "--append-result, or SGLang `bench_serving`'s output (JSON lines); - or a pipe streams it")
        ("run", po::value<int>(), "the run on this line of a JSON-lines file (default: every run, one table row each)")
        ("scenario", po::value<std::string>(), "a (partial) scenario to start from: GPU, price, engine knobs")
        ("vllm-args", po::value<std::string>(), "the measured server's command line: \"vllm serve MODEL -tp 2 ...\"")
        ("sglang-args", po::value<std::string>(),
         "or an SGLang server's: \"python -m sglang.launch_server --model-path MODEL --tp 2 ...\" (SGLang's runtime)")
        ("model", po::value<std::string>(), "catalogue id or config.json (overrides the file's model_id)")
        ("gpu", po::value<std::string>(), "the GPU the run used (the file does not record it)")
        ("engine-version", po::value<std::string>(),
         "the vLLM release the run used (0.5.4; or sglang==0.4.9): priced with that release's kernels and scheduler")
        ("warm-cache",
         "the server's prefix cache already held the run's prompts (an earlier run with the same prompts and seed on the "
         "same server): simulated from that warm cache (workload.warm_cache)")
        ("ignore-eos", "the client sent ignore_eos with every request (vllm bench serve --ignore-eos; SGLang's "
                       "bench_serving by default): workload.ignore_eos")
        ("disable-ignore-eos", "the client did not send ignore_eos (bench_serving --disable-ignore-eos; vLLM's client "
                               "by default)")
        ("json", "print the comparison as JSON")
        ("scenario-out", po::value<std::string>(), "also write the simulated scenario here (runs with `llmsim simulate`)");
    po::positional_options_description pos;
    pos.add("vllm-result", 1);
    po::variables_map vm;
    if (!parse_args(argc, argv, opts, vm,
                    "usage: llmsim check --vllm-result BENCH.json --gpu ID [--run LINE] [--vllm-args \"vllm serve MODEL ...\" | --sglang-args \"python -m sglang.launch_server ...\"] "
                    "[--scenario F] [--model ID] [--engine-version V] [--warm-cache] [--ignore-eos | --disable-ignore-eos] [--json] [--scenario-out F]",
                    &pos)) {
      return static_cast<int>(kOk);
    }
    // The result (and --scenario) may be streamed as a scenario is: a file, a pipe or "-", standard input once.
    const std::string result_arg = vm["vllm-result"].as<std::string>();
    if (vm.count("scenario"))
      refuse_second_stdin("--scenario", vm["scenario"].as<std::string>(), "--vllm-result", result_arg);
    const auto results =
        is_stream_argument(result_arg)
            ? analysis::parse_vllm_results(read_scenario_text(result_arg), stream_argument_name(result_arg))
            : analysis::read_vllm_results(result_arg);
    analysis::VllmCheckOptions o;
    if (vm.count("scenario")) o.scenario = read_scenario_json(vm["scenario"].as<std::string>());
    o.vllm_args = server_command_line(vm, "vllm-args");
    o.sglang_args = server_command_line(vm, "sglang-args");
    if (vm.count("model")) o.model = vm["model"].as<std::string>();
    if (vm.count("gpu")) o.gpu = vm["gpu"].as<std::string>();
    if (vm.count("engine-version")) o.engine_version = vm["engine-version"].as<std::string>();
    o.warm_cache = vm.count("warm-cache") > 0;
    if (vm.count("ignore-eos") && vm.count("disable-ignore-eos"))
      throw ConfigError("--ignore-eos", "given with --disable-ignore-eos: the client either sent ignore_eos or did not");
    if (vm.count("ignore-eos")) o.ignore_eos = true;
    if (vm.count("disable-ignore-eos")) o.ignore_eos = false;
    if (results.size() > 1 && !vm.count("run")) {
      if (vm.count("scenario-out"))
        throw ConfigError("--scenario-out", "the file holds " + std::to_string(results.size()) +
                                                " runs: pick the one to write with --run LINE");
      std::vector<analysis::VllmCheck> checks;
      for (const auto& r : results) {
        checks.push_back(analysis::check_vllm_result(r, o));
      }
      if (vm.count("json")) {
        Json all = Json::array();
        for (const auto& c : checks) all.push_back(analysis::to_json(c));
        print_json(Json{{"source", vm["vllm-result"].as<std::string>()}, {"runs", all}});
      } else {
        print_runs(results, checks);
      }
      return static_cast<int>(kOk);
    }
    const auto& result = vm.count("run") ? analysis::pick_vllm_run(results, vm["run"].as<int>()) : results.front();
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
  return {"check",
          "compare a serving benchmark result (vllm bench serve --save-result / --append-result, SGLang bench_serving) "
          "with llmsim's prediction",
          run_check};
}

}  // namespace llmsim::cli
