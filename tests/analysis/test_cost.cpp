// Cost arithmetic: DESIGN.md's worked examples, extras, cold start and fleet sizing.
#include <catch2/catch.hpp>

#include "llmsim/analysis/cost.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/autoscaler.hpp"
#include "llmsim/spec/catalog.hpp"

using namespace llmsim;
using analysis::cost_per_mtok;

TEST_CASE("cost per million tokens matches DESIGN.md's worked examples", "[analysis][cost]") {
  REQUIRE(cost_per_mtok(4.0, 80.0).has_value());
  CHECK(*cost_per_mtok(4.0, 80.0) == Approx(13.888889).epsilon(1e-6));
  CHECK(*cost_per_mtok(7.0, 160.0) == Approx(12.152778).epsilon(1e-6));
  // Rounded as DESIGN.md writes them.
  CHECK(std::round(*cost_per_mtok(4.0, 80.0) * 10) / 10 == Approx(13.9));
  CHECK(std::round(*cost_per_mtok(7.0, 160.0) * 10) / 10 == Approx(12.2));
  // Twice the tokens for the same money halves the price per token.
  CHECK(*cost_per_mtok(4.0, 160.0) == Approx(*cost_per_mtok(4.0, 80.0) / 2));
}

TEST_CASE("no tokens means no price per token, not a price of zero", "[analysis][cost]") {
  CHECK_FALSE(cost_per_mtok(4.0, 0.0).has_value());
  CHECK_FALSE(cost_per_mtok(4.0, -1.0).has_value());
  CHECK_FALSE(cost_per_mtok(4.0, std::nan("")).has_value());
  CHECK(*cost_per_mtok(0.0, 10.0) == 0.0);  // a free GPU is free
  CHECK_THROWS_AS(cost_per_mtok(-1.0, 10.0), ConfigError);
  CHECK_THROWS_AS(cost_per_mtok(std::numeric_limits<double>::infinity(), 10.0), ConfigError);
}

TEST_CASE("hourly cost adds ops overhead and monthly extras", "[analysis][cost]") {
  spec::CostSpec c;
  CHECK(analysis::hourly_cost(1.8, 1, c) == Approx(1.8));
  CHECK(analysis::hourly_cost(0.4, 2, c) == Approx(0.8));
  c.ops_overhead_fraction = 0.1;
  c.storage_per_month = 73;
  c.network_per_month = 73;
  c.hours_per_month = 730;
  // 2 × 1.0 × 1.1 + 146 / 730
  CHECK(analysis::hourly_cost(1.0, 2, c) == Approx(2.2 + 0.2));
  CHECK_THROWS_AS(analysis::hourly_cost(-1.0, 1, c), ConfigError);
  CHECK_THROWS_AS(analysis::hourly_cost(1.0, 0, c), ConfigError);
  c.hours_per_month = 0;
  CHECK_THROWS_AS(analysis::hourly_cost(1.0, 1, c), ConfigError);
}

TEST_CASE("cold start's weight load: 80 GB over 1 Gbps is 640 s", "[analysis][cost]") {
  CHECK(engine::weight_load_s(80e9, 1.0) == Approx(640.0));
  CHECK(engine::weight_load_s(80e9, 10.0) == Approx(64.0));
  CHECK(engine::weight_load_s(16e9, 1.0) == Approx(128.0));
  CHECK_THROWS_AS(engine::weight_load_s(1, 0.0), ConfigError);
}

TEST_CASE("replicas needed round up, include spares, and refuse zero capacity", "[analysis][cost]") {
  CHECK(*analysis::replicas_needed(8.0, 2.0, 0.0) == 4);
  CHECK(*analysis::replicas_needed(8.1, 2.0, 0.0) == 5);
  CHECK(*analysis::replicas_needed(1.0, 10.0, 0.0) == 1);
  CHECK(*analysis::replicas_needed(8.0, 2.0, 0.25) == 5);
  CHECK(*analysis::replicas_needed(8.0, 2.0, 0.2) == 5);  // 4 × 1.2 = 4.8 -> 5
  CHECK_FALSE(analysis::replicas_needed(8.0, 0.0, 0.0).has_value());
  CHECK(*analysis::replicas_needed(0.0, 2.0, 0.0) == 0);
}

TEST_CASE("a scenario's price follows its GPU: it priced that card, not another", "[analysis][cost][price]") {
  using analysis::price_on_gpu;
  // Same card: the scenario's price stays; another card: its catalogue price (nullopt); an explicit price wins.
  CHECK(price_on_gpu("a100-80gb-sxm", 1.8, "a100-80gb-sxm") == 1.8);
  CHECK_FALSE(price_on_gpu("a100-80gb-sxm", 1.8, "rtx4090-24gb"));
  CHECK(price_on_gpu("a100-80gb-sxm", 1.8, "rtx4090-24gb", 0.7) == 0.7);
  CHECK(price_on_gpu("a100-80gb-sxm", std::nullopt, "a100-80gb-sxm", 2.5) == 2.5);
  CHECK_FALSE(price_on_gpu("a100-80gb-sxm", std::nullopt, "a100-80gb-sxm"));

  spec::Scenario s;
  s.hardware.gpu = "a100-80gb-sxm";
  s.hardware.price_per_gpu_hour = 1.8;
  analysis::set_gpu(s, "rtx4090-24gb");
  CHECK(s.hardware.gpu == "rtx4090-24gb");
  CHECK_FALSE(s.hardware.price_per_gpu_hour);
  // Resolved, the 4090 is billed at its own catalogue price, as compare bills it.
  const auto r = spec::resolve(s, spec::Catalog::builtin());
  CHECK(r.price_per_gpu_hour == Approx(spec::Catalog::builtin().gpu("rtx4090-24gb").price_per_hour));
  analysis::set_gpu(s, "a100-80gb-pcie", 1.5);
  CHECK(s.hardware.price_per_gpu_hour == 1.5);
}

