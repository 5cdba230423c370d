// Corpus readers of per-request traces and experiment folders: llmservingsim, ml.energy, splitwise (inference-sim:
// corpus/inference_perf.cpp).
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "corpus/common.hpp"
#include "corpus/readers.hpp"
#include "csv_table.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"

namespace llmsim::validation::corpus {

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
  // bench/core/runner drives an AsyncLLM in-process: no HTTP server in front (perf/serving_path.hpp).
  sr.options.scenario["engine"]["api_server"] = false;
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
                   "output-length histogram), nor recoverable: ml-energy/benchmark @c1d6557f draws the prompts from "
                   "Hugging Face datasets tokenized at run time (mlenergy/benchmark/llm/datasets.py) and records no "
                   "prompt-length statistic; the batch's context cannot be set without guessing them");
        out.push_back(r);
      }
    }
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

}  // namespace llmsim::validation::corpus
