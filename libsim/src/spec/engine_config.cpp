#include "llmsim/spec/engine_config.hpp"

#include <algorithm>
#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/gpu_spec.hpp"
#include "llmsim/spec/model_spec.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "sglang_release.hpp"

namespace llmsim::spec {

std::string to_string(SchedulerPolicy p) {
  switch (p) {
    case SchedulerPolicy::vllm: return "vllm";
    case SchedulerPolicy::vllm_v0: return "vllm-v0";
    case SchedulerPolicy::chunked: return "chunked";
    case SchedulerPolicy::static_batching: return "static";
    case SchedulerPolicy::sglang: return "sglang";
  }
  throw InternalError("unknown SchedulerPolicy " + std::to_string(static_cast<int>(p)));
}

std::string engine_name(SchedulerPolicy p) {
  switch (p) {
    case SchedulerPolicy::vllm: return "vLLM V1 (0.11 scheduler)";
    case SchedulerPolicy::vllm_v0: return "vLLM V0 (0.6 prefill-first scheduler)";
    case SchedulerPolicy::chunked: return "chunked prefill (vLLM V0 chunked / Sarathi-Serve)";
    case SchedulerPolicy::static_batching: return "static batching";
    case SchedulerPolicy::sglang: return "SGLang (unmixed prefill/decode scheduler)";
  }
  throw InternalError("unknown SchedulerPolicy " + std::to_string(static_cast<int>(p)));
}

std::string to_string(PreemptionMode p) {
  switch (p) {
    case PreemptionMode::recompute: return "recompute";
    case PreemptionMode::swap: return "swap";
  }
  throw InternalError("unknown PreemptionMode " + std::to_string(static_cast<int>(p)));
}

SchedulerPolicy parse_policy(const std::string& s, const std::string& path) {
  for (auto p : {SchedulerPolicy::vllm, SchedulerPolicy::vllm_v0, SchedulerPolicy::chunked,
                 SchedulerPolicy::static_batching, SchedulerPolicy::sglang}) {
    if (s == to_string(p)) return p;
  }
  throw ConfigError(path, unknown_name_message("scheduler policy", s, {"vllm", "vllm-v0", "chunked", "static", "sglang"}));
}

PreemptionMode parse_preemption(const std::string& s, const std::string& path) {
  for (auto p : {PreemptionMode::recompute, PreemptionMode::swap}) {
    if (s == to_string(p)) return p;
  }
  throw ConfigError(path, unknown_name_message("preemption mode", s, {"recompute", "swap"}));
}

namespace {
constexpr Runtime kRuntimes[] = {Runtime::vllm_v1, Runtime::vllm_v0, Runtime::vllm_v0_sync, Runtime::vllm_v0_paged, Runtime::sglang,
                                 Runtime::lmdeploy_turbomind, Runtime::gpt_fast, Runtime::llama_cpp};
}  // namespace

std::string to_string(Runtime r) {
  switch (r) {
    case Runtime::vllm_v1: return "vllm-v1";
    case Runtime::vllm_v0: return "vllm-v0";
    case Runtime::vllm_v0_sync: return "vllm-v0.5";
    case Runtime::vllm_v0_paged: return "vllm-v0-paged";
    case Runtime::sglang: return "sglang";
    case Runtime::lmdeploy_turbomind: return "lmdeploy-turbomind";
    case Runtime::gpt_fast: return "gpt-fast";
    case Runtime::llama_cpp: return "llama.cpp";
  }
  throw InternalError("unknown Runtime " + std::to_string(static_cast<int>(r)));
}

const std::vector<std::string>& runtime_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (auto r : kRuntimes) v.push_back(to_string(r));
    return v;
  }();
  return names;
}

Runtime parse_runtime(const std::string& text, const std::string& path) {
  const std::string s = trim_runtime_text(text);  // blanks around the name: the one rule of spec/runtime_version.hpp
  if (is_engine_version(s)) return runtime_for_version(parse_engine_version(s, path), path).runtime;
  for (auto r : kRuntimes)
    if (s == to_string(r)) return r;
  throw ConfigError(path, unknown_name_message("runtime", s, runtime_names()) +
                              ", or a release: vllm==0.5.4, sglang==0.4.9, llama.cpp==b4000, lmdeploy==0.1.0");
}

