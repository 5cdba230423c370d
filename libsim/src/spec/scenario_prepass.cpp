// The scenario pre-pass: vLLM's spellings -> canonical fields, then a merge onto the default scenario.
// Names and values follow vLLM's engine arguments (vllm/engine/arg_utils.py, `vllm serve --help`); the
// canonical fields and their defaults are those of scenario.hpp (examples/scenarios/README.md).
#include "llmsim/spec/scenario_prepass.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/core/number.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "llmsim/spec/scenario.hpp"
#include "scenario_json.hpp"

namespace llmsim::spec {

namespace {

// ---- values ----

/// vLLM's dtype / quantization names for a weight format (spec::canonical_weight_format_id, the one table).
std::string canonical_weights(const std::string& s) { return canonical_weight_format_id(s); }

/// vLLM's kv_cache_dtype names (spec::canonical_kv_dtype_id, the one table).
std::string canonical_kv(const std::string& s) { return canonical_kv_dtype_id(s); }

/// `quantization` (vLLM's --quantization / -q): the methods with a weight format here; the others say why not.
Json quantization_value(const JsonView& v) {
  const std::string q = to_lower(v.as_string());
  static const std::vector<std::string> known{"awq", "awq_marlin", "gptq", "gptq_marlin", "bitsandbytes", "fp8",
                                              "fbgemm_fp8"};
  if (std::find(known.begin(), known.end(), q) != known.end()) return q == "fp8" ? "fp8" : canonical_weights(q);
  if (q == "gguf") v.fail("'gguf' does not say which GGUF type: set quant.weights to gguf-q4_k_m or gguf-q8_0");
  if (q == "compressed-tensors" || q == "compressed_tensors" || q == "modelopt") {
    v.fail("'" + q + "' depends on the checkpoint: set quant.weights (fp8, w8a8, int8, gptq-int4, awq-int4)");
  }
  v.fail(unknown_name_message("vLLM quantization method", q, known) + " (or set quant.weights: " +
         [] {
           std::string ids;
           for (const auto& id : weight_format_ids()) ids += (ids.empty() ? "" : ", ") + id;
           return ids;
         }() + ")");
}

/// `dtype`: the model's 16-bit type; "auto" (the checkpoint's) leaves the default.
std::optional<std::string> dtype_value(const JsonView& v) {
  const std::string d = to_lower(v.as_string());
  if (d == "auto") return std::nullopt;
  if (d == "bfloat16" || d == "bf16") return "bf16";
  if (d == "float16" || d == "half" || d == "fp16") return "fp16";
  if (d == "float32" || d == "float") v.fail("'" + d + "' (32-bit) serving is not modelled; use bfloat16 or float16");
  v.fail(unknown_name_message("dtype", d, {"auto", "bfloat16", "float16", "half"}));
}

// ---- key aliases ----

enum class ArgKind { integer, context_len, number, boolean, string, chunked_prefill, enforce_eager, kv_dtype, quantization, dtype };

struct AliasRule {
  VllmAlias alias;
  ArgKind kind;
};

const std::vector<AliasRule>& rules() {
  static const std::vector<AliasRule> r{
      {{"tensor_parallel_size", "hardware.tp", {"", "engine", "hardware"}}, ArgKind::integer},
      {{"pipeline_parallel_size", "hardware.pp", {"", "engine", "hardware"}}, ArgKind::integer},
      {{"data_parallel_size", "hardware.replicas", {"", "engine", "hardware"}}, ArgKind::integer},
      // vLLM's environment variable (envs.py; vllm/distributed/utils.py get_pp_indices): the layers of each stage,
      // "18,17". Written in a scenario as vLLM's environment names it, or before `vllm serve` in --vllm-args.
      {{"VLLM_PP_LAYER_PARTITION", "hardware.pp_layer_partition", {"", "hardware"}}, ArgKind::string},
      {{"enable_chunked_prefill", "engine.policy", {"", "engine"}}, ArgKind::chunked_prefill},
      {{"enforce_eager", "engine.cuda_graphs", {"", "engine"}}, ArgKind::enforce_eager},
      {{"swap_space", "engine.swap_space_gb", {"", "engine"}}, ArgKind::number},
      {{"preemption_mode", "engine.preemption", {"", "engine"}}, ArgKind::string},
      {{"max_num_seqs", "engine.max_num_seqs", {""}}, ArgKind::integer},
      {{"max_num_batched_tokens", "engine.max_num_batched_tokens", {""}}, ArgKind::integer},
      {{"block_size", "engine.block_size", {""}}, ArgKind::integer},
      {{"gpu_memory_utilization", "engine.gpu_memory_utilization", {""}}, ArgKind::number},
      {{"max_model_len", "engine.max_model_len", {""}}, ArgKind::context_len},
      {{"enable_prefix_caching", "engine.enable_prefix_caching", {""}}, ArgKind::boolean},
      {{"async_scheduling", "engine.async_scheduling", {""}}, ArgKind::boolean},
      // vLLM V0's multi-step scheduling (0.6.0 to 0.10.0; spec/multi_step.hpp refuses the runtimes without it).
      {{"num_scheduler_steps", "engine.num_scheduler_steps", {""}}, ArgKind::integer},
      {{"multi_step_stream_outputs", "engine.multi_step_stream_outputs", {""}}, ArgKind::boolean},
      {{"cpu_offload_gb", "engine.cpu_offload_gb", {""}}, ArgKind::number},
      // vLLM >= 0.11.1: --kv-offloading-size GiB (summed over TP ranks), backend "native" (OffloadingConnector).
      {{"kv_offloading_size", "engine.kv_offload_gb", {"", "engine"}}, ArgKind::number},
      // SGLang's --cuda-graph-max-bs (sglang_args.cpp); vLLM has no such flag (engine.validate refuses it there).
      {{"cuda_graph_max_bs", "engine.cuda_graph_max_bs", {"", "engine"}}, ArgKind::integer},
      // vLLM's LoRA (memory/lora_memory.hpp): the slots' buffers come out of the KV pool.
      {{"enable_lora", "engine.enable_lora", {""}}, ArgKind::boolean},
      {{"max_loras", "engine.max_loras", {""}}, ArgKind::integer},
      {{"max_lora_rank", "engine.max_lora_rank", {""}}, ArgKind::integer},
      {{"kv_cache_dtype", "quant.kv_cache", {"", "engine", "quant"}}, ArgKind::kv_dtype},
      {{"quantization", "quant.weights", {"", "engine", "quant"}}, ArgKind::quantization},
      {{"dtype", "quant.weights", {"", "engine", "quant"}}, ArgKind::dtype},
  };
  return r;
}

struct Assignment {
  std::string from;    ///< the alias as written ("engine.tensor_parallel_size")
  const AliasRule* rule;
  Json value;          ///< canonical value (null: no effect)
};

std::pair<std::string, std::string> split_target(const std::string& target) {
  const auto dot = target.find('.');
  return {target.substr(0, dot), target.substr(dot + 1)};
}

/// The section object of `doc`, created when absent; ConfigError when it is there but not an object.
Json& section_of(Json& doc, const std::string& name) {
  Json& s = doc[name];
  if (s.is_null()) s = Json::object();
  if (!s.is_object()) throw ConfigError(name, "expected an object, got " + std::string(s.type_name()));
  return s;
}

std::string shown(const Json& v) { return v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump(); }

/// Canonical form of a value already in a canonical field, for comparing with an alias's value.
Json comparable(const std::string& target, const Json& v) {
  if (!v.is_string()) return v;
  if (target == "quant.weights") return to_lower(canonical_weights(v.get<std::string>()));
  if (target == "quant.kv_cache") return to_lower(canonical_kv(v.get<std::string>()));
  return v;
}

void apply(Json& doc, const Assignment& a, std::map<std::string, std::string>& set_by) {
  const auto [sec, key] = split_target(a.rule->alias.target);
  Json& s = section_of(doc, sec);
  const std::string target = a.rule->alias.target;
  if (s.contains(key) && !s[key].is_null()) {
    if (comparable(target, s[key]) == comparable(target, a.value)) return;
    auto by = set_by.find(target);
    const std::string other = by == set_by.end() ? target : by->second;
    throw ConfigError(a.from, "is vLLM's name for " + target + ", which " + other + " sets to " + shown(s[key]) +
                                  "; got " + shown(a.value) + " (give one of them)");
  }
  s[key] = a.value;
  set_by[target] = a.from;
}

/// enable_chunked_prefill: true/false selects a policy that does/does not chunk prefills — the default
/// policy when it already agrees, else the first that does (vllm, vllm-v0, chunked, in that order).
void apply_chunked(Json& doc, const Assignment& a) {
  const bool want = a.value.get<bool>();
  auto chunks = [](SchedulerPolicy p) {
    EngineConfig e;
    e.policy = p;
    return e.chunked_prefill();
  };
  Json& engine = section_of(doc, "engine");
  if (engine.contains("policy") && !engine["policy"].is_null()) {
    const JsonView pv(engine["policy"], "engine.policy");
    const std::string name = pv.as_string();
    const SchedulerPolicy p = parse_policy(name, "engine.policy");
    if (chunks(p) != want) {
      throw ConfigError(a.from, std::string("is vLLM's switch for chunked prefill; engine.policy '") + name + "' " +
                                    (chunks(p) ? "chunks" : "does not chunk") + " prefills, got " +
                                    (want ? "true" : "false") + " (give one of them)");
    }
    return;
  }
  // The default is the release's scheduler when engine.runtime names one (vllm==0.5.5: V0's prefill-first), so that
  // --enable-chunked-prefill on a V0 release selects V0's chunked prefill instead of being dropped.
  SchedulerPolicy fallback = EngineConfig{}.policy;
  if (engine.contains("runtime") && engine["runtime"].is_string() &&
      is_engine_version(engine["runtime"].get<std::string>())) {
    try {
      const auto rv = runtime_for_version(parse_engine_version(engine["runtime"].get<std::string>()));
      if (rv.policy) fallback = *rv.policy;
    } catch (const ConfigError&) {
      // reported with its path when the engine section is read
    }
    if (chunks(fallback) != want && fallback == SchedulerPolicy::vllm_v0) {
      engine["policy"] = to_string(SchedulerPolicy::chunked);
      return;
    }
    // Chunked prefill set off on a V0 release: named, so that the release's >32K rule (vllm#6666, which applies
    // only to an unset flag) does not turn it back on (effective_engine).
    if (!want && fallback == SchedulerPolicy::vllm_v0) {
      engine["policy"] = to_string(fallback);
      return;
    }
  }
  if (chunks(fallback) == want) return;
  for (auto p : {SchedulerPolicy::vllm, SchedulerPolicy::vllm_v0, SchedulerPolicy::chunked}) {
    if (chunks(p) == want) {
      engine["policy"] = to_string(p);
      return;
    }
  }
  throw InternalError("no scheduler policy with chunked prefill " + std::string(want ? "on" : "off"));
}

/// dtype names the 16-bit weights unless a quantized format is set (then it is the activation type, which
/// llmsim's formats fix); a different 16-bit type is a conflict.
void apply_dtype(Json& doc, const Assignment& a, const std::map<std::string, std::string>& set_by) {
  if (a.value.is_null()) return;
  Json& quant = section_of(doc, "quant");
  if (!quant.contains("weights") || quant["weights"].is_null()) {
    quant["weights"] = a.value;
    return;
  }
  const Json have = comparable("quant.weights", quant["weights"]);
  if ((have == "fp16" || have == "bf16") && have != a.value) {
    auto by = set_by.find("quant.weights");
    throw ConfigError(a.from, "is vLLM's name for the 16-bit weight type, which " +
                                  (by == set_by.end() ? std::string("quant.weights") : by->second) + " sets to " +
                                  shown(quant["weights"]) + "; got " + shown(a.value) + " (give one of them)");
  }
}

Assignment convert(const AliasRule& r, const JsonView& v) {
  Assignment a{v.path(), &r, Json()};
  switch (r.kind) {
    case ArgKind::integer: a.value = v.as_integer(); break;
    // vLLM's --max-model-len takes "auto" (or -1): the largest context that fits (EngineConfig::max_model_len).
    // A command line gives it as text: "auto", "-1" or a number.
    case ArgKind::context_len:
      if (v.json().is_string()) {
        const std::string s = to_lower(v.as_string());
        const auto n = parse_number(s);
        if (s == "auto") a.value = "auto";
        else if (n && *n == std::floor(*n) && std::abs(*n) < 2147483648.0) a.value = static_cast<std::int64_t>(*n);
        else v.fail("expected a number of tokens or auto, got '" + v.as_string() + "'");
      } else {
        a.value = v.as_integer();
      }
      break;
    case ArgKind::number: a.value = v.as_number(); break;
    case ArgKind::boolean: a.value = v.as_bool(); break;
    case ArgKind::string: a.value = v.as_string(); break;
    case ArgKind::chunked_prefill: a.value = v.as_bool(); break;
    case ArgKind::enforce_eager: a.value = !v.as_bool(); break;
    case ArgKind::kv_dtype: a.value = to_lower(canonical_kv(v.as_string())); break;
    case ArgKind::quantization: a.value = quantization_value(v); break;
    case ArgKind::dtype: {
      const auto d = dtype_value(v);
      if (d) a.value = *d;
      break;
    }
  }
  return a;
}

// ---- defaults ----

const Json& default_scenario() {
  static const Json j = to_json(Scenario{});
  return j;
}

template <class Variant, class ToJson>
std::vector<Json> variant_defaults(ToJson to_json_fn) {
  std::vector<Json> out;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (out.push_back(to_json_fn(Variant(std::in_place_index<I>))), ...);
  }(std::make_index_sequence<std::variant_size_v<Variant>>{});
  return out;
}

/// The default object of the arrival process / length distribution called `name` (null when unknown).
Json variant_default(const std::string& tag, const std::string& name) {
  static const std::vector<Json> arrivals = variant_defaults<ArrivalSpec>(detail::arrival_json);
  static const std::vector<Json> lengths = variant_defaults<LengthDist>(detail::length_json);
  for (const auto& j : tag == "process" ? arrivals : lengths)
    if (j.value(tag, Json()) == name) return j;
  return Json();
}

/// What a partial arrival / length object is merged onto: `current` (the default there) unless the patch
/// names another variant, then that variant's defaults (an object with no fields for an unknown name or a
/// non-string tag, so the reader reports it).
Json start_for(const std::string& tag, const Json& patch, const Json& current) {
  auto it = patch.find(tag);
  if (it == patch.end() || it->is_null()) return current;
  if (!it->is_string()) return Json::object();
  if (current.is_object() && current.value(tag, Json()) == *it) return current;
  Json d = variant_default(tag, it->get<std::string>());
  return d.is_null() ? Json::object() : d;
}

const std::vector<std::pair<std::string, std::string>>& variant_fields() {
  static const std::vector<std::pair<std::string, std::string>> f{
      {"arrival", "process"}, {"input_tokens", "dist"}, {"output_tokens", "dist"}};
  return f;
}

}  // namespace

