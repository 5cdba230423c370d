#pragma once
// The scenario JSON as users write it -> the JSON the section readers parse. Two steps, both run by
// scenario_from_json before any section is read:
//
// 1. vLLM's names: a key or value spelled as vLLM's engine arguments spell it (`tensor_parallel_size`,
//    `enable_chunked_prefill`, `kv_cache_dtype: fp8_e4m3`, `quantization: awq`, `enforce_eager`, ...) is
//    rewritten to llmsim's canonical field (`hardware.tp`, `engine.policy`, `quant.kv_cache: fp8`, ...).
//    An alias and the canonical field (or two aliases) that disagree are a ConfigError naming both.
// 2. Defaults: the document is a JSON merge patch (RFC 7386) applied to the documented default scenario,
//    so every field is optional (`{"workload": {"arrival": {"rate": 8}}}` is a Poisson arrival at 8/s) and
//    `null` removes a field. A patch that names another arrival `process` or length `dist` than the default
//    starts from that variant's own defaults, never from fields of another variant.
//
// The rules are listed in examples/scenarios/README.md ("vLLM's names" and "Partial scenarios").
#include <string>
#include <vector>

#include "llmsim/core/json_view.hpp"

namespace llmsim::spec {

/// One vLLM spelling llmsim accepts: `name` (a key in the sections listed) stands for the canonical
/// dotted field `target`.
struct VllmAlias {
  enum class Type { integer, number, boolean, string };
  std::string name;                   ///< vLLM's engine-argument name, e.g. "tensor_parallel_size"
  std::string target;                 ///< canonical dotted path, e.g. "hardware.tp"
  std::vector<std::string> sections;  ///< where the key is accepted: "" (top level), "engine", "hardware", "quant"
  Type type = Type::string;           ///< the JSON type vLLM's value has (a boolean is a bare --flag)
};

/// Every key alias, in documentation order.
const std::vector<VllmAlias>& vllm_aliases();

/// Step 1 alone: `doc` (a scenario object) with vLLM's keys and values rewritten to the canonical ones.
/// ConfigError when the root is not an object, a value cannot be mapped (`quantization: gguf` names no
/// format), or an alias disagrees with its canonical field.
Json normalize_vllm_names(const JsonView& doc);

/// Step 2 alone: `doc` merged onto the default scenario (variant-aware, see above). Never throws for
/// well-formed JSON; type errors are left for the section readers to report with their paths.
Json merge_onto_defaults(const Json& doc);

/// Both steps: what scenario_from_json reads.
Json prepare_scenario_json(const JsonView& doc);

}  // namespace llmsim::spec
