#include "llmsim/analysis/step.hpp"

#include <algorithm>

#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/memory/engine_kv.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/perf/collective.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/dtype.hpp"
#include "llmsim/spec/multi_step.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {

perf::StepCost step_cost(const perf::CostModel& cm, const spec::EngineConfig& engine, const StepLengths& l,
                         StepNames names, const spec::ResolvedSpeculation* speculation) {
  auto name = [&](const std::string& keyword) {
    if (names == StepNames::keywords) return keyword;
    std::string flag = "--" + keyword;
    std::replace(flag.begin(), flag.end(), '_', '-');
    return flag;
  };
  Problems p;
  auto non_negative = [&](const char* keyword, std::int64_t v) {
    if (v < 0) p.add(name(keyword), "must be >= 0, got " + std::to_string(v));
  };
  non_negative("prefill_tokens", l.prefill_tokens);
  non_negative("prefill_context", l.prefill_context);
  non_negative("decode_seqs", l.decode_seqs);
  non_negative("context", l.context);
  p.throw_if_any();
  if (l.prefill_tokens == 0 && l.prefill_context > 0)
    p.add(name("prefill_context"), "given without " + name("prefill_tokens") + " (a chunk needs tokens)");
  if (l.decode_seqs == 0 && l.context > 0) p.add(name("context"), "given without " + name("decode_seqs"));
  if (l.decode_seqs > 0 && l.context < 1)
    p.add(name("context"), "must be >= 1 when " + name("decode_seqs") + " > 0 (a decoding sequence has a prompt)");
  if (l.prefill_tokens == 0 && l.decode_seqs == 0)
    p.add(names == StepNames::keywords ? "step" : "arguments",
          "empty batch: give " + name("prefill_tokens") + " and/or " + name("decode_seqs"));
  p.throw_if_any();

  const auto& model = cm.model();
  const auto& gpu = cm.gpu();
  // In double: lengths are user numbers, and their sums must not overflow before they are compared.
  const double prefill_len = static_cast<double>(l.prefill_context) + static_cast<double>(l.prefill_tokens);
  const double decode_len = static_cast<double>(l.context) + 1;
  const double longest = std::max(prefill_len, decode_len);
  if (longest > model.max_position_embeddings) {
    // The valid range with the limit (a decoding sequence holds its context and the token it decodes; a chunk its
    // cached tokens and its own).
    const auto n = static_cast<std::int64_t>(model.max_position_embeddings);
    const bool decode = prefill_len < decode_len;
    const std::string range =
        decode ? name("context") + " must be in 1.." + std::to_string(n - 1) + " (it and the token decoded fit)"
               : name("prefill_context") + " + " + name("prefill_tokens") + " must be at most " + std::to_string(n);
    throw ConfigError(name(!decode ? (l.prefill_context > 0 ? "prefill_context" : "prefill_tokens") : "context"),
                      "a sequence of " + format_value(longest) + " tokens exceeds the " + std::to_string(n) +
                          "-token context of " + model.id + ": " + range);
  }
  // The batch must fit in the KV cache the memory plan leaves (planned, as vLLM does, for the longest sequence).
  const auto plan_with = [&](const spec::EngineConfig& e) {
    return memory::plan_memory(model, cm.quant(), gpu, cm.parallel(), e, static_cast<int>(longest),
                               speculation ? memory::proposer_memory(*speculation, cm.quant(), cm.parallel().tp)
                                           : memory::ProposerMemory{});
  };
  memory::MemoryPlan plan = plan_with(engine);
  if (!plan.fits && plan.mamba_cache_blocks > 0 && engine.cuda_graphs && engine.max_num_seqs > plan.mamba_cache_blocks) {
    // A hybrid model (Qwen3.5, Nemotron-H) whose pool holds fewer Mamba blocks than the default max_num_seqs: vLLM
    // refuses that server at start-up (memory_plan), but `step` prices the batch given, not a server's max_num_seqs.
    // Plan the server that starts (max_num_seqs at the blocks); the batch's own sequences are checked below.
    spec::EngineConfig e = engine;
    e.max_num_seqs = static_cast<int>(plan.mamba_cache_blocks);
    plan = plan_with(e);
  }
  if (!plan.fits) throw ConfigError(names == StepNames::keywords ? "model" : "--model", "does not fit: " + plan.reason);
  const std::int64_t seqs = l.decode_seqs + (l.prefill_tokens > 0 ? 1 : 0);
  if (plan.linear_state_blocks_per_seq > 0 && seqs > plan.linear_state_seqs_fit)
    throw ConfigError("batch", std::to_string(seqs) + " sequences need their linear-attention state but the pool of " +
                                   gpu.id + " x" + std::to_string(cm.parallel().gpus()) + " holds " +
                                   std::to_string(plan.linear_state_seqs_fit) + " for " + model.id);
  // Past the window a decoder's sliding-window groups hold only a handful of blocks (vLLM V1): the batch is counted in
  // the pool's pages as the engine charges it (memory::engine_kv_layout, KvLayout::blocks_held).
  const memory::KvLayout charged = memory::engine_kv_layout(plan, engine);
  if (charged.sliding_groups > 0) {
    const int bs = engine.block_size;
    const double per_decoder = static_cast<double>(charged.blocks_held(l.context, 1, bs));
    const double pages = static_cast<double>(l.decode_seqs) * per_decoder +
                         static_cast<double>(charged.blocks_held(l.prefill_context, l.prefill_tokens, bs));
    const double pool = static_cast<double>(plan.kv_capacity_blocks) * charged.groups();
    if (pages > pool)
      throw ConfigError("batch", "needs " + format_value(pages) + " KV-cache blocks of " + std::to_string(bs) +
                                     " tokens over its " + std::to_string(charged.groups()) +
                                     " KV-cache groups (sliding-window: " + std::to_string(charged.sliding_groups) +
                                     ", holding the last " + std::to_string(charged.window) + " tokens) but " + gpu.id +
                                     " x" + std::to_string(cm.parallel().gpus()) + " holds " + format_value(pool) +
                                     " for " + model.id);
  }
  const double kv_needed = prefill_len + static_cast<double>(l.decode_seqs) * decode_len;
  if (charged.sliding_groups == 0 && kv_needed > static_cast<double>(plan.kv_capacity_tokens))
    throw ConfigError("batch", "needs " + format_value(kv_needed) + " KV-cache tokens but " + gpu.id + " x" +
                                   std::to_string(cm.parallel().gpus()) + " holds " +
                                   std::to_string(plan.kv_capacity_tokens) + " for " + model.id + " (" +
                                   cm.quant().weights.id + ", KV " + std::string(spec::to_string(cm.quant().kv_dtype)) +
                                   ")");
  perf::BatchShape batch;
  if (l.prefill_tokens > 0) batch.add_prefill(l.prefill_tokens, l.prefill_context, true);
  // All decode sequences share one context length: set the sums add_decode() would build (O(1) in decode_seqs).
  batch.decode_seqs = l.decode_seqs;
  batch.decode_context = l.decode_seqs * l.context;  // <= kv_needed, so in range
  batch.decode_max_context = l.decode_seqs > 0 ? l.context : 0;
  if (speculation) batch.spec_tokens = speculation->config.num_speculative_tokens;
  perf::validate(batch);
  return cm.breakdown(batch);
}

