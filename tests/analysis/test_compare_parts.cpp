// Pieces of `compare` that need no simulation: ranking names, the Pareto frontier (GPU options: tests/spec).
#include <catch2/catch.hpp>

#include <cmath>

#include "llmsim/analysis/compare.hpp"
#include "llmsim/core/error.hpp"

using namespace llmsim;

TEST_CASE("ranking names", "[analysis][compare]") {
  CHECK(analysis::parse_rank_by("monthly_cost") == analysis::RankBy::monthly_cost);
  CHECK(analysis::parse_rank_by("cost_per_mtok") == analysis::RankBy::cost_per_mtok);
  CHECK(analysis::parse_rank_by("cost_per_mtok_at_capacity") == analysis::RankBy::cost_per_mtok_at_capacity);
  CHECK_THROWS_AS(analysis::parse_rank_by("cheapest"), ConfigError);
}

TEST_CASE("Pareto frontier keeps exactly the non-dominated points", "[analysis][compare]") {
  const double nan = std::nan("");
  // (cost, latency): 0 and 2 and 4 are on the frontier; 1 is dominated by 0; 3 by 2; 5 has no cost.
  std::vector<std::pair<double, double>> pts = {{1, 500}, {2, 600}, {3, 200}, {4, 300}, {5, 100}, {nan, 10}};
  const auto f = analysis::pareto_frontier(pts);
  REQUIRE(f.size() == 3);
  CHECK(f[0] == 0);
  CHECK(f[1] == 2);
  CHECK(f[2] == 4);
  CHECK(analysis::pareto_frontier({}).empty());
  // Equal cost: only the faster one.
  const auto g = analysis::pareto_frontier({{1, 300}, {1, 200}});
  REQUIRE(g.size() == 1);
  CHECK(g[0] == 1);
}
