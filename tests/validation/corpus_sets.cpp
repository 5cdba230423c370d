#include "corpus_sets.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include "csv_table.hpp"
#include "llmsim/analysis/static_batch.hpp"
#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/analysis/vllm_result.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "repo_sets.hpp"

namespace llmsim::validation {

namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------------------------------------------------------
// RUNS.json: per-run fields override the top-level ones (data/validation/corpus/README.md).
// (Merge note in corpus_sets.hpp: analysis::parse_bench_runs will replace this lookup.)

struct Source {
  std::string name, url;
  fs::path dir, models;  ///< the folder; data/validation/models for configs the catalogue lacks
  Json top;
};

const Json* field(const Source& s, const Json& run, const char* key) {
  if (run.is_object() && run.contains(key) && !run[key].is_null()) return &run[key];
  if (s.top.contains(key) && !s.top[key].is_null()) return &s.top[key];
  return nullptr;
}

std::string text(const Source& s, const Json& run, const char* key, const std::string& otherwise = "") {
  const Json* j = field(s, run, key);
  if (!j) return otherwise;
  if (j->is_string()) return j->get<std::string>();
  return j->dump();
}

int integer(const Source& s, const Json& run, const char* key, int otherwise) {
  const Json* j = field(s, run, key);
  return j && j->is_number_integer() ? j->get<int>() : otherwise;
}

/// The first word of a stated version ("0.4.0.dev (main 2024-03-28)" -> "0.4.0.dev", "0.6.3.post2.dev308+gb489fc3c"
/// -> "0.6.3.post2.dev308"): the release as spec::parse_engine_version reads it.
std::string version_word(std::string v) {
  v = v.substr(0, v.find(' '));
  v = v.substr(0, v.find('+'));
  return v;
}

struct Release {
  std::string text;  ///< "vllm==0.5.5"
  spec::Runtime runtime = spec::Runtime::vllm_v1;
  std::string error;  ///< why the stated version names no modelled release ("" when it does)
};

Release release_of(const std::string& engine, const std::string& version) {
  Release r;
  r.text = engine + "==" + version_word(version);
  try {
    r.runtime = spec::runtime_for_version(spec::parse_engine_version(r.text)).runtime;
  } catch (const ConfigError& e) {
    r.error = "engine version '" + version + "' names no release llmsim maps (" + e.what() + ")";
  }
  return r;
}

/// A stated weight format as a catalogue id ("" when the catalogue has none).
std::string weights_id(std::string w) {
  w = w.substr(0, w.find(' '));
  if (w == "fp16/bf16") w = "fp16";  // dtype auto on an fp16 checkpoint
  if (w == "int8-w8a8") w = "w8a8";
  if (w == "f16") w = "fp16";
  try {
    (void)spec::weight_format(w);
    return w;
  } catch (const ConfigError&) {
    return "";
  }
}

/// The KV dtype a row reports: vLLM's "auto" is the model's dtype.
std::string kv_id(const std::string& kv, const std::string& weights) {
  if (kv.empty() || kv == "auto" || kv == "f16") return weights == "fp16" ? "fp16" : (kv == "f16" ? "fp16" : "bf16");
  return kv;
}

std::string model_ref(const Source& s, const std::string& m) {
  if (m.ends_with(".json")) return (s.models / m).string();
  return m;
}

Row proto(const Source& s, const std::string& where) {
  Row r;
  r.set = s.name;
  r.source_url = s.url;
  r.where = s.name + "/" + where;
  r.kind = Kind::engine;
  return r;
}

void unscore(Row& r, const std::string& why) {
  r.scored = false;
  r.predicted = 0;
  r.note = why;
}

bool throughput_key(const std::string& k) { return k.find("throughput") != std::string::npos; }

// ---------------------------------------------------------------------------------------------------------------
// Serving: a vLLM result (read from the file, or built from a table or an SGLang line) through check_vllm_result.

/// Keys of a serve result that are inputs of the run, not measurements (the corpus README does not count them).
bool input_key(const std::string& k) {
  return k == "completed" || k == "total_input_tokens" || k == "total_output_tokens" || k == "failed" ||
         k == "num_prompts";
}

/// Throughputs and the duration of one run are one measurement (tokens / duration): output_throughput is scored
/// (request_throughput where the run has no output_throughput), the others are kept for the record.
std::string scored_rate_key(const analysis::VllmResult& r) {
  for (const auto& s : r.scalars)
    if (s.key == "output_throughput") return s.key;
  for (const auto& s : r.scalars)
    if (s.key == "total_token_throughput") return s.key;
  for (const auto& s : r.scalars)
    if (s.key == "request_throughput") return s.key;
  return "duration";
}

struct ServeRun {
  Row proto;
  analysis::VllmCheckOptions options;
  std::string unscored;  ///< non-empty: the run is not simulated, every value kept with this reason
};

void add_serve(std::vector<Row>& out, const ServeRun& run, const analysis::VllmResult& result) {
  Row base = run.proto;
  const double n = static_cast<double>(std::max<std::int64_t>(1, result.completed));
  base.input = std::llround(static_cast<double>(result.total_input_tokens) / n);
  base.output = std::llround(static_cast<double>(result.total_output_tokens) / n);
  base.context = static_cast<double>(base.input) + static_cast<double>(base.output) / 2.0;
  base.batch = result.max_concurrency && !result.request_rate ? *result.max_concurrency : 0;
  const std::string rate_key = scored_rate_key(result);
  auto derived = [&](const std::string& k) {
    return (throughput_key(k) || k == "duration") && k != rate_key;
  };
  std::string skip = run.unscored;
  std::optional<analysis::VllmCheck> check;
  if (skip.empty()) {
    try {
      check = analysis::check_vllm_result(result, run.options);
      if (!check->fits) skip = "llmsim says the configuration does not fit: " + check->reason;
      // The runtime the run was priced as: the release's, or its V0 engine when a V0 scheduler was named with a
      // release that ships both (vLLM 0.8-0.10 with VLLM_USE_V1=0).
      base.runtime = spec::to_string(check->scenario.engine.resolved_runtime());
    } catch (const ConfigError& e) {
      skip = std::string("not representable: ") + e.what();
    }
  }
  auto emit = [&](const std::string& key, double measured, std::optional<double> predicted, const std::string& note) {
    if (input_key(key)) return;
    Row r = base;
    r.metric = key;
    r.measured = measured;
    r.higher_is_better = throughput_key(key);
    if (!skip.empty()) {
      unscore(r, skip);
    } else if (!predicted || !std::isfinite(*predicted) || !(*predicted > 0)) {
      unscore(r, note.empty() ? "llmsim states no prediction for it" : note);
    } else if (!(measured > 0)) {
      unscore(r, "measured value is 0");
    } else if (derived(key)) {
      r.predicted = *predicted;
      unscore(r, "same duration as " + rate_key + " (scored)");
      r.predicted = *predicted;
    } else if (!note.empty() && key.find("itl") != std::string::npos) {
      r.predicted = *predicted;
      unscore(r, note);
      r.predicted = *predicted;
    } else {
      r.predicted = *predicted;
      r.note = note;
    }
    out.push_back(std::move(r));
  };
  if (check) {
    for (const auto& c : check->rows) emit(c.key, c.measured, c.predicted, c.note);
  } else {
    for (const auto& s : result.scalars) emit(s.key, s.value, std::nullopt, "");
    for (const auto& l : result.latencies) emit(l.key, l.value_ms, std::nullopt, "");
  }
}

/// A serve result from the numbers a table or another tool's line gives, in vLLM's key names. Built field by field:
/// parse_vllm_result asks for the keys a saved file always has (duration, latency statistics), which a table may
/// not carry.
analysis::VllmResult result_from_json(const Json& j, const std::string& source) {
  analysis::VllmResult r;
  r.source = source;
  r.backend = j.value("backend", "vllm");
  r.model_id = j.value("model_id", "");
  r.num_prompts = j.value("num_prompts", std::int64_t{0});
  r.completed = j.value("completed", r.num_prompts);
  r.total_input_tokens = j.value("total_input_tokens", std::int64_t{0});
  r.total_output_tokens = j.value("total_output_tokens", std::int64_t{0});
  if (j.contains("request_rate") && j["request_rate"].is_number()) r.request_rate = j["request_rate"].get<double>();
  r.duration_s = j.value("duration", 0.0);
  if (j.contains("input_lens") && j.contains("output_lens")) {
    r.input_lens = j["input_lens"].get<std::vector<std::int64_t>>();
    r.output_lens = j["output_lens"].get<std::vector<std::int64_t>>();
  }
  static const std::vector<std::string> scalars = {"duration", "request_throughput", "input_throughput",
                                                   "output_throughput", "total_token_throughput"};
  for (const auto& k : scalars)
    if (j.contains(k) && j[k].is_number()) r.scalars.push_back({k, j[k].get<double>()});
  for (auto it = j.begin(); it != j.end(); ++it) {
    auto l = analysis::parse_vllm_latency_key(it.key());
    if (!l || !it.value().is_number()) continue;
    l->key = it.key();
    l->value_ms = it.value().get<double>();
    r.latencies.push_back(*l);
  }
  return r;
}

Json quant(const std::string& weights, const std::string& kv) {
  Json q = Json::object();
  if (!weights.empty()) q["weights"] = weights;
  q["kv_cache"] = kv.empty() ? "auto" : kv;
  return q;
}

/// The common part of a serve run of a source: GPU, model, weights, KV, TP, runtime from the stated release.
ServeRun serve_run(const Source& s, const Json& run, const std::string& where) {
  ServeRun sr;
  sr.proto = proto(s, where);
  Row& r = sr.proto;
  r.gpu = text(s, run, "gpu");
  r.model = text(s, run, "model");
  r.tp = integer(s, run, "tp", 1);
  const std::string w = text(s, run, "weights");
  r.weights = weights_id(w);
  r.kv_dtype = kv_id(text(s, run, "kv_cache_dtype", "auto"), r.weights);
  r.engine = text(s, run, "engine", "vllm");
  const Release rel = release_of(r.engine, text(s, run, "engine_version", text(s, run, "vllm_version")));
  r.runtime = spec::to_string(rel.runtime);
  sr.options.gpu = r.gpu;
  sr.options.model = model_ref(s, r.model);
  sr.options.engine_version = rel.text;
  const std::string kv = text(s, run, "kv_cache_dtype", "auto");
  sr.options.scenario["quant"] = quant(r.weights, kv == "auto" ? "auto" : kv);
  const std::string server = text(s, run, "server_command");
  if (server.find("vllm serve") != std::string::npos || server.find("vllm.entrypoints") != std::string::npos) {
    sr.options.vllm_args = server.substr(server.find_first_not_of(' '));
    // The RUNS.json notes in parentheses are not part of the command line.
    const auto paren = sr.options.vllm_args.find(" (");
    if (paren != std::string::npos) sr.options.vllm_args.resize(paren);
  } else if (r.engine == "vllm") {
    sr.options.vllm_args = "vllm serve MODEL -tp " + std::to_string(r.tp);
  }
  if (!rel.error.empty()) sr.unscored = rel.error;
  else if (r.model.empty()) sr.unscored = "model '" + text(s, run, "hf_model") + "' is not in the catalogue";
  else if (r.weights.empty()) sr.unscored = "weight format '" + w + "' is not in the catalogue";
  return sr;
}

// ---------------------------------------------------------------------------------------------------------------
// Static batches through analysis::static_batch.

struct StaticRun {
  std::string gpu, model, weights, kv;
  int tp = 1;
  spec::Runtime runtime = spec::Runtime::vllm_v1;
  std::int64_t max_batched_tokens = 0;
};

analysis::StaticBatchTiming static_timing(const Source& s, const StaticRun& r, std::int64_t batch, std::int64_t in,
                                          std::int64_t out) {
  const perf::CostModel cm = cost_model_for(r.gpu, model_ref(s, r.model), r.weights, r.kv, r.tp, true, s.dir,
                                            r.runtime);
  analysis::StaticBatchOptions o;
  o.max_batched_tokens = r.max_batched_tokens;
  return analysis::static_batch(cm, batch, in, out, o);
}

/// Why the static batch cannot run as one batch: its KV cache, batch x (input + output) tokens, exceeds what llmsim
/// plans for the engine's KV pool on this GPU (the engine then preempts and recomputes, which a static batch does not
/// model; the rule data/validation/README.md applies to the LMDeploy rows). "" when it fits.
std::string kv_overflow(const Source& s, const StaticRun& r, std::int64_t batch, std::int64_t in, std::int64_t out) {
  const auto& catalog = spec::Catalog::builtin();
  const auto model = catalog.model(model_ref(s, r.model), "model");
  spec::Quantization q;
  q.weights = spec::weight_format(r.weights, "weights");
  q.kv_dtype = spec::parse_kv_dtype(r.kv, "kv_dtype");
  spec::EngineConfig e;
  e.runtime = r.runtime;
  const auto plan = memory::plan_memory(model, q, catalog.gpu(r.gpu, "gpu"), spec::ParallelConfig{r.tp, 1}, e,
                                        static_cast<int>(in + out));
  if (!plan.fits) return "does not fit: " + plan.reason;
  const std::int64_t need = batch * (in + out);
  if (need > plan.kv_capacity_tokens)
    return "the batch's KV cache (" + std::to_string(need) + " tokens) exceeds llmsim's KV pool (" +
           std::to_string(plan.kv_capacity_tokens) + " tokens): the engine preempts, which a static batch does not model";
  return "";
}

Row static_row(const Source& s, const StaticRun& sr, const std::string& where, std::int64_t batch, std::int64_t in,
               std::int64_t out, const std::string& metric, double measured) {
  Row r = proto(s, where);
  r.engine = "vllm";
  r.runtime = spec::to_string(sr.runtime);
  r.gpu = sr.gpu;
  r.model = sr.model;
  r.weights = sr.weights;
  r.kv_dtype = kv_id(sr.kv, sr.weights);
  r.tp = sr.tp;
  r.batch = batch;
  r.input = in;
  r.output = out;
  r.context = static_cast<double>(in) + static_cast<double>(out) / 2.0;
  r.metric = metric;
  r.measured = measured;
  r.higher_is_better = metric.find("per_s") != std::string::npos || throughput_key(metric);
  return r;
}

// ---------------------------------------------------------------------------------------------------------------
// The sources.

Json runs_of(const Source& s) { return s.top.contains("runs") ? s.top["runs"] : Json::array(); }

/// vLLM serve result files named by the runs (crusoe, surajssd, simonmo, anyscale, dstack's "serve" runs).
void serve_files(const Source& s, std::vector<Row>& out, const std::function<std::string(const Json&)>& why_not,
                 const std::string& extra_args = "") {
  const Json runs = runs_of(s);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Json& run = runs[i];
    const std::string kind = text(s, run, "kind", "serve");
    if (kind != "serve") continue;
    const std::string file = run.at("result").get<std::string>();
    ServeRun sr = serve_run(s, run, file + ":runs[" + std::to_string(i) + "]");
    const std::string why = why_not(run);
    if (!why.empty()) sr.unscored = why;
    sr.options.vllm_args += extra_args;
    add_serve(out, sr, analysis::read_vllm_result((s.dir / file).string()));
  }
}

