// Server command lines as scenario overrides (server_args.hpp).
#include "llmsim/analysis/server_args.hpp"

#include <algorithm>
#include <filesystem>

#include "llmsim/analysis/search.hpp"
#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/scenario.hpp"
#include "llmsim/spec/scenario_prepass.hpp"
#include "llmsim/spec/sglang_args.hpp"
#include "llmsim/spec/vllm_args.hpp"

namespace llmsim::analysis {

namespace {

// The scenario's `model` for a server's model argument: the catalogue id its Hugging Face name stands for, else a
// catalogue id, config.json or checkpoint directory as given.
std::string scenario_model(const std::string& name, const std::string& flag, const spec::Catalog& catalog,
                           std::vector<std::string>& notes) {
  if (catalog.has_model(name)) return name;
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

// The line names its server, and the command line outranks the scenario file: a runtime or scheduler the file chose
// for the other server does not survive it. Without this, a `vllm serve` line on a file written for SGLang ran
// SGLang's scheduler, and an SGLang line on a file naming policy "vllm" (examples/scenarios/chat-8b.json) ran vLLM
// V1's scheduler "on runtime sglang". The policy `static` belongs to neither and stays; --set can name any.
enum class SchedulerPolicyFamily { either, vllm, sglang };

void drop_other_servers_engine(const Json& scenario, bool sglang_line, ServerArgSets& out) {
  const Json* engine = scenario.is_object() && scenario.contains("engine") && scenario["engine"].is_object()
                           ? &scenario["engine"]
                           : nullptr;
  const auto text = [&](const char* key) {
    return engine && engine->contains(key) && (*engine)[key].is_string() ? (*engine)[key].get<std::string>()
                                                                         : std::string();
  };
  const std::string line = sglang_line ? "the SGLang server line" : "the vLLM server line";
  const std::string runtime = text("runtime");
  if (!sglang_line && runtime.rfind("sglang", 0) == 0) {
    out.sets.emplace_back("engine.runtime", nullptr);
    out.notes.push_back("the scenario's engine.runtime '" + runtime + "' is SGLang's: " + line +
                        " runs vLLM's default runtime instead (set engine.runtime to vllm==X.Y.Z for a release)");
  }
  const std::string policy = text("policy");
  if (policy.empty()) return;
  SchedulerPolicyFamily family = SchedulerPolicyFamily::either;
  try {
    const auto p = spec::parse_policy(policy);
    if (p == spec::SchedulerPolicy::sglang) family = SchedulerPolicyFamily::sglang;
    else if (p != spec::SchedulerPolicy::static_batching) family = SchedulerPolicyFamily::vllm;
  } catch (const ConfigError&) {
    return;  // reported with its path when the scenario is read
  }
  if (family == SchedulerPolicyFamily::either || (family == SchedulerPolicyFamily::sglang) == sglang_line) return;
  out.sets.emplace_back("engine.policy", nullptr);
  out.notes.push_back("the scenario's engine.policy '" + policy + "' is " + (sglang_line ? "vLLM" : "SGLang") +
                      "'s scheduler: " + line + " runs its own server's (the runtime's default policy; set engine.policy " +
                      "after it to choose one)");
}

// vLLM's --quantization beside a checkpoint that names its own method: the method vLLM's quantization_config reader
// resolves a name to (the Marlin kernels are AWQ's and GPTQ's; ModelOpt's FP4 and compressed-tensors' spelling).
std::string quant_method_family(std::string m) {
  m = to_lower(m);
  if (m == "awq_marlin") return "awq";
  if (m == "gptq_marlin") return "gptq";
  if (m == "modelopt_fp4") return "modelopt";
  if (m == "compressed_tensors") return "compressed-tensors";
  return m;
}

// A server line's --quantization on a checkpoint directory or config.json that carries its own quantization: vLLM
// checks the two name one method and loads the checkpoint's scheme (ModelConfig._verify_quantization: "Quantization
// method specified in the model config (X) does not match the quantization method specified in the `quantization`
// argument (Y)"). The same method: the flag adds nothing, and the checkpoint's format (its group size, its ignore list)
// stands -- `vllm serve DIR --quantization modelopt` was refused as "depends on the checkpoint". Another: refused as
// vLLM refuses it. True when the flag is to be dropped.
bool quantization_is_the_checkpoints(const spec::VllmServeArgs& args, const std::string& model, const std::string& flag,
                                     const spec::Catalog& catalog, std::vector<std::string>& notes) {
  if (!args.engine_args.contains("quantization") || !args.engine_args["quantization"].is_string() ||
      !spec::local_checkpoint(model))
    return false;
  const std::string given = args.engine_args["quantization"].get<std::string>();
  const spec::CheckpointQuantization own = catalog.model(model).quantization;
  if (own.method.empty()) return false;  // a 16-bit checkpoint: --quantization fp8 quantizes it online, as in vLLM
  if (quant_method_family(given) != quant_method_family(own.method))
    throw ConfigError(flag, "--quantization '" + given + "' does not match the checkpoint's own method '" + own.method + "' (" +
                          own.description + "); vLLM refuses the pair: drop --quantization or name '" + own.method + "'");
  notes.push_back("--quantization " + given + ": the checkpoint's own method, loaded as it says (" + own.description + ")");
  return true;
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
  spec::VllmServeArgs args =
      sglang ? spec::parse_sglang_server_args(sglang_args) : spec::parse_vllm_serve_args(vllm_args);
  out.model_arg = args.model;
  std::string name_format;  // the weight format a quantized checkpoint's name announces
  if (!args.model.empty() && !model_given) {
    const std::string model = scenario_model(args.model, flag, catalog, out.notes);
    out.sets.emplace_back("model", model);
    if (quantization_is_the_checkpoints(args, model, flag, catalog, out.notes)) {
      args.engine_args.erase("quantization");
      args.flags.erase("quantization");
    }
    // A quantized checkpoint matched to a catalogue model by name: vLLM loads it in the format its
    // quantization_config names, which the name announces (check's rule, weight_format_in_name); the line's own
    // --quantization wins, and the line outranks the scenario's quant.weights as every flag of it does.
    if (model != args.model && !args.engine_args.contains("quantization"))
      name_format = weight_format_in_name(args.model);
  }
  if (!args.runtime.empty()) {
    std::string now;
    if (scenario.is_object() && scenario.contains("engine") && scenario["engine"].is_object() &&
        scenario["engine"].contains("runtime") && scenario["engine"]["runtime"].is_string())
      now = scenario["engine"]["runtime"].get<std::string>();
    if (now.rfind(args.runtime, 0) != 0) out.sets.emplace_back("engine.runtime", args.runtime);
  }
  drop_other_servers_engine(scenario, sglang, out);
  for (auto it = args.engine_args.begin(); it != args.engine_args.end(); ++it) out.sets.emplace_back(it.key(), it.value());
  // After the flags: --dtype beside a quantized checkpoint is its activation type (vLLM runs the AWQ checkpoint
  // under --dtype half), not 16-bit weights.
  if (!name_format.empty()) {
    out.sets.emplace_back("quant.weights", name_format);
    out.notes.push_back("weights '" + name_format + "' from the checkpoint name '" + args.model + "'");
  }
  // The flag typed for each field the line set, under the vLLM name (a problem the pre-pass reports) and the scenario
  // field it becomes (one the scenario reports).
  for (const auto& [name, typed] : args.flags) {
    out.flags.emplace_back(name, typed);
    for (const auto& a : spec::vllm_aliases())
      if (a.name == name && a.target != name) out.flags.emplace_back(a.target, typed);
  }
  if (!args.not_modelled.empty()) {
    std::string s;
    for (const auto& f : args.not_modelled) s += (s.empty() ? "" : ", ") + f;
    out.notes.push_back(std::string(sglang ? "SGLang" : "vLLM") + " arguments llmsim does not model (ignored): " + s);
  }
  return out;
}

ConfigError name_server_flags(const ConfigError& e, const ServerArgSets& line, const std::vector<std::string>& later) {
  std::vector<std::string> problems;
  bool renamed = false;
  for (std::string p : e.problems()) {
    for (const auto& typed : line.flags) {
      const std::string& field = typed.first;  // not a structured binding: Clang 14 cannot capture one in the lambda
      const std::string& flag = typed.second;
      const bool at = p.rfind(field, 0) == 0 && p.size() > field.size() &&
                      (p[field.size()] == ':' || p[field.size()] == '.' || p[field.size()] == '[');
      if (!at || std::any_of(later.begin(), later.end(), [&](const std::string& l) { return fields_overlap(l, field); }))
        continue;
      // The vLLM name (no section) says no more than the flag; a scenario field is said beside it.
      p = flag + (field.find('.') == std::string::npos ? std::string() : " (" + field + ")") + p.substr(field.size());
      renamed = true;
      break;
    }
    problems.push_back(std::move(p));
  }
  return renamed ? ConfigError(std::move(problems)) : e;
}

Json apply_server_sets(Json doc, const ServerArgSets& line) {
  try {
    for (const auto& [path, value] : line.sets) spec::set_json_path(doc, path, value);
  } catch (const ConfigError& e) {
    throw name_server_flags(e, line);
  }
  return doc;
}

void check_server_fields(const Json& doc, const ServerArgSets& line, const std::vector<std::string>& later) {
  if (line.flags.empty()) return;
  try {
    spec::scenario_from_json(JsonView(doc, ""));
  } catch (const ConfigError& e) {
    const ConfigError named = name_server_flags(e, line, later);
    if (named.problems() != e.problems()) throw named;
  }
}

Json apply_server_args(Json scenario, const std::string& vllm_args, const std::string& sglang_args,
                       std::vector<std::string>& notes, const spec::Catalog& catalog) {
  auto r = server_arg_sets(vllm_args, sglang_args, scenario, catalog);
  scenario = apply_server_sets(std::move(scenario), r);
  notes.insert(notes.end(), r.notes.begin(), r.notes.end());
  return scenario;
}

}  // namespace llmsim::analysis
