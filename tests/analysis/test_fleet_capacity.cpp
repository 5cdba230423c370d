// A heterogeneous fleet's capacity (issue 16's acceptance): under a speed-aware router at least the sum of its
// members' capacities measured alone; under round robin it can be less (the slow card saturates at half the load).
#include <catch2/catch.hpp>

#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/cost.hpp"
#include "scenarios.hpp"

using namespace llmsim;

namespace {

Json pool(const std::string& gpu, double price) { return Json{{"gpu", gpu}, {"replicas", 1}, {"price_per_gpu_hour", price}}; }

double capacity(const Json& j) {
  analysis::CapacityOptions o;
  o.num_requests = 500;
  o.warmup_requests = 50;
  o.replications = 3;
  const auto c = analysis::find_capacity(test::resolve_json(j), o);
  REQUIRE(c.found);
  return c.max_qps;
}

}  // namespace

TEST_CASE("a 4090 + A100 fleet: speed-aware routing carries the sum of the parts, round robin much less", "[fleet]") {
  const Json a100 = [] {
    Json j = test::chat_json("a100-80gb-sxm");
    return j;
  }();
  const Json rtx = test::chat_json("rtx4090-24gb");
  const double alone = capacity(rtx) + capacity(a100);
  auto fleet = [&](const char* router) {
    Json j = test::chat_json();
    j["hardware"] = {{"router", router}, {"fleet", Json::array({pool("rtx4090-24gb", 0.4), pool("a100-80gb-sxm", 1.8)})}};
    return j;
  };
  // Robustness: each capacity is the median of 3 seeds bisected to 3%; pooling two servers behind one queue only
  // adds capacity (a request waits for whichever is free), so the fleet's is compared with a 10% allowance for the
  // search's noise rather than exactly.
  CHECK(capacity(fleet("shortest_expected_delay")) >= 0.9 * alone);
  // Weighted least-outstanding splits by each member's decode tokens/s at full batch (Simulation::set_router_speeds),
  // not by its capacity within the SLO, which prefill speed also sets; where the two ratios differ between the cards
  // it loads one member early. Since the GEMM wave term (perf/gemm_tiles) moved the 4090's prefill against the A100's,
  // it carries 0.898 of the sum here (16.65 of 18.55 req/s; the capacities are bisected values, not noise), so it is
  // held to 0.85 and to beating round robin, while shortest expected delay, which prices each request, keeps 0.9.
  const double wlo = capacity(fleet("weighted_least_outstanding"));
  CHECK(wlo >= 0.85 * alone);
  // Round robin gives each card half the load: the 4090 saturates first, at about 2 × its own capacity.
  const double rr = capacity(fleet("round_robin"));
  CHECK(rr < 0.85 * alone);
  CHECK(rr < 2.3 * capacity(rtx));
  CHECK(wlo > rr);
  // The bill: every member's GPU-hours at its own price.
  const auto rs = test::resolve_json(fleet("round_robin"));
  CHECK(analysis::hourly_cost(rs) == analysis::hourly_cost(0.4, 1, rs.scenario.cost) + analysis::hourly_cost(1.8, 1, rs.scenario.cost));
}
