#pragma once
// search's front (private to analysis; search_front.cpp): the rules the branch-and-bound, the front and the answer
// (search_answer.cpp) share.
#include <cstddef>
#include <optional>
#include <vector>

#include "llmsim/analysis/search.hpp"

namespace llmsim::analysis::detail {

/// Fits, meets the SLO, and its bill is within the budget (if any).
bool feasible(const SearchEvaluation& e, const std::optional<double>& budget);

/// Non-dominated among `items` (pointers may be null = not feasible), as indices into items; of identical points
/// the first stands for both.
std::vector<std::size_t> pareto(const std::vector<const SearchEvaluation*>& items);

}  // namespace llmsim::analysis::detail