Json step_json(const perf::StepCost& s, const perf::CostModel& cm, const std::vector<std::string>& notes,
               const std::vector<std::string>& warnings, const spec::ResolvedSpeculation* speculation) {
  Json j = perf::to_json(s);
  if (!j.contains("tokens_per_s")) j["tokens_per_s"] = s.time_s > 0 ? static_cast<double>(s.tokens) / s.time_s : 0.0;
  j["model"] = cm.model().id;
  j["gpu"] = cm.gpu().id;
  j["quant"] = cm.quant().weights.id;
  j["gemm_dtype"] = std::string(spec::to_string(cm.gemm_dtype()));
  j["tp"] = cm.parallel().tp;
  j["pp"] = cm.parallel().pp;
  j["profile_source"] = cm.profile().source;
  j["engine"] = perf::to_string(cm.runtime());
  j["decode_attention_backend"] = perf::to_string(cm.decode_attention_backend());
  const perf::AllReduceModel allreduce(cm.gpu(), cm.profile(), cm.parallel().tp, perf::runtime_traits(cm.runtime()).allreduce);
  j["allreduce_algorithm"] =
      perf::to_string(allreduce.algorithm(static_cast<double>(s.tokens) * cm.model().hidden_size * 2));
  j["notes"] = notes;
  if (speculation)
    j["speculative"] = {{"method", spec::to_string(speculation->config.method)},
                        {"num_speculative_tokens", speculation->config.num_speculative_tokens}};
  if (!warnings.empty()) j["warnings"] = warnings;
  return j;
}

