#pragma once
// Helpers shared by the trust tests: building scenarios from JSON and simple statistics over records.
#include <algorithm>
#include <cmath>
#include <vector>

#include "llmsim/core/json_view.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::trust {

inline spec::ResolvedScenario resolve_json(const Json& j) {
  return spec::resolve(spec::scenario_from_json(JsonView(j, "")), spec::Catalog::builtin());
}

/// Mean and standard error of the mean by non-overlapping batch means: waits of consecutive customers are
/// strongly correlated, so the naive s/sqrt(n) understates the error; means of long batches are nearly
/// independent, and sd(batch means)/sqrt(batches) is the textbook estimate (Law & Kelton, ch. 9).
struct BatchMeans {
  double mean = 0, stderr_mean = 0;
  int batches = 0;
};

inline BatchMeans batch_means(const std::vector<double>& x, int batches) {
  BatchMeans out;
  out.batches = batches;
  const std::size_t per = x.size() / static_cast<std::size_t>(batches);
  std::vector<double> means;
  for (int b = 0; b < batches; ++b) {
    double s = 0;
    for (std::size_t i = 0; i < per; ++i) s += x[static_cast<std::size_t>(b) * per + i];
    means.push_back(s / static_cast<double>(per));
  }
  double m = 0;
  for (double v : means) m += v;
  m /= batches;
  double var = 0;
  for (double v : means) var += (v - m) * (v - m);
  var /= (batches - 1);
  out.mean = m;
  out.stderr_mean = std::sqrt(var / batches);
  return out;
}

}  // namespace llmsim::trust
