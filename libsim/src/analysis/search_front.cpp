// search's front (docs/search.md "Pipeline"): which evaluations are feasible, the Pareto front among them, the
// branch-and-bound cutoff and the waves simulated under it.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

#include "llmsim/analysis/search.hpp"
#include "search_bound.hpp"
#include "search_front.hpp"

namespace llmsim::analysis {

namespace {

bool dominates(const SearchEvaluation& a, const SearchEvaluation& b) {
  const bool no_worse = a.monthly_cost <= b.monthly_cost && a.ttft_p95_ms <= b.ttft_p95_ms && a.tpot_p95_ms <= b.tpot_p95_ms;
  const bool better = a.monthly_cost < b.monthly_cost || a.ttft_p95_ms < b.ttft_p95_ms || a.tpot_p95_ms < b.tpot_p95_ms;
  return no_worse && better;
}

}  // namespace

namespace detail {

bool feasible(const SearchEvaluation& e, const std::optional<double>& budget) {
  return e.fits && e.meets_slo && (!budget || e.monthly_cost <= *budget);
}

// Non-dominated among `items` (pointers may be null = not feasible), as indices into items.
std::vector<std::size_t> pareto(const std::vector<const SearchEvaluation*>& items) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!items[i]) continue;
    bool dominated = false;
    for (std::size_t j = 0; j < items.size() && !dominated; ++j) {
      if (j == i || !items[j]) continue;
      const auto& a = *items[j];
      const auto& b = *items[i];
      // An identical point earlier in the order (a knob that changed nothing at the target) stands for both.
      const bool same = a.monthly_cost == b.monthly_cost && a.ttft_p95_ms == b.ttft_p95_ms && a.tpot_p95_ms == b.tpot_p95_ms;
      dominated = dominates(a, b) || (same && j < i);
    }
    if (!dominated) out.push_back(i);
  }
  return out;
}

}  // namespace detail

using detail::feasible;
using detail::pareto;

double search_cutoff(const std::vector<std::optional<SearchEvaluation>>& done, const SearchOptions& options) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& d : done)
    if (d && feasible(*d, options.budget_per_month)) best = std::min(best, d->monthly_cost);
  double cutoff = best * options.front_cost_ratio;
  if (options.budget_per_month) cutoff = std::min(cutoff, *options.budget_per_month);
  return cutoff;
}

std::vector<std::size_t> next_wave(const SearchPlan& plan, const std::vector<std::optional<SearchEvaluation>>& done,
                                   const SearchOptions& options) {
  const double cutoff = search_cutoff(done, options);
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < plan.candidates.size() && out.size() < static_cast<std::size_t>(options.wave); ++i) {
    if (i < done.size() && done[i]) continue;
    if (detail::over_cutoff(plan.candidates[i].monthly_lower_bound, cutoff)) break;  // sorted by the bound: the rest too
    out.push_back(i);
  }
  return out;
}

std::vector<std::size_t> pareto_positions(const std::vector<std::optional<SearchEvaluation>>& done,
                                          const SearchOptions& options) {
  // The front's window: feasible and within front_cost_ratio of the cheapest (what branch-and-bound guarantees to
  // have simulated in full, whatever the order; a costlier member would depend on what the bound let through).
  const double window = search_cutoff(done, options);  // (a feasible bill is within the budget anyway)
  std::vector<const SearchEvaluation*> items;
  for (const auto& d : done)
    items.push_back(d && feasible(*d, options.budget_per_month) && !detail::over_cutoff(d->monthly_cost, window) ? &*d
                                                                                                               : nullptr);
  return pareto(items);
}

}  // namespace llmsim::analysis
