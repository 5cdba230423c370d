#pragma once
// A server's command line on a scenario command (`llmsim simulate --vllm-args "vllm serve MODEL -tp 2 ..."`,
// `--sglang-args "python -m sglang.launch_server ..."`, Python's `vllm_args=`/`sglang_args=`) as scenario overrides.
// The flags are parsed by spec/vllm_args.hpp and spec/sglang_args.hpp and mapped by the scenario pre-pass's one
// alias table; this adds the model (a Hugging Face name looked up in the catalogue, as `llmsim check` does) and
// the runtime the server implies. Precedence: scenario file < server command line < --set / keyword overrides.
#include <string>
#include <utility>
#include <vector>

#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/catalog.hpp"

namespace llmsim::analysis {

struct ServerArgSets {
  /// (dotted path or vLLM name, value) in the order to apply, as `--set` pairs: spec::set_json_path writes each.
  std::vector<std::pair<std::string, Json>> sets;
  /// What the user should know: flags llmsim does not model (listed, never dropped silently), the catalogue
  /// model a Hugging Face name was matched to.
  std::vector<std::string> notes;
  /// The model as the command line names it (a Hugging Face name, a catalogue id or a path); "" = none given.
  /// `sets` holds what it became in the scenario; `llmsim check` also reads a quantisation from this name.
  std::string model_arg;
  /// A field the line set (a scenario path, or the vLLM name a problem may be reported under) -> the flag the user
  /// typed for it ("engine.max_num_seqs" -> "--max-num-seqs"): name_server_flags.
  std::vector<std::pair<std::string, std::string>> flags;
};

/// The overrides of one server command line: `vllm_args` or `sglang_args` (one of them, or neither; "" = not
/// given). `scenario` is the document they apply to (an SGLang command line sets engine.runtime "sglang" unless
/// it already names an SGLang release). ConfigError: both given, an unknown or misspelled flag (with the
/// suggestion), a value of the wrong type, or a model name the catalogue does not know and that is no file.
/// `model_given`: the caller names the model itself (`llmsim check --model`), so the command line's model is only
/// reported (model_arg), neither looked up nor set.
ServerArgSets server_arg_sets(const std::string& vllm_args, const std::string& sglang_args, const Json& scenario,
                              const spec::Catalog& catalog = spec::Catalog::builtin(), bool model_given = false);

/// `e`, a problem of a scenario a server line was applied to, with each field the line set named by the flag the
/// user typed, the field beside it: "--max-num-seqs (engine.max_num_seqs): must be >= 1, got 0" where the scenario
/// said "engine.max_num_seqs: ...". A field set again after the line (`later`: --set paths, Python's keyword
/// overrides) keeps its own name.
ConfigError name_server_flags(const ConfigError& e, const ServerArgSets& line, const std::vector<std::string>& later = {});

/// Reads `doc` (the scenario after the line and what was set after it) as a scenario; when it does not read and a
/// problem is on a field the line set, throws name_server_flags' error, so that a bad value on a server command
/// line (`--max-num-seqs 0`) is named by the flag typed. Otherwise nothing: the caller reads the scenario itself.
void check_server_fields(const Json& doc, const ServerArgSets& line, const std::vector<std::string>& later = {});

/// `doc` with the line's overrides applied (spec::set_json_path each); a value a field refuses as it is set
/// (--max-model-len abc, --quantization foo) is a ConfigError naming the flag typed (name_server_flags).
Json apply_server_sets(Json doc, const ServerArgSets& line);

/// `scenario` with server_arg_sets' overrides applied (its notes appended to `notes`).
Json apply_server_args(Json scenario, const std::string& vllm_args, const std::string& sglang_args,
                       std::vector<std::string>& notes, const spec::Catalog& catalog = spec::Catalog::builtin());

}  // namespace llmsim::analysis
