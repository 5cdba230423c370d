// The result files of RUNS.json (bench_files.hpp). Formats: vllm/benchmarks/latency.py (and
// benchmarks/benchmark_latency.py: {"avg_latency", "latencies", "percentiles"}), throughput.py ({"elapsed_time",
// "num_requests", "total_num_tokens", "requests_per_second", "tokens_per_second"}), serve.py and SGLang's
// bench_serving.py (vllm_result.hpp), SGLang bench_one_batch's result.jsonl (one object per batch size:
// "prefill_latency", "median_decode_latency", "overall_latency", ...), SGLang bench_one_batch_server's result.jsonl (one
// object per batch through the running HTTP server: "run_name", "batch_size", "input_len", "output_len", "latency" [s,
// the whole batch], "output_throughput", "overall_throughput", newer releases also "last_gen_throughput" and "ttft"),
// and llama.cpp's `llama-bench -o json` (an array
// with one object per test: n_prompt, n_gen, n_depth, n_batch, n_ubatch, n_gpu_layers, type_k, build_number,
// model_type, avg_ts = tokens per second over the test's tokens).
#include "bench_files.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "llmsim/core/error.hpp"

namespace llmsim::analysis::bench_files {

const char* describe(FileType t) {
  switch (t) {
    case FileType::vllm_latency: return "a vLLM latency result (vllm bench latency --output-json)";
    case FileType::vllm_throughput: return "a vLLM throughput result (vllm bench throughput --output-json)";
    case FileType::vllm_serve: return "a vLLM serving result (vllm bench serve --save-result)";
    case FileType::sglang_one_batch: return "an SGLang bench_one_batch result (result.jsonl)";
    case FileType::sglang_one_batch_server: return "an SGLang bench_one_batch_server result (result.jsonl)";
    case FileType::sglang_serving: return "an SGLang bench_serving result";
    case FileType::llama_bench: return "a llama-bench -o json result";
    case FileType::unknown: return "unknown";
  }
  return "unknown";
}

const char* const kKnownTypes =
    "vllm bench latency --output-json (avg_latency, latencies, percentiles), vllm bench throughput --output-json "
    "(elapsed_time, requests_per_second), vllm bench serve --save-result (duration, mean_ttft_ms, ...), SGLang "
    "bench_one_batch result.jsonl (prefill_latency, median_decode_latency, overall_latency), SGLang "
    "bench_one_batch_server result.jsonl (batch_size, latency, output_throughput, overall_throughput), SGLang bench_serving "
    "output (JSON lines: mean_e2e_latency_ms, concurrency, ...), llama-bench -o json (an array of tests: n_prompt, "
    "n_gen, avg_ts)";

namespace {
bool has(const Json& j, const char* k) { return j.is_object() && j.contains(k); }
}  // namespace

FileType file_type(const Json& j) {
  if (j.is_array() && !j.empty() && has(j[0], "avg_ts") && has(j[0], "n_prompt")) return FileType::llama_bench;
  if (has(j, "avg_latency") && has(j, "latencies")) return FileType::vllm_latency;
  if (has(j, "elapsed_time") && has(j, "requests_per_second")) return FileType::vllm_throughput;
  if (has(j, "prefill_latency") && has(j, "overall_latency")) return FileType::sglang_one_batch;
  if (has(j, "batch_size") && has(j, "latency") && has(j, "overall_throughput")) return FileType::sglang_one_batch_server;
  if (has(j, "median_e2e_latency_ms") || has(j, "total_output_tokens_retokenized")) return FileType::sglang_serving;
  if (has(j, "duration") && (has(j, "request_throughput") || has(j, "mean_ttft_ms"))) return FileType::vllm_serve;
  return FileType::unknown;
}

FileType expected_type(spec::BenchKind k) {
  switch (k) {
    case spec::BenchKind::vllm_latency: return FileType::vllm_latency;
    case spec::BenchKind::vllm_throughput: return FileType::vllm_throughput;
    case spec::BenchKind::vllm_serve: return FileType::vllm_serve;
    case spec::BenchKind::sglang_one_batch: return FileType::sglang_one_batch;
    case spec::BenchKind::sglang_one_batch_server: return FileType::sglang_one_batch_server;
    case spec::BenchKind::sglang_serving: return FileType::sglang_serving;
    case spec::BenchKind::llama_bench: return FileType::llama_bench;
  }
  return FileType::unknown;
}

namespace {
double positive(const JsonView& v, const std::string& key) {
  const double x = v.number(key);
  if (!(x > 0) || !std::isfinite(x)) v[key].fail("must be a positive number, got " + v[key].json().dump());
  return x;
}
}  // namespace

FileType serve_type(const VllmResult& r) { return r.client == "sglang" ? FileType::sglang_serving : FileType::vllm_serve; }

std::string base_name(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  const auto p = s.rfind('/');
  return p == std::string::npos ? s : s.substr(p + 1);
}

namespace {

void check_same_model(const std::string& file_model, const std::string& cmd_model, const std::string& where) {
  if (file_model.empty() || cmd_model.empty()) return;
  if (base_name(file_model) != base_name(cmd_model)) {
    throw ConfigError(where + ".command", "the command runs model '" + cmd_model + "' but the result file is of '" +
                                              file_model + "' (command/file mismatch)");
  }
}


/// One llama-bench test: prompt processing (n_prompt > 0, n_gen 0), generation (n_gen > 0 after n_depth tokens of
/// context) or both (-pg). avg_ts is tokens per second over the test's tokens.
void read_llama_bench(BenchRun& run, const JsonView& v, const spec::BenchCommand& cmd) {
  (void)cmd;
  const auto n_prompt = v.integer_or("n_prompt", 0), n_gen = v.integer_or("n_gen", 0);
  const auto n_depth = v.integer_or("n_depth", 0);
  if (n_prompt < 0 || n_gen < 0 || n_depth < 0 || n_prompt + n_gen == 0)
    v["n_prompt"].fail("expected n_prompt >= 0 and n_gen >= 0, not both 0; got " + std::to_string(n_prompt) + " and " +
                       std::to_string(n_gen));
  run.batch = 1;
  run.input_len = n_prompt > 0 ? n_prompt : std::max<std::int64_t>(1, n_depth);
  run.output_len = n_gen;
  run.requests = 1;
  const double ts = positive(v, "avg_ts");
  run.measured.push_back({n_gen == 0 ? "pp_tokens_per_s" : n_prompt == 0 ? "tg_tokens_per_s" : "pg_tokens_per_s", ts});
  if (n_depth > 0 && n_prompt > 0)
    run.notes_out.push_back("n_depth " + std::to_string(n_depth) + ": the prompt test's earlier context is not modelled");
}

/// One batch of bench_one_batch_server: batch_size requests of input_len random tokens sent at once to the running
/// server, timed from send to the last output ("latency", the whole batch). Its "output_throughput" changed meaning:
/// releases that time the first token (writing "ttft" or "last_gen_throughput") divide by the decode phase,
/// batch x output / (latency - TTFT); the oldest divide by the whole latency, which repeats "latency" and is not
/// read. "overall_throughput" is batch x (input + output) / latency, "latency" again: not read either.
void read_one_batch_server(BenchRun& run, const JsonView& v, const spec::BenchCommand& cmd) {
  run.batch = v.integer("batch_size");
  run.input_len = v.integer("input_len");
  run.output_len = v.integer("output_len");
  if (run.batch < 1 || run.input_len < 1 || run.output_len < 1)
    v["batch_size"].fail("expected batch_size, input_len and output_len >= 1, got " + std::to_string(run.batch) + ", " +
                         std::to_string(run.input_len) + " and " + std::to_string(run.output_len));
  // The command may list several values (--batch-size 1 16 64), one line each: the file's must be among them.
  for (const auto& [key, flag] : {std::pair<const char*, const char*>{"batch_size", "--batch-size"},
                                  {"input_len", "--input-len"}, {"output_len", "--output-len"}}) {
    if (!cmd.has(key)) continue;
    const std::string file_value = std::to_string(v.integer(key));
    if ((" " + cmd.flags.at(key) + " ").find(" " + file_value + " ") == std::string::npos)
      throw ConfigError(run.name + ".command", std::string(flag) + " " + cmd.flags.at(key) + " but the file's " + key +
                                                   " is " + file_value + " (command/file mismatch)");
  }
  const double latency = positive(v, "latency");
  run.measured.push_back({"latency", latency});
  run.requests = run.batch;
  if (v.has("ttft")) run.measured.push_back({"ttft", positive(v, "ttft")});
  if (v.has("output_throughput") && run.output_len > 1) {
    const double out = positive(v, "output_throughput");
    const double whole = static_cast<double>(run.batch * run.output_len) / latency;
    // Rounded to 2 decimals, the latency to 4: 2% tells the two definitions apart.
    if (v.has("ttft") || v.has("last_gen_throughput") || std::abs(out - whole) > 0.02 * whole)
      run.measured.push_back({"decode_throughput", out});
    else
      run.notes_out.push_back("output_throughput is batch x output / latency (an older bench_one_batch_server): the "
                              "latency again, not compared twice");
  }
}

}  // namespace

void read_measured(BenchRun& run, const Json& doc, FileType type, const spec::BenchCommand& cmd) {
  const JsonView v(doc, run.name);
  switch (type) {
    case FileType::vllm_latency: {
      run.measured.push_back({"avg_latency", positive(v, "avg_latency")});
      const auto n = static_cast<std::int64_t>(doc["latencies"].is_array() ? doc["latencies"].size() : 0);
      if (cmd.has("num_iters") && n != cmd.integer("num_iters", 0)) {
        throw ConfigError(run.name + ".command", "--num-iters " + cmd.flags.at("num_iters") + " but the file holds " +
                                                     std::to_string(n) + " latencies (command/file mismatch)");
      }
      if (cmd.integer("n", 1) != 1 || cmd.has("use_beam_search")) {
        throw ConfigError(run.name + ".command", "--n > 1 / --use-beam-search: llmsim models one sequence per prompt");
      }
      break;
    }
    case FileType::vllm_throughput: {
      const double elapsed = positive(v, "elapsed_time");
      const auto n = v.integer("num_requests");
      run.measured.push_back({"requests_per_second", static_cast<double>(n) / elapsed});
      if (cmd.has("num_prompts") && n != cmd.integer("num_prompts", 0)) {
        throw ConfigError(run.name + ".command", "--num-prompts " + cmd.flags.at("num_prompts") + " but the file ran " +
                                                     std::to_string(n) + " requests (command/file mismatch)");
      }
      if (!cmd.has("input_len") || !cmd.has("output_len")) {
        throw ConfigError(run.name + ".command", "a throughput run over a dataset: its prompt and output lengths are "
                                                 "not in the file; run it with --input-len and --output-len");
      }
      run.requests = n;
      run.batch = n;
      run.input_len = cmd.integer("input_len", 0);
      run.output_len = cmd.integer("output_len", 0);
      break;
    }
    case FileType::vllm_serve:
    case FileType::sglang_serving: {
      if (cmd.has("num_prompts") && run.serve->num_prompts && run.serve->num_prompts != cmd.integer("num_prompts", 0)) {
        throw ConfigError(run.name + ".command", "--num-prompts " + cmd.flags.at("num_prompts") + " but the file ran " +
                                                     std::to_string(run.serve->num_prompts) + " (command/file mismatch)");
      }
      check_same_model(run.serve->model_id, cmd.engine.model, run.name);
      for (const auto& s : run.serve->scalars)
        if (s.key == "output_throughput" && s.value > 0) run.measured.push_back({s.key, s.value});
      // Mean TTFT and TPOT. A file with no mean of them gives its medians instead, TTFT's and ITL's (the decode step):
      // SGLang's bench_serving lines of December 2024 (0.4.0) hold only those (data/calibration_runs, H200).
      auto has_mean = [&](const char* metric) {
        return std::any_of(run.serve->latencies.begin(), run.serve->latencies.end(), [&](const VllmLatencyStat& l) {
          return l.statistic == "mean" && l.metric == metric && l.value_ms > 0;
        });
      };
      const bool ttft_median = !has_mean("ttft"), itl_median = !has_mean("tpot") && !has_mean("itl");
      for (const auto& l : run.serve->latencies) {
        const bool mean = l.statistic == "mean" && (l.metric == "ttft" || l.metric == "tpot");
        const bool median = l.statistic == "median" && ((l.metric == "ttft" && ttft_median) ||
                                                        (l.metric == "itl" && itl_median));
        if ((mean || median) && l.value_ms > 0) run.measured.push_back({l.key, l.value_ms});
      }
      run.requests = run.serve->completed;
      break;
    }
    case FileType::sglang_one_batch: {
      run.batch = v.integer("batch_size");
      run.input_len = v.integer("input_len");
      run.output_len = v.integer("output_len");
      run.measured.push_back({"prefill_latency", positive(v, "prefill_latency")});
      if (run.output_len > 2) run.measured.push_back({"median_decode_latency", positive(v, "median_decode_latency")});
      run.measured.push_back({"overall_latency", positive(v, "overall_latency")});
      break;
    }
    case FileType::sglang_one_batch_server: read_one_batch_server(run, v, cmd); break;
    case FileType::llama_bench: read_llama_bench(run, v, cmd); break;
    default: break;
  }
  if (run.measured.empty()) throw ConfigError(run.name, "the file holds no number llmsim can predict");
}

/// The result file's documents: one JSON value, or JSON lines (SGLang appends one object per run).
std::vector<Json> documents(const std::string& text, const std::string& where) {
  try {
    return {parse_json(text, where)};
  } catch (const ConfigError&) {
    std::vector<Json> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      out.push_back(parse_json(line, where));  // rethrows the line's JSON error
    }
    if (out.size() < 2) throw;
    return out;
  }
}


}  // namespace llmsim::analysis::bench_files