void crusoe(const Source& s, std::vector<Row>& out) {
  // --enable-chunked-prefill without a budget: vLLM 0.5.x's default for chunked prefill is 512 tokens (the source
  // notes say so); llmsim's 'chunked' policy would otherwise take its own default.
  serve_files(s, out, [](const Json&) { return std::string(); }, " --max-num-batched-tokens 512");
}

void surajssd(const Source& s, std::vector<Row>& out) {
  serve_files(s, out, [](const Json& run) {
    const int pp = run.value("pp", 1);
    return pp > 1 ? std::string("pipeline parallel across two VMs (TP4 x PP2 over the network): llmsim does not model "
                                "inter-node pipeline stages")
                  : std::string();
  });
}

void simonmo(const Source& s, std::vector<Row>& out) {
  serve_files(s, out, [](const Json& run) {
    const std::string server = run.value("server_command", "");
    if (server.find("--enable-dp-attention") != std::string::npos)
      return std::string("SGLang data-parallel attention (--enable-dp-attention --dp-size 8) is not modelled");
    if (server.find("--enable-expert-parallel") != std::string::npos)
      return std::string("vLLM expert parallel (--enable-expert-parallel) is not modelled");
    return std::string();
  });
}

void anyscale(const Source& s, std::vector<Row>& out) {
  serve_files(s, out, [](const Json&) {
    return std::string("Ray Serve fleet: several TP4 vLLM replicas behind Ray's router with split parallel clients "
                       "(a fleet, not one engine); gpt-oss-120b (MXFP4 MoE) is not in the catalogue");
  });
}

