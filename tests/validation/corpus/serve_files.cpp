// Corpus readers of vLLM serve result files and serve tables: crusoe, wmx (sweep_table), AccelMark, surajssd,
// simonmo, anyscale.
#include <algorithm>
#include <filesystem>
#include <map>

#include "corpus/common.hpp"
#include "corpus/readers.hpp"
#include "csv_table.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"

namespace llmsim::validation::corpus {

void crusoe(const Source& s, std::vector<Row>& out) {
  // --enable-chunked-prefill without a budget: vLLM 0.5.x's default for chunked prefill is 512 tokens (the source
  // notes say so); llmsim's 'chunked' policy would otherwise take its own default.
  serve_files(s, out, [](const Json&) { return std::string(); }, " --max-num-batched-tokens 512");
}

/// A published concurrency-sweep table (wmx): one closed-loop run per row (--request-rate inf --max-concurrency C),
/// fixed lengths with --ignore-eos, the columns in vLLM's result key names. The lengths and the prompt count come
/// from RUNS.json (input_len, output_len, num_prompts).
void sweep_table(const Source& s, std::vector<Row>& out) {
  const Json runs = runs_of(s);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Json& run = runs[i];
    const CsvTable t(s.dir / run.at("result").get<std::string>());
    const std::int64_t n = integer(s, run, "num_prompts", 0), in = integer(s, run, "input_len", 0),
                       o = integer(s, run, "output_len", 0);
    if (n < 1 || in < 1 || o < 1)
      throw ConfigError((s.dir / "RUNS.json").string(),
                        "runs[" + std::to_string(i) + "]: num_prompts, input_len and output_len must be positive");
    for (std::size_t k = 0; k < t.rows(); ++k) {
      const std::int64_t c = t.integer(k, "concurrency", 1);
      Json res = {{"backend", "vllm"}, {"model_id", text(s, run, "hf_model")}, {"num_prompts", n}, {"completed", n},
                  {"total_input_tokens", n * in}, {"total_output_tokens", n * o}};
      for (const char* col : {"duration", "request_throughput", "output_throughput", "total_token_throughput",
                              "mean_ttft_ms", "median_ttft_ms", "p95_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
                              "median_tpot_ms", "p95_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "median_itl_ms",
                              "p95_itl_ms", "p99_itl_ms", "mean_e2el_ms", "median_e2el_ms", "p95_e2el_ms", "p99_e2el_ms"})
        if (t.has(col)) res[col] = t.number(k, col);
      analysis::VllmResult r = result_from_json(res, t.where(k));
      r.max_concurrency = static_cast<int>(c);
      ServeRun sr = serve_run(s, run, "table.csv:" + t.where(k) + " (concurrency " + std::to_string(c) + ")");
      sr.options.vllm_args = text(s, run, "server_command");
      add_serve(out, sr, r);
    }
  }
}

