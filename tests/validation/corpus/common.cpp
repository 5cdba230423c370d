// The shared part of the corpus readers (corpus/common.hpp).
#include <functional>

#include "corpus/common.hpp"
#include "llmsim/analysis/client_sampler.hpp"
#include "llmsim/analysis/dataset_requests.hpp"
#include "llmsim/analysis/static_batch.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/number.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "llmsim/spec/sglang_admission.hpp"
#include "repo_sets.hpp"

namespace llmsim::validation::corpus {

// ---------------------------------------------------------------------------------------------------------------
// RUNS.json: per-run fields override the top-level ones (data/validation/corpus/README.md).
// (Merge note in corpus_sets.hpp: analysis::parse_bench_runs will replace this lookup.)

const Json* field(const Source& s, const Json& run, const char* key) {
  if (run.is_object() && run.contains(key) && !run[key].is_null()) return &run[key];
  if (s.top.contains(key) && !s.top[key].is_null()) return &s.top[key];
  return nullptr;
}

std::string text(const Source& s, const Json& run, const char* key, const std::string& otherwise) {
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

Release release_of(const std::string& engine, const std::string& version) {
  Release r;
  r.text = engine + "==" + version_word(version);
  try {
    const auto rv = spec::runtime_for_version(spec::parse_engine_version(r.text));
    r.runtime = rv.runtime;
    r.kernels = rv.quant_kernels;
    r.cuda_graphs = rv.cuda_graphs;
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
      else if (!check->not_modelled.empty()) skip = check->not_modelled;
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
  const std::size_t first = out.size();
  if (check) {
    for (const auto& c : check->rows) emit(c.key, c.measured, c.predicted, c.note);
    // The condition the run was simulated under: lengths drawn from the dataset, not the ones the client sent.
    if (result.lists_drawn)
      for (std::size_t k = first; k < out.size(); ++k)
        out[k].note += std::string(out[k].note.empty() ? "" : "; ") + "lengths drawn (" + result.dataset_name +
                       " distribution at the line's means; the line lists none)";
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
  r.client = j.value("client", "vllm");
  if (j.contains("dataset_name") && j["dataset_name"].is_string()) r.dataset_name = j["dataset_name"].get<std::string>();
  if (j.contains("random_input_len") && j["random_input_len"].is_number_integer())
    r.random_input_len = j["random_input_len"].get<std::int64_t>();
  if (j.contains("random_output_len") && j["random_output_len"].is_number_integer())
    r.random_output_len = j["random_output_len"].get<std::int64_t>();
  if (j.contains("random_range_ratio") && j["random_range_ratio"].is_number())
    r.random_range_ratio = j["random_range_ratio"].get<double>();
  analysis::reproduce_sglang_random(r);
  analysis::draw_dataset_requests(r);  // ShareGPT lines: lengths drawn at the line's means (none are listed)
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
  // A run served from the prefix cache an earlier run of the same prompts left (the README states the evidence).
  sr.options.warm_cache = run.is_object() && run.value("warm_cache", false);
  // Whether the client sent ignore_eos, as its command states (SGLang's admission with the radix cache off reads it).
  if (const std::string cmd = text(s, run, "command", ""); !cmd.empty()) sr.options.ignore_eos = spec::client_ignores_eos(cmd);
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

analysis::StaticBatchTiming static_timing(const Source& s, const StaticRun& r, std::int64_t batch, std::int64_t in,
                                          std::int64_t out) {
  const perf::CostModel cm = cost_model_for(r.gpu, model_ref(s, r.model), r.weights, r.kv, r.tp, r.cuda_graphs, s.dir,
                                            r.runtime, r.kernels);
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
  e.cuda_graphs = r.cuda_graphs;
  // The run's budget sets the profiling run's activation peak, which comes out of the pool (V0 without chunking
  // profiles a whole max_model_len prompt).
  if (r.max_batched_tokens > 0) e.max_num_batched_tokens = r.max_batched_tokens;
  const auto plan = memory::plan_memory(model, q, catalog.gpu(r.gpu, "gpu"), spec::ParallelConfig{r.tp, 1}, e,
                                        static_cast<int>(in + out));
  if (!plan.fits) return "does not fit: " + plan.reason;
  const std::int64_t need = batch * (in + out);
  if (need > plan.kv_capacity_tokens)
    return "the batch's KV cache (" + std::to_string(need) + " tokens) exceeds llmsim's KV pool (" +
           std::to_string(plan.kv_capacity_tokens) + " tokens): the engine preempts, which a static batch does not model";
  return "";
}

std::string below_weight_stream(const Source& s, const StaticRun& r, std::int64_t in, std::int64_t out,
                                double measured_s) {
  const auto& catalog = spec::Catalog::builtin();
  const auto model = catalog.model(model_ref(s, r.model), "model");
  if (model.is_moe() || out < 2) return "";
  spec::Quantization q;
  q.weights = spec::weight_format(r.weights, "weights");
  q.kv_dtype = spec::parse_kv_dtype(r.kv, "kv_dtype");
  spec::EngineConfig e;
  e.runtime = r.runtime;
  const auto gpu = catalog.gpu(r.gpu, "gpu");
  const auto plan = memory::plan_memory(model, q, gpu, spec::ParallelConfig{r.tp, 1}, e, static_cast<int>(in + out));
  const double floor_s =
      static_cast<double>(out - 1) * static_cast<double>(plan.per_gpu.weights_bytes) / gpu.memory_bandwidth;
  if (!(measured_s < floor_s)) return "";
  return "measured " + format_digits(measured_s) + " s for " + std::to_string(out) + " output tokens, below the " +
         format_digits(floor_s) + " s that streaming the weights (" + format_digits(static_cast<double>(plan.per_gpu.weights_bytes) / 1e9) +
         " GB per GPU) once per decode step takes at the datasheet's peak bandwidth: the requests ended before "
         "their stated output length";
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

Json runs_of(const Source& s) { return s.top.contains("runs") ? s.top["runs"] : Json::array(); }

/// vLLM serve result files named by the runs (crusoe, surajssd, simonmo, anyscale, dstack's "serve" runs).
void serve_files(const Source& s, std::vector<Row>& out, const std::function<std::string(const Json&)>& why_not,
                 const std::string& extra_args) {
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

}  // namespace llmsim::validation::corpus