void dstack(const Source& s, std::vector<Row>& out) {
  const std::string model = "llama-3.1-405b.json";
  const Json runs = runs_of(s);
  const Release rel = release_of("vllm", text(s, Json::object(), "engine_version"));
  StaticRun st{"h100-80gb-sxm", model, "fp8", "auto", 8, rel.runtime, 512};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    Json run = runs[i];
    run["model"] = model;
    const std::string file = run.at("result").get<std::string>();
    const std::string where = file + ":runs[" + std::to_string(i) + "]";
    const std::string kind = run.value("kind", "");
    if (kind == "serve") {
      // vLLM 0.6.x turns chunked prefill on by default when max_model_len > 32K (EngineArgs), as here (91680).
      ServeRun sr = serve_run(s, run, where);
      sr.options.vllm_args += " --enable-chunked-prefill --max-num-batched-tokens 512";  // 0.6.x's chunked budget
      add_serve(out, sr, analysis::read_vllm_result((s.dir / file).string()));
    } else if (kind == "static_batch_latency") {
      // benchmark_latency.py: one static batch; max_model_len 91680 > 32K turns chunked prefill on in 0.6.x with a
      // 512-token budget, so the prompts are prefilled 512 tokens per iteration.
      const Json j = read_json_file((s.dir / file).string());
      const std::int64_t b = run.at("batch"), in = run.at("input_len"), o = run.at("output_len");
      Row r = static_row(s, st, where, b, in, o, "avg_latency", j.at("avg_latency").get<double>());
      try {
        const std::string over = kv_overflow(s, st, b, in, o);
        if (!over.empty()) {
          unscore(r, over);
        } else {
          r.predicted = static_timing(s, st, b, in, o).total_s();
          r.note = "prefill in 512-token chunks (chunked prefill, on for max_model_len > 32K)";
        }
      } catch (const ConfigError& e) {
        unscore(r, e.what());
      }
      out.push_back(r);
      for (const auto& [q, v] : j.at("percentiles").items()) {
        Row p = r;
        p.metric = "p" + q + "_latency";
        p.measured = v.get<double>();
        unscore(p, "a percentile of the same iterations as avg_latency (scored)");
        out.push_back(p);
      }
    } else if (kind == "offline_throughput") {
      // benchmark_throughput.py (LLM.generate): every prompt at once, fixed lengths; as a serve result.
      const Json j = read_json_file((s.dir / file).string());
      const std::int64_t n = run.at("num_prompts"), in = run.at("input_len"), o = run.at("output_len");
      // No latency statistics: the result is built field by field (parse_vllm_result asks for them).
      analysis::VllmResult res;
      res.source = file;
      res.backend = "vllm";
      res.model_id = "meta-llama/Llama-3.1-405B-FP8";
      res.num_prompts = res.completed = n;
      res.total_input_tokens = n * in;
      res.total_output_tokens = n * o;
      res.duration_s = j.at("elapsed_time").get<double>();
      res.scalars = {{"duration", res.duration_s},
                     {"total_token_throughput", j.at("tokens_per_second").get<double>()},
                     {"request_throughput", j.at("requests_per_second").get<double>()}};
      ServeRun sr = serve_run(s, run, where);
      sr.options.vllm_args = "vllm serve meta-llama/Llama-3.1-405B-FP8 --tensor-parallel-size 8 --max-model-len 91680 "
                             "--enable-chunked-prefill --max-num-batched-tokens 512";  // 0.6.x defaults at > 32K
      add_serve(out, sr, res);
    } else if (kind == "serve_table") {
      // dstack's table of serving runs: every row a benchmark_serving result with its server flags in columns.
      const CsvTable t(s.dir / file);
      for (std::size_t k = 0; k < t.rows(); ++k) {
        Json res = {{"backend", "vllm"}, {"model_id", "meta-llama/Llama-3.1-405B-FP8"}};
        for (const char* key : {"num_prompts", "completed", "total_input_tokens", "total_output_tokens"})
          res[key] = t.integer(k, key, 0);
        res["request_rate"] = t.number(k, "request_rate");
        for (const char* key : {"duration", "request_throughput", "output_throughput", "total_token_throughput",
                                "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
                                "median_tpot_ms", "std_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "median_itl_ms",
                                "std_itl_ms", "p99_itl_ms"})
          res[key] = t.number(k, key);
        std::string args = "vllm serve meta-llama/Llama-3.1-405B-FP8 --tensor-parallel-size 8 --max-model-len 91680";
        args += " --num-scheduler-steps " + t.text(k, "num-scheduler-step");
        // FALSE = the flag not passed: vLLM 0.6.x still chunks by default at max_model_len > 32K (91680 here), and
        // a 512-token budget below max_model_len would not start without chunking.
        args += " --enable-chunked-prefill";
        args += " --max-num-batched-tokens " + t.text(k, "max-num-batched-tokens");
        args += " --max-num-seqs " + t.text(k, "max-num-seqs");
        args += " --max-seq-len-to-capture " + t.text(k, "max-seq-len-to-capture");
        if (t.text(k, "enable-prefix-caching") == "TRUE") args += " --enable-prefix-caching";
        ServeRun sr = serve_run(s, run, file + ":" + t.where(k));
        sr.options.vllm_args = args;
        add_serve(out, sr, result_from_json(res, t.where(k)));
      }
    } else {
      // throughput_output.csv / latency_output.csv: dstack's own tables of the files above (copies, not counted).
    }
  }
}

