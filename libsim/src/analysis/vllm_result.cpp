// Reading vLLM benchmark result files. Key names from vllm/benchmarks/serve.py and the older
// benchmarks/benchmark_serving.py (result dict of benchmark() and the save-result block of main()).
#include "llmsim/analysis/vllm_result.hpp"

#include "llmsim/analysis/client_sampler.hpp"
#include "llmsim/analysis/dataset_requests.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <tuple>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/slo.hpp"

namespace llmsim::analysis {

namespace {

/// What a JSON object that is not a vLLM or SGLang serving result looks like, for the error message ("" = no idea).
std::string foreign_tool(const Json& j) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key().rfind("results_", 0) == 0) return "LLMPerf output (key '" + it.key() + "')";
  }
  if (j.contains("time_to_first_token") || (j.contains("request_throughput") && j["request_throughput"].is_object())) {
    return "GenAI-Perf / AIPerf output (per-metric objects)";
  }
  if (j.contains("metrics") && j["metrics"].is_object()) return "a benchmark report with a 'metrics' object";
  if (j.contains("benchmarks") || j.contains("benchmark_report")) return "a GuideLLM report";
  if (j.contains("avg_latency") && j.contains("latencies")) return "a vLLM latency result (vllm bench latency)";
  if (j.contains("elapsed_time") && j.contains("requests_per_second")) return "a vLLM throughput result (vllm bench throughput)";
  if (j.contains("prefill_latency") && j.contains("overall_latency")) return "an SGLang bench_one_batch result";
  return "";
}

/// SGLang's bench_serving writes E2EL as *_e2e_latency_ms and counts retokenized output; vLLM's client does neither.
bool written_by_sglang(const Json& j) {
  if (j.contains("total_output_tokens_retokenized") || j.contains("accept_length")) return true;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key().ends_with("_e2e_latency_ms")) return true;
  return false;
}

const char* const kCounted[] = {"duration", "completed", "total_input_tokens", "total_output_tokens",
                                 "request_throughput", "num_prompts"};

const std::vector<std::string> kScalarKeys{"duration",           "completed",           "failed",
                                           "total_input_tokens", "total_output_tokens", "request_throughput",
                                           "request_goodput",    "input_throughput",    "output_throughput",
                                           "total_token_throughput", "total_throughput", "concurrency"};

std::vector<std::int64_t> lens(const JsonView& v, const char* key) {
  std::vector<std::int64_t> out;
  if (!v.has(key)) return out;
  for (const auto& e : v[key].elements()) {
    const auto x = e.as_integer();
    if (x < 0) e.fail("must be >= 0 tokens, got " + std::to_string(x));
    out.push_back(x);
  }
  return out;
}

}  // namespace

std::optional<VllmLatencyStat> parse_vllm_latency_key(const std::string& key) {
  if (key.size() < 6 || key.compare(key.size() - 3, 3, "_ms") != 0) return std::nullopt;
  std::string body = key.substr(0, key.size() - 3);
  const bool sglang_e2e = body.ends_with("_e2e_latency");  // SGLang's bench_serving: p99_e2e_latency_ms
  if (sglang_e2e) body = body.substr(0, body.size() - 8);
  const auto us = body.rfind('_');
  if (us == std::string::npos) return std::nullopt;
  std::string stat = body.substr(0, us), metric = body.substr(us + 1);
  if (metric == "latency" || (sglang_e2e && metric == "e2e")) metric = "e2el";  // benchmark_serving.py's name before E2EL
  if (metric != "ttft" && metric != "tpot" && metric != "itl" && metric != "e2el") return std::nullopt;
  VllmLatencyStat s;
  s.key = key;
  s.metric = metric;
  if (stat == "mean" || stat == "median" || stat == "std") {
    s.statistic = stat;
    return s;
  }
  // vLLM writes p99, p99.9: nothing strtod would also take (hex "p0x5f", "pinf", "p1e2").
  const std::optional<double> pq = spec::parse_percentile_key(stat);
  if (!pq || !(*pq > 0 && *pq <= 100)) return std::nullopt;
  const double q = *pq;
  s.statistic = "p";
  s.percentile = q;
  return s;
}

// The console summary `vllm bench serve` prints (benchmark_serving.py's "Serving Benchmark Result" block) is not the
// saved result: it lacks the request rate, the dataset and the per-request lengths a simulation of the run needs
// (vllm/benchmarks/serve.py prints the block and writes the JSON only with --save-result). Say so, not "invalid JSON".
static void refuse_printed_summary(std::string_view text, const std::string& source) {
  const auto at = text.find("Serving Benchmark Result");
  const auto first = text.find_first_not_of(" \t\r\n");
  if (at == std::string_view::npos || first == std::string_view::npos || text[first] == '{' || text[first] == '[') return;
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  throw ConfigError(source, "line " + std::to_string(line) + " is the summary `vllm bench serve` prints on the console "
                            "('Serving Benchmark Result'), not its saved result: the printout lacks the request rate, "
                            "dataset and request lengths the run is simulated from. Rerun the benchmark with "
                            "--save-result (--result-dir DIR) and give llmsim check the JSON file it writes");
}

