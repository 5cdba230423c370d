// RUNS.json and the benchmark result files it names (the files themselves: bench_files.cpp).
#include "llmsim/analysis/bench_runs.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "bench_files.hpp"
#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/analysis/static_batch.hpp"
#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/input_file.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/quantization.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "llmsim/spec/sglang_args.hpp"
#include "llmsim/spec/sglang_admission.hpp"

namespace llmsim::analysis {

namespace {

namespace fs = std::filesystem;
using bench_files::FileType;

/// The model a run names: its "model", else the command's, matched to a catalogue id by name.
std::string model_of(const std::string& given, const std::string& hf, const std::string& where,
                     const spec::Catalog& catalog) {
  if (!given.empty()) return given;
  if (hf.empty()) throw ConfigError(where + ".model", "the command names no model (--model); set \"model\"");
  if (const auto id = catalogue_model_for(hf, catalog)) return *id;
  if (hf.find('/') == std::string::npos || hf.ends_with(".json") || spec::local_checkpoint(hf)) return hf;
  throw ConfigError(where + ".model", "'" + hf + "' is not a catalogue model; set \"model\" to a catalogue id "
                                      "(llmsim catalog models) or the checkpoint's config.json");
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

/// A llama-bench test as a scenario: the release from the file's build_number (unless the run names one), the
/// weights from its model_type ("llama 8B Q4_K - Medium"), the prompt chunk from n_ubatch. ConfigError naming the
/// run for weights llmsim has no format for, or a model not on the GPU (n_gpu_layers 0).
void llama_bench_scenario(BenchRun& run, const Json& test, const Field& f, Json& s, std::string& runtime_text) {
  const JsonView v(test, run.name);
  if (run.runtime_from.rfind("no engine version", 0) == 0 && v.has("build_number")) {
    const std::string release = "llama.cpp==b" + std::to_string(v.integer("build_number"));
    try {
      run.runtime = spec::parse_runtime(release, run.name + ".build_number");
      runtime_text = release;
      run.runtime_from = "llama-bench build_number " + std::to_string(v.integer("build_number"));
      run.notes_out.erase(std::remove_if(run.notes_out.begin(), run.notes_out.end(),
                                         [](const std::string& n) { return n.rfind("no engine version", 0) == 0; }),
                          run.notes_out.end());
    } catch (const ConfigError&) {
      // a build outside the modelled range: the default llama.cpp runtime, as noted
    }
  }
  if (v.has("n_gpu_layers") && v.integer("n_gpu_layers") == 0)
    v["n_gpu_layers"].fail("0: the model ran on the CPU; llmsim models GPU runs (llama-bench -ngl 99)");
  if (!f.has("weights") && !s.contains("quant") && !s.contains("dtype")) {
    const std::string type = v.string_or("model_type", "");
    if (type.find("Q4_K - Medium") != std::string::npos) s["quant"] = {{"weights", "gguf-q4_k_m"}};
    else if (type.find("Q8_0") != std::string::npos) s["quant"] = {{"weights", "gguf-q8_0"}};
    else if (type.find("BF16") != std::string::npos) s["dtype"] = "bfloat16";
    else if (type.find("F16") != std::string::npos) s["dtype"] = "float16";
    else
      v["model_type"].fail("'" + type + "': weights llmsim has no format for (it models GGUF Q4_K_M, Q8_0, F16 and "
                           "BF16); set the run's \"weights\" to the closest if you accept the difference");
  }
  for (const char* k : {"type_k", "type_v"})
    if (v.has(k) && v.string(k) != "f16") run.notes_out.push_back(std::string(k) + " " + v.string(k) + ": a quantized KV cache is not modelled for llama.cpp");
  run.prompt_chunk = v.integer_or("n_ubatch", 512);  // llama-bench's default micro-batch
  if (run.prompt_chunk < 1) v["n_ubatch"].fail("must be >= 1, got " + std::to_string(run.prompt_chunk));
  // llama-bench sizes its context to the test: n_ctx = n_prompt + n_gen (+ n_depth).
  if (!s.contains("max_model_len")) s["max_model_len"] = run.input_len + run.output_len + 1;
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
  // "select": {"run_name_prefix": P} keeps the records of a shared result.jsonl whose run_name starts with P (SGLang's
  // bench_one_batch[_server] append every run to one file, named by --run-name).
  std::string run_name_prefix;
  if (r.has("select")) {
    r["select"].allow_only({"run_name_prefix"});
    run_name_prefix = r["select"].string("run_name_prefix");
    if (run_name_prefix.empty()) r["select"]["run_name_prefix"].fail("expected a non-empty run_name prefix");
  }
  if (f.has("replicas") && f["replicas"].as_integer() > 1)
    f["replicas"].fail("a profile is fitted from one engine's runs; this run spread over several replicas");
  const auto cmd = spec::parse_bench_command(base.command, label + ".command");
  base.kind = cmd.kind;
  const bool sglang_cmd = cmd.kind == spec::BenchKind::sglang_one_batch ||
                          cmd.kind == spec::BenchKind::sglang_one_batch_server || cmd.kind == spec::BenchKind::sglang_serving;
  base.engine = f.string_or("engine", sglang_cmd ? "sglang" : cmd.kind == spec::BenchKind::llama_bench ? "llama.cpp" : "vllm");
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
      base.runtime = spec::parse_runtime(runtime_text, "");  // the problem alone: the path is added once, below
    } catch (const ConfigError& e) {
      throw ConfigError(label + ".engine_version", std::string(e.what()) + "; or set \"runtime\"");
    }
    base.runtime_from = base.engine + " " + base.engine_version;
  } else {
    base.runtime = base.engine == "sglang"      ? spec::Runtime::sglang
                   : base.engine == "llama.cpp" ? spec::Runtime::llama_cpp
                                                : spec::Runtime::vllm_v1;
    runtime_text = spec::to_string(base.runtime);
    base.runtime_from = "no engine version given: " + runtime_text + " assumed";
    base.notes_out.push_back(base.runtime_from);
  }
  const std::string text = read_text_file((dir / result).string(), label + ".result");
  // The file's runs: serving results through the serving reader (one per line of a JSON-lines file), else its JSON
  // documents (one per line of SGLang's bench_one_batch result.jsonl; one per test of a llama-bench array).
  const bool serving = cmd.kind == spec::BenchKind::vllm_serve || cmd.kind == spec::BenchKind::sglang_serving;
  auto mismatch = [&](FileType type) {
    throw ConfigError(label + ".result", std::string("the file is ") + bench_files::describe(type) +
                                             " but the command is '" + spec::to_string(cmd.kind) +
                                             "' (command/file mismatch)");
  };
  struct Doc {
    Json json;
    std::optional<VllmResult> serve;
    std::string name;
  };
  std::vector<Doc> docs;
  if (serving) {
    std::vector<VllmResult> results;
    try {
      results = parse_vllm_results(text, label);
    } catch (const ConfigError&) {
      FileType t = FileType::unknown;
      try {
        t = bench_files::file_type(bench_files::documents(text, label).front());
      } catch (const ConfigError&) {
      }
      if (t != FileType::unknown && t != FileType::vllm_serve && t != FileType::sglang_serving) mismatch(t);
      throw;
    }
    for (auto& r : results) {
      const std::string name = r.line > 0 && results.size() > 1 ? label + " line " + std::to_string(r.line) : label;
      docs.push_back({Json::object(), std::move(r), name});
    }
  } else {
    if (text.find("\"mean_ttft_ms\"") != std::string::npos)
      mismatch(text.find("_e2e_latency_ms\"") != std::string::npos ? FileType::sglang_serving : FileType::vllm_serve);
    const auto js = bench_files::documents(text, label);
    if (js.size() == 1 && bench_files::file_type(js[0]) == FileType::llama_bench) {
      for (std::size_t k = 0; k < js[0].size(); ++k)
        docs.push_back({js[0][k], std::nullopt, label + " test " + std::to_string(k)});
    } else {
      for (std::size_t k = 0; k < js.size(); ++k)
        docs.push_back({js[k], std::nullopt, js.size() > 1 ? label + " line " + std::to_string(k + 1) : label});
    }
  }
  if (!run_name_prefix.empty()) {
    if (serving) r["select"].fail("picks records by run_name: for SGLang bench_one_batch[_server] result.jsonl files");
    std::vector<Doc> kept;
    for (auto& d : docs)
      if (d.json.is_object() && d.json.contains("run_name") && d.json["run_name"].is_string() &&
          d.json["run_name"].get<std::string>().rfind(run_name_prefix, 0) == 0)
        kept.push_back(std::move(d));
    if (kept.empty())
      r["select"]["run_name_prefix"].fail("no record of " + result + " has a run_name starting with '" +
                                          run_name_prefix + "'");
    docs = std::move(kept);
  }
  // Every document's type first: a file of another tool is that mismatch, before its server's command line is read.
  std::vector<FileType> types;
  for (const auto& d : docs) {
    const FileType type = d.serve ? bench_files::serve_type(*d.serve)
                          : cmd.kind == spec::BenchKind::llama_bench && d.json.is_object() && d.json.contains("avg_ts")
                              ? FileType::llama_bench
                              : bench_files::file_type(d.json);
    if (type == FileType::unknown) {
      throw ConfigError(label + ".result", "unknown file type: not a benchmark result llmsim reads (" +
                                               std::string(bench_files::kKnownTypes) + ")");
    }
    if (type != bench_files::expected_type(cmd.kind)) mismatch(type);
    types.push_back(type);
  }
  // The server's arguments (serve runs), else the engine arguments of the command itself.
  spec::VllmServeArgs engine = cmd.engine;
  if (!base.server_command.empty() && cmd.kind == spec::BenchKind::vllm_serve)
    engine = spec::parse_vllm_serve_args(base.server_command);
  if (!base.server_command.empty() &&
      (cmd.kind == spec::BenchKind::sglang_serving || cmd.kind == spec::BenchKind::sglang_one_batch_server))
    engine = spec::parse_sglang_server_args(base.server_command, label + ".server_command");
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
  // vLLM's offline scripts before 0.6.4 pass enable_chunked_prefill to LLM(...) themselves, False without their
  // store_true flag, so the release's >32K rule does not turn chunking on for them (spec/runtime_version.hpp).
  const bool offline_script = cmd.kind == spec::BenchKind::vllm_latency || cmd.kind == spec::BenchKind::vllm_throughput;
  if (offline_script && base.engine == "vllm" && !args.contains("enable_chunked_prefill") &&
      spec::bench_scripts_pass_chunked_flag(std::optional<std::string>(runtime_text), label + ".engine_version"))
    args["enable_chunked_prefill"] = false;

