#include "llmsim/analysis/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <variant>

#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/core/error.hpp"

namespace llmsim::analysis {

std::optional<double> scaling_efficiency(double throughput_n, int n, double throughput_1) {
  if (n < 1 || !(throughput_n > 0) || !(throughput_1 > 0) || !std::isfinite(throughput_n) || !std::isfinite(throughput_1))
    return std::nullopt;
  return throughput_n / (n * throughput_1);
}

std::optional<int> scaling_concurrency(const CapacityResult& one) {
  if (!one.found || !one.at_capacity) return std::nullopt;
  if (one.max_concurrency) return std::max(1, *one.max_concurrency);
  return std::max(1, static_cast<int>(std::lround(one.at_capacity->mean_in_system)));
}

spec::Workload closed_loop(const spec::Workload& w, int users) {
  if (users < 1) throw ConfigError("users", "must be >= 1, got " + std::to_string(users));
  spec::Workload out = w;
  const auto classes = w.effective_classes();
  std::vector<double> weight;
  double total = 0;
  for (const auto& c : classes) {
    if (std::holds_alternative<spec::TraceReplay>(c.arrival))
      throw ConfigError("workload.arrival", "a trace replay fixes its own load; it cannot be run at a concurrency");
    double x = 1;
    if (const auto* cl = std::get_if<spec::ClosedLoop>(&c.arrival)) {
      x = cl->concurrency;
    } else {
      spec::Workload one;
      one.classes = {c};
      x = spec::offered_rate(one).value_or(1.0);
    }
    weight.push_back(x);
    total += x;
  }
  auto users_of = [&](std::size_t i) {
    return std::max(1, static_cast<int>(std::lround(users * (total > 0 ? weight[i] / total : 1.0 / weight.size()))));
  };
  if (w.classes.empty()) out.arrival = spec::ClosedLoop{users, 0.0, {}};
  else
    for (std::size_t i = 0; i < out.classes.size(); ++i) out.classes[i].arrival = spec::ClosedLoop{users_of(i), 0.0, {}};
  return out;
}

double goodput_at_concurrency(const spec::ResolvedScenario& s, int users, const CapacityOptions& options) {
  spec::ResolvedScenario r = s;
  auto& w = r.scenario.workload;
  w = closed_loop(w, users);
  w.num_requests = std::min(w.num_requests, options.num_requests);
  w.warmup_requests = std::min(w.warmup_requests, options.warmup());
  if (w.warmup_requests >= w.num_requests) w.warmup_requests = w.num_requests / 10;
  const auto summary = evaluate(r).summary;
  return summary.fits ? summary.goodput_output_tps : 0.0;
}

}  // namespace llmsim::analysis
