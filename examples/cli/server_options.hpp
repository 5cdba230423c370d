#pragma once
// --vllm-args / --sglang-args on the commands that take no scenario (memory, step): the server's command line is
// read by the one parser of the scenario commands (analysis::server_arg_sets, vLLM's names mapped to scenario fields
// by the scenario pre-pass), and each field it sets becomes the command's own option, as if it had been typed.
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/analysis/server_command.hpp"

namespace llmsim::cli {

/// How one command's options stand for the scenario fields a server command line sets. Which fields the command
/// reads, notes or refuses is libsim's rule (analysis::command_server_fields), shared with Python.
struct ServerOptionMap {
  analysis::PlanCommand command;
  /// Scenario field -> the command's option that takes its value ("hardware.tp" -> "tp"); "model" is the model.
  std::vector<std::pair<std::string, std::string>> options;
  /// The option that says "no CUDA graphs" (engine.cuda_graphs false, vLLM's --enforce-eager).
  std::string eager_option;
  /// The option that says "no prefix caching" (engine.enable_prefix_caching false: SGLang's --disable-radix-cache);
  /// empty where the command does not read it.
  std::string no_prefix_caching_option = {};
};

/// Adds --vllm-args and --sglang-args (without --set) to a command that takes no scenario.
void add_server_options(po::options_description& opts);

/// The command's options that `vm`'s --vllm-args/--sglang-args stand for ({"--tp", "2", "--kv-dtype", "fp8"}), to
/// parse after the command line's own words: an option the command line gives itself wins (as --set wins on a
/// scenario command) and is left out. Notes (flags not modelled, not applying here) go to stderr. A field the command
/// cannot use is a ConfigError naming the server's flag and the command (analysis::command_server_fields). Empty
/// when neither flag is given.
std::vector<std::string> server_options(const po::variables_map& vm, const ServerOptionMap& map);

/// parse_args, then again with server_options appended when --vllm-args/--sglang-args gave any.
bool parse_args_with_server(int argc, char** argv, const po::options_description& opts, po::variables_map& vm,
                            const std::string& usage, const ServerOptionMap& map);

/// `e`, a problem of the scenario a command's options stand for, with each field named by the option that set it
/// ("hardware.tp: ..." -> "--tp: ...", "model.hidden_size: ..." -> "--model.hidden_size: ..."): the fields of `map`
/// and `more` (those only the command's own options set); a field no option sets keeps its scenario path.
ConfigError flag_named(const ConfigError& e, const ServerOptionMap& map,
                       const std::vector<std::pair<std::string, std::string>>& more);

}  // namespace llmsim::cli