namespace {

/// vLLM V0's multi-step scheduling (spec::multi_step_for): a decode-only batch opens a window of n steps whose first
/// is this step and whose n - 1 later steps advance on the GPU alone (the engine's ReplicaConfig::window_cost, the
/// cost model without its per-step CPU time); a batch with a prefill runs one step, as the engine runs it. Without
/// this a scenario with num_scheduler_steps > 1 printed the first step's time as every step's.
void add_multi_step(Json& json, const spec::ResolvedScenario& r, const perf::CostModel& cm,
                    const perf::StepCost& first, const StepLengths& l) {
  const int n = spec::multi_step_for(r.scenario.engine).steps;
  if (n <= 1) return;
  const std::string steps = "engine.num_scheduler_steps " + std::to_string(n);
  if (l.prefill_tokens > 0) {
    json["notes"].push_back(steps + ": a step with a prefill runs alone (multi-step windows are decode-only); "
                                    "time_ms is its time");
    return;
  }
  perf::BatchShape batch;
  batch.decode_seqs = l.decode_seqs;
  batch.decode_context = l.decode_seqs * l.context;
  const double later_s = cm.without_cpu_overhead().breakdown(batch).time_s;
  const double mean_s = (first.time_s + (n - 1) * later_s) / n;
  json["multi_step"] = {{"num_scheduler_steps", n},
                        {"first_step_ms", first.time_s * 1e3},
                        {"later_step_ms", later_s * 1e3},
                        {"window_mean_step_ms", mean_s * 1e3}};
  json["notes"].push_back(steps + ": time_ms is a window's first step (scheduling and input preparation on the "
                                  "CPU); its " + std::to_string(n - 1) + " later steps run on the GPU alone "
                                  "(multi_step.later_step_ms), window_mean_step_ms per step over the window");
}

/// Pipeline parallel: the stages' layers (VLLM_PP_LAYER_PARTITION, hardware.pp_layer_partition, or vLLM's split:
/// spec::pp_stage_layers) and what time_ms is under them.
void add_pipeline_stages(Json& json, const spec::ResolvedScenario& r) {
  const auto& par = r.scenario.hardware.parallel;
  if (par.pp <= 1) return;
  const std::vector<int> stages = spec::pp_stage_layers(r.model.num_layers, par);
  json["pp_stage_layers"] = stages;
  std::string list;
  for (const int n : stages) list += (list.empty() ? "" : ", ") + std::to_string(n);
  json["notes"].push_back("pipeline stages [" + list + "] of " + std::to_string(r.model.num_layers) + " layers (" +
                          (par.layer_partition.empty() ? "vLLM's split" : "VLLM_PP_LAYER_PARTITION") +
                          "): time_ms is one batch's pass through every stage; the largest, " +
                          std::to_string(spec::largest_pp_stage(r.model.num_layers, par)) +
                          " layers, paces a pipeline of micro-batches and its weights are what the memory check sizes");
}

}  // namespace

ScenarioStep step_of_scenario(const spec::ResolvedScenario& r, const StepLengths& lengths, StepNames names) {
  const spec::ResolvedSpeculation* speculation = r.speculation ? &*r.speculation : nullptr;
  perf::CostModel cm = perf::make_cost_model(r);
  perf::StepCost cost = step_cost(cm, r.scenario.engine, lengths, names, speculation);
  Json json = step_json(cost, cm, r.notes, scenario_warnings(r), speculation);
  add_multi_step(json, r, cm, cost, lengths);
  add_pipeline_stages(json, r);
  return ScenarioStep{std::move(cm), std::move(cost), std::move(json)};
}

}  // namespace llmsim::analysis