TEST_CASE("the price follows the card, not the option text: 2xa100 is still an A100", "[analysis][cost][price]") {
  using analysis::price_on_gpu;
  // A count, split or bridge does not change the card, so the scenario's price of that card still applies.
  CHECK(price_on_gpu("a100-80gb-sxm", 1.8, "2xa100-80gb-sxm") == 1.8);
  CHECK(price_on_gpu("a100-80gb-pcie", 1.5, "2xa100-80gb-pcie+nvlink") == 1.5);
  CHECK(price_on_gpu("2xrtx4090-24gb", 0.4, "rtx4090-24gb@pp") == 0.4);
  CHECK_FALSE(price_on_gpu("2xa100-80gb-sxm", 1.8, "2xrtx4090-24gb"));
  // The purchase price follows the same rule.
  spec::Scenario s;
  s.hardware.gpu = "rtx4090-24gb";
  s.hardware.price_per_gpu_hour = 0.4;
  s.hardware.purchase_price_per_gpu = 1800;
  analysis::set_gpu(s, "2xrtx4090-24gb@pp");
  CHECK(s.hardware.price_per_gpu_hour == 0.4);
  CHECK(s.hardware.purchase_price_per_gpu == 1800);
  analysis::set_gpu(s, "a100-80gb-sxm");
  CHECK_FALSE(s.hardware.price_per_gpu_hour);
  CHECK_FALSE(s.hardware.purchase_price_per_gpu);
}

TEST_CASE("overrides reprice in C++: a scenario moved to another card keeps no other card's price",
          "[analysis][cost][price]") {
  // chat-8b prices its A100 at $1.80/h; Python's hardware__gpu= and sweep points go through apply_overrides.
  const Json base = Json::parse(R"({"hardware": {"gpu": "a100-80gb-sxm", "price_per_gpu_hour": 1.8,
                                                 "purchase_price_per_gpu": 15000}})");
  auto price = [](const Json& doc) {
    return spec::resolve(spec::scenario_from_json(JsonView(doc, "")), spec::Catalog::builtin()).price_per_gpu_hour;
  };
  const double rtx = spec::Catalog::builtin().gpu("rtx4090-24gb").price_per_hour;
  CHECK(price(base) == 1.8);
  const Json moved = analysis::apply_overrides(base, {{"hardware.gpu", "rtx4090-24gb"}});
  CHECK_FALSE(moved["hardware"].contains("price_per_gpu_hour"));
  CHECK_FALSE(moved["hardware"].contains("purchase_price_per_gpu"));
  CHECK(price(moved) == Approx(rtx));
  CHECK(price(analysis::apply_overrides(base, {{"hardware.gpu", "2xa100-80gb-sxm"}})) == 1.8);
  CHECK(price(analysis::apply_overrides(base, {{"hardware.gpu", "rtx4090-24gb"}, {"hardware.price_per_gpu_hour", 0.7}})) ==
        0.7);
  CHECK(price(analysis::apply_overrides(base, {{"hardware.price_per_gpu_hour", 0.7}, {"hardware.gpu", "rtx4090-24gb"}})) ==
        0.7);
  CHECK(price(analysis::apply_overrides(base, {{"workload.seed", 3}})) == 1.8);
  CHECK_THROWS_AS(analysis::apply_overrides(base, {{"hardware.gpus", "x"}}), ConfigError);
}

TEST_CASE("$/Mtok at the target load is the fleet's bill over its serving replicas' tokens", "[analysis][cost]") {
  // 2 serving replicas at 100 tok/s each, the fleet (with a spare) costing 1.5/h: 1.5 / (200 × 3600) × 1e6.
  CHECK(*analysis::fleet_cost_per_mtok(1.5, 2, 100.0) == Approx(1.5 / 720000.0 * 1e6));
  CHECK_FALSE(analysis::fleet_cost_per_mtok(1.5, 0, 100.0));
  CHECK_FALSE(analysis::fleet_cost_per_mtok(1.5, 2, 0.0));
}

TEST_CASE("a period's bill from GPU-hours: a fixed fleet's month equals its hourly cost x hours", "[analysis][cost]") {
  spec::CostSpec c;
  c.ops_overhead_fraction = 0.1;
  c.storage_per_month = 73;
  // 2 GPUs for a 730 h month at 0.5/h: 730 × 2 × 0.5 × 1.1 + 73.
  CHECK(analysis::period_cost(0.5, 2 * 730.0, 730.0, c) == Approx(803 + 73));
  CHECK(analysis::period_cost(0.5, 2 * 730.0, 730.0, c) == Approx(analysis::hourly_cost(0.5, 2, c) * 730));
  // An autoscaled fleet is billed for the replica-hours it held: 10 h at 4 GPUs and 14 h at 1 GPU in one day.
  CHECK(analysis::period_cost(0.5, 10 * 4 + 14 * 1, 24.0, c) == Approx(54 * 0.5 * 1.1 + 73.0 * 24 / 730));
  CHECK_THROWS_AS(analysis::period_cost(0.5, -1, 24, c), ConfigError);
}