void pr3692(const Source& s, std::vector<Row>& out) {
  const CsvTable t(s.dir / "table.csv");
  for (std::size_t k = 0; k < t.rows(); ++k) {
    const Release rel = release_of("vllm", t.text(k, "engine_version"));
    StaticRun st{t.text(k, "gpu"), "dbrx-instruct.json", "bf16", "auto", static_cast<int>(t.integer(k, "tp", 1)),
                 rel.runtime, 0};
    const auto b = t.integer(k, "batch_size", 1), in = t.integer(k, "input_len", 1), o = t.integer(k, "output_len", 1);
    Row r = static_row(s, st, "table.csv:" + t.where(k), b, in, o, "avg_latency", t.number(k, "value"));
    if (!rel.error.empty()) {
      unscore(r, rel.error);
    } else if (t.text(k, "variant").find("before") != std::string::npos) {
      unscore(r, "main before the PR ran untuned fused-MoE configs; vLLM 0.4.0 shipped the PR's tuned ones, which "
                 "the runtime stands for");
    } else if (const std::string over = kv_overflow(s, st, b, in, o); !over.empty()) {
      unscore(r, over);
    } else {
      r.predicted = static_timing(s, st, b, in, o).total_s();
    }
    out.push_back(r);
  }
}

void zjuici(const Source& s, std::vector<Row>& out) {
  const CsvTable t(s.dir / "table.csv");
  // The burst runs: one simulated serve result per (file, input, output).
  std::map<std::string, std::vector<std::size_t>> burst;
  for (std::size_t k = 0; k < t.rows(); ++k) {
    const std::string w = weights_id(t.text(k, "weights"));
    const std::string q = t.text(k, "quantization_flag");
    const std::string weights = q == "awq" ? "awq-int4" : q == "gptq" ? "gptq-int4" : w;
    const Release rel = release_of("vllm", t.text(k, "engine_version"));
    StaticRun st{t.text(k, "gpu"), t.text(k, "model"), weights, "auto", 1, rel.runtime, 0};
    const auto in = t.integer(k, "input_len", 1), o = t.integer(k, "output_len", 1);
    const std::string metric = t.text(k, "metric");
    const std::string where = "table.csv:" + t.where(k) + " (" + t.text(k, "result_file") + ")";
    if (t.text(k, "phase").find("one by one") != std::string::npos) {
      Row r = static_row(s, st, where, 1, in, o, metric, t.number(k, "value"));
      if (metric == "mean_e2el_per_output_token_ms") {
        try {
          const std::string over = kv_overflow(s, st, 1, in, o);
          if (!over.empty()) throw ConfigError("kv", over);
          r.predicted = static_timing(s, st, 1, in, o).total_s() / static_cast<double>(o) * 1e3;
        } catch (const ConfigError& e) {
          unscore(r, e.what());
        }
      } else {
        unscore(r, "the same batch-1 latencies as mean_e2el_per_output_token_ms (scored), divided by input + output");
      }
      out.push_back(r);
    } else {
      burst[t.text(k, "result_file") + "|" + std::to_string(in) + "|" + std::to_string(o)].push_back(k);
    }
  }
  for (const auto& [key, ks] : burst) {
    const std::size_t k0 = ks.front();
    const auto in = t.integer(k0, "input_len", 1), o = t.integer(k0, "output_len", 1);
    const std::string n_text = t.text(k0, "num_prompts");
    const std::int64_t n = n_text.find_first_not_of("0123456789") != std::string::npos || n_text.empty() ? 0 : t.integer(k0, "num_prompts", 1);
    Json res = {{"backend", "vllm"}, {"model_id", t.text(k0, "model")}, {"request_rate", "inf"}};
    res["num_prompts"] = std::max<std::int64_t>(n, 1);
    res["completed"] = std::max<std::int64_t>(n, 1);
    res["total_input_tokens"] = std::max<std::int64_t>(n, 1) * in;
    res["total_output_tokens"] = std::max<std::int64_t>(n, 1) * o;
    for (std::size_t k : ks) res[t.text(k, "metric")] = t.number(k, "value");
    Json run = {{"gpu", t.text(k0, "gpu")}, {"model", t.text(k0, "model")}, {"tp", 1},
                {"engine_version", t.text(k0, "engine_version")}};
    const std::string q = t.text(k0, "quantization_flag");
    run["weights"] = q == "awq" ? "awq-int4" : q == "gptq" ? "gptq-int4" : weights_id(t.text(k0, "weights"));
    ServeRun sr = serve_run(s, run, "table.csv:" + t.where(k0) + " (" + t.text(k0, "result_file") + " burst)");
    sr.options.vllm_args = "vllm serve MODEL" + (q == "none" ? std::string() : " --quantization " + q);
    if (n == 0) sr.unscored = "num_prompts of the burst is not stated in this file";
    add_serve(out, sr, result_from_json(res, key));
  }
}

