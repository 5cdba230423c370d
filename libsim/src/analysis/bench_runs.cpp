// RUNS.json and the benchmark result files it names. Result formats: vllm/benchmarks/latency.py (and
// benchmarks/benchmark_latency.py: {"avg_latency", "latencies", "percentiles"}), throughput.py ({"elapsed_time",
// "num_requests", "total_num_tokens", "requests_per_second", "tokens_per_second"}), serve.py (vllm_result.hpp),
// SGLang bench_one_batch's result.jsonl (one object per batch size: "prefill_latency", "median_decode_latency",
// "overall_latency", ...).
#include "llmsim/analysis/bench_runs.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/analysis/static_batch.hpp"
#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/input_file.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::analysis {

namespace {

namespace fs = std::filesystem;

/// What a result file is, from its keys (the tools write no format tag).
enum class FileType { vllm_latency, vllm_throughput, vllm_serve, sglang_one_batch, sglang_serving, llama_bench, unknown };

const char* describe(FileType t) {
  switch (t) {
    case FileType::vllm_latency: return "a vLLM latency result (vllm bench latency --output-json)";
    case FileType::vllm_throughput: return "a vLLM throughput result (vllm bench throughput --output-json)";
    case FileType::vllm_serve: return "a vLLM serving result (vllm bench serve --save-result)";
    case FileType::sglang_one_batch: return "an SGLang bench_one_batch result (result.jsonl)";
    case FileType::sglang_serving: return "an SGLang bench_serving result";
    case FileType::llama_bench: return "a llama-bench -o json result";
    case FileType::unknown: return "unknown";
  }
  return "unknown";
}

constexpr const char* kKnownTypes =
    "vllm bench latency --output-json (avg_latency, latencies, percentiles), vllm bench throughput --output-json "
    "(elapsed_time, requests_per_second), vllm bench serve --save-result (duration, mean_ttft_ms, ...), SGLang "
    "bench_one_batch result.jsonl (prefill_latency, median_decode_latency, overall_latency)";

bool has(const Json& j, const char* k) { return j.is_object() && j.contains(k); }

FileType file_type(const Json& j) {
  if (j.is_array() && !j.empty() && has(j[0], "avg_ts") && has(j[0], "n_prompt")) return FileType::llama_bench;
  if (has(j, "avg_latency") && has(j, "latencies")) return FileType::vllm_latency;
  if (has(j, "elapsed_time") && has(j, "requests_per_second")) return FileType::vllm_throughput;
  if (has(j, "prefill_latency") && has(j, "overall_latency")) return FileType::sglang_one_batch;
  if (has(j, "median_e2e_latency_ms") || (has(j, "backend") && j["backend"].is_string() &&
                                          j["backend"].get<std::string>().rfind("sglang", 0) == 0))
    return FileType::sglang_serving;
  if (has(j, "duration") && (has(j, "request_throughput") || has(j, "mean_ttft_ms"))) return FileType::vllm_serve;
  return FileType::unknown;
}

FileType expected_type(spec::BenchKind k) {
  switch (k) {
    case spec::BenchKind::vllm_latency: return FileType::vllm_latency;
    case spec::BenchKind::vllm_throughput: return FileType::vllm_throughput;
    case spec::BenchKind::vllm_serve: return FileType::vllm_serve;
    case spec::BenchKind::sglang_one_batch: return FileType::sglang_one_batch;
  }
  return FileType::unknown;
}

double positive(const JsonView& v, const std::string& key) {
  const double x = v.number(key);
  if (!(x > 0) || !std::isfinite(x)) v[key].fail("must be a positive number, got " + v[key].json().dump());
  return x;
}

std::string base_name(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  const auto p = s.rfind('/');
  return p == std::string::npos ? s : s.substr(p + 1);
}

/// The model a run names: its "model", else the command's, matched to a catalogue id by name.
std::string model_of(const std::string& given, const std::string& hf, const std::string& where,
                     const spec::Catalog& catalog) {
  if (!given.empty()) return given;
  if (hf.empty()) throw ConfigError(where + ".model", "the command names no model (--model); set \"model\"");
  if (const auto id = catalogue_model_for(hf, catalog)) return *id;
  if (hf.find('/') == std::string::npos || hf.ends_with(".json")) return hf;
  throw ConfigError(where + ".model", "'" + hf + "' is not a catalogue model; set \"model\" to a catalogue id "
                                      "(llmsim catalog models) or the checkpoint's config.json");
}

void check_same_model(const std::string& file_model, const std::string& cmd_model, const std::string& where) {
  if (file_model.empty() || cmd_model.empty()) return;
  if (base_name(file_model) != base_name(cmd_model)) {
    throw ConfigError(where + ".command", "the command runs model '" + cmd_model + "' but the result file is of '" +
                                              file_model + "' (command/file mismatch)");
  }
}

}  // namespace

