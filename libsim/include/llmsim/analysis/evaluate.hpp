#pragma once
// One scenario, simulated and priced: engine::simulate plus the cost fields of the summary.
#include <optional>
#include <string>
#include <vector>

#include "llmsim/engine/simulator.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {

/// Simulates `scenario` and fills `summary.cost` (cost_summary()). A configuration that does not fit
/// comes back with summary.fits = false, its reason, and zero cost per token; invalid input throws
/// ConfigError. Deterministic in (scenario, seed); safe to call from several threads at once.
engine::SimulationResult evaluate(const spec::ResolvedScenario& scenario,
                                  const engine::SimulationOptions& options = {});

/// An engine path the scenario's server runs that llmsim does not model (perf::sglang_mxfp4_unmodelled_path: SGLang's
/// gpt-oss MXFP4 experts below Hopper), or nothing. A measured run on such a path is kept unscored (docs/trust.md).
std::optional<std::string> unmodelled_engine_path(const spec::ResolvedScenario& scenario);

/// What the scenario prices that its user should hear about before trusting a number: a GPU profile fitted from one
/// runtime's runs pricing another (perf::runtime_mismatch), and an engine path it does not model
/// (unmodelled_engine_path, resolved scenarios only). The one rule: evaluate() puts these in every
/// summary's `warnings`, and the commands that run many simulations (capacity, compare, report, search, sweep,
/// throughput) print them once from here.
std::vector<std::string> scenario_warnings(const spec::ResolvedScenario& scenario);
/// The same from the scenario as written (they need nothing resolved): what the CLI and Python ask of a scenario or a
/// sweep's points before running them.
std::vector<std::string> scenario_warnings(const spec::Scenario& scenario);

}  // namespace llmsim::analysis
