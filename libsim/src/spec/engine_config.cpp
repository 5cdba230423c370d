#include "llmsim/spec/engine_config.hpp"

#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"

namespace llmsim::spec {

std::string to_string(SchedulerPolicy p) {
  switch (p) {
    case SchedulerPolicy::vllm: return "vllm";
    case SchedulerPolicy::vllm_v0: return "vllm-v0";
    case SchedulerPolicy::chunked: return "chunked";
    case SchedulerPolicy::static_batching: return "static";
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
                 SchedulerPolicy::static_batching}) {
    if (s == to_string(p)) return p;
  }
  throw ConfigError(path, unknown_name_message("scheduler policy", s, {"vllm", "vllm-v0", "chunked", "static"}));
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

Runtime parse_runtime(const std::string& s, const std::string& path) {
  for (auto r : kRuntimes)
    if (s == to_string(r)) return r;
  throw ConfigError(path, unknown_name_message("runtime", s, runtime_names()));
}

void EngineConfig::validate(const std::string& path) const {
  Problems p;
  auto at = [&](const char* f) { return path + "." + f; };
  if (max_num_seqs < 1) p.add(at("max_num_seqs"), "must be >= 1, got " + std::to_string(max_num_seqs));
  if (max_num_batched_tokens < 1) {
    p.add(at("max_num_batched_tokens"), "must be >= 1, got " + std::to_string(max_num_batched_tokens));
  }
  if (block_size < 1 || block_size > 1024) p.add(at("block_size"), "must be in 1..1024, got " + std::to_string(block_size));
  if (!(gpu_memory_utilization > 0 && gpu_memory_utilization <= 1)) {
    p.add(at("gpu_memory_utilization"), "must be in (0, 1], got " + format_value(gpu_memory_utilization));
  }
  if (max_model_len < 0) p.add(at("max_model_len"), "must be >= 0 (0 = the model's limit), got " + std::to_string(max_model_len));
  if (!(watermark >= 0 && watermark < 1)) p.add(at("watermark"), "must be in [0, 1), got " + format_value(watermark));
  if (!(swap_space_gb >= 0) || !std::isfinite(swap_space_gb)) {
    p.add(at("swap_space_gb"), "must be >= 0, got " + format_value(swap_space_gb));
  }
  if (!(cpu_offload_gb >= 0) || !std::isfinite(cpu_offload_gb)) {
    p.add(at("cpu_offload_gb"), "must be >= 0, got " + format_value(cpu_offload_gb));
  }
  if (max_concurrent_batches < 0) {
    p.add(at("max_concurrent_batches"), "must be >= 0 (0 = one per pipeline stage), got " +
                                            std::to_string(max_concurrent_batches));
  }
  if (synthetic_service) {
    const auto& s = *synthetic_service;
    if (!(s.mean_s > 0) || !std::isfinite(s.mean_s)) {
      p.add(at("synthetic_service.mean_s"), "must be > 0, got " + format_value(s.mean_s));
    }
    if (!(s.cv > 0) || !std::isfinite(s.cv)) p.add(at("synthetic_service.cv"), "must be > 0, got " + format_value(s.cv));
  }
  p.throw_if_any();
}

}  // namespace llmsim::spec
