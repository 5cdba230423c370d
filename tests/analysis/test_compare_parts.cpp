// Pieces of `compare` that need no simulation: GPU option syntax, ranking names, the Pareto frontier.
#include <catch2/catch.hpp>

#include <cmath>

#include "llmsim/analysis/compare.hpp"
#include "llmsim/core/error.hpp"

using namespace llmsim;

TEST_CASE("GPU options: count prefix, parallel suffix", "[analysis][compare]") {
  auto one = analysis::parse_gpu_option("rtx4090-24gb");
  CHECK(one.gpu == "rtx4090-24gb");
  CHECK(one.count == 1);
  auto two = analysis::parse_gpu_option("2xrtx4090-24gb");
  CHECK(two.gpu == "rtx4090-24gb");
  CHECK(two.count == 2);
  CHECK_FALSE(two.pipeline);
  auto pp = analysis::parse_gpu_option("4xa100-80gb-sxm@pp");
  CHECK(pp.count == 4);
  CHECK(pp.pipeline);
  CHECK(analysis::parse_gpu_option("a100-80gb-sxm:mig-3g.40gb").gpu == "a100-80gb-sxm:mig-3g.40gb");
  CHECK(analysis::parse_gpu_option("3090").gpu == "3090");  // digits without 'x' are part of the id
  CHECK_THROWS_AS(analysis::parse_gpu_option("0xrtx4090-24gb"), ConfigError);
  CHECK_THROWS_AS(analysis::parse_gpu_option("100xrtx4090-24gb"), ConfigError);
  CHECK_THROWS_AS(analysis::parse_gpu_option("2x"), ConfigError);
  CHECK_THROWS_AS(analysis::parse_gpu_option("2xrtx4090-24gb@dp"), ConfigError);
}

TEST_CASE("ranking names", "[analysis][compare]") {
  CHECK(analysis::parse_rank_by("monthly_cost") == analysis::RankBy::monthly_cost);
  CHECK(analysis::parse_rank_by("cost_per_mtok") == analysis::RankBy::cost_per_mtok);
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
