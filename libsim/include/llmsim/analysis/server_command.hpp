#pragma once
// A server's command line on the commands that take no scenario run — `llmsim memory` / `llmsim step` and Python's
// `llmsim.memory()` / `llmsim.step()` (issue 29/30). The line is read by the one parser of the scenario commands
// (server_arg_sets, vLLM's names mapped by the scenario pre-pass); this is the one rule of which scenario fields each
// of the two uses, which it notes as not changing its answer, and which it refuses. The CLI turns the fields into its
// own options, Python into keyword overrides: an option or keyword given by the caller wins over the line.
#include <string>
#include <utility>
#include <vector>

#include "llmsim/core/json_view.hpp"

namespace llmsim::analysis {

enum class PlanCommand { memory, step };

/// How the caller names things in its messages: the CLI's flags (--vllm-args, `llmsim memory`) or Python's
/// keywords (vllm_args, `llmsim.memory()`).
enum class ServerFace { cli, python };

struct CommandServerFields {
  /// Scenario field -> value, only fields the command reads ("model", "hardware.tp", "quant.kv_cache",
  /// "engine.cuda_graphs" false for --enforce-eager, ...), in the line's order.
  std::vector<std::pair<std::string, Json>> fields;
  /// Flags llmsim does not model, flags that do not change this command's answer, the catalogue model matched.
  std::vector<std::string> notes;
};

/// The fields of `vllm_args` or `sglang_args` (one of them; "" = not given; both empty: no fields) that `command`
/// uses. ConfigError naming the argument: both given, blank, an unknown or misspelled flag (with the suggestion), a
/// flag the command cannot use (a scenario field it does not read).
CommandServerFields command_server_fields(PlanCommand command, const std::string& vllm_args,
                                          const std::string& sglang_args, ServerFace face);

/// The scenario fields `command` reads from a server line (what command_server_fields may return).
std::vector<std::string> command_server_field_names(PlanCommand command);

/// The problem of a server command line given blank (an unset shell variable would drop the server's settings without
/// a word), with that server's own example: `vllm serve ...` for a vLLM line, SGLang's launcher for an SGLang one.
/// `leave` says how to leave it out ("leave the flag out", "leave it out (None)"). One text for every face.
std::string empty_server_line_problem(bool sglang, const std::string& leave);

}  // namespace llmsim::analysis
