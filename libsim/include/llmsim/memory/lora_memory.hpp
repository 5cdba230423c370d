#pragma once
// Layer 2: the GPU memory of vLLM's LoRA adapter slots (engine.enable_lora, max_loras, max_lora_rank).
#include "llmsim/spec/deployment.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/model_spec.hpp"

namespace llmsim::memory {

/// Bytes one adapter slot of rank `rank` holds on one GPU (the most loaded pipeline stage): vLLM's
/// create_lora_weights allocates, per LoRA-capable linear and per packed slice, lora_a of rank × input and lora_b of
/// output × rank in lora_dtype (auto = the model's 16-bit dtype). Without fully_sharded_loras a column-parallel
/// linear (qkv, gate_up) keeps A whole and B sharded, a row-parallel one (o, down) A sharded and B whole. MoE layers
/// (FusedMoEWithLoRA) hold A and B per expert. Sources and what is left out: memory/lora_memory.cpp.
double lora_slot_bytes_per_gpu(const spec::ModelSpec& model, const spec::ParallelConfig& parallel, int rank);

/// What engine.enable_lora takes from each GPU before the KV cache is sized: max_loras slots of max_lora_rank
/// (0 when LoRA is off). vLLM allocates them when the model runner loads the model, before the profiling run, so
/// they come out of the KV pool.
double lora_bytes_per_gpu(const spec::ModelSpec& model, const spec::ParallelConfig& parallel,
                          const spec::EngineConfig& engine);

}  // namespace llmsim::memory
