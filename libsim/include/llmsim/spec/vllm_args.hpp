#pragma once
// A `vllm serve ...` command line (or `python -m vllm.entrypoints.openai.api_server ...`) as scenario JSON.
// The flags llmsim models become vLLM-named scenario keys, which the scenario pre-pass maps to the canonical
// fields (scenario_prepass.hpp holds that one table); the others are reported, never dropped silently.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "llmsim/core/json_view.hpp"

namespace llmsim::spec {

struct VllmServeArgs {
  std::string model;                      ///< the positional model or --model ("" when not given)
  Json engine_args = Json::object();      ///< modelled flags by vLLM's name: {"tensor_parallel_size": 2, ...}
  std::vector<std::string> ignored;       ///< flags that do not change performance (--port, --host, --api-key ...)
  std::vector<std::string> not_modelled;  ///< flags that may change performance and llmsim does not model
  /// The engine.runtime the server itself implies: "sglang" for an SGLang command line (sglang_args.hpp), "" for
  /// vLLM (whose release the scenario or --set names; the default is V1).
  std::string runtime;
  /// vLLM's name of each modelled flag -> the flag as the user typed it ("tensor_parallel_size" -> "-tp", an SGLang
  /// line's "--tp-size"), so that a problem with its value names what the user wrote (analysis::name_server_flags).
  std::map<std::string, std::string> flags;
};

/// Splits a shell command line the way a POSIX shell would for plain words, '...' and "..." quotes,
/// backslash escapes and line continuations. ConfigError at `what` for an unterminated quote.
std::vector<std::string> split_command_line(std::string_view line, const std::string& what = "--vllm-args");

/// Whether a word of a split command line is a flag (`-x`, `--name`, `--name=value`), not a value: a negative
/// number (`-1`, `-.5`) is a value. The one rule of the vLLM, SGLang and benchmark command-line parsers.
bool is_flag_token(const std::string& token);

/// An underscored argument name as its long flag: "max_num_seqs" -> "--max-num-seqs".
std::string dashed_flag(std::string name);

/// Parses the command line of a vLLM server: `--flag value`, `--flag=value`, bare boolean flags and their
/// `--no-flag` forms, the short names -tp/-pp/-dp/-q, a positional model after `serve`, leading
/// `VAR=value` environment assignments. Values of modelled flags are type-checked (ConfigError naming the
/// flag and value, e.g. "--max-num-seqs: expected an integer, got 'many'").
VllmServeArgs parse_vllm_serve_args(std::string_view command_line);

/// `value` as the JSON type of the modelled engine argument `name` (vLLM's name: "max_num_seqs" -> an integer).
/// ConfigError naming `flag` for a value of another type, or a name llmsim does not model.
Json engine_arg_value(const std::string& name, const std::string& flag, const std::string& value);

/// The engine argument names (underscored, e.g. "max_num_seqs") this parser knows: the modelled ones, the
/// harmless server options, the unmodelled performance flags and other common EngineArgs. A benchmark command
/// (vllm_bench_args.hpp) refuses a flag outside them and its own, with the closest names.
const std::vector<std::string>& known_vllm_engine_flags();

/// The scenario patch of those arguments: {"model": ..., "tensor_parallel_size": 2, ...} (vLLM's names at
/// the top level, as a `vllm serve --config` file has them); merge it onto a scenario and parse.
Json scenario_patch(const VllmServeArgs& args);

}  // namespace llmsim::spec
