// --vllm-args / --sglang-args as a command's own options (server_options.hpp).
#include "server_options.hpp"

#include <algorithm>
#include <iostream>

#include "llmsim/analysis/server_args.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/scenario_prepass.hpp"
#include "llmsim/spec/vllm_args.hpp"

namespace llmsim::cli {

void add_server_options(po::options_description& opts) {
  opts.add_options()
      ("vllm-args", po::value<std::string>(),
       "a `vllm serve` command line (\"vllm serve MODEL -tp 2 --max-model-len 8192 --kv-cache-dtype fp8\"): its model "
       "and the engine arguments this command takes stand for its options (an option given here wins); flags that do "
       "not change the result are listed on stderr, flags it cannot use and misspelled ones are errors")
      ("sglang-args", po::value<std::string>(),
       "an SGLang server command line (\"python -m sglang.launch_server --model-path M --tp-size 2\"), read as "
       "--vllm-args is (docs/vllm.md lists the flags that map)");
}

namespace {

std::string as_option_value(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::vector<std::string> server_options(const po::variables_map& vm, const ServerOptionMap& map) {
  const std::string vllm = server_command_line(vm, "vllm-args"), sglang = server_command_line(vm, "sglang-args");
  if (vllm.empty() && sglang.empty()) return {};
  const std::string flag = vllm.empty() ? "--sglang-args" : "--vllm-args";
  // The one parser of every scenario command: typed values, misspellings refused, unmodelled flags noted.
  const auto sets = analysis::server_arg_sets(vllm, sglang, Json::object());
  std::vector<std::string> notes = sets.notes;
  // The server's flag each scenario field came from, for the messages ("hardware.tp" -> "--tensor-parallel-size").
  std::vector<std::pair<std::string, std::string>> source;
  Json doc = Json::object();
  for (const auto& [name, value] : sets.sets) {
    if (name == "model" || name.find('.') != std::string::npos) {
      source.emplace_back(name, name == "model" ? "the model" : name);
      spec::set_json_path(doc, name, value);
      continue;
    }
    if (name == "enable_chunked_prefill") {  // a scheduling switch: V1 always chunks, so only "off" would matter
      if (value == true) {
        notes.push_back("--enable-chunked-prefill does not apply to `llmsim " + std::string(map.command) +
                        "` (vLLM V1 always chunks prefills)");
        continue;
      }
      throw ConfigError(flag, "--no-enable-chunked-prefill does not apply to `llmsim " + std::string(map.command) +
                                  "`; run a scenario command (simulate) with this command line");
    }
    for (const auto& a : spec::vllm_aliases())
      if (a.name == name) source.emplace_back(a.target, spec::dashed_flag(name));
    doc[name] = value;
  }
  const Json fields = spec::normalize_vllm_names(JsonView(doc, flag));
  auto from = [&](const std::string& field) {
    std::string s;
    for (const auto& [f, n] : source)
      if (f == field && s.find(n) == std::string::npos) s += (s.empty() ? "" : " / ") + n;
    return s.empty() ? field : s;
  };
  std::vector<std::pair<std::string, Json>> leaves;
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    if (it->is_object())
      for (auto jt = it->begin(); jt != it->end(); ++jt) leaves.emplace_back(it.key() + "." + jt.key(), *jt);
    else
      leaves.emplace_back(it.key(), *it);
  }
  std::vector<std::string> out;
  auto given = [&](const std::string& option) { return vm.count(option) && !vm[option].defaulted(); };
  for (const auto& leaf : leaves) {
    // Named copies, not a structured binding: the lambdas below capture `field`, which clang 14 (the sanitizer and
    // fuzz trees) refuses for a binding.
    const std::string& field = leaf.first;
    const Json& value = leaf.second;
    if (field == "engine.cuda_graphs" && !map.eager_option.empty()) {
      if (value == false && !given(map.eager_option)) out.push_back("--" + map.eager_option);
      continue;
    }
    const auto opt = std::find_if(map.options.begin(), map.options.end(), [&](const auto& p) { return p.first == field; });
    if (opt != map.options.end()) {
      if (!given(opt->second)) {
        out.push_back("--" + opt->second);
        out.push_back(as_option_value(value));
      }
      continue;
    }
    const auto na = std::find_if(map.not_applying.begin(), map.not_applying.end(),
                                 [&](const auto& p) { return p.first == field; });
    if (na != map.not_applying.end()) {
      notes.push_back(from(field) + " does not apply to `llmsim " + map.command + "` (" + na->second + ")");
      continue;
    }
    const std::string what = field == "engine.runtime"
                                 ? "an SGLang server (engine.runtime " + value.dump() + ") cannot be used by `llmsim " +
                                       map.command + "` (it plans vLLM's engine)"
                                 : from(field) + " cannot be used by `llmsim " + map.command + "` (it sets " + field + ")";
    throw ConfigError(flag, what + "; leave it out, or run a scenario command (simulate) with this command line");
  }
  for (const auto& n : notes) std::cerr << "note: " << n << "\n";
  return out;
}

bool parse_args_with_server(int argc, char** argv, const po::options_description& opts, po::variables_map& vm,
                            const std::string& usage, const ServerOptionMap& map) {
  if (!parse_args(argc, argv, opts, vm, usage)) return false;
  const std::vector<std::string> extra = server_options(vm, map);
  if (extra.empty()) return true;
  std::vector<std::string> words(argv, argv + argc);
  words.insert(words.end(), extra.begin(), extra.end());
  std::vector<char*> args;
  for (auto& w : words) args.push_back(w.data());
  vm = po::variables_map();
  return parse_args(static_cast<int>(args.size()), args.data(), opts, vm, usage);
}

}  // namespace llmsim::cli
