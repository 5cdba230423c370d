// Corpus readers of vLLM latency / throughput files and transcribed tables: dstack (405B on H100, DeepSeek-R1 on
// H200), vLLM PR 3692, zjuici, zhjunqin, wangraying.
#include <cmath>
#include <cstdio>
#include <tuple>
#include <functional>
#include <map>

#include "corpus/common.hpp"
#include "corpus/readers.hpp"
#include "csv_table.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/runtime_version.hpp"

namespace llmsim::validation::corpus {

void dstack(const Source& s, std::vector<Row>& out) {
  const std::string model = "llama-3.1-405b.json";
  const Json runs = runs_of(s);
  const Release rel = release_of("vllm", text(s, Json::object(), "engine_version"));
  // Meta's Llama-3.1-405B-FP8 is an fbgemm_fp8 checkpoint: per-channel weights, dynamic per-token activations, in
  // the MLPs only (its modules_to_not_convert keeps self_attn bf16): RUNS.json's "fp8-dynamic+attn16", read here as
  // the serve runs read it.
  // Offline runs (benchmark_latency / benchmark_throughput): vLLM 0.6.3's scripts pass enable_chunked_prefill=False
  // unless told otherwise, so max_model_len 91680 > 32K does not turn chunking on for them as it does for
  // `vllm serve` (spec::bench_scripts_pass_chunked_flag): prefill-first, budget max(91680, 2048), and the profiling
  // run of a 91,680-token step takes the KV pool's room.
  const bool offline_unchunked = spec::bench_scripts_pass_chunked_flag(rel.text);
  const std::int64_t offline_budget = offline_unchunked ? 91680 : 512;
  StaticRun st{"h100-80gb-sxm", model, weights_id(text(s, Json::object(), "weights")), "auto", 8, rel.runtime,
               offline_budget, rel.kernels, rel.cuda_graphs};
  // The serve files by request rate: the table's runs sent the same 1000 ShareGPT prompts (benchmark_serving.py's
  // default --seed 0 and --num-prompts 1000 on one dataset file; every row's total_input_tokens is the files'
  // 215196 and the files' input_lens agree request by request), so a row takes its prompt lengths from them.
  std::map<double, analysis::VllmResult> served;
  for (const auto& run : runs)
    if (run.value("kind", "") == "serve") {
      analysis::VllmResult r = analysis::read_vllm_result((s.dir / run.at("result").get<std::string>()).string());
      if (r.request_rate) served[*r.request_rate] = std::move(r);
    }
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
        std::string over = kv_overflow(s, st, b, in, o);
        if (over.empty()) over = below_weight_stream(s, st, in, o, r.measured);
        if (!over.empty()) {
          unscore(r, over);
        } else {
          r.predicted = static_timing(s, st, b, in, o).total_s();
          r.note = offline_unchunked ? "prefill-first (benchmark_latency.py of 0.6.3 passes enable_chunked_prefill="
                                       "False), budget 91680"
                                     : "prefill in 512-token chunks (chunked prefill, on for max_model_len > 32K)";
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
      sr.options.vllm_args = "vllm serve meta-llama/Llama-3.1-405B-FP8 --tensor-parallel-size 8 --max-model-len 91680 ";
      sr.options.vllm_args += offline_unchunked ? "--enable-chunked-prefill False"  // the script's explicit False
                                                : "--enable-chunked-prefill --max-num-batched-tokens 512";
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
        // Prompt lengths from the serve file at the same rate (same prompts, same order); output lengths its
        // per-request ones scaled to the row's own total (each run generated its own outputs).
        const auto same = served.find(t.number(k, "request_rate"));
        if (same != served.end() && same->second.input_lens.size() == static_cast<std::size_t>(res["num_prompts"]) &&
            same->second.total_input_tokens == res["total_input_tokens"].get<std::int64_t>()) {
          const auto& f = same->second;
          const double scale = static_cast<double>(res["total_output_tokens"].get<std::int64_t>()) /
                               static_cast<double>(std::max<std::int64_t>(1, f.total_output_tokens));
          Json outs = Json::array();
          for (auto o : f.output_lens) outs.push_back(std::llround(static_cast<double>(o) * scale));
          res["input_lens"] = f.input_lens;
          res["output_lens"] = outs;
        }
        std::string args = "vllm serve meta-llama/Llama-3.1-405B-FP8 --tensor-parallel-size 8 --max-model-len 91680";
        args += " --num-scheduler-steps " + t.text(k, "num-scheduler-step");
        // FALSE = chunked prefill set off (`--enable-chunked-prefill False`): vllm#6666's default-on rule above 32K
        // tokens of context applies only to an unset flag, and the FALSE rows are a different run from their TRUE
        // twins with the same other columns (median ITL 55-67 ms against 114 ms). Without chunking vLLM 0.6.x's
        // SchedulerConfig refuses a budget below max_model_len (91680), so the column's 512 was not in force there:
        // the budget is the default, max(max_model_len, 2048).
        if (t.text(k, "enable-chunked-prefill") == "FALSE") {
          args += " --enable-chunked-prefill False";
        } else {
          args += " --enable-chunked-prefill";
          args += " --max-num-batched-tokens " + t.text(k, "max-num-batched-tokens");
        }
        args += " --max-num-seqs " + t.text(k, "max-num-seqs");
        args += " --max-seq-len-to-capture " + t.text(k, "max-seq-len-to-capture");
        if (t.text(k, "enable-prefix-caching") == "TRUE") args += " --enable-prefix-caching";
        ServeRun sr = serve_run(s, run, file + ":" + t.where(k));
        sr.options.vllm_args = args;
        // Multi-step with chunked prefill is its own path in vLLM 0.6 (vllm#8378): prompts are not chunked ("the
        // current multi-step + chunked prefill capability does not actually support chunking prompts", the 0.6.x
        // scheduler), prefill steps run single-step and decodes n steps. llmsim would run Sarathi's 512-token chunks.
        if (t.integer(k, "num-scheduler-step", 1) > 1 && t.text(k, "enable-chunked-prefill") != "FALSE")
          sr.unscored = "not representable: vLLM 0.6's multi-step + chunked-prefill scheduler (vllm#8378; prompts not "
                        "chunked, prefills single-step, decodes " + t.text(k, "num-scheduler-step") +
                        " steps at a time) is not modelled";
        // Three rows are the files in serving/ themselves (same duration and token totals): scored there.
        if (same != served.end() && same->second.total_output_tokens == res["total_output_tokens"].get<std::int64_t>() &&
            std::abs(same->second.duration_s - t.number(k, "duration")) < 1e-3)
          sr.unscored = "the same run as serving/" + std::filesystem::path(same->second.source).filename().string() +
                        " (scored there)";
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
                 rel.runtime, 0, rel.kernels, rel.cuda_graphs};
    const auto b = t.integer(k, "batch_size", 1), in = t.integer(k, "input_len", 1), o = t.integer(k, "output_len", 1);
    Row r = static_row(s, st, "table.csv:" + t.where(k), b, in, o, "avg_latency", t.number(k, "value"));
    if (!rel.error.empty()) {
      unscore(r, rel.error);
    } else if (t.text(k, "variant").find("before") != std::string::npos) {
      unscore(r, "main before the PR ran untuned fused-MoE configs; vLLM 0.4.0 shipped the PR's tuned ones, which "
                 "the runtime stands for");
    } else if (const std::string over = kv_overflow(s, st, b, in, o); !over.empty()) {
      unscore(r, over);
    } else if (const std::string early = below_weight_stream(s, st, in, o, r.measured); !early.empty()) {
      unscore(r, early);
    } else {
      r.predicted = static_timing(s, st, b, in, o).total_s();
    }
    out.push_back(r);
  }
}