void zhjunqin(const Source& s, std::vector<Row>& out) {
  const CsvTable t(s.dir / "table.csv");
  std::map<std::string, std::vector<std::size_t>> runs;
  std::vector<std::string> order;
  for (std::size_t k = 0; k < t.rows(); ++k) {
    const std::string v = t.text(k, "variant") + "|" + t.text(k, "request_rate");
    if (!runs.count(v)) order.push_back(v);
    runs[v].push_back(k);
  }
  for (const auto& v : order) {
    const auto& ks = runs[v];
    const std::size_t k0 = ks.front();
    Json res = {{"backend", "vllm"}, {"model_id", t.text(k0, "hf_model")}};
    res["request_rate"] = t.number(k0, "request_rate");
    res["num_prompts"] = t.integer(k0, "num_prompts", 1);
    res["completed"] = t.integer(k0, "num_prompts", 1);
    bool copy_slip = false;
    double p50 = -1, p90 = -2;
    for (std::size_t k : ks) {
      std::string m = t.text(k, "metric");
      if (m == "duration_s") m = "duration";
      if (m.rfind("p50_", 0) == 0) m = "median_" + m.substr(4);
      res[m] = m.rfind("total_", 0) == 0 ? Json(t.integer(k, "value", 0)) : Json(t.number(k, "value"));
      if (m == "median_tpot_ms") p50 = t.number(k, "value");
      if (m == "p90_tpot_ms") p90 = t.number(k, "value");
    }
    copy_slip = p50 == p90;
    Json run = {{"gpu", t.text(k0, "gpu")}, {"model", t.text(k0, "model")}, {"tp", 1},
                {"weights", t.text(k0, "weights")}, {"engine_version", t.text(k0, "engine_version")}};
    ServeRun sr = serve_run(s, run, "table.csv:" + t.where(k0) + " (" + t.text(k0, "variant") + ", rate " +
                                        t.text(k0, "request_rate") + ")");
    sr.options.vllm_args = "vllm serve MODEL --max-model-len 8192";
    if (sr.proto.weights == "awq-int4") sr.options.vllm_args += " --quantization awq";
    const std::size_t first = out.size();
    add_serve(out, sr, result_from_json(res, v));
    if (copy_slip)
      for (std::size_t i = first; i < out.size(); ++i)
        if (out[i].metric == "median_tpot_ms" || out[i].metric == "p90_tpot_ms")
          unscore(out[i], "P50 TPOT = P90 TPOT on the page (a copy slip): kept as published, not scored");
  }
}

void wangraying(const Source& s, std::vector<Row>& out) {
  const CsvTable t(s.dir / "table.csv");
  std::map<std::string, std::vector<std::size_t>> runs;
  for (std::size_t k = 0; k < t.rows(); ++k) runs[t.text(k, "schedule_policy")].push_back(k);
  for (const auto& [policy, ks] : runs) {
    const std::size_t k0 = ks.front();
    const std::int64_t n = t.integer(k0, "num_prompts", 1), in = t.integer(k0, "input_len", 1),
                       o = t.integer(k0, "output_len", 1);
    Json res = {{"backend", "sglang"}, {"model_id", t.text(k0, "hf_model")}, {"num_prompts", n}, {"completed", n},
                {"request_rate", t.number(k0, "request_rate")}, {"total_input_tokens", n * in},
                {"total_output_tokens", n * o}};
    for (std::size_t k : ks) {
      std::string m = t.text(k, "metric");
      res[m] = t.number(k, "value");
    }
    Json run = {{"gpu", t.text(k0, "gpu")}, {"model", t.text(k0, "model")}, {"tp", 1}, {"weights", "bf16"},
                {"engine", "sglang"}, {"engine_version", t.text(k0, "engine_version")}};
    ServeRun sr = serve_run(s, run, "table.csv:" + t.where(k0) + " (policy " + policy + ")");
    sr.options.scenario["engine"]["max_num_batched_tokens"] = t.integer(k0, "chunked_prefill_size", 1);
    if (policy != "FCFS" && policy != "fcfs")
      sr.unscored = "SGLang schedule policy '" + policy + "': llmsim schedules first come, first served";
    add_serve(out, sr, result_from_json(res, "policy " + policy));
  }
}

void livinfly(const Source& s, std::vector<Row>& out) {
  const Json runs = runs_of(s);
  static const std::map<std::string, std::string> rename = {
      {"mean_e2e_latency_ms", "mean_e2el_ms"}, {"median_e2e_latency_ms", "median_e2el_ms"},
      {"std_e2e_latency_ms", "std_e2el_ms"},   {"p99_e2e_latency_ms", "p99_e2el_ms"}};
  static const std::vector<std::string> keep = {
      "duration", "completed", "total_input_tokens", "total_output_tokens", "request_throughput", "input_throughput",
      "output_throughput", "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
      "median_tpot_ms", "std_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "median_itl_ms", "std_itl_ms", "p95_itl_ms",
      "p99_itl_ms", "mean_e2el_ms", "median_e2el_ms", "std_e2el_ms", "p99_e2el_ms"};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Json& run = runs[i];
    const std::string file = run.at("result").get<std::string>();
    std::ifstream in(s.dir / file);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      ++n;
      const Json j = parse_json(line, file + ":" + std::to_string(n));
      Json res = {{"backend", j.value("backend", "sglang")}, {"model_id", file}};
      const Json& rate = j.at("request_rate");
      if (rate.is_number()) res["request_rate"] = rate;
      else res["request_rate"] = "inf";
      for (auto it = j.begin(); it != j.end(); ++it) {
        const auto r = rename.find(it.key());
        const std::string key = r == rename.end() ? it.key() : r->second;
        if (std::find(keep.begin(), keep.end(), key) != keep.end() && it.value().is_number()) res[key] = it.value();
      }
      res["num_prompts"] = res.value("completed", 0);
      // The random dataset with random_range_ratio 0: SGLang's sampler draws each prompt and output length uniformly
      // from [1, L] (bench_serving.py sample_random_requests). Drawn here the same way (fixed seed), so the run is
      // replayed with the stated distribution instead of its mean.
      if (j.value("dataset_name", "") == "random" && j.value("random_range_ratio", 1.0) == 0.0) {
        const std::int64_t li = j.at("random_input_len"), lo = j.at("random_output_len");
        std::mt19937_64 rng(static_cast<std::uint64_t>(n));
        std::vector<std::int64_t> ins, outs;
        for (std::int64_t q = 0; q < res.value("completed", std::int64_t{0}); ++q) {
          ins.push_back(std::uniform_int_distribution<std::int64_t>(1, li)(rng));
          outs.push_back(std::uniform_int_distribution<std::int64_t>(1, lo)(rng));
        }
        res["input_lens"] = ins;
        res["output_lens"] = outs;
      }
      ServeRun sr = serve_run(s, run, file + ":" + std::to_string(n) + ":runs[" + std::to_string(i) + "]");
      const bool vllm = sr.proto.engine == "vllm";
      if (vllm) {
        // VLLM_USE_V1=0: the V0 engine of the 0.9.1 release (a V0 policy named with 0.8-0.10 runs the vllm-v0
        // runtime, spec/engine_json). Its _set_default_args_v0 turns chunked prefill on for
        // max_model_len > 32768 (Qwen3-8B's 40960; budget 2048, SchedulerConfig's default then); Mistral-7B's
        // 32768 keeps V0's prefill-first scheduler.
        if (sr.proto.model == "qwen3-8b") {
          sr.options.scenario["engine"]["policy"] = "chunked";
          sr.options.scenario["engine"]["max_num_batched_tokens"] = 2048;
        } else {
          sr.options.scenario["engine"]["policy"] = "vllm-v0";
        }
        sr.options.vllm_args = "vllm serve MODEL";
      }
      add_serve(out, sr, result_from_json(res, file + ":" + std::to_string(n)));
      Row c = sr.proto;
      c.metric = "concurrency";
      c.measured = j.value("concurrency", 0.0);
      unscore(c, "mean requests in flight (SGLang's 'concurrency'): check_vllm_result does not state it");
      out.push_back(c);
    }
  }
}