void EngineConfig::validate(const std::string& path) const {
  Problems p;
  auto at = [&](const char* f) { return path + "." + f; };
  // 0 = the policy's default (effective_engine); the JSON reader refuses an explicit 0.
  if (max_num_seqs < 0) p.add(at("max_num_seqs"), "must be >= 1, got " + std::to_string(max_num_seqs));
  if (max_num_batched_tokens < 0) {
    p.add(at("max_num_batched_tokens"), "must be >= 1, got " + std::to_string(max_num_batched_tokens));
  }
  if (block_size < 1 || block_size > 1024) p.add(at("block_size"), "must be in 1..1024, got " + std::to_string(block_size));
  if (!(gpu_memory_utilization > 0 && gpu_memory_utilization <= 1)) {
    p.add(at("gpu_memory_utilization"), "must be in (0, 1], got " + format_given(gpu_memory_utilization));
  }
  if (max_model_len < kMaxModelLenAuto) {
    p.add(at("max_model_len"), "must be >= 1, or \"auto\" (-1, or 0 as when unset: the largest that fits), got " +
                                   std::to_string(max_model_len));
  }
  if (watermark && !(*watermark >= 0 && *watermark < 1)) {
    p.add(at("watermark"), "must be in [0, 1), got " + format_given(*watermark));
  }
  // Host blocks = swap_space_gb GiB / block bytes must stay a representable count: 1e6 GiB (a petabyte per
  // GPU) is far beyond any host.
  if (!(swap_space_gb >= 0 && swap_space_gb <= 1e6)) {
    p.add(at("swap_space_gb"), "must be in [0, 1e6] GiB, got " + format_given(swap_space_gb));
  }
  if (policy == SchedulerPolicy::vllm && preemption == PreemptionMode::swap && !synthetic_service) {
    p.add(at("preemption"), "vLLM V1 (policy 'vllm') preempts by recompute only, it has no swap path; use "
                            "policy 'vllm-v0' to model swapping");
  }
  if (policy == SchedulerPolicy::sglang && preemption == PreemptionMode::swap && !synthetic_service) {
    p.add(at("preemption"), "SGLang (policy 'sglang') retracts requests by recompute only, it has no swap path; use "
                            "policy 'vllm-v0' to model swapping");
  }
  if (!(cpu_offload_gb >= 0) || !std::isfinite(cpu_offload_gb)) {
    p.add(at("cpu_offload_gb"), "must be >= 0, got " + format_given(cpu_offload_gb));
  }
  if (!(kv_offload_gb >= 0 && kv_offload_gb <= 1e6)) {
    p.add(at("kv_offload_gb"), "must be in [0, 1e6] GiB, got " + format_given(kv_offload_gb));
  } else if (kv_offload_gb > 0 && !prefix_caching()) {
    // Say why it is off: set off, or policy's default (vLLM V0's prefix caching is opt-in).
    p.add(at("kv_offload_gb"), "a host KV tier holds prefix-cache blocks: it needs prefix caching "
                               "(engine.enable_prefix_caching), which is off here (" +
                                   (enable_prefix_caching ? std::string("set false")
                                                          : "policy '" + to_string(policy) +
                                                                "' leaves it off unless enable_prefix_caching is true") +
                                   "); got " + format_given(kv_offload_gb));
  }
  if (cuda_graph_max_bs) {
    if (*cuda_graph_max_bs < 1 || *cuda_graph_max_bs > 1000000) {
      p.add(at("cuda_graph_max_bs"), "must be in 1..1000000 sequences, got " + std::to_string(*cuda_graph_max_bs));
    } else if (resolved_runtime() != Runtime::sglang) {
      p.add(at("cuda_graph_max_bs"), "is SGLang's --cuda-graph-max-bs; runtime '" + to_string(resolved_runtime()) +
                                         "' does not take it (set engine.runtime to sglang or sglang==X, or leave "
                                         "it out)");
    }
  }
  if (!(max_loras >= 1 && max_loras <= 1024)) {
    p.add(at("max_loras"), "must be in 1..1024 adapter slots, got " + std::to_string(max_loras));
  }
  if (std::find(std::begin(kLoraRanks), std::end(kLoraRanks), max_lora_rank) == std::end(kLoraRanks)) {
    p.add(at("max_lora_rank"), "must be one of vLLM's ranks 1, 8, 16, 32, 64, 128, 256, 320, 512, got " +
                                   std::to_string(max_lora_rank));
  }
  const Runtime rt = resolved_runtime();
  const bool vllm = rt == Runtime::vllm_v1 || rt == Runtime::vllm_v0 || rt == Runtime::vllm_v0_sync ||
                    rt == Runtime::vllm_v0_paged;
  if (enable_lora && !vllm) {
    p.add(at("enable_lora"), "llmsim prices vLLM's LoRA buffers and kernels; runtime '" + to_string(resolved_runtime()) +
                                 "' is not modelled with LoRA");
  }
  // vLLM takes any n >= 1; 1024 bounds the lookahead slots a window reserves per sequence (engine/multi_step.cpp).
  if (num_scheduler_steps < 1 || num_scheduler_steps > 1024) {
    p.add(at("num_scheduler_steps"), "must be in 1..1024 (1 = one step per scheduler call), got " +
                                         std::to_string(num_scheduler_steps));
  }
  if (max_concurrent_batches < 0) {
    p.add(at("max_concurrent_batches"), "must be >= 0 (0 = one per pipeline stage), got " +
                                            std::to_string(max_concurrent_batches));
  }
  if (synthetic_service) {
    const auto& s = *synthetic_service;
    // Bounded so every drawn service time is a finite, positive duration the clock resolves.
    if (!(s.mean_s >= 1e-9 && s.mean_s <= 1e6)) {
      p.add(at("synthetic_service.mean_s"), "must be in [1e-9, 1e6] s, got " + format_given(s.mean_s));
    }
    if (!(s.cv >= 1e-3 && s.cv <= 100)) {
      p.add(at("synthetic_service.cv"), "must be in [0.001, 100], got " + format_given(s.cv));
    }
  }
  if (speculative) {
    try {
      speculative->validate(at("speculative"));
    } catch (const ConfigError& e) {
      for (const auto& x : e.problems()) p.add("", x);
    }
  }
  p.throw_if_any();
}

