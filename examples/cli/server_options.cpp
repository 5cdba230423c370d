// --vllm-args / --sglang-args as a command's own options (server_options.hpp).
#include "server_options.hpp"

#include <algorithm>
#include <iostream>

#include "llmsim/core/error.hpp"

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
  const auto fields = analysis::command_server_fields(map.command, vllm, sglang, analysis::ServerFace::cli);
  std::vector<std::string> out;
  auto given = [&](const std::string& option) { return vm.count(option) && !vm[option].defaulted(); };
  for (const auto& leaf : fields.fields) {
    const std::string& field = leaf.first;
    if (field == "engine.cuda_graphs") {  // only false comes back (--enforce-eager)
      if (!given(map.eager_option)) out.push_back("--" + map.eager_option);
      continue;
    }
    if (field == "engine.enable_prefix_caching" && !map.no_prefix_caching_option.empty()) {  // SGLang implies true
      if (leaf.second == false && !given(map.no_prefix_caching_option)) out.push_back("--" + map.no_prefix_caching_option);
      continue;
    }
    const auto opt = std::find_if(map.options.begin(), map.options.end(), [&](const auto& p) { return p.first == field; });
    if (opt == map.options.end())  // libsim's rule names a field this command has no option for
      throw InternalError("server_options: no option of the command for " + field);
    if (leaf.second.is_boolean()) {  // an on/off flag (--enable-lora): only true has an option to give
      if (leaf.second.get<bool>() && !vm.count(opt->second)) out.push_back("--" + opt->second);
      continue;
    }
    if (!given(opt->second)) {
      out.push_back("--" + opt->second);
      out.push_back(as_option_value(leaf.second));
    }
  }
  for (const auto& n : fields.notes) std::cerr << "note: " << n << "\n";
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

ConfigError flag_named(const ConfigError& e, const ServerOptionMap& map,
                       const std::vector<std::pair<std::string, std::string>>& more) {
  std::vector<std::pair<std::string, std::string>> fields = more;
  fields.insert(fields.end(), map.options.begin(), map.options.end());
  std::vector<std::string> problems;
  for (std::string p : e.problems()) {
    for (const auto& [field, option] : fields)  // the field itself or one inside it ("model.hidden_size")
      if (p.rfind(field, 0) == 0 && p.size() > field.size() && (p[field.size()] == ':' || p[field.size()] == '.')) {
        p = "--" + option + p.substr(field.size());
        break;
      }
    problems.push_back(std::move(p));
  }
  return ConfigError(std::move(problems));
}

}  // namespace llmsim::cli