namespace {
/// Why a run with `--quantization <flag>` cannot have run the release it states ("" when it can): vLLM's GPTQ support
/// (vllm#916) was first released in 0.2.6 — before it, `--quantization gptq` fails with "Unknown quantization method:
/// gptq. Must be one of ['awq', 'squeezellm']" (vllm#1769) — and CUDA graphs for GPTQ came in 0.2.7 (vllm#2318). A
/// GPTQ run stating 0.2.5 ran a later release the source does not name, so whether its steps were eager (0.2.6) or
/// CUDA graphs (0.2.7+) is unknown: its rows stay unscored rather than priced on a guessed release.
std::string unstated_release(const std::string& flag, const std::string& version) {
  int major = 0, minor = 0, patch = 0;
  if (flag != "gptq" || std::sscanf(version.c_str(), "%d.%d.%d", &major, &minor, &patch) != 3) return "";
  if (std::make_tuple(major, minor, patch) >= std::make_tuple(0, 2, 6)) return "";
  return "the file states vLLM " + version + " with --quantization gptq, which that release rejects (GPTQ support, "
         "vllm#916, was first released in 0.2.6; CUDA graphs for GPTQ in 0.2.7, vllm#2318): the release that ran is "
         "not stated, so eager or CUDA-graph steps are unknown";
}
}  // namespace