  for (std::size_t k = 0; k < docs.size(); ++k) {
    const Doc& d = docs[k];
    const FileType type = types[k];
    BenchRun run = base;
    run.name = d.name;
    run.serve = d.serve;
    bench_files::read_measured(run, d.json, type, cmd);
    Json s = args;
    std::string run_runtime = runtime_text;
    if (type == FileType::llama_bench) llama_bench_scenario(run, d.json, f, s, run_runtime);
    if (run.kind == spec::BenchKind::vllm_latency) {
      run.batch = length_of(cmd, f, "batch_size", "batch", 8, label);
      run.input_len = length_of(cmd, f, "input_len", "input_len", 32, label);
      run.output_len = length_of(cmd, f, "output_len", "output_len", 128, label);
    }
    std::string hf = engine.model.empty() && run.serve ? run.serve->model_id : engine.model;
    if (hf.empty()) hf = f.string_or("hf_model", "");
    run.model = model_of(f.string_or("model", ""), hf, label, catalog);
    // Whether the client sent ignore_eos, from its command line (SGLang's bench_serving: unless
    // --disable-ignore-eos; vLLM's: with --ignore-eos): workload.ignore_eos, which SGLang's admission reads.
    if (run.serve)
      if (const auto eos = spec::client_ignores_eos(base.command)) s["workload"]["ignore_eos"] = *eos;
    s["model"] = run.model;
    s["hardware"] = {{"gpu", run.gpu}};
    s["engine"] = {{"runtime", run_runtime}};
    if (run.batch > 0 && !serving && !s.contains("max_num_seqs"))
      s["engine"]["max_num_seqs"] = std::max<std::int64_t>(run.batch, 1);
    run.scenario = std::move(s);
    out.push_back(std::move(run));
  }
}

}  // namespace

