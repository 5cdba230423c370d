#include "llmsim/analysis/evaluate.hpp"

#include "llmsim/analysis/cost.hpp"

namespace llmsim::analysis {

engine::SimulationResult evaluate(const spec::ResolvedScenario& scenario, const engine::SimulationOptions& options) {
  engine::SimulationResult result = engine::simulate(scenario, options);
  result.summary.cost = cost_summary(scenario, result.summary);
  return result;
}

}  // namespace llmsim::analysis