void zjuici(const Source& s, std::vector<Row>& out) {
  const CsvTable t(s.dir / "table.csv");
  // The burst runs: one simulated serve result per (file, input, output).
  std::map<std::string, std::vector<std::size_t>> burst;
  for (std::size_t k = 0; k < t.rows(); ++k) {
    const std::string w = weights_id(t.text(k, "weights"));
    const std::string q = t.text(k, "quantization_flag");
    const std::string weights = q == "awq" ? "awq-int4" : q == "gptq" ? "gptq-int4" : w;
    const Release rel = release_of("vllm", t.text(k, "engine_version"));
    StaticRun st{t.text(k, "gpu"), t.text(k, "model"), weights, "auto", 1, rel.runtime, 0, rel.kernels, rel.cuda_graphs};
    const auto in = t.integer(k, "input_len", 1), o = t.integer(k, "output_len", 1);
    const std::string metric = t.text(k, "metric");
    const std::string where = "table.csv:" + t.where(k) + " (" + t.text(k, "result_file") + ")";
    if (t.text(k, "phase").find("one by one") != std::string::npos) {
      Row r = static_row(s, st, where, 1, in, o, metric, t.number(k, "value"));
      const std::string doubt = unstated_release(q, t.text(k, "engine_version"));
      if (!doubt.empty()) {
        unscore(r, doubt);
      } else if (metric == "mean_e2el_per_output_token_ms") {
        try {
          const std::string over = kv_overflow(s, st, 1, in, o);
          if (!over.empty()) throw ConfigError("kv", over);
          const std::string early = below_weight_stream(s, st, in, o, r.measured * static_cast<double>(o) / 1e3);
          if (!early.empty()) throw ConfigError("latency", early);
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
    if (const std::string doubt = unstated_release(q, t.text(k0, "engine_version")); !doubt.empty()) sr.unscored = doubt;
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
    // benchmark_serving.py --dataset-name sharegpt (the table's dataset column): the page keeps only token totals,
    // so each request's lengths are drawn from ShareGPT's distribution at the run's means, as for the other ShareGPT
    // lines without lists (analysis/dataset_requests), not run in lockstep at the means.
    if (t.text(k0, "dataset").rfind("sharegpt", 0) == 0) res["dataset_name"] = "sharegpt";
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


/// dstack's DeepSeek-R1 study on 8x H200 and 8x MI300X: SGLang bench_serving summaries (online_results.csv, one row per
/// run, the client's key names) and benchmark_throughput results (offline_results.csv). A row's GPU and backend
/// columns name its engine and server in RUNS.json's source.servers ("gpu|backend", or "gpu|*" for a whole card);
/// an entry with "unscored" keeps the row's values with that reason.
void dstack_r1(const Source& s, std::vector<Row>& out) {
  const Json& servers = s.top.at("source").at("servers");
  static const std::map<std::string, std::string> rename = {
      {"mean_e2e_latency_ms", "mean_e2el_ms"}, {"median_e2e_latency_ms", "median_e2el_ms"},
      {"std_e2e_latency_ms", "std_e2el_ms"},   {"p99_e2e_latency_ms", "p99_e2el_ms"}};
  static const std::vector<std::string> measured = {
      "duration", "request_throughput", "input_throughput", "output_throughput", "mean_ttft_ms", "median_ttft_ms",
      "std_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms", "std_tpot_ms", "p99_tpot_ms", "mean_itl_ms",
      "median_itl_ms", "std_itl_ms", "p99_itl_ms", "mean_e2e_latency_ms", "median_e2e_latency_ms",
      "std_e2e_latency_ms", "p99_e2e_latency_ms"};
  const Json runs = runs_of(s);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Json& run = runs[i];
    const std::string file = run.at("result").get<std::string>(), kind = run.value("kind", "");
    if (kind != "online" && kind != "offline")
      throw ConfigError((s.dir / "RUNS.json").string(), "runs[" + std::to_string(i) + "].kind: expected \"online\" or "
                                                         "\"offline\", got \"" + kind + "\"");
    const CsvTable t(s.dir / file);
    for (std::size_t k = 0; k < t.rows(); ++k) {
      const std::string gpu = t.text(k, "GPU"), backend = t.text(k, "backend");
      const Json* sv = nullptr;
      for (const std::string& key : {gpu + "|" + backend, gpu + "|*"})
        if (servers.contains(key)) {
          sv = &servers[key];
          break;
        }
      if (!sv)
        throw ConfigError(t.where(k), "GPU '" + gpu + "' with backend '" + backend +
                                          "' has no entry in RUNS.json source.servers");
      Json cond = *sv;
      if (!cond.contains("gpu")) cond["gpu"] = gpu;
      if (!cond.contains("engine")) cond["engine"] = backend;
      ServeRun sr = serve_run(s, cond, file + ":" + t.where(k) + " (" + gpu + ", " + backend + ")");
      std::string why = cond.value("unscored", "");
      if (kind == "online") {
        if (sr.proto.engine == "sglang") {
          sr.options.sglang_args = cond.value("server_command", "");
          sr.options.vllm_args.clear();
          if (sr.options.sglang_args.find("--enable-dp-attention") != std::string::npos && why.empty())
            why = "SGLang data-parallel attention (--enable-dp-attention) is not modelled";
        }
        Json res = {{"backend", "vllm"}, {"model_id", text(s, run, "hf_model")}, {"client", "sglang"}};
        for (const auto& key : measured)
          if (!t.text(k, key).empty()) res[rename.count(key) ? rename.at(key) : key] = t.number(k, key);
        for (const char* key : {"completed", "total_input_tokens", "total_output_tokens"})
          res[key] = t.integer(k, key, 0);
        res["num_prompts"] = res["completed"];
        const std::string dataset = t.text(k, "dataset_name");
        if (dataset == "random") {
          res["dataset_name"] = "random";
          res["random_input_len"] = t.integer(k, "random_input_len", 1);
          res["random_output_len"] = t.integer(k, "random_output_len", 1);
          res["random_range_ratio"] = t.number(k, "random_range_ratio");
        } else if (why.empty()) {
          why = "SGLang's " + dataset + " dataset (groups of prompts sharing a system prompt, served from the prefix "
                "cache) is not simulated";
        }
        analysis::VllmResult r = result_from_json(res, t.where(k));
        if (!t.text(k, "max_concurrency").empty())
          r.max_concurrency = static_cast<int>(t.integer(k, "max_concurrency", 1));
        if (!why.empty()) sr.unscored = why;
        add_serve(out, sr, r);
        Row c = sr.proto;
        c.metric = "concurrency";
        c.measured = t.number(k, "concurrency");
        unscore(c, "mean requests in flight (SGLang's 'concurrency'): check_vllm_result does not state it");
        out.push_back(c);
      } else {
        // benchmark_throughput.py: every prompt at once through LLM.generate (or sgl.Engine), fixed lengths.
        if (why.empty()) why = cond.value("offline_unscored", "");
        const std::int64_t n = t.integer(k, "num_requests", 1), in = t.integer(k, "input_len", 1),
                           o = t.integer(k, "output_len", 1);
        analysis::VllmResult res;
        res.source = file;
        res.backend = "vllm";
        res.model_id = text(s, run, "hf_model");
        res.num_prompts = res.completed = n;
        res.total_input_tokens = n * in;
        res.total_output_tokens = n * o;
        res.duration_s = t.number(k, "elapsed_time");
        res.scalars = {{"duration", res.duration_s},
                       {"total_token_throughput", t.number(k, "tokens_per_second")},
                       {"request_throughput", t.number(k, "requests_per_second")}};
        sr.options.vllm_args = cond.value("offline_command", "");
        sr.options.scenario["engine"]["api_server"] = false;  // LLM.generate in the script's own process
        if (!why.empty()) sr.unscored = why;
        add_serve(out, sr, res);
      }
    }
  }
}

}  // namespace llmsim::validation::corpus
