#pragma once
// What the simulator's engine charges a running sequence in a plan's KV pool (docs/engine.md "Sliding-window
// groups"): one rule for the engine, which takes its window credit from it (engine/simulation_build.cpp; kept per step
// by engine/kv_window.cpp), and for `llmsim step`'s check that a batch fits (analysis/step.cpp).
#include "llmsim/memory/kv_layout.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/engine_config.hpp"

namespace llmsim::memory {

/// The plan's KV-cache groups as the engine charges them, for KvLayout::blocks_held (pages of engine.block_size tokens
/// in one group; the pool holds kv_capacity_blocks × groups() of them): the sliding groups free the blocks that left
/// the window only under vLLM V1's scheduler (policy vllm) on a plan that has them (vLLM V1's SlidingWindowManager);
/// otherwise every group holds every token (V0 and SGLang keep every layer's blocks). Only the group counts and the
/// window are set: the layout counts blocks, not bytes.
KvLayout engine_kv_layout(const MemoryPlan& plan, const spec::EngineConfig& engine);

}  // namespace llmsim::memory
