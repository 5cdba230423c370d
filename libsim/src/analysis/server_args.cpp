// Server command lines as scenario overrides (server_args.hpp).
#include "llmsim/analysis/server_args.hpp"

#include <filesystem>

#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/scenario.hpp"
#include "llmsim/spec/sglang_args.hpp"
#include "llmsim/spec/vllm_args.hpp"

namespace llmsim::analysis {

namespace {

// The scenario's `model` for a server's model argument: the catalogue id its Hugging Face name stands for, else a
// catalogue id, config.json or checkpoint directory as given.
std::string scenario_model(const std::string& name, const std::string& flag, const spec::Catalog& catalog,
                           std::vector<std::string>& notes) {
  if (catalog.models().count(name)) return name;
  if (const auto id = catalogue_model_for(name, catalog)) {
    notes.push_back("model '" + name + "' is sized as catalogue model '" + *id + "' (matched by name)");
    return *id;
  }
  std::error_code ec;
  if (name.find('/') == std::string::npos || name.ends_with(".json") || std::filesystem::exists(name, ec))
    return name;  // a catalogue id (refused with the valid ones when unknown) or a local file/directory
  std::string msg = "model '" + name + "' is not a catalogue model";
  const auto close = close_matches(to_lower(name.substr(name.rfind('/') + 1)), catalog.model_ids());
  for (std::size_t i = 0; i < close.size(); ++i) msg += (i ? ", " : " (closest: ") + close[i];
  if (!close.empty()) msg += ")";
  throw ConfigError(flag, msg + "; name a catalogue id (llmsim catalog models) or the checkpoint's config.json "
                                "or directory");
}

}  // namespace

ServerArgSets server_arg_sets(const std::string& vllm_args, const std::string& sglang_args, const Json& scenario,
                              const spec::Catalog& catalog, bool model_given) {
  ServerArgSets out;
  if (vllm_args.empty() && sglang_args.empty()) return out;
  if (!vllm_args.empty() && !sglang_args.empty())
    throw ConfigError("--vllm-args", "given with --sglang-args: a scenario runs on one server; give one of them");
  const bool sglang = !sglang_args.empty();
  const std::string flag = sglang ? "--sglang-args" : "--vllm-args";
  const spec::VllmServeArgs args =
      sglang ? spec::parse_sglang_server_args(sglang_args) : spec::parse_vllm_serve_args(vllm_args);
  out.model_arg = args.model;
  if (!args.model.empty() && !model_given) out.sets.emplace_back("model", scenario_model(args.model, flag, catalog, out.notes));
  if (!args.runtime.empty()) {
    std::string now;
    if (scenario.is_object() && scenario.contains("engine") && scenario["engine"].is_object() &&
        scenario["engine"].contains("runtime") && scenario["engine"]["runtime"].is_string())
      now = scenario["engine"]["runtime"].get<std::string>();
    if (now.rfind(args.runtime, 0) != 0) out.sets.emplace_back("engine.runtime", args.runtime);
  }
  for (auto it = args.engine_args.begin(); it != args.engine_args.end(); ++it) out.sets.emplace_back(it.key(), it.value());
  if (!args.not_modelled.empty()) {
    std::string s;
    for (const auto& f : args.not_modelled) s += (s.empty() ? "" : ", ") + f;
    out.notes.push_back(std::string(sglang ? "SGLang" : "vLLM") + " arguments llmsim does not model (ignored): " + s);
  }
  return out;
}

Json apply_server_args(Json scenario, const std::string& vllm_args, const std::string& sglang_args,
                       std::vector<std::string>& notes, const spec::Catalog& catalog) {
  auto r = server_arg_sets(vllm_args, sglang_args, scenario, catalog);
  for (const auto& [path, value] : r.sets) spec::set_json_path(scenario, path, value);
  notes.insert(notes.end(), r.notes.begin(), r.notes.end());
  return scenario;
}

}  // namespace llmsim::analysis
