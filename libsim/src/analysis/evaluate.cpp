#include "llmsim/analysis/evaluate.hpp"

#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/error_band.hpp"

namespace llmsim::analysis {

engine::SimulationResult evaluate(const spec::ResolvedScenario& scenario, const engine::SimulationOptions& options) {
  engine::SimulationResult result = engine::simulate(scenario, options);
  result.summary.cost = cost_summary(scenario, result.summary);
  if (result.summary.fits) result.summary.error_band = error_bands(scenario, result.summary);
  return result;
}

}  // namespace llmsim::analysis
