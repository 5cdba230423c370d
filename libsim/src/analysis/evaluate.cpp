#include "llmsim/analysis/evaluate.hpp"

#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/error_band.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/perf/moe_kernels.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/multi_step.hpp"

namespace llmsim::analysis {

engine::SimulationResult evaluate(const spec::ResolvedScenario& scenario, const engine::SimulationOptions& options) {
  engine::SimulationResult result = engine::simulate(scenario, options);
  result.summary.cost = cost_summary(scenario, result.summary);
  if (result.summary.fits) result.summary.error_band = error_bands(scenario, result.summary);
  for (auto& w : scenario_warnings(scenario)) result.summary.warnings.push_back(std::move(w));
  return result;
}

std::optional<std::string> unmodelled_engine_path(const spec::ResolvedScenario& scenario) {
  return perf::sglang_mxfp4_unmodelled_path(scenario.quant.weights, scenario.gpu,
                                            scenario.scenario.engine.resolved_runtime());
}

std::vector<std::string> scenario_warnings(const spec::ResolvedScenario& scenario) {
  std::vector<std::string> out = scenario_warnings(scenario.scenario);
  if (auto path = unmodelled_engine_path(scenario)) out.push_back(std::move(*path));
  return out;
}

std::vector<std::string> scenario_warnings(const spec::Scenario& scenario) {
  std::vector<std::string> out;
  if (spec::multi_step_flag_ignored(scenario.engine))
    out.push_back("engine.multi_step_stream_outputs is set without multi-step scheduling (engine.num_scheduler_steps "
                  "1): it streams a multi-step window's tokens, so vLLM ignores it here, and so does llmsim");
  // A profile fitted from one runtime's runs prices another only with a warning (perf::runtime_mismatch). The file is
  // read once while unchanged (perf::profile_document), not once per simulation.
  const auto& ref = scenario.hardware.gpu_profile;
  if (!ref.empty()) {
    if (auto w = perf::runtime_mismatch(perf::load_profile(ref), perf::runtime_of(scenario.engine)))
      out.push_back(std::move(*w));
  }
  return out;
}

}  // namespace llmsim::analysis
