// Capacity search on the default scenario (examples/scenarios/chat-8b.json): wall time per search and the
// simulations it ran. Run from the repository root (scripts/bench.sh does), or pass a scenario file. Target (issue 13): < 0.1 s per search with the default CapacityOptions.
#include <chrono>
#include <cstdio>
#include <string>

#include "llmsim/analysis/capacity.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

int main(int argc, char** argv) {
  using namespace llmsim;
  const std::string file = argc > 1 ? argv[1] : std::string("examples/scenarios/chat-8b.json");
  const Json doc = read_json_file(file);
  const auto scenario = spec::resolve(spec::scenario_from_json(JsonView(doc, "")), spec::Catalog::builtin());
  const analysis::CapacityOptions options;  // the defaults `llmsim capacity` uses
  std::printf("capacity search: %s (%s on %s), %lld requests/simulation, %d replications, rel_tol %.3f\n",
              file.c_str(), scenario.model.id.c_str(), scenario.gpu.id.c_str(),
              static_cast<long long>(options.num_requests), options.replications, options.rel_tol);
  double best = 1e9, total = 0;
  const int repeats = 5;
  analysis::CapacityResult r;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    r = analysis::find_capacity(scenario, options);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
    total += s;
  }
  std::printf("max_qps %.3f (95%% CI %.3f..%.3f), %d simulations per search\n", r.max_qps, r.ci95_lo, r.ci95_hi,
              r.evaluations);
  std::printf("wall time per search: best %.3f s, mean %.3f s over %d searches (target < 0.1 s): %s\n", best,
              total / repeats, repeats, best < 0.1 ? "OK" : "SLOW");
  return 0;
}
