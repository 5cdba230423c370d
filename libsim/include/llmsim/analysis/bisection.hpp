#pragma once
// The search behind capacity: the largest x at which a (noisy but mostly monotone) test still passes,
// found by bracketing (doubling/halving from a start) and then bisection to a relative tolerance.
#include <functional>

namespace llmsim::analysis {

struct SearchLimits {
  double min_x = 1e-3;        ///< below this the test is taken to fail everywhere (found = false)
  double max_x = 1e6;         ///< above this the search stops growing (hit_max = true)
  double rel_tol = 0.03;      ///< stop when (fail - pass) / pass <= rel_tol
  int max_evaluations = 60;   ///< hard cap on calls of the test
  bool integer = false;       ///< search whole numbers only (closed-loop concurrency); stops at fail = pass + 1
  double growth = 2.0;        ///< bracketing factor (> 1): small when the start is already a good guess
  /// Give up (gave_up = true, found = false) as soon as some x below this has failed: the answer would then be
  /// below it too (pass < fail always), and a caller that only needs answers above it (search's screening,
  /// docs/search.md) saves the rest of the bisection. 0 = never.
  double give_up_below = 0;
};

struct BisectionResult {
  bool found = false;         ///< some x >= min_x passed
  bool hit_max = false;       ///< the test still passed at max_x (pass = max_x, fail = +inf)
  double pass = 0;            ///< largest x seen to pass (0 when !found)
  double fail = 0;            ///< smallest x seen to fail above `pass`
  bool gave_up = false;       ///< stopped because fail < limits.give_up_below (found = false; pass as far as known)
  int evaluations = 0;
};

/// Brackets from `start` (> 0): multiplies by `growth` while passing, divides while failing, then bisects (geometric mean
/// for wide brackets, midpoint once within 2x) until the relative tolerance. ConfigError when the limits
/// are inconsistent (min_x <= 0, max_x < min_x, rel_tol <= 0, max_evaluations < 2, growth <= 1) or start <= 0.
BisectionResult search_max_passing(const std::function<bool(double)>& passes, double start,
                                const SearchLimits& limits = {});

}  // namespace llmsim::analysis