const std::vector<VllmAlias>& vllm_aliases() {
  static const std::vector<VllmAlias> a = [] {
    std::vector<VllmAlias> out;
    for (const auto& r : rules()) {
      VllmAlias a = r.alias;
      switch (r.kind) {
        case ArgKind::integer: a.type = VllmAlias::Type::integer; break;
        case ArgKind::number: a.type = VllmAlias::Type::number; break;
        case ArgKind::boolean:
        case ArgKind::chunked_prefill:
        case ArgKind::enforce_eager: a.type = VllmAlias::Type::boolean; break;
        default: a.type = VllmAlias::Type::string; break;
      }
      out.push_back(std::move(a));
    }
    return out;
  }();
  return a;
}

Json normalize_vllm_names(const JsonView& v) {
  v.expect_object();
  Json doc = v.json();
  const auto at = [&](const std::string& p) { return v.path().empty() ? p : v.path() + "." + p; };
  // Values spelled the vLLM way in the canonical fields.
  if (doc.contains("quant") && doc["quant"].is_object()) {
    Json& q = doc["quant"];
    if (q.contains("weights") && q["weights"].is_string()) q["weights"] = canonical_weights(q["weights"].get<std::string>());
    if (q.contains("kv_cache") && q["kv_cache"].is_string()) q["kv_cache"] = canonical_kv(q["kv_cache"].get<std::string>());
  }
  // Keys: collect every alias (removing it), then apply in table order, dtype last (it yields to a quantization).
  std::vector<Assignment> found;
  for (const std::string section : {"", "engine", "hardware", "quant"}) {
    Json* s = section.empty() ? &doc : (doc.contains(section) && doc[section].is_object() ? &doc[section] : nullptr);
    if (!s) continue;
    for (const auto& r : rules()) {
      if (std::find(r.alias.sections.begin(), r.alias.sections.end(), section) == r.alias.sections.end()) continue;
      auto it = s->find(r.alias.name);
      if (it == s->end()) continue;
      const Json raw = *it;
      s->erase(it);
      if (raw.is_null()) continue;  // merge-patch null: as if not given
      found.push_back(convert(r, JsonView(raw, at(section.empty() ? r.alias.name : section + "." + r.alias.name))));
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const Assignment& a, const Assignment& b) {
    return (a.rule->kind == ArgKind::dtype) < (b.rule->kind == ArgKind::dtype);
  });
  std::map<std::string, std::string> set_by;
  for (const auto& a : found) {
    if (a.rule->kind == ArgKind::chunked_prefill) apply_chunked(doc, a);
    else if (a.rule->kind == ArgKind::dtype) apply_dtype(doc, a, set_by);
    else apply(doc, a, set_by);
  }
  return doc;
}

