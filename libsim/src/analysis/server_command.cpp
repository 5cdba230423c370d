// Which scenario fields `memory` and `step` read from a server command line (server_command.hpp).
#include "llmsim/analysis/server_command.hpp"

#include <algorithm>

#include "llmsim/analysis/server_args.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/scenario.hpp"
#include "llmsim/spec/scenario_prepass.hpp"
#include "llmsim/spec/vllm_args.hpp"

namespace llmsim::analysis {

namespace {

struct CommandRule {
  std::vector<std::string> uses;  ///< scenario fields the command reads
  /// Scenario field -> why it does not change what the command computes (noted).
  std::vector<std::pair<std::string, std::string>> not_applying;
};

// memory: the model, the split, the formats, the engine's memory knobs and (an SGLang line) the server. The others do
// not change one replica's memory (noted), or need a scenario (refused).
const CommandRule& memory_rule() {
  static const CommandRule r{
      {"model", "hardware.tp", "hardware.pp", "hardware.pp_layer_partition", "quant.weights", "quant.kv_cache",
       "engine.max_model_len", "engine.gpu_memory_utilization", "engine.max_num_batched_tokens", "engine.max_num_seqs", "engine.block_size",
       "engine.cpu_offload_gb", "engine.cuda_graphs", "engine.enable_lora", "engine.max_loras", "engine.max_lora_rank",
       // The radix cache / prefix caching sizes a hybrid model's state: SGLang's Mamba pool by its memory ratio or by
       // max_running_requests (memory/sglang_mamba_pool.hpp), vLLM V1's hybrid block size; a dense model's plan is
       // the same either way.
       "engine.enable_prefix_caching",
       // An SGLang line's server: its own accounting (memory/engine_memory.cpp: no profiling pass, the pool from
       // mem_fraction_static by release, card and tp), as a scenario on the SGLang runtime is planned.
       "engine.runtime"},
      {{"hardware.replicas", "the plan is one replica's; every data-parallel replica has the same"},
       {"engine.async_scheduling", "scheduling, not memory"},
       {"engine.num_scheduler_steps", "scheduling, not memory: a multi-step window's lookahead slots come out of the "
                                      "same KV pool"},
       {"engine.multi_step_stream_outputs", "streaming to the client, not memory"},
       {"engine.preemption", "scheduling, not memory"},
       {"engine.swap_space_gb", "host memory for preempted sequences, not GPU memory"},
       {"engine.cuda_graph_max_bs", "SGLang's decode CUDA-graph limit prices time, not memory (graphs live in the "
                                    "margin)"}}};
  return r;
}

// step: the model, the split (VLLM_PP_LAYER_PARTITION's largest stage is priced), the formats, CUDA graphs, the runtime (SGLang's), LoRA's kernels, V0's multi-step window
// (its later steps' time), the context (a V0 release's >32K automatic chunking decides whether multi-step applies). The memory and scheduling knobs only
// bound which batches fit (noted: memory plans with them).
const CommandRule& step_rule() {
  static const std::string mem = "the memory check uses the default engine settings; {memory} plans with yours";
  static const CommandRule r{
      {"model", "hardware.tp", "hardware.pp", "hardware.pp_layer_partition", "quant.weights", "quant.kv_cache",
       "engine.cpu_offload_gb", "engine.runtime", "engine.cuda_graphs", "engine.cuda_graph_max_bs", "engine.enable_lora", "engine.max_loras",
       "engine.max_lora_rank", "engine.num_scheduler_steps", "engine.max_model_len"},
      {{"hardware.replicas", "one iteration runs on one replica"},
       {"engine.multi_step_stream_outputs", "streaming to the client, not one iteration's time"},
       {"engine.enable_prefix_caching", "the batch's cached context is {prefill_context}"},
       {"engine.async_scheduling", "scheduling, not one iteration's time"},
       {"engine.preemption", "scheduling, not one iteration's time"},
       {"engine.swap_space_gb", "host memory, not one iteration's time"},
       {"engine.max_num_seqs", "the batch is the one you give; " + mem},
       {"engine.max_num_batched_tokens", "the batch is the one you give; " + mem},
       {"engine.gpu_memory_utilization", mem},
       {"engine.block_size", mem}}};
  return r;
}

const CommandRule& rule_of(PlanCommand c) { return c == PlanCommand::memory ? memory_rule() : step_rule(); }

struct Names {
  std::string vllm, sglang, command, scenario_command, memory, prefill_context;
};

Names names_of(PlanCommand c, ServerFace face) {
  const std::string name = c == PlanCommand::memory ? "memory" : "step";
  if (face == ServerFace::cli)
    return {"--vllm-args", "--sglang-args", "`llmsim " + name + "`", "a scenario command (simulate)", "`llmsim memory`",
            "--prefill-context"};
  return {"vllm_args", "sglang_args", "`llmsim." + name + "()`", "llmsim.simulate()", "`llmsim.memory()`",
          "prefill_context"};
}

// A reason with the face's names in place of {memory} and {prefill_context}.
std::string with_names(std::string text, const Names& n) {
  for (const auto& [key, value] : {std::pair<std::string, const std::string*>{"{memory}", &n.memory},
                                   std::pair<std::string, const std::string*>{"{prefill_context}", &n.prefill_context}})
    if (const auto at = text.find(key); at != std::string::npos) text.replace(at, key.size(), *value);
  return text;
}

}  // namespace

std::vector<std::string> command_server_field_names(PlanCommand command) { return rule_of(command).uses; }

std::string empty_server_line_problem(bool sglang, const std::string& leave) {
  return std::string("an empty command line: give the server's own (") +
         (sglang ? "\"python -m sglang.launch_server --model-path MODEL --max-running-requests 128 ...\""
                 : "\"vllm serve MODEL --max-num-seqs 128 ...\"") +
         "), or " + leave;
}

CommandServerFields command_server_fields(PlanCommand command, const std::string& vllm, const std::string& sglang,
                                          ServerFace face) {
  const Names n = names_of(command, face);
  for (const auto& [line, name] : {std::pair{&vllm, &n.vllm}, std::pair{&sglang, &n.sglang}})
    if (!line->empty() && line->find_first_not_of(" \t\r\n") == std::string::npos)
      throw ConfigError(*name, empty_server_line_problem(line == &sglang, "leave it out"));
  CommandServerFields out;
  if (vllm.empty() && sglang.empty()) return out;
  const std::string flag = vllm.empty() ? n.sglang : n.vllm;
  // The one parser of every scenario command: typed values, misspellings refused, unmodelled flags noted.
  const auto sets = server_arg_sets(vllm, sglang, Json::object());
  out.notes = sets.notes;
  // The server's flag each scenario field came from, for the messages ("hardware.tp" -> "--tensor-parallel-size").
  std::vector<std::pair<std::string, std::string>> source;
  Json doc = Json::object();
  for (const auto& [name, value] : sets.sets) {
    if (name == "model" || name.find('.') != std::string::npos) {
      source.emplace_back(name, name == "model" ? "the model" : name);
      spec::set_json_path(doc, name, value);
      continue;
    }
    if (name == "enable_chunked_prefill") {  // a scheduling switch: V1 always chunks, so only "off" would matter
      if (value == true) {
        out.notes.push_back("--enable-chunked-prefill does not apply to " + n.command + " (vLLM V1 always chunks prefills)");
        continue;
      }
      throw ConfigError(flag, "--no-enable-chunked-prefill does not apply to " + n.command + "; run " +
                                  n.scenario_command + " with this command line");
    }
    for (const auto& a : spec::vllm_aliases())  // an environment variable (VLLM_...) is named as written
      if (a.name == name) source.emplace_back(a.target, name.rfind("VLLM_", 0) == 0 ? name : spec::dashed_flag(name));
    doc[name] = value;
  }
  const Json fields = spec::normalize_vllm_names(JsonView(doc, flag));
  // What the user typed for a field: a note speaks of that flag. A field the line implies without a flag (SGLang's
  // radix cache is on unless --disable-radix-cache) is no flag of the user's and earns no note.
  auto typed = [&](const std::string& field) {
    for (const auto& [f, t] : sets.flags)
      if (f == field) return t;
    return std::string();
  };
  auto is_path_set = [&](const std::string& field) {
    for (const auto& [f, src] : source)
      if (f == field && src == field) return true;
    return false;
  };
  auto from = [&](const std::string& field) {
    // An SGLang flag is named as typed (--disable-radix-cache, not the vLLM name it maps to); a vLLM one by its long name.
    if (const std::string t = typed(field); !t.empty() && !sglang.empty()) return t;
    std::string s;
    for (const auto& [f, src] : source)
      if (f == field && s.find(src) == std::string::npos) s += (s.empty() ? "" : " / ") + src;
    return s.empty() ? field : s;
  };
  std::vector<std::pair<std::string, Json>> leaves;
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    if (it->is_object())
      for (auto jt = it->begin(); jt != it->end(); ++jt) leaves.emplace_back(it.key() + "." + jt.key(), *jt);
    else
      leaves.emplace_back(it.key(), *it);
  }
  const CommandRule& rule = rule_of(command);
  for (const auto& leaf : leaves) {
    // Named copies, not a structured binding: the lambda below captures `field` (clang 14 refuses a binding).
    const std::string& field = leaf.first;
    const Json& value = leaf.second;
    if (std::find(rule.uses.begin(), rule.uses.end(), field) != rule.uses.end()) {
      // --enforce-eager is the one engine.cuda_graphs value that changes anything (graphs are the default).
      if (field == "engine.cuda_graphs" && value != false) continue;
      out.fields.emplace_back(field, value);
      continue;
    }
    const auto na = std::find_if(rule.not_applying.begin(), rule.not_applying.end(),
                                 [&](const auto& p) { return p.first == field; });
    if (na != rule.not_applying.end()) {
      if (typed(field).empty() && !is_path_set(field)) continue;  // implied by the line, not typed
      out.notes.push_back(from(field) + " does not apply to " + n.command + " (" + with_names(na->second, n) + ")");
      continue;
    }
    throw ConfigError(flag, from(field) + " cannot be used by " + n.command + " (it sets " + field +
                                "); leave it out, or run " + n.scenario_command + " with this command line");
  }
  return out;
}

}  // namespace llmsim::analysis
