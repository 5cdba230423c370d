// Simulates the scenario file given as argv[1] with the installed library and prints the summary as
// `llmsim simulate --json` does; run_consumer.cmake checks that the two outputs are identical.
#include <iostream>

#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/metrics/summary.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer_simulate SCENARIO.json\n";
    return 2;
  }
  try {
    const auto scenario = llmsim::spec::scenario_from_json(llmsim::JsonView(llmsim::read_json_file(argv[1]), ""));
    const auto resolved = llmsim::spec::resolve(scenario, llmsim::spec::Catalog::builtin());
    const auto result = llmsim::analysis::evaluate(resolved, {});
    if (!result.summary.fits || result.summary.completed_requests <= 0) {
      std::cerr << "consumer_simulate: no request completed (" << result.summary.reason << ")\n";
      return 1;
    }
    std::cout << llmsim::metrics::to_json(result.summary).dump(2) << "\n";
  } catch (const llmsim::Error& e) {
    std::cerr << "consumer_simulate: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
