// The engine section of the scenario JSON (vLLM-named knobs).
#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "scenario_json.hpp"

namespace llmsim::spec::detail {

namespace {

const char* synthetic_kind(SyntheticService::Kind k) {
  switch (k) {
    case SyntheticService::Kind::fixed: return "fixed";
    case SyntheticService::Kind::exponential: return "exponential";
    case SyntheticService::Kind::lognormal: return "lognormal";
  }
  return "exponential";
}

}  // namespace

EngineConfig read_engine(const JsonView& v) {
  v.allow_only(kEngineKeys);
  EngineConfig e;
  if (v.has("policy")) e.policy = parse_policy(v.string("policy"), v.child_path("policy"));
  e.policy_given = v.has("policy");
  // Absent = the policy's default (spec::effective_engine); an explicit value must be a real limit.
  for (auto [key, field] : {std::pair{"max_num_seqs", &e.max_num_seqs},
                            std::pair{"max_num_batched_tokens", &e.max_num_batched_tokens}}) {
    *field = read_int(v, key, 0);
    if (v.has(key) && *field < 1) v[key].fail("must be >= 1, got " + std::to_string(*field));
  }
  e.block_size = read_int(v, "block_size", e.block_size);
  e.gpu_memory_utilization = v.number_or("gpu_memory_utilization", e.gpu_memory_utilization);
  e.gpu_memory_utilization_given = v.has("gpu_memory_utilization");
  if (v.has("preemption")) e.preemption = parse_preemption(v.string("preemption"), v.child_path("preemption"));
  if (v.has("max_model_len") && v["max_model_len"].json().is_string()) {
    const std::string s = v.string("max_model_len");
    if (to_lower(s) != "auto") v["max_model_len"].fail("must be a number of tokens or \"auto\", got '" + s + "'");
    e.max_model_len = kMaxModelLenAuto;
  } else {
    e.max_model_len = read_int(v, "max_model_len", e.max_model_len);
  }
  if (v.has("watermark")) e.watermark = v.number("watermark");
  e.swap_space_gb = v.number_or("swap_space_gb", e.swap_space_gb);
  if (v.has("enable_prefix_caching")) e.enable_prefix_caching = v.boolean("enable_prefix_caching");
  e.cuda_graphs = v.boolean_or("cuda_graphs", e.cuda_graphs);
  e.api_server = v.boolean_or("api_server", e.api_server);
  if (v.has("async_scheduling")) e.async_scheduling = v.boolean("async_scheduling");
  e.num_scheduler_steps = read_int(v, "num_scheduler_steps", e.num_scheduler_steps);
  if (v.has("multi_step_stream_outputs")) e.multi_step_stream_outputs = v.boolean("multi_step_stream_outputs");
  e.max_concurrent_batches = read_int(v, "max_concurrent_batches", e.max_concurrent_batches);
  e.cpu_offload_gb = v.number_or("cpu_offload_gb", e.cpu_offload_gb);
  e.kv_offload_gb = v.number_or("kv_offload_gb", e.kv_offload_gb);
  if (v.has("cuda_graph_max_bs")) e.cuda_graph_max_bs = read_int(v, "cuda_graph_max_bs", 0);
  e.enable_lora = v.boolean_or("enable_lora", e.enable_lora);
  e.max_loras = read_int(v, "max_loras", e.max_loras);
  e.max_lora_rank = read_int(v, "max_lora_rank", e.max_lora_rank);
  // vLLM ignores --max-loras / --max-lora-rank without --enable-lora; here a slot count that changes nothing is
  // refused rather than silently dropped.
  for (const char* key : {"max_loras", "max_lora_rank"})
    if (v.has(key) && !e.enable_lora)
      v[key].fail("takes effect only with engine.enable_lora true (vLLM's --enable-lora); set it or leave this out");
  if (v.has("runtime")) {
    const std::string r = v.string("runtime");
    if (is_engine_version(r)) {
      // A release: its runtime, and its default scheduler unless the scenario names a policy.
      const auto ev = parse_engine_version(r, v.child_path("runtime"));
      const auto rv = runtime_for_version(ev, v.child_path("runtime"));
      e.runtime = rv.runtime;
      e.runtime_release = ev.engine + "==" + ev.version;
      // A release without CUDA graphs (vLLM before 0.2.6) runs every step eagerly; graphs asked of it are refused.
      if (!rv.cuda_graphs) {
        if (v.has("cuda_graphs") && v.boolean("cuda_graphs"))
          throw ConfigError(v.child_path("cuda_graphs"),
                            "true, but " + r + " has no CUDA graphs (vLLM added them in 0.2.6, vllm#1926): leave it "
                            "out or set it to false");
        e.cuda_graphs = false;
      }
      if (rv.policy && !v.has("policy")) e.policy = *rv.policy;
      // vLLM 0.8-0.10 fall back to their V0 engine for --num-scheduler-steps > 1 (EngineArgs._is_v1_supported_oracle:
      // _raise_or_fallback("--num-scheduler-steps"), unless VLLM_USE_V1=1 is set), with V0's scheduler defaults.
      if (!v.has("policy") && rv.v0_runtime && rv.v0_multi_step && e.policy == SchedulerPolicy::vllm &&
          e.num_scheduler_steps > 1) {
        e.policy = SchedulerPolicy::vllm_v0;
        e.runtime = *rv.v0_runtime;
      }
      // A V0 scheduler named with a release that ships V0 runs V0's engine (vLLM 0.8-0.10 with VLLM_USE_V1=0).
      if (v.has("policy") && rv.v0_runtime &&
          (e.policy == SchedulerPolicy::vllm_v0 || e.policy == SchedulerPolicy::chunked))
        e.runtime = *rv.v0_runtime;
    } else {
      e.runtime = parse_runtime(r, v.child_path("runtime"));
      // SGLang runs its own scheduler unless the scenario names a policy.
      if (*e.runtime == Runtime::sglang && !v.has("policy")) e.policy = SchedulerPolicy::sglang;
    }
  }
  if (v.has("speculative")) {
    auto s = v["speculative"];
    s.allow_only(kSpeculativeKeys);
    SpeculativeConfig sc;
    if (s.has("method")) sc.method = parse_speculative_method(s.string("method"), s.child_path("method"));
    if (s.has("draft_model")) sc.draft_model = s.string("draft_model");
    sc.num_speculative_tokens = read_int(s, "num_speculative_tokens", sc.num_speculative_tokens);
    e.speculative = sc;
  }
  if (v.has("synthetic_service")) {
    auto s = v["synthetic_service"];
    s.allow_only(kSyntheticKeys);
    SyntheticService ss;
    if (s.has("kind")) {
      const std::string k = s.string("kind");
      if (k == "fixed") {
        ss.kind = SyntheticService::Kind::fixed;
      } else if (k == "exponential") {
        ss.kind = SyntheticService::Kind::exponential;
      } else if (k == "lognormal") {
        ss.kind = SyntheticService::Kind::lognormal;
      } else {
        throw ConfigError(s.child_path("kind"),
                          unknown_name_message("service distribution", k, {"fixed", "exponential", "lognormal"}));
      }
    }
    ss.mean_s = s.number_or("mean_s", ss.mean_s);
    ss.cv = s.number_or("cv", ss.cv);
    e.synthetic_service = ss;
  }
  return e;
}

Json engine_json(const EngineConfig& e) {
  Json ej{{"block_size", e.block_size},
          {"preemption", to_string(e.preemption)},
          {"max_model_len", e.max_model_len},
          {"swap_space_gb", e.swap_space_gb},
          {"cuda_graphs", e.cuda_graphs},
          {"max_concurrent_batches", e.max_concurrent_batches},
          {"cpu_offload_gb", e.cpu_offload_gb}};
  // A V0 scheduler a release chose is left to the release when read back, so that its >32K chunked-prefill rule
  // still applies (effective_engine); a named one stays named (policy_given).
  if (e.policy_given || !e.runtime_release || e.policy != SchedulerPolicy::vllm_v0) ej["policy"] = to_string(e.policy);
  // Knobs left to the policy's default are written only once set, so the text round-trips to the same defaults
  // (an unnamed gpu_memory_utilization is an SGLang release's own fraction once resolved: spec::resolve).
  if (e.gpu_memory_utilization_given || e.gpu_memory_utilization != EngineConfig{}.gpu_memory_utilization)
    ej["gpu_memory_utilization"] = e.gpu_memory_utilization;
  if (e.max_num_seqs > 0) ej["max_num_seqs"] = e.max_num_seqs;
  if (e.max_num_batched_tokens > 0) ej["max_num_batched_tokens"] = e.max_num_batched_tokens;
  if (e.watermark) ej["watermark"] = *e.watermark;
  if (!e.api_server) ej["api_server"] = false;  // written once off: older outputs stay as they were
  if (e.kv_offload_gb > 0) ej["kv_offload_gb"] = e.kv_offload_gb;  // written once set: older outputs stay as they were
  if (e.enable_prefix_caching) ej["enable_prefix_caching"] = *e.enable_prefix_caching;
  if (e.async_scheduling) ej["async_scheduling"] = *e.async_scheduling;
  if (e.num_scheduler_steps != 1) ej["num_scheduler_steps"] = e.num_scheduler_steps;  // written once set
  if (e.multi_step_stream_outputs) ej["multi_step_stream_outputs"] = *e.multi_step_stream_outputs;
  if (e.cuda_graph_max_bs) ej["cuda_graph_max_bs"] = *e.cuda_graph_max_bs;  // written once set or resolved (SGLang)
  if (e.enable_lora) {  // written once on: older outputs stay as they were
    ej["enable_lora"] = true;
    ej["max_loras"] = e.max_loras;
    ej["max_lora_rank"] = e.max_lora_rank;
  }
  if (e.runtime_release) {
    ej["runtime"] = *e.runtime_release;
  } else if (e.runtime) {
    ej["runtime"] = to_string(*e.runtime);
  }
  if (e.speculative) {
    Json sj{{"method", to_string(e.speculative->method)},
            {"num_speculative_tokens", e.speculative->num_speculative_tokens}};
    if (!e.speculative->draft_model.empty()) sj["draft_model"] = e.speculative->draft_model;
    ej["speculative"] = sj;
  }
  if (e.synthetic_service) {
    ej["synthetic_service"] = {{"kind", synthetic_kind(e.synthetic_service->kind)},
                               {"mean_s", e.synthetic_service->mean_s},
                               {"cv", e.synthetic_service->cv}};
  }
  return ej;
}

}  // namespace llmsim::spec::detail