void mtilyxuegao(const Source& s, std::vector<Row>& out) {
  const Json runs = runs_of(s);
  std::vector<Json> lines;
  {
    std::ifstream in(s.dir / "result.jsonl");
    std::string line;
    int n = 0;
    while (std::getline(in, line))
      if (line.find('{') != std::string::npos) lines.push_back(parse_json(line, "result.jsonl:" + std::to_string(++n)));
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Json& run = runs[i];
    const std::string prefix = run.at("select").at("run_name_prefix");
    const Release rel = release_of("sglang", text(s, run, "engine_version"));
    const std::string weights = weights_id(text(s, run, "weights"));
    // SGLang's default chunked_prefill_size on an 80 GB card is 8192 (server_args.py); bench_one_batch_server's batch
    // goes through that scheduler.
    StaticRun st{text(s, run, "gpu"), "qwen3-4b.json", weights, "auto", 1, rel.runtime, 8192};
    const std::int64_t b = run.at("batch"), in = run.at("input_len"), o = run.at("output_len");
    for (const Json& l : lines) {
      const std::string name = l.at("run_name");
      if (name.rfind(prefix, 0) != 0 || name.size() != prefix.size() + 1) continue;
      const std::string where = "result.jsonl:" + name + ":runs[" + std::to_string(i) + "]";
      std::optional<analysis::StaticBatchTiming> timing;
      std::string err = rel.error;
      if (err.empty() && weights.empty()) err = "weight format '" + text(s, run, "weights") + "' is not in the catalogue";
      if (err.empty()) {
        try {
          err = kv_overflow(s, st, b, in, o);
          if (err.empty()) timing = static_timing(s, st, b, in, o);
        } catch (const ConfigError& e) {
          err = e.what();
        }
      }
      Row lat = static_row(s, st, where, b, in, o, "latency_s", l.at("latency").get<double>());
      lat.engine = "sglang";
      Row dec = static_row(s, st, where, b, in, o, "output_throughput", l.at("output_throughput").get<double>());
      dec.engine = "sglang";
      Row all = static_row(s, st, where, b, in, o, "overall_throughput", l.at("overall_throughput").get<double>());
      all.engine = "sglang";
      if (!err.empty()) {
        unscore(lat, err);
        unscore(dec, err);
        unscore(all, err);
      } else {
        lat.predicted = timing->total_s();
        // The file's output_throughput is batch x output / (latency - TTFT) (batch x output / latency would be less
        // than half of it): the decode phase's tokens/s.
        dec.predicted = timing->decode_s > 0 ? static_cast<double>(b * o) / timing->decode_s : 0;
        if (!(dec.predicted > 0)) unscore(dec, "one output token: no decode phase");
        dec.note = dec.scored ? "read as batch x output / (latency - TTFT)" : dec.note;
        all.predicted = static_cast<double>(b * (in + o)) / timing->total_s();
        unscore(all, "batch x (input + output) / latency: the same latency as latency_s (scored)");
        all.predicted = static_cast<double>(b * (in + o)) / timing->total_s();
      }
      out.push_back(lat);
      out.push_back(dec);
      out.push_back(all);
    }
  }
}

// llama-bench rows, as reference_sets.cpp's llamacpp_rows predicts them.
Row llama_row(const Source& s, const std::string& where, const std::string& gpu, const std::string& model,
              const std::string& weights, const std::string& metric, double measured) {
  Row r = proto(s, where);
  r.engine = "llama.cpp";
  r.runtime = spec::to_string(spec::Runtime::llama_cpp);
  r.gpu = gpu;
  r.model = model;
  r.weights = weights;
  r.kv_dtype = "fp16";
  r.batch = 1;
  r.metric = metric;
  r.measured = measured;
  r.higher_is_better = true;
  return r;
}

perf::CostModel llama_model(const Source& s, const std::string& gpu, const std::string& model,
                            const std::string& weights) {
  return cost_model_for(gpu, model_ref(s, model), weights, "fp16", 1, true, s.dir, spec::Runtime::llama_cpp);
}

/// The first integer written in `s` ("default (512)" -> 512), or `otherwise`.
std::int64_t first_integer(const std::string& s, std::int64_t otherwise) {
  const auto b = s.find_first_of("0123456789");
  if (b == std::string::npos) return otherwise;
  return std::stoll(s.substr(b));
}

bool hbm_card(const std::string& gpu) { return !spec::Catalog::builtin().gpu(gpu).mig_profiles.empty(); }

void xiongjiedai(const Source& s, std::vector<Row>& out) {
  const CsvTable t(s.dir / "table.csv");
  for (std::size_t k = 0; k < t.rows(); ++k) {
    const std::string gpu = t.text(k, "gpu"), weights = weights_id(t.text(k, "weights"));
    const std::string test = t.text(k, "test");
    const bool pp = test.rfind("pp", 0) == 0;
    Row r = llama_row(s, "table.csv:" + t.where(k) + " (" + t.text(k, "result_file") + ")", gpu, t.text(k, "model"),
                      weights.empty() ? t.text(k, "weights") : weights, pp ? "prefill_tok_per_s" : "decode_tok_per_s",
                      t.number(k, "value"));
    r.input = t.integer(k, "input_len", 0, 0);
    r.output = t.integer(k, "output_len", 0, 0);
    r.context = pp ? static_cast<double>(r.input) : static_cast<double>(r.output) / 2;
    const auto gpus = t.integer(k, "gpus", 1);
    const double cap = t.text(k, "power_cap_w").empty() ? 0 : t.number(k, "power_cap_w");
    if (gpus > 1) {
      unscore(r, "llama.cpp layer split over " + std::to_string(gpus) + " GPUs (layers run in sequence): not modelled");
    } else if (weights.empty()) {
      unscore(r, "weight format '" + t.text(k, "weights") + "' is not in the catalogue");
    } else if (gpu == "rtx3090-24gb" && cap > 0 && cap < 350) {
      unscore(r, "RTX 3090 power-capped to " + t.text(k, "power_cap_w") + " W (stock 350 W)");
    } else if (weights == "fp16" && hbm_card(gpu)) {
      unscore(r, "llama.cpp F16 on an HBM card reaches 33-55 % of bandwidth; llmsim models a vLLM-class engine there");
    } else {
      try {
        const perf::CostModel cm = llama_model(s, gpu, r.model, weights);
        if (pp) {
          analysis::StaticBatchOptions o;
          o.max_batched_tokens = 512;  // llama-bench's default n_ubatch
          r.predicted = static_cast<double>(r.input) / analysis::static_batch(cm, 1, r.input, 1, o).prefill_s;
        } else {
          r.predicted = static_cast<double>(r.output) / analysis::decode_run_s(cm, 1, 0, r.output);
        }
      } catch (const ConfigError& e) {
        unscore(r, e.what());
      }
    }
    out.push_back(r);
  }
}

