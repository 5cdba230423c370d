// Multi-GPU scaling efficiency as the field guides define it — throughput of N cards ÷ (N × one card's) at the same
// concurrency and SLO — against the guides' worked example and a hand computation from two runs.
#include <catch2/catch.hpp>

#include "llmsim/analysis/compare.hpp"
#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/analysis/scaling.hpp"
#include "llmsim/core/error.hpp"
#include "scenarios.hpp"

using namespace llmsim;

TEST_CASE("the guides' worked example: 80 tok/s on one 4090, 140 on two -> 87.5%", "[analysis][scaling]") {
  CHECK(*analysis::scaling_efficiency(140, 2, 80) == Approx(0.875));
  CHECK(*analysis::scaling_efficiency(110, 2, 80) == Approx(0.6875));  // "only 110 tokens/s: 68.75%"
  CHECK_FALSE(analysis::scaling_efficiency(140, 2, 0));
  CHECK_FALSE(analysis::scaling_efficiency(0, 2, 80));
  CHECK_FALSE(analysis::scaling_efficiency(140, 0, 80));
}

TEST_CASE("a workload as N closed-loop users keeps its lengths and its class mix", "[analysis][scaling]") {
  spec::Workload w;
  w.arrival = spec::PoissonArrivals{3.0};
  const auto one = analysis::closed_loop(w, 12);
  REQUIRE(std::holds_alternative<spec::ClosedLoop>(one.arrival));
  CHECK(std::get<spec::ClosedLoop>(one.arrival).concurrency == 12);
  CHECK(std::get<spec::ClosedLoop>(one.arrival).think_time_s == 0);
  spec::TenantClass a, b;
  a.arrival = spec::PoissonArrivals{3.0};
  b.arrival = spec::PoissonArrivals{1.0};
  w.classes = {a, b};
  const auto two = analysis::closed_loop(w, 8);
  CHECK(std::get<spec::ClosedLoop>(two.classes[0].arrival).concurrency == 6);
  CHECK(std::get<spec::ClosedLoop>(two.classes[1].arrival).concurrency == 2);
  w.classes.clear();
  spec::TraceReplay trace;
  trace.path = "t.csv";
  w.arrival = trace;
  CHECK_THROWS_AS(analysis::closed_loop(w, 4), ConfigError);
}

TEST_CASE("compare's scaling efficiency is the same-concurrency ratio, not the capacity ratio",
          "[analysis][scaling][compare][engine]") {
  // The guides' figure: both deployments carry the same users (those one card carries at its SLO capacity), and the
  // pair's SLO-meeting tokens are compared with twice one card's. capacity_ratio_per_gpu (what compare once called
  // "scale eff") instead puts each at its own capacity, where the pair's larger KV room counts too.
  const Json j = test::chat_json("rtx4090-24gb");
  const spec::Scenario base = spec::scenario_from_json(JsonView(j, ""));
  analysis::CompareOptions o;
  o.gpus = {"rtx4090-24gb", "2xrtx4090-24gb"};
  o.capacity.num_requests = 200;
  o.capacity.warmup_requests = 20;
  o.capacity.replications = 1;
  o.capacity.rel_tol = 0.05;
  o.jobs = 2;
  const auto r = analysis::compare(base, o);
  REQUIRE(r.rows.size() == 2);
  const auto& one = r.rows[0];
  const auto& pair = r.rows[1];
  REQUIRE(pair.scaling_efficiency);
  REQUIRE(pair.scaling_concurrency);
  REQUIRE(pair.capacity_ratio_per_gpu);
  CHECK_FALSE(one.scaling_efficiency);
  // The users: those one card carries at its capacity (Little's law on its run there).
  CHECK(*pair.scaling_concurrency ==
        std::max(1, static_cast<int>(std::lround(one.capacity->at_capacity->mean_in_system))));
  // By hand: both deployments with that many closed-loop users, SLO-meeting output tokens per second.
  auto goodput = [&](const std::string& gpu) {
    Json k = j;
    spec::set_json_path(k, "hardware.gpu", gpu);
    spec::set_json_path(k, "workload.arrival",
                        Json{{"process", "closed"}, {"concurrency", *pair.scaling_concurrency}, {"think_time_s", 0}});
    spec::set_json_path(k, "workload.num_requests", 200);
    spec::set_json_path(k, "workload.warmup_requests", 20);
    return analysis::evaluate(test::resolve_json(k)).summary.goodput_output_tps;
  };
  const double g1 = goodput("rtx4090-24gb"), g2 = goodput("2xrtx4090-24gb");
  CHECK(*pair.scaling_efficiency == Approx(g2 / (2 * g1)).epsilon(1e-9));
  CHECK(*pair.scaling_efficiency < 1.0);  // PCIe without P2P: TP2 never doubles one card at the same load
  CHECK(*pair.scaling_efficiency > 0.4);
  // The old figure is another quantity: each deployment at its own SLO capacity. Which is larger depends on how
  // much more KV room the pair has than one card, so only its definition is checked.
  CHECK(*pair.capacity_ratio_per_gpu ==
        Approx(pair.summary->goodput_output_tps / (2 * one.summary->goodput_output_tps)).epsilon(1e-9));
  const Json doc = analysis::to_json(pair);
  CHECK(doc["scaling_efficiency"].get<double>() == *pair.scaling_efficiency);
  CHECK(doc["capacity_ratio_per_gpu"].get<double>() == *pair.capacity_ratio_per_gpu);
}
