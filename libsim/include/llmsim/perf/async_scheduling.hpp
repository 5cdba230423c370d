#pragma once
// vLLM V1's async scheduling (docs/cost-model.md "Async scheduling"): whether a scenario's engine runs it, read from
// vLLM's code. What it changes, from vllm/v1/engine/core.py (EngineCore.step_with_batch_queue with
// batch_queue_size 2) and vllm/v1/core/sched/async_scheduler.py:
//  (a) the step: the engine core schedules step k + 1 (with placeholders for step k's tokens) and the worker
//      prepares and enqueues it while the GPU runs step k, so the host's per-step time (scheduling, input
//      preparation, output bookkeeping) overlaps the GPU's: a step takes max(GPU work, host time), not their sum
//      (perf::CostModel::with_async_scheduling);
//  (b) admission: step k + 1's plan is made when step k starts, so a request that arrives while step k runs is
//      first planned into step k + 2 — one step later than the synchronous loop, unless the engine was idle (then
//      its step is planned at once) (engine: ReplicaConfig::async_scheduling);
//  (c) outputs: step k's sampled tokens are processed (update_from_output) as soon as step k ends, while step k + 1
//      runs: no step of delay (unlike V0's asynchronous output processor, first_token_after_next_step).
#include <optional>

#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/speculative.hpp"

namespace llmsim::perf {

/// Whether the engine runs vLLM V1's async scheduling: engine.async_scheduling when set (`--async-scheduling` /
/// `--no-async-scheduling`), else the release's default (spec::async_scheduling_by_default: vllm >= 0.14.0). Only
/// the V1 runtime with V1's scheduler (policy "vllm") has it. Off by default, as vLLM's VllmConfig leaves it, with
/// pipeline parallel (`pp` > 1) and with speculative methods other than EAGLE/MTP (vllm#31998). ConfigError at
/// "engine.async_scheduling" when it is asked for where vLLM rejects it: another runtime or scheduler, pipeline
/// parallel, or a draft-model / n-gram proposer. SGLang's overlap scheduler is the same mechanism (runtime sglang
/// with policy "sglang": perf::sglang_overlap decides, engine.async_scheduling standing for its flags).
bool async_scheduling(const spec::EngineConfig& engine, int pp,
                      const std::optional<spec::SpeculativeConfig>& speculative);

}  // namespace llmsim::perf