VllmResult parse_vllm_result(std::string_view text, const std::string& source) {
  refuse_printed_summary(text, source);
  const Json doc = parse_json(python_literals_to_json(text), source);
  try {
    const JsonView v(doc, "");
    if (!doc.is_object()) {
      throw ConfigError(source, "not a vLLM benchmark result: expected a JSON object (`vllm bench serve "
                                "--save-result` writes one), got " + std::string(doc.type_name()));
    }
    const std::string tool = foreign_tool(doc);
    bool any_latency = false;
    for (auto it = doc.begin(); it != doc.end(); ++it)
      any_latency = any_latency || (parse_vllm_latency_key(it.key()) && !it->is_null());
    if (!tool.empty() && (!v.has("completed") || !any_latency)) {
      // The offline benchmarks' files have a reader too: calibrate-fit's RUNS.json (bench_runs, docs/calibration.md).
      const bool calibration_file = tool.rfind("a vLLM", 0) == 0 || tool.rfind("an SGLang bench_one_batch", 0) == 0;
      throw ConfigError(source, "not a vLLM benchmark result: this looks like " + tool +
                                    "; llmsim check reads `vllm bench serve --save-result` (benchmark_serving.py) and "
                                    "SGLang `bench_serving` files" +
                                    (calibration_file ? std::string("; list this one in a RUNS.json with its command "
                                                                    "line for `llmsim calibrate-fit --runs` "
                                                                    "(docs/calibration.md)")
                                                      : std::string()));
    }
    for (const char* k : kCounted) {
      if (doc.contains(k) && !v.has(k))  // present as null, or NaN (read as null above): not a number
        throw ConfigError(source, std::string(k) + ": NaN or null (the run did not measure it); expected a number");
    }
    if (!v.has("duration") && !any_latency) {
      throw ConfigError(source, "not a vLLM benchmark result: missing 'duration' and no latency statistics "
                                "(`vllm bench serve --save-result` files have duration, completed, "
                                "total_input_tokens, mean_ttft_ms, ...)");
    }
    VllmResult r;
    r.source = source;
    r.client = written_by_sglang(doc) ? "sglang" : "vllm";
    r.date = v.string_or("date", "");
    r.backend = v.string_or("backend", "");
    r.model_id = v.string_or("model_id", "");
    r.tokenizer_id = v.string_or("tokenizer_id", "");
    r.num_prompts = v.integer_or("num_prompts", 0);
    if (!v.has("completed") && !v.has("num_prompts")) {
      throw ConfigError(source, "not a vLLM benchmark result: missing 'completed' (and no 'num_prompts'): the number "
                                "of requests is unknown");
    }
    r.completed = v.has("completed") ? v.integer("completed") : r.num_prompts;
    r.failed = v.integer_or("failed", 0);
    r.duration_s = v.number_or("duration", 0);
    if (v.has("duration") && !(r.duration_s > 0)) v["duration"].fail("must be > 0 s, got " + format_given(r.duration_s));
    if (r.completed < 0) v["completed"].fail("must be >= 0, got " + std::to_string(r.completed));
    if (r.failed < 0) v["failed"].fail("must be >= 0, got " + std::to_string(r.failed));
    // The lengths: the totals over the completed requests, else (a summary without totals) the lengths the run
    // asked for: random_input_len (vLLM and SGLang, unless the dataset was another) or input_len.
    const bool random_set = !v.has("dataset_name") || v.string_or("dataset_name", "") == "random";
    auto mean_len = [&](const char* total, const char* random_key, const char* plain_key, std::int64_t& total_out,
                        std::int64_t& mean_out) {
      if (v.has(total)) {
        total_out = v.integer(total);
        if (total_out < 0) v[total].fail("must be >= 0, got " + std::to_string(total_out));
        mean_out = r.completed > 0 ? std::llround(static_cast<double>(total_out) / static_cast<double>(r.completed)) : 0;
        return;
      }
      const char* key = random_set && v.has(random_key) ? random_key : v.has(plain_key) ? plain_key : nullptr;
      if (!key) {
        throw ConfigError(source, std::string(total) + ": missing, and no " + random_key + " or " + plain_key +
                                      ": the file does not say how long the requests were");
      }
      mean_out = v.integer(key);
      if (mean_out < 1) v[key].fail("must be >= 1 token, got " + std::to_string(mean_out));
    };
    mean_len("total_input_tokens", "random_input_len", "input_len", r.total_input_tokens, r.mean_input_len);
    // Every completed request sent a prompt of at least one token (a mean of 0 would simulate empty prompts).
    if (v.has("total_input_tokens") && r.total_input_tokens < r.completed)
      v["total_input_tokens"].fail("must be at least one token per completed request: " +
                                   std::to_string(r.total_input_tokens) + " for " + std::to_string(r.completed) +
                                   " completed");
    mean_len("total_output_tokens", "random_output_len", "output_len", r.total_output_tokens, r.mean_output_len);
    // The release, when the file states it (vLLM's --metadata version=..., SGLang's server_info.version).
    for (const char* k : {"vllm_version", "engine_version", "version"})
      if (r.version.empty() && doc.contains(k) && doc[k].is_string()) r.version = doc[k].get<std::string>();
    if (r.version.empty() && doc.contains("server_info") && doc["server_info"].is_object() &&
        doc["server_info"].contains("version") && doc["server_info"]["version"].is_string())
      r.version = doc["server_info"]["version"].get<std::string>();
    if (v.has("request_rate")) {
      const auto& rr = doc["request_rate"];
      if (rr.is_string()) {
        const std::string s = rr.get<std::string>();
        if (s != "inf" && s != "Infinity") {  // SGLang's bench_serving writes str(float("inf"))
          char* end = nullptr;
          const double x = std::strtod(s.c_str(), &end);
          if (end != s.c_str() + s.size() || !(x > 0) || !std::isfinite(x)) {
            v["request_rate"].fail("expected a rate > 0 or \"inf\", got '" + s + "'");
          }
          r.request_rate = x;
        }
      } else {
        const double x = v.number("request_rate");
        if (!(x > 0)) v["request_rate"].fail("expected a rate > 0 or \"inf\", got " + format_given(x));
        r.request_rate = x;
      }
    }
    r.burstiness = v.number_or("burstiness", 1.0);
    if (!(r.burstiness > 0)) v["burstiness"].fail("must be > 0, got " + format_given(r.burstiness));
    if (v.has("max_concurrency")) {
      const auto c = v.integer("max_concurrency");
      if (c < 1 || c > 10'000'000) v["max_concurrency"].fail("must be in 1..10000000, got " + std::to_string(c));
      r.max_concurrency = static_cast<int>(c);
    }
    for (const auto& k : kScalarKeys) {
      if (v.has(k)) r.scalars.push_back({k, v.number(k)});  // null (not measured) is left out
    }
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      auto stat = parse_vllm_latency_key(it.key());
      if (!stat || it->is_null()) continue;
      stat->value_ms = v.number(it.key());
      r.latencies.push_back(*stat);
    }
    // vLLM prints TTFT, TPOT, ITL, E2EL in that order, each as mean, median, std, then percentiles.
    auto rank = [](const VllmLatencyStat& s) {
      static const std::vector<std::string> metrics{"ttft", "tpot", "itl", "e2el"}, stats{"mean", "median", "std", "p"};
      const auto m = std::find(metrics.begin(), metrics.end(), s.metric) - metrics.begin();
      const auto t = std::find(stats.begin(), stats.end(), s.statistic) - stats.begin();
      return std::tuple(m, t, s.percentile);
    };
    std::stable_sort(r.latencies.begin(), r.latencies.end(),
                     [&](const VllmLatencyStat& a, const VllmLatencyStat& b) { return rank(a) < rank(b); });
    if (r.latencies.empty()) {
      throw ConfigError(source, "not a vLLM benchmark result: no latency statistics (mean_ttft_ms, p99_tpot_ms, ...)");
    }
    r.input_lens = lens(v, "input_lens");
    r.output_lens = lens(v, "output_lens");
    // SGLang's client lists every request too but states no 'failed': the ones beyond 'completed' failed.
    if (r.client == "sglang" && !v.has("failed") && static_cast<std::int64_t>(r.input_lens.size()) > r.completed)
      r.failed = static_cast<std::int64_t>(r.input_lens.size()) - r.completed;
    if (v.has("ttfts")) {
      for (const auto& e : v["ttfts"].elements()) {
        const double x = e.json().is_null() ? 0.0 : e.as_number();  // a failed request's TTFT is 0 (or null)
        if (x < 0) e.fail("must be >= 0 s, got " + format_given(x));
        r.ttfts_s.push_back(x);
      }
    }
    if (r.input_lens.size() != r.output_lens.size()) {
      throw ConfigError(source, "input_lens has " + std::to_string(r.input_lens.size()) + " entries but output_lens " +
                                    std::to_string(r.output_lens.size()));
    }
    // vLLM's client lists every request it sent, failed ones (output 0) included: completed + failed entries.
    if (v.has("input_lens") &&
        static_cast<std::int64_t>(r.input_lens.size()) != r.completed + r.failed) {
      v["input_lens"].fail("has " + std::to_string(r.input_lens.size()) + " entries, but the run sent completed + "
                           "failed = " + std::to_string(r.completed) + " + " + std::to_string(r.failed) +
                           " requests (vLLM lists every request sent)");
    }
    // vLLM's client writes every per-request list from the same outputs (ttfts, input_lens, output_lens: one entry per
    // request sent), so a list of another length belongs to another run; the per-request TTFTs feed check's notes.
    if (v.has("ttfts") && static_cast<std::int64_t>(r.ttfts_s.size()) != r.completed + r.failed) {
      v["ttfts"].fail("has " + std::to_string(r.ttfts_s.size()) + " entries, but the run sent completed + failed = " +
                      std::to_string(r.completed) + " + " + std::to_string(r.failed) +
                      " requests (vLLM lists every request sent)");
    }
    for (std::size_t i = 0; i < r.input_lens.size(); ++i) {
      if (r.input_lens[i] < 1) {
        throw ConfigError(source, "input_lens[" + std::to_string(i) + "]: must be >= 1 token, got " +
                                      std::to_string(r.input_lens[i]));
      }
    }
    // The dataset the client sampled; SGLang's random dataset without saved lists is reproduced from its sampler.
    r.dataset_name = v.string_or("dataset_name", "");
    for (const auto& [key, into] : {std::pair{"random_input_len", &r.random_input_len},
                                    std::pair{"random_output_len", &r.random_output_len}}) {
      if (doc.contains(key) && doc[key].is_number_integer()) *into = doc[key].get<std::int64_t>();
    }
    if (doc.contains("random_range_ratio") && doc["random_range_ratio"].is_number())
      r.random_range_ratio = doc["random_range_ratio"].get<double>();
    reproduce_sglang_random(r);
    draw_dataset_requests(r);  // a ShareGPT run's lengths, drawn at the file's means (the file lists none)
    return r;
  } catch (const ConfigError& e) {
    if (e.path() == source) throw;
    throw ConfigError(source, e.what());  // "bench.json: duration: expected a number, got string"
  }
}