void llamacpp_prs(const Source& s, std::vector<Row>& out) {
  const CsvTable t(s.dir / "table.csv");
  for (std::size_t k = 0; k < t.rows(); ++k) {
    const std::string gpu = t.text(k, "gpu"), weights = weights_id(t.text(k, "weights"));
    const std::string metric = t.text(k, "metric");
    Row r = llama_row(s, "table.csv:" + t.where(k) + " (PR " + t.text(k, "pr") + ", " + t.text(k, "build") + ")", gpu,
                      t.text(k, "model"), weights.empty() ? t.text(k, "weights") : weights,
                      metric == "prompt_tok_per_s" ? "prefill_tok_per_s" : metric, t.number(k, "value"));
    const std::int64_t in = t.integer(k, "input_len", 0, 0), depth = t.integer(k, "depth", 0, 0),
                       ub = first_integer(t.text(k, "n_ubatch"), 512);  // "default (512)"
    r.input = in;
    r.context = static_cast<double>(depth + in);
    const std::string fa = t.text(k, "flash_attn");
    if (r.model.empty()) {
      unscore(r, "the row's model ('" + t.text(k, "llama_bench_model_type") + "') is not identified");
    } else if (weights.empty()) {
      unscore(r, "weight format '" + t.text(k, "weights") + "' is not in the catalogue");
    } else if (metric != "prompt_tok_per_s") {
      unscore(r, "metric '" + metric + "' is not a llama-bench pp/tg rate llmsim predicts");
    } else if (fa.rfind("on", 0) == 0) {
      unscore(r, "llama.cpp with flash attention on: the llama.cpp runtime is its default (FA off) of builds ~2800");
    } else if (weights == "fp16" && hbm_card(gpu)) {
      unscore(r, "llama.cpp F16 on an HBM card reaches 33-55 % of bandwidth; llmsim models a vLLM-class engine there");
    } else {
      try {
        // ppN with n_ubatch u: the prompt in u-token forward passes (u = 1..8 are batched single-token passes),
        // after `depth` tokens already in the cache (pp512@d32768): the prompt's share of the whole prefill.
        const perf::CostModel cm = llama_model(s, gpu, r.model, weights);
        analysis::StaticBatchOptions o;
        o.max_batched_tokens = ub;
        const double all = analysis::static_batch(cm, 1, depth + in, 1, o).prefill_s;
        const double before = depth > 0 ? analysis::static_batch(cm, 1, depth, 1, o).prefill_s : 0.0;
        r.predicted = static_cast<double>(in) / (all - before);
        r.note = "n_ubatch " + std::to_string(ub) + (depth > 0 ? ", after " + std::to_string(depth) + " tokens" : "");
      } catch (const ConfigError& e) {
        unscore(r, e.what());
      }
    }
    out.push_back(r);
  }
}

void llmservingsim(const Source& s, std::vector<Row>& out) {
  // The per-request timestamps give the run's lengths and arrival rate; its measured summary (validation/summary.txt,
  // the vLLM column) is compared. The per-request timestamps themselves are kept unscored (their statistics are).
  std::vector<std::int64_t> ins, outs;
  std::vector<double> arrivals;
  std::vector<Row> per_request;
  {
    std::ifstream in(s.dir / "vllm/requests.jsonl");
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      if (line.find('{') == std::string::npos) continue;
      const Json j = parse_json(line, "vllm/requests.jsonl:" + std::to_string(++n));
      ins.push_back(j.at("input_toks"));
      outs.push_back(j.at("output_toks"));
      arrivals.push_back(j.at("arrival_time"));
      for (const char* key : {"first_token_ts", "last_token_ts"}) {
        Row r = proto(s, "vllm/requests.jsonl:" + std::to_string(n));
        r.metric = key;
        r.measured = j.at(key);
        unscore(r, "per-request timestamp: compared through the summary statistics of validation/summary.txt");
        per_request.push_back(r);
      }
    }
  }
  Json res = {{"backend", "vllm"}, {"model_id", "meta-llama/Llama-3.1-8B"}};
  const auto n = static_cast<std::int64_t>(ins.size());
  res["num_prompts"] = n;
  res["completed"] = n;
  std::int64_t ti = 0, to = 0;
  for (auto x : ins) ti += x;
  for (auto x : outs) to += x;
  res["total_input_tokens"] = ti;
  res["total_output_tokens"] = to;
  const auto [lo, hi] = std::minmax_element(arrivals.begin(), arrivals.end());
  res["request_rate"] = static_cast<double>(n - 1) / (*hi - *lo);
  res["input_lens"] = ins;
  res["output_lens"] = outs;
  std::ifstream sum(s.dir / "validation/summary.txt");
  std::string line;
  static const std::map<std::string, std::string> metric = {{"TTFT", "ttft"}, {"TPOT", "tpot"}, {"Latency", "e2el"}};
  static const std::map<std::string, std::string> stat = {{"Mean", "mean"}, {"Median", "median"}, {"P90", "p90"},
                                                           {"P95", "p95"},   {"P99", "p99"}};
  while (std::getline(sum, line)) {
    std::istringstream ls(line);
    std::string m, st;
    double v = 0;
    if (!(ls >> m >> st >> v) || !metric.count(m) || !stat.count(st)) continue;
    res[stat.at(st) + "_" + metric.at(m) + "_ms"] = v;
  }
  Json run = Json::object();
  ServeRun sr = serve_run(s, run, "validation/summary.txt (vLLM column):runs[0]");
  sr.options.vllm_args = "vllm serve meta-llama/Llama-3.1-8B --max-num-seqs 256 --max-num-batched-tokens 2048 "
                         "--max-model-len 32768 --dtype bfloat16";
  // The summary has no duration or throughputs: the result is built field by field (parse_vllm_result asks for them).
  analysis::VllmResult vr;
  vr.source = "summary.txt";
  vr.backend = "vllm";
  vr.model_id = "meta-llama/Llama-3.1-8B";
  vr.num_prompts = vr.completed = n;
  vr.total_input_tokens = ti;
  vr.total_output_tokens = to;
  vr.request_rate = res["request_rate"].get<double>();
  vr.input_lens = ins;
  vr.output_lens = outs;
  for (auto it = res.begin(); it != res.end(); ++it) {
    auto l = analysis::parse_vllm_latency_key(it.key());
    if (!l || !it.value().is_number()) continue;
    l->key = it.key();
    l->value_ms = it.value().get<double>();
    vr.latencies.push_back(*l);
  }
  add_serve(out, sr, vr);
  for (auto& r : per_request) {
    r.engine = "vllm";
    r.gpu = sr.proto.gpu;
    r.model = sr.proto.model;
    out.push_back(r);
  }
}

