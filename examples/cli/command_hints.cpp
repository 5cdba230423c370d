#include "command_hints.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

#include "llmsim/core/names.hpp"
#include "llmsim/spec/vllm_args.hpp"

namespace llmsim::cli {
namespace {

struct Hint {
  std::vector<std::string_view> words;  // what a user types for it (lower case)
  std::string_view text;                // the command(s) that answer it, with how
};

// The words a new user types for what a command does, and where that lives. One table: add a word here, not a
// special case in main().
const std::vector<Hint>& hints() {
  static const std::vector<Hint> table = {
      {{"month", "monthly", "bill", "billing", "cost", "costs", "price", "prices", "pricing", "budget", "invoice",
        "day", "daily", "hourly", "week"},
       "a bill is printed by 'capacity' (the fleet sized for cost.target_qps, per month; with workload.daily_profile "
       "sized at the peak hour and billed for the replica-hours its autoscaler runs) and 'compare' (the same for "
       "several cards); 'simulate' runs a daily curve over workload.days hour by hour and bills what ran, e.g. "
       "'llmsim simulate examples/scenarios/month-autoscale.json'"},
      {{"gpus", "gpu", "models", "model", "quants", "quant", "list", "ls", "cards"},
       "'catalog' lists what ships: llmsim catalog gpus|models|quants"},
      {{"benchmark", "bench", "validate", "validation", "verify", "measure", "measured"},
       "'check' puts a vllm/sglang benchmark file beside llmsim's prediction ('make validate' runs the whole "
       "fidelity report)"},
      {{"run", "serve", "sim", "simulation", "latency", "ttft", "tpot"},
       "'simulate' runs one scenario and prints its latencies, throughput and bill"},
      {{"size", "sizing", "replicas", "qps", "saturation", "max-qps", "load"},
       "'capacity' finds the largest load inside the SLO and the replicas for cost.target_qps"},
      {{"plan", "optimize", "optimise", "cheapest", "best", "tune", "autotune"},
       "'search' finds the cheapest deployment meeting the SLO at --target-qps"},
      {{"html", "page", "pdf", "summary"}, "'report' writes compare's answer as one HTML page"},
      {{"grid", "matrix", "batch"}, "'sweep' runs a grid of scenarios"},
      {{"vram", "kv", "oom", "fits", "context"}, "'memory' says whether a model fits a card and the longest context"},
      {{"iteration", "kernel", "ops", "roofline"}, "'step' prices one engine iteration, op by op"},
      {{"profile", "microbench", "microbenchmark"}, "'calibrate-fit' fits a GPU profile from microbenchmarks or runs"},
      {{"vllm", "sglang", "server", "args"},
       "a server's own command line goes to 'simulate' (the other scenario commands, 'memory' and 'step') as "
       "--vllm-args \"vllm serve MODEL ...\" or --sglang-args"},
  };
  return table;
}

}  // namespace

std::string unknown_command_message(const std::string& given, const std::vector<std::string>& commands) {
  std::string list;
  for (const auto& c : commands) list += (list.empty() ? "" : ", ") + c;
  std::string hint;
  if (const auto close = close_matches(given, commands); !close.empty()) {
    hint = "did you mean ";
    for (std::size_t i = 0; i < close.size(); ++i) hint += (i ? ", '" : "'") + close[i] + "'";
    hint += "?";
  } else if (!given.empty() && given[0] == '-') {
    hint = "options go after the command: 'llmsim <command> " + given + "' (llmsim --help lists the commands)";
  } else {
    const std::string word = to_lower(given);
    for (const auto& h : hints()) {
      std::vector<std::string> words(h.words.begin(), h.words.end());
      if (!misspelling_of(word, words).empty() || std::find(words.begin(), words.end(), word) != words.end()) {
        hint = std::string(h.text);
        break;
      }
    }
    if (hint.empty()) hint = "'llmsim --help' says what each command does";
  }
  return "unknown command '" + given + "'; " + hint + " (valid: " + list + ")";
}

std::string unknown_option_message(const std::string& given, const std::vector<std::string>& options) {
  const std::string head = "unrecognised option '" + given + "'; ";
  std::string name = given;
  name.erase(0, name.find_first_not_of('-'));
  if (const auto eq = name.find('='); eq != std::string::npos) name.resize(eq);
  std::string underscored = name;
  std::replace(underscored.begin(), underscored.end(), '-', '_');
  const auto& vllm = spec::known_vllm_engine_flags();
  const bool short_vllm = given == "-tp" || given == "-pp" || given == "-dp" || given == "-q";
  const bool takes_vllm = std::find(options.begin(), options.end(), "vllm-args") != options.end();
  const bool own = std::find(options.begin(), options.end(), name) != options.end();
  if (!own && takes_vllm && (short_vllm || std::find(vllm.begin(), vllm.end(), underscored) != vllm.end()))
    return head + "it is a vLLM server flag: give the server's command line as --vllm-args \"vllm serve MODEL " +
           given + " ...\"";
  if (const auto close = close_matches(name, options); !close.empty() && !name.empty()) {
    std::string hint = "did you mean ";
    for (std::size_t i = 0; i < close.size(); ++i) hint += (i ? ", '--" : "'--") + close[i] + "'";
    return head + hint + "?";
  }
  return head + "'--help' lists this command's options";
}

}  // namespace llmsim::cli
