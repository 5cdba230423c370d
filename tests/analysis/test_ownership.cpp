// Owned hardware: depreciation, energy (idle and under load, × PUE) and hosting as a price per GPU-hour, and the
// months after which buying has cost less than renting — checked against hand computations.
#include <catch2/catch.hpp>

#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/analysis/ownership.hpp"
#include "llmsim/analysis/row.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"

using namespace llmsim;

namespace {

spec::ResolvedScenario owned_4090(double electricity = 0.15) {
  spec::Scenario s;
  s.model = "llama-3.1-8b";
  s.hardware.gpu = "rtx4090-24gb";
  s.hardware.price_per_gpu_hour = 0.5;
  s.cost.electricity_per_kwh = electricity;
  s.cost.pue = 1.5;
  s.cost.depreciation_years = 3;
  s.cost.hosting_per_gpu_month = 73;  // 0.1 per hour at 730 h/month
  return spec::resolve(s, spec::Catalog::builtin());
}

}  // namespace

TEST_CASE("board power: measured idle plus the load share of the datasheet's", "[analysis][ownership]") {
  const auto& g = spec::Catalog::builtin().gpu("rtx4090-24gb");  // 450 W board power, 20 W idle
  CHECK(analysis::average_board_watts(g, 0.0) == Approx(20));
  CHECK(analysis::average_board_watts(g, 1.0) == Approx(450));
  CHECK(analysis::average_board_watts(g, 0.5) == Approx(20 + 430 * 0.5));
  // A card without a measured idle is priced at its full board power (an upper bound), never at zero.
  const auto& pcie = spec::Catalog::builtin().gpu("a100-80gb-pcie");
  CHECK(analysis::average_board_watts(pcie, 0.0) == Approx(pcie.tdp_watts));
  CHECK_THROWS_AS(analysis::average_board_watts(g, 1.5), ConfigError);
}

TEST_CASE("an owned GPU-hour and the break-even month, by hand", "[analysis][ownership]") {
  const auto s = owned_4090();
  const auto h = analysis::owned_gpu_hour(s, 1.0);
  REQUIRE(h);
  CHECK(h->depreciation == Approx(1599.0 / (3 * 8766.0)));  // the 4090's launch MSRP over 3 years
  CHECK(h->energy == Approx(450 * 1.5 / 1000 * 0.15));      // 0.675 kWh at the wall per hour
  CHECK(h->hosting == Approx(0.1));
  CHECK(h->total() == Approx(0.060801 + 0.10125 + 0.1).epsilon(1e-4));
  CHECK(h->idle_power_known);
  // Renting at 0.5/h saves 0.5 - 0.20125 per hour of running an owned card: 1599 / (0.29875 × 730) = 7.33 months.
  const auto months = analysis::break_even_months(1599, 0.5, h->running(), 730);
  REQUIRE(months);
  CHECK(*months == Approx(1599.0 / ((0.5 - 0.20125) * 730)));
  CHECK(*months == Approx(7.33).epsilon(1e-3));
  CHECK_FALSE(analysis::break_even_months(1599, 0.2, 0.25, 730));  // renting is cheaper than running: never
  // Idle cards draw less: energy at busy 0 is the measured 20 W.
  CHECK(analysis::owned_gpu_hour(s, 0.0)->energy == Approx(20 * 1.5 / 1000 * 0.15));
}

TEST_CASE("owning is not priced without an electricity price or a purchase price, and says why",
          "[analysis][ownership]") {
  spec::Scenario s;
  s.hardware.gpu = "rtx4090-24gb";
  std::string why;
  CHECK_FALSE(analysis::owned_gpu_hour(spec::resolve(s, spec::Catalog::builtin()), 1.0, &why));
  CHECK_THAT(why, Catch::Contains("cost.electricity_per_kwh"));
  s.hardware.gpu = "a100-80gb-sxm";  // NVIDIA publishes no list price for data-centre cards
  s.cost.electricity_per_kwh = 0.1;
  CHECK_FALSE(analysis::owned_gpu_hour(spec::resolve(s, spec::Catalog::builtin()), 1.0, &why));
  CHECK_THAT(why, Catch::Contains("purchase price for a100-80gb-sxm"));
  s.hardware.purchase_price_per_gpu = 15000;
  CHECK(analysis::owned_gpu_hour(spec::resolve(s, spec::Catalog::builtin()), 1.0));
}