namespace {

void read_measured(BenchRun& run, const Json& doc, FileType type, const std::string& text,
                   const spec::BenchCommand& cmd) {
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
    case FileType::vllm_serve: {
      run.serve = parse_vllm_result(text, run.name);
      if (cmd.has("num_prompts") && run.serve->num_prompts && run.serve->num_prompts != cmd.integer("num_prompts", 0)) {
        throw ConfigError(run.name + ".command", "--num-prompts " + cmd.flags.at("num_prompts") + " but the file ran " +
                                                     std::to_string(run.serve->num_prompts) + " (command/file mismatch)");
      }
      check_same_model(run.serve->model_id, cmd.engine.model, run.name);
      for (const auto& s : run.serve->scalars)
        if (s.key == "output_throughput" && s.value > 0) run.measured.push_back({s.key, s.value});
      for (const auto& l : run.serve->latencies)
        if (l.statistic == "mean" && (l.metric == "ttft" || l.metric == "tpot") && l.value_ms > 0)
          run.measured.push_back({l.key, l.value_ms});
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

}  // namespace

namespace {

/// A key of the run, else RUNS.json's top-level default of it (the corpus format sets engine, model, weights, tp ...
/// once for all its runs).
struct Field {
  const JsonView& run;
  const JsonView& root;
  bool has(const char* k) const { return run.has(k) || root.has(k); }
  JsonView operator[](const char* k) const { return run.has(k) ? run[k] : root[k]; }
  std::string string_or(const char* k, const std::string& fallback) const {
    return run.has(k) ? run.string(k) : root.has(k) ? root.string(k) : fallback;
  }
};

/// The first word of a weights description ("fp8 (native block FP8)" -> "fp8"), if it names a weight format.
std::optional<std::string> weights_id(const std::string& w) {
  std::string id = w.substr(0, w.find_first_of(" (/"));
  if (id == "bf16" || id == "bfloat16" || id == "fp16" || id == "float16") return std::nullopt;  // --dtype's business
  try {
    (void)spec::weight_format(id);
    return id;
  } catch (const ConfigError&) {
    return std::nullopt;
  }
}

/// Command > run key > default; a run key that contradicts the command is a mismatch.
std::int64_t length_of(const spec::BenchCommand& cmd, const Field& f, const char* flag, const char* key,
                       std::int64_t fallback, const std::string& where) {
  if (cmd.has(flag) && f.run.has(key) && cmd.integer(flag, 0) != f.run.integer(key)) {
    std::string dashed = flag;
    std::replace(dashed.begin(), dashed.end(), '_', '-');
    throw ConfigError(where + "." + key, std::to_string(f.run.integer(key)) + " but the command says --" + dashed +
                                             " " + cmd.flags.at(flag) + " (command/run mismatch)");
  }
  if (cmd.has(flag)) return cmd.integer(flag, fallback);
  return f.run.has(key) ? f.run.integer(key) : fallback;
}

void read_run(const JsonView& r, const JsonView& root, std::size_t i, const fs::path& dir,
              const std::string& gpu_default, const std::string& gpu_override, const spec::Catalog& catalog,
              std::vector<BenchRun>& out) {
  r.expect_object();
  r.allow_only({"result", "command", "server_command", "model", "hf_model", "engine", "engine_version", "vllm_version",
                "runtime", "gpu", "notes", "weights", "kv_cache_dtype", "tp", "pp", "gpus", "replicas", "batch",
                "input_len", "output_len", "num_prompts", "request_rate", "duration_s", "kind", "task", "select",
                "client_parts", "table"});
  const Field f{r, root};
  const std::string result = r.string("result");
  const std::string label = "runs[" + std::to_string(i) + "] (" + result + ")";
  BenchRun base;
  base.result = result;
  base.name = label;
  if (!r.has("command")) throw ConfigError(label + ".command", "missing: the command line that wrote the file");
  base.command = r.string("command");
  base.server_command = r.string_or("server_command", "");
  base.notes = r.string_or("notes", "");
  base.gpu = gpu_override.empty() ? r.string_or("gpu", gpu_default) : gpu_override;
  if (base.gpu.empty()) throw ConfigError(label + ".gpu", "no GPU: set \"gpu\" in RUNS.json or pass --gpu");
  if (r.has("select")) r["select"].fail("picks rows of a multi-record file: not read by calibrate-fit yet");
  if (f.has("replicas") && f["replicas"].as_integer() > 1)
    f["replicas"].fail("a profile is fitted from one engine's runs; this run spread over several replicas");
  const auto cmd = spec::parse_bench_command(base.command, label + ".command");
  base.kind = cmd.kind;
  base.engine = f.string_or("engine", cmd.kind == spec::BenchKind::sglang_one_batch ? "sglang" : "vllm");
  base.engine_version = r.has("engine_version") || r.has("vllm_version")
                            ? r.string_or("engine_version", r.string_or("vllm_version", ""))
                            : root.string_or("engine_version", root.string_or("vllm_version", ""));
  // The runtime: as given, else the engine's release (engine.runtime "vllm==0.5.4" picks its runtime and scheduler).
  std::string runtime_text;
  if (f.has("runtime")) {
    runtime_text = f["runtime"].as_string();
    base.runtime = spec::parse_runtime(runtime_text, label + ".runtime");
    base.runtime_from = "runtime given";
  } else if (!base.engine_version.empty()) {
    runtime_text = base.engine + "==" + base.engine_version;
    try {
      base.runtime = spec::parse_runtime(runtime_text, label + ".engine_version");
    } catch (const ConfigError& e) {
      throw ConfigError(label + ".engine_version", std::string(e.what()) + "; or set \"runtime\"");
    }
    base.runtime_from = base.engine + " " + base.engine_version;
  } else {
    base.runtime = base.engine == "sglang" ? spec::Runtime::sglang : spec::Runtime::vllm_v1;
    runtime_text = spec::to_string(base.runtime);
    base.runtime_from = "no engine version given: " + runtime_text + " assumed";
    base.notes_out.push_back(base.runtime_from);
  }
  // The server's arguments (serve runs), else the engine arguments of the command itself.
  spec::VllmServeArgs engine = cmd.engine;
  if (!base.server_command.empty() && cmd.kind == spec::BenchKind::vllm_serve)
    engine = spec::parse_vllm_serve_args(base.server_command);
  if (!engine.not_modelled.empty()) {
    std::string s;
    for (const auto& a : engine.not_modelled) s += (s.empty() ? "" : ", ") + a;
    base.notes_out.push_back("engine arguments llmsim does not model: " + s);
  }
  Json args = engine.engine_args;
  if (f.has("tp") && !args.contains("tensor_parallel_size")) args["tensor_parallel_size"] = f["tp"].as_integer();
  if (f.has("pp") && !args.contains("pipeline_parallel_size")) args["pipeline_parallel_size"] = f["pp"].as_integer();
  if (f.has("kv_cache_dtype") && !args.contains("kv_cache_dtype") && f.string_or("kv_cache_dtype", "auto") != "auto")
    args["kv_cache_dtype"] = f.string_or("kv_cache_dtype", "");
  if (f.has("weights") && !args.contains("quantization"))
    if (const auto w = weights_id(f.string_or("weights", ""))) args["quant"] = {{"weights", *w}};

  const std::string text = read_text_file((dir / result).string(), label + ".result");
  std::vector<Json> docs;
  if (text.find("\"mean_ttft_ms\"") != std::string::npos || text.find("\"request_throughput\"") != std::string::npos) {
    docs.push_back(Json::object({{"duration", 1}, {"request_throughput", 1}}));  // typed below by parse_vllm_result
  } else {
    docs = documents(text, label);
  }
  for (std::size_t k = 0; k < docs.size(); ++k) {
    const FileType type = file_type(docs[k]);
    if (type == FileType::unknown) {
      throw ConfigError(label + ".result", "unknown file type: not a benchmark result llmsim reads (" +
                                               std::string(kKnownTypes) + ")");
    }
    if (type != expected_type(cmd.kind)) {
      throw ConfigError(label + ".result", std::string("the file is ") + describe(type) + " but the command is '" +
                                               spec::to_string(cmd.kind) + "' (command/file mismatch)");
    }
    BenchRun run = base;
    if (docs.size() > 1) run.name = label + " line " + std::to_string(k + 1);
    read_measured(run, docs[k], type, text, cmd);
    if (run.kind == spec::BenchKind::vllm_latency) {
      run.batch = length_of(cmd, f, "batch_size", "batch", 8, label);
      run.input_len = length_of(cmd, f, "input_len", "input_len", 32, label);
      run.output_len = length_of(cmd, f, "output_len", "output_len", 128, label);
    }
    std::string hf = engine.model.empty() && run.serve ? run.serve->model_id : engine.model;
    if (hf.empty()) hf = f.string_or("hf_model", "");
    run.model = model_of(f.string_or("model", ""), hf, label, catalog);
    Json s = args;
    s["model"] = run.model;
    s["hardware"] = {{"gpu", run.gpu}};
    s["engine"] = {{"runtime", runtime_text}};
    if (run.batch > 0 && run.kind != spec::BenchKind::vllm_serve && !s.contains("max_num_seqs"))
      s["engine"]["max_num_seqs"] = std::max<std::int64_t>(run.batch, 1);
    run.scenario = std::move(s);
    out.push_back(std::move(run));
  }
}

}  // namespace

BenchRuns parse_bench_runs(std::string_view text, const std::string& path, const std::string& gpu_override,
                           bool skip_unreadable) {
  const Json doc = parse_json(text, path);
  const JsonView root(doc, "");
  root.expect_object();
  root.allow_only({"format", "version", "gpu", "source", "runs", "notes", "engine", "engine_version", "vllm_version",
                   "runtime", "model", "hf_model", "weights", "kv_cache_dtype", "tp", "pp", "gpus", "table"});
  if (root.has("format") && root.string("format") != kRunsFormat)
    root["format"].fail(std::string("expected \"") + kRunsFormat + "\", got \"" + root.string("format") + "\"");
  if (root.has("version") && root.integer("version") > kRunsVersion)
    root["version"].fail("version " + std::to_string(root.integer("version")) + " is newer than this llmsim reads (" +
                         std::to_string(kRunsVersion) + ")");
  BenchRuns out;
  out.path = path;
  out.gpu = gpu_override.empty() ? root.string_or("gpu", "") : gpu_override;
  if (root.has("source")) out.source = root["source"].json();
  const auto runs = root["runs"].elements();
  if (runs.empty()) root["runs"].fail("no runs: nothing to fit");
  const fs::path dir = fs::path(path).parent_path();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string name = "runs[" + std::to_string(i) + "]";
    try {
      try {
        read_run(runs[i], root, i, dir, out.gpu, gpu_override, spec::Catalog::builtin(), out.runs);
      } catch (const ConfigError& e) {
        // Errors of the command-line parsers name the flag, not the run: add it.
        if (std::string(e.what()).rfind(name, 0) == 0) throw;
        const std::string result = runs[i].is_object() && runs[i].has("result") ? runs[i]["result"].json().dump() : "";
        throw ConfigError(name + (result.empty() ? "" : " (" + result.substr(1, result.size() - 2) + ")"), e.what());
      }
    } catch (const ConfigError& e) {
      if (!skip_unreadable) throw;
      out.skipped.push_back({name, e.what()});
    }
  }
  return out;
}

BenchRuns read_bench_runs(const std::string& path, const std::string& gpu_override, bool skip_unreadable) {
  return parse_bench_runs(read_text_file(path, "runs file"), path, gpu_override, skip_unreadable);
}

BenchPredictor::BenchPredictor(const BenchRun& run, const spec::Catalog& catalog) : run_(&run), catalog_(&catalog) {
  try {
    if (run.kind == spec::BenchKind::vllm_serve) {
      std::vector<std::string> notes;
      VllmCheckOptions o;
      o.scenario = run.scenario;
      o.model = run.model;
      resolved_ = spec::resolve(vllm_check_scenario(*run.serve, o, catalog, notes), catalog);
    } else {
      resolved_ = spec::resolve(spec::scenario_from_json(JsonView(run.scenario, "")), catalog);
    }
  } catch (const ConfigError& e) {
    throw ConfigError(run.name, e.what());
  }
  if (run.kind == spec::BenchKind::vllm_serve) return;
  if (run.input_len + run.output_len > resolved_.max_model_len) {
    throw ConfigError(run.name, "input_len + output_len = " + std::to_string(run.input_len + run.output_len) +
                                    " tokens exceeds max_model_len " + std::to_string(resolved_.max_model_len));
  }
  const auto plan = memory::plan_memory(resolved_);
  if (!plan.fits) throw ConfigError(run.name, "does not fit in memory on " + resolved_.gpu.id + ": " + plan.reason);
  const std::int64_t need = run.batch * (run.input_len + run.output_len);
  if (run.kind != spec::BenchKind::vllm_throughput && need > plan.kv_capacity_tokens) {
    throw ConfigError(run.name, "does not fit in memory on " + resolved_.gpu.id + ": the batch's KV cache needs " +
                                    std::to_string(need) + " tokens (batch " + std::to_string(run.batch) + " x " +
                                    std::to_string(run.input_len + run.output_len) + ") but the pool holds " +
                                    std::to_string(plan.kv_capacity_tokens));
  }
}

std::vector<double> BenchPredictor::predict(const perf::HardwareProfile& profile) const {
  const BenchRun& run = *run_;
  std::vector<double> out;
  const std::string inline_profile = perf::to_json(profile).dump();
  if (run.kind == spec::BenchKind::vllm_serve) {
    VllmCheckOptions o;
    o.scenario = run.scenario;
    o.scenario["hardware"]["gpu_profile"] = inline_profile;
    o.model = run.model;
    const auto c = check_vllm_result(*run.serve, o, *catalog_);
    if (!c.fits) throw ConfigError(run.name, "does not fit: " + c.reason);
    for (const auto& m : run.measured) {
      double p = std::nan("");
      for (const auto& row : c.rows)
        if (row.key == m.key && row.predicted) p = *row.predicted;
      out.push_back(p);
    }
    return out;
  }
  const auto& rs = resolved_;
  if (run.kind == spec::BenchKind::vllm_throughput) {
    spec::ResolvedScenario r = rs;
    r.scenario.hardware.gpu_profile = inline_profile;
    Json reqs = Json::array();
    for (std::int64_t i = 0; i < run.requests; ++i) reqs.push_back({0.0, run.input_len, run.output_len});
    Json w = {{"arrival", {{"process", "trace"}, {"requests", reqs}}}, {"num_requests", run.requests},
              {"warmup_requests", 0}};
    Json doc = spec::to_json(r.scenario);
    doc["workload"] = w;
    spec::Scenario sc = spec::scenario_from_json(JsonView(doc, ""));
    const auto res = evaluate(spec::resolve(sc, *catalog_), {});
    if (!res.summary.fits) throw ConfigError(run.name, "does not fit: " + res.summary.reason);
    out.push_back(res.summary.throughput.requests_per_s);
    return out;
  }
  const auto& e = rs.scenario.engine;
  const perf::CostModel cm(rs.model, rs.quant, rs.gpu, profile, rs.scenario.hardware.parallel, e.cuda_graphs, 0,
                           perf::runtime_of(e));
  StaticBatchOptions opt;
  if (run.kind == spec::BenchKind::vllm_latency) opt.max_batched_tokens = e.max_num_batched_tokens;
  const auto t = static_batch(cm, run.batch, run.input_len, run.output_len, opt);
  for (const auto& m : run.measured) {
    if (m.key == "avg_latency" || m.key == "overall_latency") out.push_back(t.total_s());
    else if (m.key == "prefill_latency") out.push_back(t.prefill_s);
    else if (m.key == "median_decode_latency") out.push_back(t.median_decode_step_s());
    else throw InternalError("no prediction for measured key '" + m.key + "'");
  }
  return out;
}

Json to_json(const BenchRun& run) {
  Json m = Json::array();  // in the run's order (predict() returns its values in the same)
  for (const auto& v : run.measured) m.push_back({{"key", v.key}, {"value", v.value}});
  return Json{{"name", run.name}, {"result", run.result}, {"tool", spec::to_string(run.kind)}, {"gpu", run.gpu},
              {"model", run.model}, {"runtime", spec::to_string(run.runtime)}, {"runtime_from", run.runtime_from},
              {"engine", run.engine}, {"engine_version", run.engine_version}, {"batch", run.batch},
              {"input_len", run.input_len}, {"output_len", run.output_len}, {"requests", run.requests},
              {"measured", m}, {"notes", run.notes_out}};
}

}  // namespace llmsim::analysis