int vllm_v0_default_batched_tokens(int max_model_len) {
  // vLLM V0's SchedulerConfig (0.2 through 0.10, vllm/config.py): without chunked prefill every prompt must fit one
  // step, so an unset budget is the context limit, and "if max_model_len is too short, use 2048 as the default value
  // for higher throughput".
  return std::max(max_model_len, 2048);
}

EngineConfig effective_engine(const EngineConfig& e, const GpuSpec& gpu, bool offline, const ModelSpec* model) {
  EngineConfig r = e;
  int tokens = 8192, seqs = 256;
  if (e.policy == SchedulerPolicy::sglang) {
    const SglangDefaults d = sglang_defaults(gpu, e.runtime_release);
    tokens = d.chunked_prefill_size;
    // With speculative decoding SGLang starts with 48 running requests unless told otherwise (its 2048 would make
    // every decoder's k + 1 verified tokens overflow the chunk budget: a scenario refused for a knob it never set).
    seqs = e.speculative ? sglang::kSpeculativeMaxRunningRequests : d.max_running_requests;
    // A hybrid model without the radix cache (--disable-radix-cache, or a release that forces it off): the model runner
    // sizes the Mamba pool at max_running_requests, 512 when unset, and caps the running requests there
    // (memory/sglang_mamba_pool.hpp).
    if (!e.speculative && model && model->has_linear_attention() &&
        (!e.prefix_caching() || sglang_release_without_hybrid_radix_cache(e.runtime_release, model->linear_mamba2)))
      seqs = sglang::kMaxMambaCacheSize;
  }
  // A V0 scheduler with a vLLM release: that release's V0 defaults (spec/runtime_version.hpp).
  std::optional<RuntimeForVersion> release;
  if (e.runtime_release && (e.policy == SchedulerPolicy::vllm_v0 || e.policy == SchedulerPolicy::chunked)) {
    const auto rv = runtime_for_version(parse_engine_version(*e.runtime_release));
    if (rv.v0_chunked_budget > 0) release = rv;
  }
  if (model && release && e.policy == SchedulerPolicy::vllm_v0) {
    // V0's default max_model_len is the model's own limit (vLLM derives it from the config).
    const int max_len = e.max_model_len > 0 ? e.max_model_len : model->max_position_embeddings;
    // EngineArgs.create_engine_config (vllm#6666): chunked prefill left unset turns on above 32K tokens of context,
    // unless the model has a sliding window, speculative decoding is on or LoRA is enabled (`not self.enable_lora`
    // in that condition from 0.5.4 to V0's last form, where it sits beside `not self.enable_prompt_adapter`); one the
    // scenario set off stays off. MLA models stay unchunked from 0.7.1 (vllm#12642, then V0's default after
    // vllm#12639: RuntimeForVersion).
    const bool mla_unchunked = release->v0_mla_unchunked && model->is_mla();
    if (!e.policy_given && release->v0_long_context_chunked && max_len > 32768 && !model->has_sliding_window() &&
        !e.speculative && !e.enable_lora && !mla_unchunked)
      r.policy = SchedulerPolicy::chunked;
    else
      tokens = vllm_v0_default_batched_tokens(max_len);
  }
  if (model && release && release->v0_mla_forces_unchunked && model->is_mla()) {
    // 0.7.1-0.7.3's VllmConfig turned chunked prefill and prefix caching off for MLA even when asked (vllm#12642).
    if (r.policy == SchedulerPolicy::chunked) {
      r.policy = SchedulerPolicy::vllm_v0;
      tokens = vllm_v0_default_batched_tokens(e.max_model_len > 0 ? e.max_model_len : model->max_position_embeddings);
    }
    r.enable_prefix_caching = false;
  }
  if (release && r.policy == SchedulerPolicy::chunked) tokens = release->v0_chunked_budget;
  if (e.policy == SchedulerPolicy::vllm) {
    // vLLM's rule reads the device's total memory and name: large cards other than the A100 get the larger
    // defaults (PR #17885 kept the A100 out: a large budget lowered its throughput).
    const std::string id = to_lower(gpu.id + " " + gpu.name);
    const bool large = static_cast<double>(gpu.memory_bytes) >= 70.0 * 1024 * 1024 * 1024 &&
                       id.find("a100") == std::string::npos;
    tokens = large ? (offline ? 16384 : 8192) : (offline ? 8192 : 2048);
    seqs = large ? 1024 : 256;
  }
  if (r.max_num_batched_tokens == 0) {
    r.max_num_batched_tokens = tokens;
    // Without chunked prefill a whole prompt of the longest allowed context must fit one step: vLLM V0's unset
    // budget is max(max_model_len, 2048) in every release, so a default below a max_model_len the scenario set rises
    // to it instead of refusing the scenario for a knob it never set (shorter contexts keep the budget above).
    if (!r.chunked_prefill() && e.max_model_len > r.max_num_batched_tokens)
      r.max_num_batched_tokens = vllm_v0_default_batched_tokens(e.max_model_len);
  }
  if (r.max_num_seqs == 0) r.max_num_seqs = seqs;
  r.watermark = r.watermark_or_default();
  r.enable_prefix_caching = r.prefix_caching();
  return r;
}