VllmResult read_vllm_result(const std::string& path) {
  const auto runs = read_vllm_results(path);
  if (runs.size() > 1) {
    throw ConfigError(path, "holds " + std::to_string(runs.size()) + " runs, one per line (JSON lines, as "
                            "--append-result writes): pick one (--run N, Python run=N)");
  }
  return runs.front();
}

std::vector<VllmResult> parse_vllm_results(std::string_view text, const std::string& source) {
  // JSON lines when the first non-blank line is a whole JSON value by itself and more lines follow (a
  // pretty-printed document's first line "{" is not); else one document.
  std::vector<std::pair<int, std::string_view>> lines;
  std::size_t start = 0;
  for (int n = 1; start <= text.size(); ++n) {
    const auto end = std::min(text.find('\n', start), text.size());
    const auto line = text.substr(start, end - start);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) lines.emplace_back(n, line);
    start = end + 1;
  }
  bool json_lines = false;
  if (lines.size() > 1) {
    try {
      json_lines = parse_json(python_literals_to_json(lines.front().second), source).is_object();
    } catch (const ConfigError&) {
      json_lines = false;
    }
  }
  std::vector<VllmResult> out;
  if (!json_lines) {
    out.push_back(parse_vllm_result(text, source));
    return out;
  }
  for (const auto& [n, line] : lines) {
    out.push_back(parse_vllm_result(line, source + " line " + std::to_string(n)));
    out.back().line = n;
  }
  return out;
}

std::vector<VllmResult> read_vllm_results(const std::string& path) {
  return parse_vllm_results(read_text_file(path, "benchmark result"), path);
}

const VllmResult& pick_vllm_run(const std::vector<VllmResult>& runs, int line) {
  for (const auto& r : runs)
    if (r.line == line || (r.line == 0 && line == 1)) return r;
  std::string have;
  for (const auto& r : runs) have += (have.empty() ? "" : ", ") + std::to_string(std::max(r.line, 1));
  const std::string source = runs.empty() ? "" : runs.front().source.substr(0, runs.front().source.rfind(" line "));
  throw ConfigError("--run", "no run on line " + std::to_string(line) + " of " + source + " (runs on line" +
                                 (runs.size() > 1 ? "s " : " ") + have + ")");
}

}  // namespace llmsim::analysis
