// Reading vLLM benchmark result files. Key names from vllm/benchmarks/serve.py and the older
// benchmarks/benchmark_serving.py (result dict of benchmark() and the save-result block of main()).
#include "llmsim/analysis/vllm_result.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <tuple>

#include "llmsim/core/error.hpp"

namespace llmsim::analysis {

namespace {

/// Python's json module writes NaN, Infinity and -Infinity; JSON has no such literals. Outside strings they
/// become null, "inf" and "-inf" so the document parses and the fields say what they were.
std::string python_literals_to_json(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  bool in_string = false;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < in.size()) out += in[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
    } else if (in.substr(i, 3) == "NaN") {
      out += "null";
      i += 2;
    } else if (in.substr(i, 9) == "-Infinity") {
      out += "\"-inf\"";
      i += 8;
    } else if (in.substr(i, 8) == "Infinity") {
      out += "\"inf\"";
      i += 7;
    } else {
      out += c;
    }
  }
  return out;
}

/// What a JSON object that is not a vLLM result looks like, for the error message ("" = no idea).
std::string foreign_tool(const Json& j) {
  if (j.contains("mean_e2e_latency_ms") || j.contains("total_output_tokens_retokenized")) {
    return "SGLang's bench_serving output (key 'mean_e2e_latency_ms')";
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key().rfind("results_", 0) == 0) return "LLMPerf output (key '" + it.key() + "')";
  }
  if (j.contains("time_to_first_token") || (j.contains("request_throughput") && j["request_throughput"].is_object())) {
    return "GenAI-Perf / AIPerf output (per-metric objects)";
  }
  if (j.contains("metrics") && j["metrics"].is_object()) return "a benchmark report with a 'metrics' object";
  if (j.contains("benchmarks") || j.contains("benchmark_report")) return "a GuideLLM report";
  return "";
}

const char* const kRequired[] = {"duration", "completed", "total_input_tokens", "total_output_tokens",
                                 "request_throughput"};

const std::vector<std::string> kScalarKeys{"duration",           "completed",        "failed",
                                           "total_input_tokens", "total_output_tokens", "request_throughput",
                                           "request_goodput",    "input_throughput", "output_throughput",
                                           "total_token_throughput"};

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
  const std::string body = key.substr(0, key.size() - 3);
  const auto us = body.rfind('_');
  if (us == std::string::npos) return std::nullopt;
  std::string stat = body.substr(0, us), metric = body.substr(us + 1);
  if (metric == "latency") metric = "e2el";  // benchmark_serving.py's name before E2EL
  if (metric != "ttft" && metric != "tpot" && metric != "itl" && metric != "e2el") return std::nullopt;
  VllmLatencyStat s;
  s.key = key;
  s.metric = metric;
  if (stat == "mean" || stat == "median" || stat == "std") {
    s.statistic = stat;
    return s;
  }
  if (stat.size() < 2 || stat[0] != 'p') return std::nullopt;
  // vLLM writes p99, p99.9: digits and one '.', nothing strtod would also take (hex "p0x5f", "pinf", "p1e2").
  if (stat.find_first_not_of("0123456789.", 1) != std::string::npos || stat[1] == '.' ||
      std::count(stat.begin(), stat.end(), '.') > 1)
    return std::nullopt;
  char* end = nullptr;
  const double q = std::strtod(stat.c_str() + 1, &end);
  if (end != stat.c_str() + stat.size() || !(q > 0 && q <= 100)) return std::nullopt;
  s.statistic = "p";
  s.percentile = q;
  return s;
}

VllmResult parse_vllm_result(std::string_view text, const std::string& source) {
  const Json doc = parse_json(python_literals_to_json(text), source);
  try {
    const JsonView v(doc, "");
    if (!doc.is_object()) {
      throw ConfigError(source, "not a vLLM benchmark result: expected a JSON object (`vllm bench serve "
                                "--save-result` writes one), got " + std::string(doc.type_name()));
    }
    const std::string tool = foreign_tool(doc);
    if (!tool.empty() && (doc.contains("mean_e2e_latency_ms") || !v.has("completed") || !v.has("duration"))) {
      throw ConfigError(source, "not a vLLM benchmark result: this looks like " + tool +
                                    "; llmsim check reads `vllm bench serve --save-result` (benchmark_serving.py) files");
    }
    for (const char* k : kRequired) {
      if (v.has(k)) continue;
      if (doc.contains(k))  // present as null, or NaN (read as null above): not missing, but not a number either
        throw ConfigError(source, std::string(k) + ": NaN or null (the run did not measure it); expected a number");
      throw ConfigError(source, "not a vLLM benchmark result: missing '" + std::string(k) +
                                    "' (`vllm bench serve --save-result` files have duration, completed, "
                                    "total_input_tokens, mean_ttft_ms, ...)");
    }
    VllmResult r;
    r.source = source;
    r.date = v.string_or("date", "");
    r.backend = v.string_or("backend", "");
    r.model_id = v.string_or("model_id", "");
    r.tokenizer_id = v.string_or("tokenizer_id", "");
    r.num_prompts = v.integer_or("num_prompts", 0);
    r.completed = v.integer("completed");
    r.failed = v.integer_or("failed", 0);
    r.duration_s = v.number("duration");
    r.total_input_tokens = v.integer("total_input_tokens");
    r.total_output_tokens = v.integer("total_output_tokens");
    if (!(r.duration_s > 0)) v["duration"].fail("must be > 0 s, got " + format_given(r.duration_s));
    if (r.completed < 0) v["completed"].fail("must be >= 0, got " + std::to_string(r.completed));
    if (r.failed < 0) v["failed"].fail("must be >= 0, got " + std::to_string(r.failed));
    if (r.total_input_tokens < 0)
      v["total_input_tokens"].fail("must be >= 0, got " + std::to_string(r.total_input_tokens));
    if (r.total_output_tokens < 0)
      v["total_output_tokens"].fail("must be >= 0, got " + std::to_string(r.total_output_tokens));
    if (v.has("request_rate")) {
      const auto& rr = doc["request_rate"];
      if (rr.is_string()) {
        const std::string s = rr.get<std::string>();
        if (s != "inf") {
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
    for (std::size_t i = 0; i < r.input_lens.size(); ++i) {
      if (r.input_lens[i] < 1) {
        throw ConfigError(source, "input_lens[" + std::to_string(i) + "]: must be >= 1 token, got " +
                                      std::to_string(r.input_lens[i]));
      }
    }
    return r;
  } catch (const ConfigError& e) {
    if (e.path() == source) throw;
    throw ConfigError(source, e.what());  // "bench.json: duration: expected a number, got string"
  }
}

VllmResult read_vllm_result(const std::string& path) {
  return parse_vllm_result(read_text_file(path, "vLLM result"), path);
}

}  // namespace llmsim::analysis
