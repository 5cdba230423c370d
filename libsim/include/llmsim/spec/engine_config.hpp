#pragma once
// Serving-engine knobs, named as vLLM names them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmsim::spec {

enum class SchedulerPolicy {
  vllm,     ///< prefill-first continuous batching (vLLM without chunked prefill)
  vllm_v0,  ///< "vllm-v0": vLLM V0's prefill-first scheduler, by name (runs as `vllm` until V1 becomes that)
  chunked,  ///< decode-first, prefills chunked into the leftover token budget (Sarathi-Serve)
  static_batching  ///< request-level batching: a batch runs until its longest request ends ("static")
};
enum class PreemptionMode { recompute, swap };

/// The serving runtime whose fixed costs, CUDA-graph rules, all-reduce and attention kernels the cost model
/// prices (its meaning lives in perf/runtime.hpp, docs/cost-model.md "Runtimes"). JSON `engine.runtime`.
enum class Runtime {
  vllm_v1,             ///< "vllm-v1": vLLM V1 (0.8+), the default
  vllm_v0,             ///< "vllm-v0": vLLM V0 0.6 (FlashAttention, asynchronous output processing)
  vllm_v0_sync,        ///< "vllm-v0.5": vLLM V0 0.4-0.5 (FlashAttention, outputs processed after every step)
  vllm_v0_paged,       ///< "vllm-v0-paged": vLLM V0 before FlashAttention (0.2-0.3: PagedAttention decode kernels)
  sglang,              ///< "sglang": SGLang (2024, FlashInfer)
  lmdeploy_turbomind,  ///< "lmdeploy-turbomind": LMDeploy's TurboMind C++ engine (v0.1)
  gpt_fast,            ///< "gpt-fast": torch.compile + CUDA graphs, no scheduler
  llama_cpp,           ///< "llama.cpp": llama.cpp's CUDA backend
};

std::string to_string(SchedulerPolicy p);   ///< "vllm" | "chunked" | "static"
std::string to_string(PreemptionMode p);    ///< "recompute" | "swap"
SchedulerPolicy parse_policy(const std::string& s, const std::string& path = "engine.policy");
PreemptionMode parse_preemption(const std::string& s, const std::string& path = "engine.preemption");
std::string to_string(Runtime r);           ///< "vllm-v1" | "vllm-v0" | ... (the JSON names above)
/// ConfigError at `path` listing the valid names for an unknown one.
Runtime parse_runtime(const std::string& s, const std::string& path = "engine.runtime");
const std::vector<std::string>& runtime_names();

/// Replaces the roofline cost model by a per-request service time drawn from a distribution, with one
/// request in service at a time (max_num_seqs = 1). For checking the engine against queueing theory.
struct SyntheticService {
  enum class Kind { fixed, exponential, lognormal } kind = Kind::exponential;
  double mean_s = 0.1;
  double cv = 1.0;  ///< coefficient of variation (lognormal only)
};

struct EngineConfig {
  SchedulerPolicy policy = SchedulerPolicy::vllm;
  int max_num_seqs = 256;
  int max_num_batched_tokens = 8192;
  int block_size = 16;                  ///< KV block size in tokens
  double gpu_memory_utilization = 0.90; ///< fraction of device memory the engine may use
  PreemptionMode preemption = PreemptionMode::recompute;
  int max_model_len = 0;                ///< 0 = the model's max_position_embeddings
  double watermark = 0.01;              ///< fraction of KV blocks kept free at admission (vLLM default)
  double swap_space_gb = 4;             ///< host swap space per GPU for preemption by swap
  bool enable_prefix_caching = false;
  bool cuda_graphs = true;              ///< decode iterations replayed from CUDA graphs (lower launch cost)
  /// Batches in flight under pipeline parallel, each from its own virtual engine with 1/k of the KV cache
  /// (vLLM v0's virtual engines): 0 = pp (one per stage), 1 = one batch at a time (stages idle (pp−1)/pp).
  int max_concurrent_batches = 0;
  /// GiB of weights per GPU kept in host memory and copied over PCIe in every forward pass (vLLM
  /// --cpu-offload-gb): a model larger than the GPU runs, at the host link's pace.
  double cpu_offload_gb = 0;
  std::optional<SyntheticService> synthetic_service;  ///< JSON "engine.synthetic_service"; testing only
  /// JSON "engine.runtime": the runtime the cost model prices; unset = vLLM V0 for policy "vllm-v0", else V1.
  std::optional<Runtime> runtime;

  bool chunked_prefill() const noexcept { return policy == SchedulerPolicy::chunked; }
  /// The runtime this engine runs: `runtime` when set, else vLLM V0 for policy "vllm-v0", else vLLM V1.
  Runtime resolved_runtime() const noexcept {
    if (runtime) return *runtime;
    return policy == SchedulerPolicy::vllm_v0 ? Runtime::vllm_v0 : Runtime::vllm_v1;
  }
  void validate(const std::string& path = "engine") const;
};

}  // namespace llmsim::spec
