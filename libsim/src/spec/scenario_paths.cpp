// Scenario fields by dotted path (`--set`, sweep grid axes, Python keyword overrides): the schema check of a path,
// vLLM's names mapped through the pre-pass's alias table, and the rule that a fleet's or disaggregated scenario's
// cards are not under hardware. Split from scenario.cpp, which reads and writes whole scenarios.
#include <functional>
#include <optional>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/gpu_option.hpp"
#include "llmsim/spec/scenario.hpp"
#include "llmsim/spec/scenario_prepass.hpp"
#include "scenario_json.hpp"

namespace llmsim::spec {

using namespace detail;

namespace {

void check_path_component(const std::string& comp, const std::vector<std::string>& valid, const std::string& so_far) {
  for (const auto& v : valid) {
    if (v == comp) return;
  }
  if (so_far == "hardware" && contains(kCostKeys, comp))
    throw ConfigError(so_far + "." + comp, "belongs under cost (cost." + comp + "), not hardware");
  if (so_far == "cost" && contains(kHardwareKeys, comp))
    throw ConfigError(so_far + "." + comp, "belongs under hardware (hardware." + comp + "), not cost");
  throw ConfigError(so_far.empty() ? comp : so_far + "." + comp, unknown_name_message("scenario field", comp, valid));
}

}  // namespace

namespace {

std::vector<std::string> split_path(const std::string& dotted_path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = dotted_path.find('.', start);
    parts.push_back(dotted_path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (const auto& p : parts) {
    if (p.empty()) throw ConfigError(dotted_path, "not a field path (empty component)");
  }
  return parts;
}

// vLLM's names (`--set engine.tensor_parallel_size=2`, a grid axis `kv_cache_dtype`): the scenario pre-pass's one
// alias table maps the key and its value to llmsim's own fields; nullopt when the path is not an alias. `scenario`,
// when given, lends its engine.runtime: a name whose meaning depends on the release (enable_chunked_prefill on
// vllm==0.5.5 is V0's chunked policy, not V1's scheduler) resolves as it would inside that document.
std::optional<std::vector<std::pair<std::string, Json>>> alias_leaves(const std::vector<std::string>& parts,
                                                                     const std::string& dotted_path,
                                                                     const Json& value,
                                                                     const Json* scenario = nullptr) {
  if (parts.size() > 2) return std::nullopt;
  const std::string section = parts.size() == 2 ? parts[0] : "";
  for (const auto& a : vllm_aliases()) {
    if (a.name != parts.back() || !contains(a.sections, section) || a.target == dotted_path) continue;
    Json mini = Json::object();
    if (section.empty()) {
      mini[a.name] = value;
    } else {
      mini[section][a.name] = value;
    }
    const Json* runtime = nullptr;
    if (scenario && scenario->is_object() && scenario->contains("engine") && (*scenario)["engine"].is_object() &&
        (*scenario)["engine"].contains("runtime") && (*scenario)["engine"]["runtime"].is_string()) {
      runtime = &(*scenario)["engine"]["runtime"];
      mini["engine"]["runtime"] = *runtime;
    }
    // `mini` is a document root: its paths are the written ones (a view at dotted_path named a bad value's field
    // twice, "max_num_seqs.max_num_seqs", in --set, grid axes, Python keywords and server lines: attack11).
    const Json canonical = normalize_vllm_names(JsonView(mini, ""));
    std::vector<std::pair<std::string, Json>> leaves;
    // A section the alias was written under but whose field lives elsewhere (engine.tensor_parallel_size ->
    // hardware.tp) comes back empty: it is no leaf. Set as one, it would replace the document's whole section
    // (its max_model_len, enable_lora, ...) with {}.
    std::function<void(const Json&, const std::string&)> walk = [&](const Json& j, const std::string& at) {
      if (j.is_object() && j.empty()) return;
      if (!j.is_object()) {
        leaves.emplace_back(at, j);
        return;
      }
      for (auto it = j.begin(); it != j.end(); ++it) walk(it.value(), at.empty() ? it.key() : at + "." + it.key());
    };
    walk(canonical, "");
    if (runtime) {  // the lent release is context, not a field this path sets
      std::erase_if(leaves, [&](const auto& leaf) { return leaf.first == "engine.runtime" && leaf.second == *runtime; });
    }
    return leaves;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> json_path_fields(const std::string& dotted_path, const Json& value) {
  const auto parts = split_path(dotted_path);
  std::vector<std::string> out;
  if (const auto leaves = alias_leaves(parts, dotted_path, value)) {
    for (const auto& [path, v] : *leaves)
      for (auto& p : json_path_fields(path, v)) out.push_back(std::move(p));
  } else {
    out.push_back(dotted_path);
  }
  return out;
}

namespace {
const std::vector<std::string> kCardFields{"gpu", "gpu_profile", "tp", "pp", "replicas", "price_per_gpu_hour",
                                           "purchase_price_per_gpu", "pp_layer_partition"};
}  // namespace

void refuse_hardware_card_field(const std::string& field, bool disaggregated, bool fleet, const std::string& where) {
  if (!contains(kCardFields, field) || (!disaggregated && !fleet)) return;
  throw ConfigError(where, std::string("this scenario's cards are in ") +
                               (disaggregated ? "disaggregation.prefill / disaggregation.decode: set "
                                                "disaggregation.<pool>." + field
                                              : "hardware.fleet: set hardware.fleet[i]." + field + " in the file") +
                               " instead (hardware." + field + " is not used)");
}

void set_json_path(Json& scenario, const std::string& dotted_path, const Json& value) {
  if (!scenario.is_object()) throw ConfigError("scenario", "expected a JSON object");
  const std::vector<std::string> parts = split_path(dotted_path);
  // A vLLM name is set as the llmsim fields it stands for (so the value replaces what the document had, as a path
  // always does).
  if (const auto leaves = alias_leaves(parts, dotted_path, value, &scenario)) {
    for (const auto& [path, v] : *leaves) set_json_path(scenario, path, v);
    return;
  }
  // Check the path against the scenario's schema before touching the document.
  check_path_component(parts[0], kTopKeys, "");
  const std::string& top = parts[0];
  auto need_depth = [&](std::size_t n) {
    if (parts.size() > n) {
      std::string so_far;
      for (std::size_t i = 0; i < n; ++i) so_far += (i ? "." : "") + parts[i];
      throw ConfigError(dotted_path, "'" + so_far + "' has no sub-field '" + parts[n] + "'");
    }
  };
  if (top == "name" || top == "model") {
    need_depth(1);
  } else if (top == "metrics") {
    if (parts.size() > 1) check_path_component(parts[1], kMetricsKeys, top);
    need_depth(2);
  } else if (top == "autoscaler" || top == "failures") {
    if (parts.size() > 1) check_path_component(parts[1], top == "autoscaler" ? kAutoscalerKeys : kFailureKeys, top);
    need_depth(2);
  } else if (top == "quant" || top == "hardware" || top == "cost") {
    if (parts.size() > 1) {
      check_path_component(parts[1], top == "quant" ? kQuantKeys : top == "hardware" ? kHardwareKeys : kCostKeys, top);
    }
    need_depth(2);
    // A disaggregated or fleet scenario ignores hardware's card fields: setting them would change nothing silently.
    if (top == "hardware" && parts.size() == 2 && contains(kCardFields, parts[1])) {
      const bool disagg = scenario.contains("disaggregation") && !scenario["disaggregation"].is_null();
      const bool fleet = scenario.contains("hardware") && scenario["hardware"].is_object() &&
                         scenario["hardware"].contains("fleet") && !scenario["hardware"]["fleet"].is_null();
      refuse_hardware_card_field(parts[1], disagg, fleet, dotted_path);
    }
  } else if (top == "engine") {
    if (parts.size() > 1) check_path_component(parts[1], kEngineKeys, top);
    if (parts.size() > 2) {
      if (parts[1] != "synthetic_service" && parts[1] != "speculative") need_depth(2);
      check_path_component(parts[2], parts[1] == "speculative" ? kSpeculativeKeys : kSyntheticKeys, "engine." + parts[1]);
    }
    need_depth(3);
  } else if (top == "disaggregation") {
    // disaggregation.{prefill,decode}.<hardware field> / .engine.<engine field>, .link.<field>, .transfer
    if (parts.size() > 1) check_path_component(parts[1], disaggregation_keys(), top);
    if (parts.size() > 2) {
      const std::string sec = top + "." + parts[1];
      if (parts[1] == "link") {
        check_path_component(parts[2], link_keys(), sec);
      } else if (parts[1] == "prefill" || parts[1] == "decode") {
        std::vector<std::string> pool = kHardwareKeys;
        pool.emplace_back("engine");
        check_path_component(parts[2], pool, sec);
        if (parts[2] != "engine") need_depth(3);
        if (parts.size() > 3) check_path_component(parts[3], kEngineKeys, sec + ".engine");
      } else {
        need_depth(2);
      }
    }
    need_depth(4);
  } else if (top == "slo") {
    std::vector<std::string> allowed = kSloMetrics;
    allowed.push_back("min_attainment");
    if (parts.size() > 1) check_path_component(parts[1], allowed, top);
    if (parts.size() > 2 && (parts[1] == "min_attainment" || parts[2].empty() || parts[2][0] != 'p')) {
      throw ConfigError(dotted_path, "expected a percentile key such as slo.ttft_ms.p95");
    }
    need_depth(3);
  } else if (top == "workload") {
    if (parts.size() > 1) check_path_component(parts[1], kWorkloadKeys, top);
    if (parts.size() > 2) {
      const std::string& sec = parts[1];
      if (sec == "arrival") {
        check_path_component(parts[2], union_of(kArrivalKeys), "workload.arrival");
      } else if (sec == "input_tokens" || sec == "output_tokens") {
        check_path_component(parts[2], union_of(kLengthKeys), "workload." + sec);
      } else if (sec == "sessions") {  // workload.sessions.<field>[.<length field>]
        check_path_component(parts[2], kSessionKeys, "workload.sessions");
        if (parts.size() > 3) {
          if (parts[2] == "preset" || parts[2] == "system_prompts" || parts[2] == "max_output_tokens") need_depth(3);
          check_path_component(parts[3], union_of(kLengthKeys), "workload.sessions." + parts[2]);
        }
      } else if (sec == "prompt_pool") {  // workload.prompt_pool.<field>
        check_path_component(parts[2], kPromptPoolKeys, "workload.prompt_pool");
      } else if (sec == "dataset") {  // workload.dataset.<field> (or workload.dataset=sharegpt)
        check_path_component(parts[2], kDatasetKeys, "workload.dataset");
      } else {
        need_depth(2);
      }
    }
    need_depth(parts.size() > 1 && parts[1] == "sessions" ? 4 : 3);
  }
  Json* node = &scenario;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    Json& child = (*node)[parts[i]];
    if (child.is_null()) child = Json::object();
    // workload.dataset given by name ("sharegpt") takes a field (--set workload.dataset.input_mean=300) as its object.
    if (i == 1 && parts[0] == "workload" && parts[1] == "dataset" && child.is_string()) child = Json{{"name", child}};
    if (!child.is_object()) {
      throw ConfigError(dotted_path, "'" + parts[i] + "' is a " + std::string(child.type_name()) + ", not an object");
    }
    node = &child;
  }
  (*node)[parts.back()] = value;
  // A GPU option with a count ("2xa100-80gb-sxm") places the card with its split: a tp/pp of 1 the document wrote
  // for the one card it had is that card's default, not a split asked of the new option, so it is dropped (a later
  // path may give it again, and then it counts: split_for). Other values stay and must agree, as before. Placing a
  // card is this one path (a sweep grid or search card axis, Python's gpu=, --set hardware.gpu).
  const bool gpu_path = (parts.size() == 2 && parts[0] == "hardware" && parts[1] == "gpu") ||
                        (parts.size() == 3 && parts[0] == "disaggregation" && parts[2] == "gpu");
  if (gpu_path && value.is_string()) {
    bool counted = false;
    try {
      counted = parse_gpu_option(value.get<std::string>(), dotted_path).count_given;
    } catch (const ConfigError&) {  // a bad option is reported where the scenario is read, naming the field
    }
    if (counted)
      for (const char* key : {"tp", "pp"})
        if (node->contains(key) && (*node)[key].is_number_integer() && (*node)[key].get<std::int64_t>() == 1)
          node->erase(key);
  }
  // The path replaces what the document had, including the field spelt with vLLM's name (`"max_num_seqs": 64` at
  // the top level when --set engine.max_num_seqs=100 or --vllm-args --max-num-seqs 100 arrives): left in place,
  // the pre-pass would see two spellings that disagree.
  for (const auto& a : vllm_aliases()) {
    if (a.target != dotted_path) continue;
    for (const auto& section : a.sections) {
      Json* holder = section.empty() ? &scenario : nullptr;
      if (!section.empty() && scenario.contains(section) && scenario[section].is_object()) holder = &scenario[section];
      const std::string spelt = section.empty() ? a.name : section + "." + a.name;
      if (holder && spelt != dotted_path) holder->erase(a.name);
    }
  }
}


namespace {

// A variant's kind field: when a merge changes it, the base's other fields may not mean the same under the new kind.
const std::vector<std::string> kKindKeys{"process", "dist", "method", "kind"};

// Values replaced whole by a merge, even when both sides are objects: an inline GPU spec or profile, the model.
bool merged_whole(const std::string& dotted_path) {
  const auto dot = dotted_path.rfind('.');
  const std::string last = dot == std::string::npos ? dotted_path : dotted_path.substr(dot + 1);
  return dotted_path == "model" || dotted_path == "name" || last == "gpu" || last == "gpu_profile";
}

// The node at a dotted path, nullptr when a component is absent or not an object.
Json* node_at(Json& doc, const std::string& dotted_path) {
  Json* node = &doc;
  for (const auto& part : split_path(dotted_path)) {
    if (!node->is_object() || !node->contains(part)) return nullptr;
    node = &(*node)[part];
  }
  return node;
}

void erase_at(Json& doc, const std::string& dotted_path) {
  const auto dot = dotted_path.rfind('.');
  Json* holder = dot == std::string::npos ? &doc : node_at(doc, dotted_path.substr(0, dot));
  if (holder && holder->is_object()) holder->erase(dot == std::string::npos ? dotted_path : dotted_path.substr(dot + 1));
}

}  // namespace

std::vector<std::string> merged_json_fields(const std::string& dotted_path, const Json& value) {
  if (!value.is_object() || value.empty() || merged_whole(dotted_path)) return json_path_fields(dotted_path, value);
  std::vector<std::string> out;
  for (auto it = value.begin(); it != value.end(); ++it)
    for (auto& f : merged_json_fields(dotted_path + "." + it.key(), it.value())) out.push_back(std::move(f));
  return out;
}

void merge_json_path(Json& scenario, const std::string& dotted_path, const Json& value) {
  if (!scenario.is_object()) throw ConfigError("scenario", "expected a JSON object");
  const Json* here = value.is_object() && !merged_whole(dotted_path) ? node_at(scenario, dotted_path) : nullptr;
  if (!here || !here->is_object()) {
    set_json_path(scenario, dotted_path, value);
    return;
  }
  for (const auto& kind : kKindKeys) {
    if (!value.contains(kind) || value[kind].is_null() || !here->contains(kind) || (*here)[kind] == value[kind]) continue;
    std::string left;
    for (auto it = here->begin(); it != here->end(); ++it)
      if (it.key() != kind && !value.contains(it.key())) left += (left.empty() ? "" : ", ") + it.key() + " = " + it.value().dump();
    if (left.empty()) continue;
    throw ConfigError(dotted_path + "." + kind,
                      "the value changes it from " + (*here)[kind].dump() + " to " + value[kind].dump() +
                          " and leaves what the base sets beside it (" + left +
                          "): a merge cannot tell whether that carries over to the new kind; write those fields in "
                          "the value to keep them, or give them as null to clear them");
  }
  const Json patch = value;  // `value` may live inside `scenario`
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    const std::string field = dotted_path + "." + it.key();
    if (!it.value().is_null()) {
      merge_json_path(scenario, field, it.value());
      continue;
    }
    // null clears the field: the path is checked as any other, and a vLLM name clears the fields it stands for.
    Json probe = Json::object();
    set_json_path(probe, field, nullptr);
    erase_at(scenario, field);
    std::vector<std::string> fields;
    try {
      fields = json_path_fields(field, nullptr);
    } catch (const ConfigError&) {
    }
    for (const auto& f : fields) erase_at(scenario, f);
  }
}

std::vector<std::string> scenario_sections_in(const Json& doc) {
  std::vector<std::string> out;
  if (!doc.is_object()) return out;
  for (const auto& key : kTopKeys)
    if (key != "name" && doc.contains(key)) out.push_back(key);
  return out;
}

}  // namespace llmsim::spec
