#pragma once
// SGLang's Mamba state pool for a hybrid model (Qwen3-Next's gated DeltaNet, Nemotron-H's Mamba-2 layers): unlike
// vLLM V1, which takes a running request's state from the KV pool as blocks (linear_state.hpp), SGLang allocates a
// fixed pool of state slots beside its token pool when the server starts, and caps the running requests by it
// (model_runner's handle_max_mamba_cache and init_memory_pool; spec::sglang's kMaxMambaCacheSize and neighbours
// quote the rules). Private to the memory layer; docs/cost-model.md "SGLang's Mamba pool".
#include <cstdint>

#include <string>

#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/deployment.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/model_spec.hpp"

namespace llmsim::memory::detail {

struct SglangMambaPool {
  double bytes_per_slot = 0;     ///< one state: every linear layer of the most loaded stage, this GPU's heads
  std::int64_t slots = 0;        ///< max_mamba_cache_size
  double bytes = 0;              ///< slots x bytes_per_slot, taken before the token pool is sized
  std::int64_t running_cap = 0;  ///< max_running_requests as the model runner caps it (<= engine.max_num_seqs)
  double ratio = 0;              ///< mamba_full_memory_ratio when the radix cache sized the pool; 0: by requests
};

/// Whether SGLang runs `model` with its (Mamba) radix cache: engine.prefix_caching() (--disable-radix-cache turns it
/// off) and a release that has it for this kind of layer (spec::sglang_release_without_hybrid_radix_cache).
bool sglang_hybrid_radix_cache(const spec::ModelSpec& model, const spec::EngineConfig& engine);

/// The pool of a hybrid `model` on one GPU of `parallel`, from `rest_bytes`, the memory SGLang has left after the
/// weights and what is in use at start (its rest_memory, what the token pool would otherwise take):
/// * radix cache on: the states take rest x r / (1 + r) (r = spec::sglang::kMambaFullMemoryRatio), in whole slots,
///   and at most slots / 3 requests run (min with engine.max_num_seqs);
/// * radix cache off: engine.max_num_seqs slots (spec::effective_engine makes an unset one 512) and as many running.
/// All zero for a model without linear-attention layers.
SglangMambaPool sglang_mamba_pool(const spec::ModelSpec& model, const spec::ParallelConfig& parallel,
                                  const spec::EngineConfig& engine, double rest_bytes);

/// Writes the pool into the plan: linear_state_slots, linear_state_memory_ratio and max_running_requests (the pool's
/// running cap, else engine.max_num_seqs: every plan has one).
void record_sglang_mamba_pool(MemoryPlan& plan, const SglangMambaPool& pool, const spec::EngineConfig& engine);

/// Why SGLang cannot start with this pool ("" when it can): with the radix cache, a pool of fewer than 3 slots
/// leaves max_running_requests at 0 (`rest_bytes` > 0 only: no memory at all is the plan's own refusal).
std::string sglang_mamba_pool_refusal(const SglangMambaPool& pool, double rest_bytes);

}  // namespace llmsim::memory::detail
