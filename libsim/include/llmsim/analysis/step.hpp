#pragma once
// `llmsim step` and Python's `llmsim.step()`: the time of one engine iteration for a batch shape given as
// lengths — after checking that the batch is one the engine could run (lengths, the model's context, memory).
// One rule for both faces: a batch the CLI refuses, Python refuses with the same reason.
#include <cstdint>
#include <string>
#include <vector>

#include "llmsim/core/json_view.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/engine_config.hpp"

namespace llmsim::spec {
struct ResolvedScenario;
}

namespace llmsim::analysis {

/// One prefill chunk of `prefill_tokens` after `prefill_context` cached tokens, plus `decode_seqs` sequences
/// decoding one token each at `context` tokens of context (all zero = none of that kind).
struct StepLengths {
  std::int64_t prefill_tokens = 0, prefill_context = 0, decode_seqs = 0, context = 0;
};

/// How errors name the lengths: the CLI's flags ("--prefill-tokens") or Python's keywords ("prefill_tokens").
enum class StepNames { cli_flags, keywords };

/// The per-op cost of the iteration on `cm` (its model, format, GPU and split). ConfigError, naming the length,
/// for a negative length, a context without its sequences, an empty batch, a sequence longer than the model's
/// context, a model that does not fit (memory::plan_memory with `engine`, planned for the longest sequence),
/// or a batch needing more KV-cache tokens than the plan leaves.
/// With `speculation` (cm carrying its proposer, perf::make_proposer) the decoders verify k + 1 tokens each and
/// the proposer's passes are an op of their own; the memory plan holds the proposer too.
perf::StepCost step_cost(const perf::CostModel& cm, const spec::EngineConfig& engine, const StepLengths& lengths,
                         StepNames names = StepNames::keywords, const spec::ResolvedSpeculation* speculation = nullptr);

/// The `llmsim step --json` / `llmsim.step()` document, one writer so the two are equal: perf::to_json(cost) with
/// tokens_per_s, and what was priced — model, gpu, quant, gemm_dtype, tp, pp, profile_source, engine,
/// decode_attention_backend, allreduce_algorithm, notes, speculative (with a proposer), warnings (when any).
Json step_json(const perf::StepCost& cost, const perf::CostModel& cm, const std::vector<std::string>& notes,
               const std::vector<std::string>& warnings, const spec::ResolvedSpeculation* speculation = nullptr);

/// One iteration of a resolved scenario's engine, priced by the cost model a simulation of that scenario steps on.
struct ScenarioStep {
  perf::CostModel cm;        ///< perf::make_cost_model(scenario): the one builder every simulation uses
  perf::StepCost cost;       ///< step_cost on cm
  Json json;                 ///< step_json with the scenario's notes and warnings (analysis::scenario_warnings)
};

/// `llmsim step` (its flags read as a scenario) and Python's `llmsim.step()`: the iteration of `lengths` on
/// perf::make_cost_model(scenario) — the CUDA-graph limit, the served host work, LoRA, the proposer and async
/// scheduling as `simulate` charges them, so the three faces cannot price one batch differently. ConfigErrors as
/// step_cost's, lengths named by `names`.
ScenarioStep step_of_scenario(const spec::ResolvedScenario& scenario, const StepLengths& lengths,
                              StepNames names = StepNames::keywords);

}  // namespace llmsim::analysis
