// Corpus readers of SGLang files: livinfly (bench_serving JSONL), mtilyxuegao (bench_one_batch_server).
#include <cmath>
#include <fstream>
#include <map>

#include "corpus/common.hpp"
#include "corpus/readers.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"

namespace llmsim::validation::corpus {

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
      // The random dataset's requests are reproduced from SGLang's sampler by the library (analysis/client_sampler:
      // lengths, send times and the vLLM server's refused max_tokens-0 requests), which the line's totals confirm.
      res["client"] = "sglang";
      for (const char* k : {"dataset_name", "random_input_len", "random_output_len", "random_range_ratio"})
        if (j.contains(k)) res[k] = j[k];
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
      } else {
        // The SGLang server's own command line, as `llmsim check --sglang-args` reads it: the *_no files'
        // --disable-radix-cache turns the radix cache off, so bench_serving's ignore_eos requests (serve_run reads
        // the command) are admitted by add_one_req_ignore_eos (docs/engine.md "SGLang"); --enable-torch-compile is
        // listed as not modelled.
        sr.options.sglang_args = text(s, run, "server_command");
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
          if (err.empty()) err = below_weight_stream(s, st, in, o, l.at("latency").get<double>());
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

}  // namespace llmsim::validation::corpus