BenchRuns parse_bench_runs(std::string_view text, const std::string& path, const std::string& gpu_override,
                           bool skip_unreadable) {
  const Json doc = parse_json(text, path);
  // The root has no field path to name: its type error names the file (attack12: "expected an object, got array").
  if (!doc.is_object()) JsonView(doc, "runs file '" + path + "'").expect_object();
  const JsonView root(doc, "");
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
    if (run.serve) {
      std::vector<std::string> notes;
      VllmCheckOptions o;
      o.scenario = run.scenario;
      o.model = run.model;
      resolved_ = spec::resolve(vllm_check_scenario(*run.serve, o, catalog, notes), catalog);
      try {
        check_ = std::make_shared<const PreparedVllmCheck>(prepare_vllm_check(*run.serve, o, catalog));
      } catch (const ConfigError&) {
        // predict() makes the whole check and throws its error
      }
    } else {
      resolved_ = spec::resolve(spec::scenario_from_json(JsonView(run.scenario, "")), catalog);
    }
  } catch (const ConfigError& e) {
    throw ConfigError(run.name, e.what());
  }
  if (run.serve) return;
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
  if (run.serve) {
    const std::string inline_profile = perf::to_json(profile).dump();
    VllmCheckOptions o;
    o.scenario = run.scenario;
    o.scenario["hardware"]["gpu_profile"] = inline_profile;
    o.model = run.model;
    // The scenario built once (check_), the profile set on it: the same simulation as the whole check's.
    const auto c = check_ ? check_vllm_result(*run.serve, *check_, inline_profile)
                          : check_vllm_result(*run.serve, o, *catalog_);
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
    r.scenario.hardware.gpu_profile = perf::to_json(profile).dump();
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
  // Its table only up to the batch (the decode steps' rows): the prefill iterations, a few per run, are priced
  // directly, with the same values; filling the full table was most of a static batch's prediction.
  const perf::CostModel cm(rs.model, rs.quant, rs.gpu, profile, rs.scenario.hardware.parallel, e.cuda_graphs, 0,
                           perf::runtime_of(e), std::max<std::int64_t>(run.batch, 1));
  StaticBatchOptions opt;
  // The server's scheduler chunks the prompts (vLLM's token budget; SGLang's chunked_prefill_size, which the
  // sglang runtime's defaults put in max_num_batched_tokens).
  if (run.kind == spec::BenchKind::vllm_latency || run.kind == spec::BenchKind::sglang_one_batch_server)
    opt.max_batched_tokens = e.max_num_batched_tokens;
  if (run.kind == spec::BenchKind::llama_bench) opt.max_batched_tokens = run.prompt_chunk;
  if (run.kind == spec::BenchKind::llama_bench) {
    // pp: the prompt's chunks; tg: n_gen one-token steps after the context; pg: both (llama-bench's tests).
    const auto& m = run.measured.front();
    const auto t = static_batch(cm, 1, run.input_len, std::max<std::int64_t>(run.output_len, 0) + 1, opt);
    if (m.key == "pp_tokens_per_s") out.push_back(static_cast<double>(run.input_len) / t.prefill_s);
    else if (m.key == "tg_tokens_per_s") out.push_back(static_cast<double>(run.output_len) / t.decode_s);
    else out.push_back(static_cast<double>(run.input_len + run.output_len) / t.total_s());
    return out;
  }
  const auto t = static_batch(cm, run.batch, run.input_len, run.output_len, opt);
  for (const auto& m : run.measured) {
    if (m.key == "avg_latency" || m.key == "overall_latency" || m.key == "latency") out.push_back(t.total_s());
    else if (m.key == "prefill_latency" || m.key == "ttft") out.push_back(t.prefill_s);
    else if (m.key == "decode_throughput")  // batch x output / (latency - TTFT): bench_one_batch_server's
      out.push_back(static_cast<double>(run.batch * run.output_len) / t.decode_s);
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
