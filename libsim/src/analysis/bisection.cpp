#include "llmsim/analysis/bisection.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "llmsim/core/error.hpp"

namespace llmsim::analysis {

BisectionResult search_max_passing(const std::function<bool(double)>& passes, double start, const SearchLimits& lim) {
  Problems p;
  if (!(lim.min_x > 0) || !std::isfinite(lim.min_x)) p.add("search.min_x", "must be > 0, got " + format_given(lim.min_x));
  if (!(lim.max_x >= lim.min_x) || !std::isfinite(lim.max_x))
    p.add("search.max_x", "must be >= min_x, got " + format_given(lim.max_x));
  if (!(lim.rel_tol > 0) || !std::isfinite(lim.rel_tol))
    p.add("search.rel_tol", "must be > 0, got " + format_given(lim.rel_tol));
  if (lim.max_evaluations < 2) p.add("search.max_evaluations", "must be >= 2, got " + std::to_string(lim.max_evaluations));
  if (!(lim.growth > 1) || !std::isfinite(lim.growth))
    p.add("search.growth", "must be > 1, got " + format_given(lim.growth));
  if (!(start > 0) || !std::isfinite(start)) p.add("search.start", "must be > 0, got " + format_given(start));
  if (!(lim.give_up_below >= 0) || std::isnan(lim.give_up_below))
    p.add("search.give_up_below", "must be >= 0, got " + format_given(lim.give_up_below));
  p.throw_if_any();

  BisectionResult r;
  const double inf = std::numeric_limits<double>::infinity();
  auto snap = [&](double x) {
    x = std::clamp(x, lim.min_x, lim.max_x);
    return lim.integer ? std::max(std::round(x), std::ceil(lim.min_x)) : x;
  };
  auto test = [&](double x) {
    ++r.evaluations;
    return passes(x);
  };
  // Every answer is below every failing x (pass < fail and fail only shrinks): one below give_up_below settles it.
  auto give_up = [&](double fail_x) {
    if (!(fail_x < lim.give_up_below)) return false;
    r.found = false;
    r.gave_up = true;
    r.fail = fail_x;
    return true;
  };

  // Bracket: pass < fail.
  double pass = 0, fail = inf;
  double x = snap(start);
  if (test(x)) {
    pass = x;
    while (r.evaluations < lim.max_evaluations) {
      if (pass >= lim.max_x) {
        r.found = true;
        r.hit_max = true;
        r.pass = pass;
        r.fail = inf;
        return r;
      }
      double next = snap(pass * lim.growth);
      if (lim.integer && next <= pass) next = pass + 1;
      if (test(next)) pass = next;
      else { fail = next; break; }
    }
  } else {
    fail = x;
    if (give_up(fail)) return r;
    while (r.evaluations < lim.max_evaluations) {
      if (fail <= snap(lim.min_x)) {
        r.found = false;
        r.fail = fail;
        return r;  // fails even at the smallest load: no capacity
      }
      double next = snap(fail / lim.growth);
      if (lim.integer && next >= fail) next = fail - 1;
      if (test(next)) { pass = next; break; }
      fail = next;
      if (give_up(fail)) return r;
    }
  }
  if (pass == 0) {  // ran out of evaluations while halving
    r.fail = fail;
    return r;
  }
  if (fail == inf) {  // ran out of evaluations while doubling
    r.found = true;
    r.pass = pass;
    r.fail = inf;
    return r;
  }
  if (give_up(fail)) {
    r.pass = pass;
    return r;
  }

  // Bisect: geometric midpoint while the bracket is wide (rates span decades), arithmetic once within 2x.
  auto done = [&] {
    if (lim.integer) return fail - pass <= 1;
    return (fail - pass) / pass <= lim.rel_tol;
  };
  while (!done() && r.evaluations < lim.max_evaluations) {
    double mid = fail / pass > 2 ? std::sqrt(pass * fail) : 0.5 * (pass + fail);
    if (lim.integer) {
      mid = std::floor(mid);
      if (mid <= pass) mid = pass + 1;
    }
    if (test(mid)) {
      pass = mid;
    } else {
      fail = mid;
      if (give_up(fail)) {
        r.pass = pass;
        return r;
      }
    }
  }
  r.found = true;
  r.pass = pass;
  r.fail = fail;
  return r;
}

}  // namespace llmsim::analysis