TEST_CASE("the engine's busy fraction is per GPU: a two-stage pipeline keeps each GPU busy as TP does",
          "[analysis][ownership][engine]") {
  // The same load on 2 cards as TP2 and as a two-stage pipeline with a batch per stage: each GPU of the pipeline runs
  // half of every pass, so its busy share is the pass time over 2 — not over the 2 virtual engines x 2 stages.
  Json j = Json::parse(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "2xrtx4090-24gb"},
    "workload": {"arrival": {"process": "poisson", "rate": 0.2}, "input_tokens": {"dist": "fixed", "value": 512},
                 "output_tokens": {"dist": "fixed", "value": 64}, "num_requests": 200, "warmup_requests": 20,
                 "seed": 5}})");
  auto busy = [&](const std::string& gpu) {
    spec::set_json_path(j, "hardware.gpu", gpu);
    const auto s = spec::resolve(spec::scenario_from_json(JsonView(j, "")), spec::Catalog::builtin());
    return analysis::evaluate(s).summary.busy_fraction;
  };
  const double tp = busy("2xrtx4090-24gb"), pp = busy("2xrtx4090-24gb@pp");
  // At 0.2 QPS one request is in flight at a time: TP's GPUs run the whole pass, each pipeline GPU half of a pass
  // about as long (no all-reduce, half the layers each), so the shares are of the same order.
  CHECK(tp > 0.05);
  CHECK(tp < 0.6);
  CHECK(pp == Approx(tp).epsilon(0.5));
}

TEST_CASE("owning a mixed fleet or disaggregated pools: each card at its own price and power", "[analysis][ownership]") {
  const char* base = R"({"model": "llama-3.1-8b", "engine": {"max_model_len": 8192},
    "cost": {"electricity_per_kwh": 0.2, "pue": 1.3, "depreciation_years": 3},
    "workload": {"arrival": {"process": "poisson", "rate": 1.0}, "input_tokens": {"dist": "fixed", "value": 512},
                 "output_tokens": {"dist": "fixed", "value": 64}, "num_requests": 200, "warmup_requests": 20,
                 "seed": 5}})";
  const Json a100 = {{"gpu", "a100-80gb-sxm"}, {"replicas", 1}, {"price_per_gpu_hour", 1.8}, {"purchase_price_per_gpu", 15000}};
  const Json r4090 = {{"gpu", "rtx4090-24gb"}, {"replicas", 2}, {"price_per_gpu_hour", 0.4}, {"purchase_price_per_gpu", 1600}};
  auto resolve = [](const Json& j) { return spec::resolve(spec::scenario_from_json(JsonView(j, "")), spec::Catalog::builtin()); };
  // By hand: each part's GPUs × its owned hour at the busy fraction the run measured for it.
  auto by_hand = [](const std::vector<std::pair<const spec::ResolvedScenario*, double>>& parts) {
    double hourly = 0;
    for (const auto& [m, busy] : parts) hourly += m->scenario.hardware.gpus_total() * analysis::owned_gpu_hour(*m, busy)->total();
    return hourly;
  };

  Json fleet = Json::parse(base);
  fleet["hardware"] = {{"router", "round_robin"}, {"fleet", Json::array({a100, r4090})}};
  const auto fs = resolve(fleet);
  const auto row = analysis::evaluate_row(fs);
  INFO(row.reason);
  REQUIRE(row.fits);
  REQUIRE(row.owned_monthly_cost);  // it was "not priced" (the fleet had no single purchase price)
  // Each member's energy at its own busy fraction: round robin gives each replica a third of the requests, and a
  // 4090 (1008 GB/s) takes about twice an A100's (2039 GB/s) time over one, so the 4090s run more of the time.
  const auto& members = row.summary->fleet_pools;
  REQUIRE(members.size() == 2);
  const double busy_a100 = members[0].busy_fraction, busy_4090 = members[1].busy_fraction;
  CHECK(busy_4090 > 1.4 * busy_a100);
  const double hours = fs.scenario.cost.hours_per_month;
  CHECK(*row.owned_monthly_cost == Approx(by_hand({{&fs.fleet[0], busy_a100}, {&fs.fleet[1], busy_4090}}) * hours));
  CHECK(*row.owned_cost_per_gpu_hour == Approx(*row.owned_monthly_cost / hours / 3));
  // Break-even per GPU over the mix: the fleet's purchase over what owning saves each month against renting it.
  const double running = 1 * analysis::owned_gpu_hour(fs.fleet[0], busy_a100)->running() +
                         2 * analysis::owned_gpu_hour(fs.fleet[1], busy_4090)->running();
  REQUIRE(row.break_even_months);
  CHECK(*row.break_even_months == Approx((15000 + 2 * 1600) / ((1.8 + 2 * 0.4 - running) * hours)));

  Json disagg = Json::parse(base);
  disagg["disaggregation"] = {{"prefill", a100}, {"decode", r4090}, {"link", {{"kind", "ethernet"}, {"bandwidth_gbps", 100}}}};
  const auto ds = resolve(disagg);
  const auto drow = analysis::evaluate_row(ds);
  REQUIRE(drow.fits);
  REQUIRE(drow.owned_monthly_cost);  // it was "not priced for disaggregated pools"
  const auto& pools = drow.summary->disaggregation->pools;
  CHECK(pools[0].busy_fraction != Approx(pools[1].busy_fraction));  // each pool's energy at its own busy share
  CHECK(*drow.owned_monthly_cost ==
        Approx(by_hand({{&ds.disagg_pools[0], pools[0].busy_fraction}, {&ds.disagg_pools[1], pools[1].busy_fraction}}) * hours));
}