void mlenergy(const Source& s, std::vector<Row>& out) {
  const Json runs = runs_of(s);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Json& run = runs[i];
    const std::string file = run.at("result");
    const Json doc = read_json_file((s.dir / file).string());
    const Json& sel = run.at("select");
    for (const Json& c : doc.at("configurations")) {
      bool match = true;
      for (auto it = sel.begin(); it != sel.end(); ++it)
        if (!c.contains(it.key()) || c[it.key()] != it.value()) match = false;
      if (!match) continue;
      for (const char* key : {"output_throughput_tokens_per_sec", "median_itl_ms", "p90_itl_ms", "p95_itl_ms",
                              "p99_itl_ms", "avg_batch_size"}) {
        if (!c.contains(key) || !c[key].is_number()) continue;
        Row r = proto(s, file + ":max_num_seqs=" + c.at("max_num_seqs").dump() + ":runs[" + std::to_string(i) + "]");
        r.engine = "vllm";
        r.runtime = spec::to_string(release_of("vllm", text(s, run, "engine_version")).runtime);
        r.gpu = text(s, run, "gpu");
        r.model = text(s, run, "model");
        r.weights = weights_id(text(s, run, "weights"));
        r.kv_dtype = kv_id("auto", r.weights);
        r.tp = integer(s, run, "tp", 1);
        r.batch = c.at("max_num_seqs");
        r.metric = key;
        r.measured = c[key];
        r.higher_is_better = std::string(key).find("throughput") != std::string::npos;
        unscore(r, "steady-state window of a saturated run whose prompt lengths are not in the data (only the "
                   "output-length histogram): the batch's context cannot be set without guessing them");
        out.push_back(r);
      }
    }
  }
}

void inference_sim(const Source& s, std::vector<Row>& out) {
  const Json runs = runs_of(s);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Json& run = runs[i];
    const std::string file = run.at("result");
    const Json doc = read_json_file((s.dir / file).string());
    if (!doc.contains("successes")) continue;
    std::function<void(const Json&, const std::string&)> walk = [&](const Json& j, const std::string& path) {
      if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) walk(it.value(), path.empty() ? it.key() : path + "." + it.key());
      } else if (j.is_number() && path != "count") {
        Row r = proto(s, file + ":" + path + ":runs[" + std::to_string(i) + "]");
        r.engine = "vllm";
        r.runtime = spec::to_string(release_of("vllm", text(s, run, "engine_version")).runtime);
        r.gpu = text(s, run, "gpu");
        r.model = text(s, run, "model", text(s, run, "hf_model"));
        r.tp = integer(s, run, "tp", 1);
        r.metric = path;
        r.measured = j.get<double>();
        unscore(r, "vLLM 0.15.1 with KV-cache CPU offloading (OffloadingConnector, recompute on failure) and "
                   "multi-turn shared-prefix sessions from inference-perf: the offload connector is not modelled");
        out.push_back(r);
      }
    };
    walk(doc.at("successes"), "");
  }
}

void splitwise(const Source& s, std::vector<Row>& out) {
  const CsvTable t(s.dir / "perf_model.csv");
  const Json runs = runs_of(s);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Json& run = runs[i];
    const Json& sel = run.at("select");
    const std::string model = text(s, run, "model");
    std::string why = "engine and version not stated (vLLM ~0.2.x is only inferred from the paper)";
    if (model.empty()) why = "BLOOM-176B (ALiBi, 2-matrix GELU MLP) is not in the catalogue; " + why;
    if (sel.at("hardware") == "h100-80gb-pcap") why = "power-capped H100s, cap not stated; " + why;
    for (std::size_t k = 0; k < t.rows(); ++k) {
      if (t.text(k, "model") != sel.at("model").get<std::string>() ||
          t.text(k, "hardware") != sel.at("hardware").get<std::string>() ||
          t.text(k, "tensor_parallel") != sel.at("tensor_parallel").get<std::string>())
        continue;
      for (const char* m : {"prompt_time", "token_time", "e2e_time"}) {
        Row r = proto(s, "perf_model.csv:" + t.where(k) + ":runs[" + std::to_string(i) + "]");
        r.engine = "vllm";
        r.gpu = text(s, run, "gpu");
        r.model = model.empty() ? "bloom-176b" : model;
        r.weights = "fp16";
        r.kv_dtype = "fp16";
        r.tp = integer(s, run, "tp", 1);
        r.batch = t.integer(k, "batch_size", 1);
        r.input = t.integer(k, "prompt_size", 1);
        r.output = t.integer(k, "token_size", 1);
        r.metric = std::string(m) + "_ms";
        r.measured = t.number(k, m);
        unscore(r, why);
        out.push_back(r);
      }
    }
  }
}

using Handler = void (*)(const Source&, std::vector<Row>&);

const std::map<std::string, Handler>& handlers() {
  static const std::map<std::string, Handler> h = {
      {"anyscale-rayserve-gptoss-h100", anyscale},
      {"crusoe-l40s-fp8", crusoe},
      {"dstack-h100-405b-fp8", dstack},
      {"inference-sim-training-h100-vllm015", inference_sim},
      {"livinfly-a100pcie-vllm091-sglang047", livinfly},
      {"llamacpp-cuda-pr-tables", llamacpp_prs},
      {"llmservingsim-vllm019-rtx4090", llmservingsim},
      {"mlenergy-v3-h100", mlenergy},
      {"mtilyxuegao-sglang-a100-int8", mtilyxuegao},
      {"simonmo-r1bench-h200-deepseek-r1", simonmo},
      {"splitwise-sim-perf-model", splitwise},
      {"surajssd-aks-a100-vllm083", surajssd},
      {"vllm-pr3692-dbrx-h100", pr3692},
      {"wangraying-sglang035-a100-40gb", wangraying},
      {"xiongjiedai-llamacpp", xiongjiedai},
      {"zhjunqin-vllm041-rtx3090", zhjunqin},
      {"zjuici-vllm025-a100-40gb", zjuici},
  };
  return h;
}

}  // namespace

std::vector<Row> corpus_rows(const fs::path& corpus_dir) {
  std::vector<fs::path> dirs;
  if (fs::is_directory(corpus_dir))
    for (const auto& e : fs::directory_iterator(corpus_dir))
      if (e.is_directory() && fs::exists(e.path() / "RUNS.json")) dirs.push_back(e.path());
  if (dirs.empty()) throw ConfigError(corpus_dir.string(), "holds no corpus source (a folder with RUNS.json)");
  std::sort(dirs.begin(), dirs.end());
  std::vector<Row> rows;
  for (const auto& d : dirs) {
    Source s;
    s.dir = d;
    s.models = corpus_dir.parent_path() / "models";
    s.top = read_json_file((d / "RUNS.json").string());
    if (s.top.value("format", "") != "llmsim-runs" || s.top.value("version", 0) != 1)
      throw ConfigError((d / "RUNS.json").string(), "format: expected \"llmsim-runs\" version 1");
    const Json src = s.top.value("source", Json::object());
    s.name = src.value("name", d.filename().string());
    s.url = src.value("url", "");
    const auto h = handlers().find(d.filename().string());
    if (h == handlers().end())
      throw ConfigError((d / "RUNS.json").string(), "no reader for source '" + d.filename().string() + "'");
    h->second(s, rows);
  }
  return rows;
}

}  // namespace llmsim::validation