/// AccelMark's 'interactive' scenario: the suite's first N dataset requests sent one at a time (a closed loop of 1)
/// through an in-process vLLM engine; TTFT and TPOT percentiles per run. The prompt lengths are the dataset's
/// input_tokens (the run's "table": one CSV per dataset) plus the chat template's tokens; output lengths are not
/// recorded (a fixed output_len, which at batch 1 barely moves TPOT and not TTFT). The template's tokens are known for
/// the Llama-3 models only: for the others (Mixtral, Qwen2.5) the prompt length in their tokenizer is unknown, so their
/// TTFT is kept unscored and only TPOT is scored.
void accelmark_interactive(const Source& s, std::vector<Row>& out) {
  // The Llama-3 chat template around one user message: 5 header tokens before the text, eot and 4 assistant-header
  // tokens after it, and the BOS that tokenizing the formatted string adds (RUNS.json notes: an assumption).
  constexpr std::int64_t kChatTemplateTokens = 11;
  static const std::map<std::string, std::string> keys = {
      {"ttft_ms_p50", "median_ttft_ms"}, {"ttft_ms_p90", "p90_ttft_ms"}, {"ttft_ms_p99", "p99_ttft_ms"},
      {"tpot_ms_p50", "median_tpot_ms"}, {"tpot_ms_p90", "p90_tpot_ms"}, {"tpot_ms_p99", "p99_tpot_ms"}};
  const Json runs = runs_of(s);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Json& run = runs[i];
    const std::string file = run.at("result").get<std::string>();
    const std::string table = text(s, run, "table", "input_tokens.csv");
    const CsvTable lens(s.dir / table);
    const std::int64_t n = integer(s, run, "num_prompts", 0), o = integer(s, run, "output_len", 0);
    if (n < 1 || o < 2 || static_cast<std::int64_t>(lens.rows()) < n)
      throw ConfigError((s.dir / "RUNS.json").string(), "runs[" + std::to_string(i) + "]: num_prompts, output_len or "
                                                         "the rows of " + table + " are missing");
    const bool llama3 = text(s, run, "hf_model").starts_with("meta-llama/Meta-Llama-3-");
    std::vector<std::int64_t> ins, outs;
    for (std::int64_t k = 0; k < n; ++k) {
      ins.push_back(lens.integer(static_cast<std::size_t>(k), "input_tokens", 1) + (llama3 ? kChatTemplateTokens : 0));
      outs.push_back(o);
    }
    const Json doc = read_json_file((s.dir / file).string());
    const Json& m = doc.at("metrics").at("interactive");
    Json res = {{"backend", "vllm"}, {"model_id", text(s, run, "hf_model")}, {"num_prompts", n}, {"completed", n}};
    std::int64_t ti = 0;
    for (auto x : ins) ti += x;
    res["total_input_tokens"] = ti;
    res["total_output_tokens"] = n * o;
    res["input_lens"] = ins;
    res["output_lens"] = outs;
    for (const auto& [from, to] : keys)
      if (m.contains(from) && m[from].is_number()) res[to] = m[from];
    analysis::VllmResult r = result_from_json(res, file);
    r.max_concurrency = 1;
    ServeRun sr = serve_run(s, run, file + ":runs[" + std::to_string(i) + "]");
    // The runner streams through an AsyncLLMEngine in its own process: no HTTP server in front (perf/serving_path).
    sr.options.scenario["engine"]["api_server"] = false;
    if (sr.options.vllm_args.find(" --dtype ") == std::string::npos)
      throw ConfigError((s.dir / "RUNS.json").string(), "runs[" + std::to_string(i) + "].server_command: expected the "
                                                         "engine arguments as a 'vllm serve' line");
    const std::size_t first = out.size();
    add_serve(out, sr, r);
    if (llama3) continue;
    for (std::size_t k = first; k < out.size(); ++k) {
      Row& row = out[k];
      if (!row.scored || row.metric.find("ttft") == std::string::npos) continue;
      const double predicted = row.predicted;
      unscore(row, "prompt length unknown: the dataset's token counts are not in " + text(s, run, "hf_model") +
                       "'s tokenizer, nor is its chat template counted (TPOT is scored)");
      row.predicted = predicted;
    }
  }
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

double client_start_s(const analysis::VllmResult& r) {
  const std::string& d = r.date;
  const bool digits = d.size() == 15 && d[8] == '-' &&
                      std::all_of(d.begin(), d.end(), [](char c) { return c == '-' || (c >= '0' && c <= '9'); });
  if (!digits) throw ConfigError(r.source + ": date", "expected YYYYMMDD-HHMMSS, got '" + d + "'");
  if (!(r.duration_s > 0)) throw ConfigError(r.source + ": duration", "expected a duration > 0 s");
  const double end =
      std::stoi(d.substr(9, 2)) * 3600.0 + std::stoi(d.substr(11, 2)) * 60.0 + std::stoi(d.substr(13, 2));
  return end - r.duration_s;
}

/// The start of each of a fleet's clients at one concurrency (`partN/concC.json` beside `file`, N = 1..parts),
/// seconds after the earliest: run_bm.sh starts the clients together, but each walks its own sweep, so their runs at
/// one concurrency start apart (a client that lost fewer requests ends each step later and starts the next late).
std::vector<double> client_start_offsets(const Source& s, const std::string& file, int parts) {
  const std::filesystem::path conc = std::filesystem::path(file).filename(),
                              fleet = std::filesystem::path(file).parent_path().parent_path();
  std::vector<double> starts;
  for (int part = 1; part <= parts; ++part)
    starts.push_back(client_start_s(
        analysis::read_vllm_result((s.dir / fleet / ("part" + std::to_string(part)) / conc).string())));
  const double first = *std::min_element(starts.begin(), starts.end());
  for (double& x : starts) x -= first;
  return starts;
}

