// Corpus reader of `vllm bench serve` console summaries printed inside a page (gpustack): the
// "============ Serving Benchmark Result ============" blocks the client prints, copied into a Markdown page under
// the serving command that ran. A run is the n-th block of its page (RUNS.json runs[].block, 1-based); its lines
// ("Mean TTFT (ms):   41875.09") become the keys of a saved result file and go through check_vllm_result as one.
#include <cctype>
#include <fstream>
#include <map>

#include "corpus/common.hpp"
#include "corpus/readers.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"

namespace llmsim::validation::corpus {

namespace {

/// The printed label of a summary line, as vLLM's benchmark client prints it, and the saved file's key for it.
/// Labels the map lacks are kept as unscored rows (they are measurements llmsim does not state).
const std::map<std::string, std::string>& printed_keys() {
  static const std::map<std::string, std::string> k = {
      {"successful requests", "completed"},
      {"maximum request concurrency", "max_concurrency"},
      {"benchmark duration (s)", "duration"},
      {"total input tokens", "total_input_tokens"},
      {"total generated tokens", "total_output_tokens"},
      {"request throughput (req/s)", "request_throughput"},
      {"output token throughput (tok/s)", "output_throughput"},
      {"total token throughput (tok/s)", "total_token_throughput"},
      {"mean ttft (ms)", "mean_ttft_ms"},   {"median ttft (ms)", "median_ttft_ms"}, {"p99 ttft (ms)", "p99_ttft_ms"},
      {"mean tpot (ms)", "mean_tpot_ms"},   {"median tpot (ms)", "median_tpot_ms"}, {"p99 tpot (ms)", "p99_tpot_ms"},
      {"mean itl (ms)", "mean_itl_ms"},     {"median itl (ms)", "median_itl_ms"},   {"p99 itl (ms)", "p99_itl_ms"},
      {"mean e2el (ms)", "mean_e2el_ms"},   {"median e2el (ms)", "median_e2el_ms"}, {"p99 e2el (ms)", "p99_e2el_ms"}};
  return k;
}

std::string printed_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string printed_trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

struct PrintedBlock {
  int line = 0;                                  ///< the block's header line (1-based)
  std::vector<std::pair<std::string, double>> values;  ///< label (as printed) and number, in order
};

/// Every summary block of a page, in order.
std::vector<PrintedBlock> printed_blocks(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw ConfigError(file.string(), "cannot be read");
  std::vector<PrintedBlock> blocks;
  std::string line;
  int n = 0;
  bool inside = false;
  while (std::getline(in, line)) {
    ++n;
    const std::string t = printed_trim(line);
    if (t.find("Serving Benchmark Result") != std::string::npos) {
      blocks.push_back({n, {}});
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (t.empty() || t.find_first_not_of('=') == std::string::npos) {  // the closing rule or the end of the block
      if (!blocks.back().values.empty()) inside = false;
      continue;
    }
    const auto colon = t.rfind(':');
    if (colon == std::string::npos || t.front() == '-') continue;  // a section rule ("----Time to First Token----")
    const std::string number = printed_trim(t.substr(colon + 1));
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(number, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != number.size())
      throw ConfigError(file.string() + ":" + std::to_string(n), "expected 'label: number' in a benchmark summary, got '" +
                                                                    t + "'");
    blocks.back().values.emplace_back(printed_trim(t.substr(0, colon)), v);
  }
  return blocks;
}

/// The command from its program on (a page's script may set environment variables before it).
std::string from_program(const std::string& cmd, const std::string& program) {
  const auto p = cmd.find(program);
  return p == std::string::npos ? "" : cmd.substr(p);
}

/// Why a run is kept unscored by its conditions ("" when it is simulated).
std::string not_modelled(const std::string& cmd) {
  if (cmd.find("--speculative") != std::string::npos)
    return "speculative decoding (a draft model or MTP): the run's acceptance rates are not recorded";
  if (cmd.find("--enable-expert-parallel") != std::string::npos || cmd.find("--ep-size") != std::string::npos)
    return "expert parallel is not modelled";
  if (cmd.find("--enable-dp-attention") != std::string::npos)
    return "SGLang data-parallel attention (--enable-dp-attention) is not modelled";
  return "";
}

}  // namespace

void gpustack(const Source& s, std::vector<Row>& out) {
  const Json runs = runs_of(s);
  std::map<std::string, std::vector<PrintedBlock>> pages;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Json& run = runs[i];
    const std::string here = "runs[" + std::to_string(i) + "]";
    const std::string file = run.at("result").get<std::string>();
    if (!pages.count(file)) pages[file] = printed_blocks(s.dir / file);
    const auto& blocks = pages[file];
    const int b = integer(s, run, "block", 0);
    if (b < 1 || b > static_cast<int>(blocks.size()))
      throw ConfigError((s.dir / "RUNS.json").string(), here + ".block: " + std::to_string(b) + " is not a summary of " +
                                                           file + " (it prints " + std::to_string(blocks.size()) + ")");
    const PrintedBlock& block = blocks[static_cast<std::size_t>(b - 1)];
    const std::string where = file + ":" + std::to_string(block.line) + ":" + here;
    // Every page's "Benchmark Script" runs `vllm bench serve --backend openai-chat --endpoint /v1/chat/completions`.
    Json res = {{"backend", "openai-chat"}, {"model_id", text(s, run, "hf_model")}};
    std::vector<std::pair<std::string, double>> unknown;
    for (const auto& [label, v] : block.values) {
      const auto k = printed_keys().find(printed_lower(label));
      if (k == printed_keys().end()) {
        unknown.emplace_back(label, v);
        continue;
      }
      const bool count = k->second == "completed" || k->second == "max_concurrency" || k->second.rfind("total_", 0) == 0;
      res[k->second] = count && k->second != "total_token_throughput" ? Json(static_cast<std::int64_t>(std::llround(v)))
                                                                      : Json(v);
    }
    for (const char* need : {"completed", "total_input_tokens", "total_output_tokens", "duration"})
      if (!res.contains(need))
        throw ConfigError((s.dir / file).string() + ":" + std::to_string(block.line),
                          std::string("the summary lacks '") + need + "' (" + here + ")");
    res["num_prompts"] = res["completed"];
    if (text(s, run, "dataset") == "sharegpt") res["dataset_name"] = "sharegpt";
    analysis::VllmResult r = result_from_json(res, where);
    if (res.contains("max_concurrency")) r.max_concurrency = res["max_concurrency"].get<int>();
    ServeRun sr = serve_run(s, run, where);
    const std::string cmd = text(s, run, "server_command");
    if (sr.proto.engine == "sglang") {
      sr.options.sglang_args = from_program(cmd, "python3 -m sglang");
      sr.options.vllm_args.clear();
    } else {
      sr.options.vllm_args = from_program(cmd, "vllm serve");
    }
    if (sr.options.vllm_args.empty() && sr.options.sglang_args.empty())
      throw ConfigError((s.dir / "RUNS.json").string(), here + ".server_command: expected a 'vllm serve' or "
                                                             "'python3 -m sglang.launch_server' line");
    if (const std::string why = not_modelled(cmd); !why.empty() && sr.unscored.empty()) sr.unscored = why;
    add_serve(out, sr, r);
    for (const auto& [label, v] : unknown) {
      Row u = sr.proto;
      u.metric = label;
      u.measured = v;
      unscore(u, "printed by the client, not stated by check_vllm_result");
      out.push_back(u);
    }
  }
}

}  // namespace llmsim::validation::corpus
