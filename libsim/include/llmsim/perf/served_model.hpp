#pragma once
// What the serving engine adds to a cost model built from the hardware and the runtime: the OpenAI server's host
// work per step (vLLM V0's MQLLMEngine, served_step_host.hpp; none for an offline run) and async scheduling /
// SGLang's overlap scheduler where the engine runs it (async_scheduling.hpp: a step costs max(GPU, host)). One rule
// for make_cost_model (every simulation, Python's llmsim.step()) and `llmsim step`, so an iteration's time is the
// same from both faces.
#include <optional>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/engine_config.hpp"

namespace llmsim::perf {

/// `cm` with the host work the OpenAI server adds to every step of `engine` (none `offline`). Apply before the
/// proposer is set (the proposer's passes pay it too).
CostModel with_served_host(CostModel cm, const spec::EngineConfig& engine, bool offline);

/// `cm` under async scheduling when `engine` runs it with `pp` stages and `speculative` (async_scheduling()). Apply
/// after the proposer is set.
CostModel with_engine_async(CostModel cm, const spec::EngineConfig& engine, int pp,
                            const std::optional<spec::SpeculativeConfig>& speculative);

}  // namespace llmsim::perf