/// Ray Serve LLM fleet (anyscale): R replicas of one TP4 vLLM engine behind Ray Serve's router, loaded by R parallel
/// clients, each a closed loop of C requests in flight whose file is one `partN/concC.json`. Simulated as the
/// fleet (hardware.replicas R, router power_of_two: Ray Serve's default request router, PowerOfTwoChoicesRequestRouter,
/// sends each request to the less loaded of two replicas drawn at random) under the R clients' whole load
/// (R x C in flight, R x completed requests), each client's closed loop from its own start (client_start_offsets);
/// the latencies of one client's requests are the fleet's, its throughputs are the fleet's divided by R (every
/// client sends the same load; the fleet's run also holds the seconds before a late client joined).
///
/// A client that lost many requests (num_prompts - completed >= kDegradedLostShare of them; the cause is not in the
/// file) is kept unscored, its predictions printed: its completed requests crossed a degraded path to the fleet.
/// The engines are shared — Ray Serve 2.51's ingress routes every request by power of two choices over all replicas
/// (a replica's DeploymentHandle does not prefer its node) — yet on one fleet at one time the client that lost
/// (almost) none measures a TPOT 20-40 % below every sibling that lost many: a difference outside the engines, which
/// llmsim does not model (docs/cost-model.md, "Ray Serve's failed requests"). The files' lost shares fall in two
/// groups, at most 3.75 % (6 files) or at least 12 % (92 files); kDegradedLostShare sits in that gap, where any value
/// splits them alike.
void anyscale(const Source& s, std::vector<Row>& out) {
  constexpr double kDegradedLostShare = 0.10;
  const Json runs = runs_of(s);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Json& run = runs[i];
    const std::string file = run.at("result").get<std::string>();
    ServeRun sr = serve_run(s, run, file + ":runs[" + std::to_string(i) + "]");
    const int replicas = integer(s, run, "replicas", 1), parts = integer(s, run, "client_parts", 1);
    analysis::VllmResult res = analysis::read_vllm_result((s.dir / file).string());
    const std::int64_t sent = res.num_prompts, lost = res.num_prompts - res.completed;
    // --request-rate 1000000000 with --max-concurrency C: vLLM's client sends at once up to its semaphore (a
    // closed loop); the file records the rate as the number.
    if (res.request_rate && *res.request_rate >= 1e6) res.request_rate.reset();
    if (!res.max_concurrency) sr.unscored = "the client's max_concurrency is not in the file";
    if (sr.unscored.empty()) {
      sr.options.scenario["hardware"] = {{"replicas", replicas}, {"router", "power_of_two"}};
      // The clients' own starts (each a closed loop of C), not one start for all R x C.
      sr.options.scenario["workload"]["arrival"] = {{"process", "closed"},
                                                    {"start_offsets_s", client_start_offsets(s, file, parts)}};
      res.max_concurrency = *res.max_concurrency * parts;
      res.num_prompts *= parts;
      res.completed *= parts;
      res.total_input_tokens *= parts;
      res.total_output_tokens *= parts;
      sr.options.vllm_args = "vllm serve openai/gpt-oss-120b -tp " + std::to_string(sr.proto.tp) +
                             " --kv-cache-dtype fp8 --no-enable-prefix-caching";
    }
    const std::size_t first = out.size();
    add_serve(out, sr, res);
    for (std::size_t k = first; k < out.size(); ++k) {
      Row& r = out[k];
      r.batch = res.max_concurrency ? *res.max_concurrency / std::max(1, replicas) : 0;
      if (!throughput_key(r.metric) || !(r.predicted > 0)) continue;
      const bool scored = r.scored;
      r.predicted /= parts;
      r.note = "fleet of " + std::to_string(replicas) + " replicas x TP" + std::to_string(r.tp) + ", throughput / " +
               std::to_string(parts) + " clients" + (r.note.empty() ? "" : "; " + r.note);
      r.scored = scored;
    }
    if (!(static_cast<double>(lost) >= kDegradedLostShare * static_cast<double>(sent))) continue;
    const std::string why = "the client lost " + std::to_string(lost) + " of its " + std::to_string(sent) +
                            " requests (cause not recorded): its path to the fleet was degraded, not the engines";
    for (std::size_t k = first; k < out.size(); ++k) {
      Row& r = out[k];
      const double predicted = r.predicted;
      const std::string note = r.note;
      unscore(r, why + (note.empty() ? "" : "; " + note));
      r.predicted = predicted;
    }
  }
}

}  // namespace llmsim::validation::corpus