std::optional<double> sglang_mem_fraction_static(const GpuSpec& gpu, const std::optional<std::string>& release,
                                                 int parallel, bool speculative, std::int64_t chunk,
                                                 int graph_max_bs) {
  if (!release || !is_engine_version(*release)) return std::nullopt;
  const EngineVersion v = parse_engine_version(*release);
  if (v.engine != "sglang" || v.numbers.empty() || v.numbers[0] != 0) return std::nullopt;
  const int minor = v.numbers.size() > 1 ? v.numbers[1] : 0, patch = v.numbers.size() > 2 ? v.numbers[2] : 0;
  const bool post = v.version.find("post") != std::string::npos;
  // get_nvgpu_memory_capacity: nvidia-smi's memory.total in MiB (a 40 GB A100 reports 40960).
  const double mib = static_cast<double>(gpu.memory_bytes) / (1024.0 * 1024.0);
  const double n = static_cast<double>(parallel);
  const bool by_parallel = minor == 3 || (minor == 4 && (patch < 7 || (patch == 7 && !post)));
  if (by_parallel) {
    if (mib > 80 * 1024) return std::nullopt;
    return parallel >= 16 ? 0.79 : parallel >= 8 ? 0.81 : parallel >= 4 ? 0.85 : parallel >= 2 ? 0.87 : 0.88;
  }
  // 0.5.3rc0 was cut before sglang#10975 ("chore: bump v0.5.3rc0", sglang#10468, merged 2025-09-15): #7054's rule.
  const bool rc0_of_053 = minor == 5 && patch == 3 && v.version.find("rc0") != std::string::npos;
  if (minor == 5 && patch >= 3 && !rc0_of_053) {
    // 0.5.3+ (sglang#10975 "Use more general heuristics to set the default value of --mem-fraction-static", merged
    // 2025-09-27; server_args._handle_gpu_memory_settings): the reserve follows the step sizes the same function set
    // (activations of a chunked-prefill step, the decode CUDA graphs, a parallel-size term), floored at 10 GiB on
    // cards above 60 GiB. An H100 SXM (81,559 MiB) at TP 1 with 8192 / 256: 512 + 12,288 + 512 + 128 = 13,440 MiB
    // reserved, 0.835 (0.4.7.post1-0.5.2's rule gave 0.868, llmsim's unset 0.9).
    double reserved = 512.0 + std::max<double>(static_cast<double>(chunk), 2048.0) * 1.5 + 2.0 * graph_max_bs +
                      n / 8.0 * 1024.0;
    if (mib > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
    if (speculative) reserved += 2 * 1024;
    return std::round((mib - reserved) / mib * 1000.0) / 1000.0;
  }
  const bool reserve_rule = (minor == 4 && patch >= 7) || (minor == 5 && patch < 3) || rc0_of_053;
  if (!reserve_rule) return std::nullopt;
  double reserved = mib < 35 * 1024   ? (2.8 + n / 10) * 1024
                    : mib < 90 * 1024  ? (9.5 + n / 2) * 1024
                    : mib < 160 * 1024 ? (12 + n / 2) * 1024
                                       : 32.0 * 1024;
  if (speculative) reserved += 2 * 1024;
  return std::round((mib - reserved) / mib * 1000.0) / 1000.0;
}

SglangDefaults sglang_defaults(const GpuSpec& gpu, const std::optional<std::string>& release) {
  SglangDefaults d;
  const double gib = static_cast<double>(gpu.memory_bytes) / (1024.0 * 1024.0 * 1024.0);
  bool before_05 = false;
  if (release && is_engine_version(*release)) {
    const EngineVersion v = parse_engine_version(*release);
    before_05 = v.engine == "sglang" && !v.numbers.empty() && v.numbers[0] == 0 && (v.numbers.size() < 2 || v.numbers[1] < 5);
  }
  const detail::SglangRelease r = detail::sglang_release(release);
  if (r.known && r.at_least(0, 4, 7, 1) && !r.at_least(0, 5, 3)) {
    // 0.4.7.post1-0.5.2 server_args (the __post_init__ of sglang#7054): 2048 below 35 GiB ("A10, L40, 4090"), 8192
    // below 160 GiB ("H100, H200, A100, H20"), else 16384 ("B200, MI300").
    d.chunked_prefill_size = gib < 35 ? 2048 : gib < 160 ? 8192 : 16384;
  } else if (before_05) {
    // 0.3.x-0.4.7 server_args: chunked_prefill_size 2048 when gpu_mem < 25,000 MB, else 8192.
    d.chunked_prefill_size = gib * 1024.0 < 25000.0 ? 2048 : 8192;
  } else {
    // 0.5.3+ server_args (_handle_gpu_memory_settings, sglang#10372/#10975): by total memory in GiB.
    d.chunked_prefill_size = gib < 35 ? 2048 : gib < 60 ? 4096 : gib < 160 ? 8192 : 16384;
  }
  return d;
}

}  // namespace llmsim::spec
