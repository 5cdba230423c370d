#pragma once
// One scenario, simulated and priced: engine::simulate plus the cost fields of the summary.
#include "llmsim/engine/simulator.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {

/// Simulates `scenario` and fills `summary.cost` (cost_summary()). A configuration that does not fit
/// comes back with summary.fits = false, its reason, and zero cost per token; invalid input throws
/// ConfigError. Deterministic in (scenario, seed); safe to call from several threads at once.
engine::SimulationResult evaluate(const spec::ResolvedScenario& scenario,
                                  const engine::SimulationOptions& options = {});

}  // namespace llmsim::analysis
