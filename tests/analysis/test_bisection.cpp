// The capacity search's bracketing and bisection, on synthetic monotone tests.
#include <catch2/catch.hpp>

#include <cmath>

#include "llmsim/analysis/bisection.hpp"
#include "llmsim/core/error.hpp"

using namespace llmsim;
using analysis::SearchLimits;
using analysis::search_max_passing;

TEST_CASE("bisection finds the threshold of a monotone test within the tolerance", "[analysis][bisection]") {
  for (double threshold : {0.037, 1.0, 7.3, 250.0, 9000.0}) {
    for (double start : {0.5, 4.0, 1000.0}) {
      SearchLimits lim;
      lim.rel_tol = 0.01;
      const auto r = search_max_passing([&](double x) { return x <= threshold; }, start, lim);
      INFO("threshold " << threshold << " start " << start);
      REQUIRE(r.found);
      CHECK_FALSE(r.hit_max);
      CHECK(r.pass <= threshold);
      CHECK(r.fail > threshold);
      CHECK((r.fail - r.pass) / r.pass <= 0.01);
      CHECK(r.evaluations <= 40);
    }
  }
}

TEST_CASE("bisection reports never-passing and always-passing tests", "[analysis][bisection]") {
  SearchLimits lim;
  lim.min_x = 0.01;
  lim.max_x = 100;
  auto never = search_max_passing([](double) { return false; }, 1.0, lim);
  CHECK_FALSE(never.found);
  CHECK(never.pass == 0);
  auto always = search_max_passing([](double) { return true; }, 1.0, lim);
  CHECK(always.found);
  CHECK(always.hit_max);
  CHECK(always.pass == 100);
}

TEST_CASE("integer bisection stops at adjacent whole numbers", "[analysis][bisection]") {
  SearchLimits lim;
  lim.integer = true;
  lim.min_x = 1;
  lim.max_x = 4096;
  for (int threshold : {1, 2, 3, 17, 64, 1000}) {
    for (double start : {1.0, 8.0, 300.0}) {
      int calls = 0;
      const auto r = search_max_passing(
          [&](double x) {
            ++calls;
            CHECK(x == std::round(x));
            return x <= threshold;
          },
          start, lim);
      INFO("threshold " << threshold << " start " << start);
      REQUIRE(r.found);
      CHECK(r.pass == threshold);
      CHECK(r.fail == threshold + 1);
      CHECK(calls == r.evaluations);
    }
  }
}

TEST_CASE("a small bracketing factor from a good guess needs few evaluations", "[analysis][bisection]") {
  SearchLimits wide, narrow;
  narrow.growth = 1.25;
  auto test = [](double x) { return x <= 10.4; };
  const auto a = search_max_passing(test, 10.0, wide);
  const auto b = search_max_passing(test, 10.0, narrow);
  CHECK(b.pass == Approx(a.pass).epsilon(0.05));
  CHECK(b.evaluations < a.evaluations);
}

TEST_CASE("the evaluation cap is honoured", "[analysis][bisection]") {
  SearchLimits lim;
  lim.max_evaluations = 5;
  lim.rel_tol = 1e-9;
  int calls = 0;
  const auto r = search_max_passing([&](double x) { ++calls; return x <= 3.3; }, 1.0, lim);
  CHECK(calls == 5);
  CHECK(r.evaluations == 5);
  CHECK(r.found);
  CHECK(r.pass <= 3.3);
}

TEST_CASE("inconsistent search limits are rejected", "[analysis][bisection]") {
  auto t = [](double) { return true; };
  SearchLimits lim;
  CHECK_THROWS_AS(search_max_passing(t, 0.0, lim), ConfigError);
  lim.rel_tol = 0;
  CHECK_THROWS_AS(search_max_passing(t, 1.0, lim), ConfigError);
  lim = {};
  lim.max_x = lim.min_x / 2;
  CHECK_THROWS_AS(search_max_passing(t, 1.0, lim), ConfigError);
  lim = {};
  lim.growth = 1.0;
  CHECK_THROWS_AS(search_max_passing(t, 1.0, lim), ConfigError);
}

TEST_CASE("bisection gives up once a failure shows the answer is below give_up_below, and only then", "[analysis][bisection]") {
  int calls = 0;
  auto below_10 = [&](double x) { return ++calls, x <= 10.0; };
  SearchLimits lim;
  lim.rel_tol = 0.01;
  lim.give_up_below = 20;  // 1, 2, 4, 8 pass, 16 fails: the answer is below 16 < 20, so stop there
  auto r = search_max_passing(below_10, 1.0, lim);
  CHECK(r.gave_up);
  CHECK_FALSE(r.found);
  CHECK(r.fail == 16.0);
  CHECK(r.pass == 8.0);
  CHECK(r.evaluations == 5);
  CHECK(calls == 5);
  // A threshold the answer is above never stops the search, and the answer is the one without it.
  SearchLimits plain = lim;
  plain.give_up_below = 0;
  lim.give_up_below = 9.5;
  const auto with = search_max_passing(below_10, 1.0, lim);
  const auto without = search_max_passing(below_10, 1.0, plain);
  CHECK_FALSE(with.gave_up);
  REQUIRE(with.found);
  CHECK(with.pass == without.pass);
  CHECK(with.fail == without.fail);
  CHECK(with.evaluations == without.evaluations);
  // Starting above a failing region: the first failure below the threshold stops the halving.
  lim.give_up_below = 50;
  r = search_max_passing(below_10, 40.0, lim);
  CHECK(r.gave_up);
  CHECK(r.evaluations == 1);
  lim.give_up_below = -1;
  CHECK_THROWS_AS(search_max_passing(below_10, 1.0, lim), ConfigError);
}