Json merge_onto_defaults(const Json& doc) {
  if (!doc.is_object()) return doc;
  // RFC 7386 onto an empty object: members set to null are removed, so their readers apply the defaults. Fields
  // that are absent stay absent — some defaults depend on others (an offline workload has no warm-up, V1's batch
  // knobs follow the GPU), so materialising a default document here would fix them too early.
  Json base = Json::object();
  base.merge_patch(doc);
  // A partial arrival / length object starts from the default variant (or from the variant it names).
  auto patch_variants = [](Json& section, const Json& defaults) {
    for (const auto& [field, tag] : variant_fields()) {
      auto f = section.find(field);
      if (f == section.end() || !f->is_object()) continue;
      Json merged = start_for(tag, *f, defaults.at(field));
      merged.merge_patch(*f);
      *f = std::move(merged);
    }
  };
  auto w = base.find("workload");
  if (w == base.end() || !w->is_object()) return base;  // the workload reader reports the type
  static const Json workload_defaults = default_scenario()["workload"];
  patch_variants(*w, workload_defaults);
  auto classes = w->find("classes");
  if (classes != w->end() && classes->is_array()) {
    static const Json class_defaults = [] {
      const TenantClass c;
      return Json{{"arrival", detail::arrival_json(c.arrival)},
                  {"input_tokens", detail::length_json(c.input_tokens)},
                  {"output_tokens", detail::length_json(c.output_tokens)}};
    }();
    for (auto& c : *classes)
      if (c.is_object()) patch_variants(c, class_defaults);
  }
  return base;
}

Json prepare_scenario_json(const JsonView& doc) { return merge_onto_defaults(normalize_vllm_names(doc)); }

}  // namespace llmsim::spec
