// Heterogeneous fleets (hardware.fleet): pools of different cards behind one router, each pool with its own memory
// plan and cost model; the speed-aware routers send the faster card more of the load.
#include <catch2/catch.hpp>

#include "engine_test_util.hpp"
#include "llmsim/engine/replica_speed.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/perf/cost_model.hpp"

using namespace llmsim;
using Catch::Contains;

namespace {

Json fleet_json(const std::string& router, double rate = 6.0) {
  Json j = test::scenario({{"arrival", {{"process", "poisson"}, {"rate", rate}}},
                           {"input_tokens", {{"dist", "fixed"}, {"value", 600}}},
                           {"output_tokens", {{"dist", "fixed"}, {"value", 150}}},
                           {"num_requests", 600},
                           {"warmup_requests", 60},
                           {"seed", 3}});
  j["hardware"] = {{"router", router},
                   {"fleet", Json::array({Json{{"gpu", "rtx4090-24gb"}, {"replicas", 1}, {"price_per_gpu_hour", 0.4}},
                                          Json{{"gpu", "a100-80gb-sxm"}, {"replicas", 1}, {"price_per_gpu_hour", 1.8}}})}};
  return j;
}

// Requests served by each deployment replica (group 0 = the 4090, 1 = the A100).
std::pair<int, int> served(const Json& j) {
  engine::SimulationOptions o;
  o.record_requests = true;
  const auto r = engine::simulate(test::make(j), o);
  REQUIRE(r.summary.fits);
  int a = 0, b = 0;
  for (const auto& q : r.requests) (q.replica == 0 ? a : b) += 1;
  return {a, b};
}

metrics::Summary fleet_summary(const Json& j) {
  const auto r = engine::simulate(test::make(j), {});
  REQUIRE(r.summary.fits);
  return r.summary;
}

// The round-robin 4090 + A100 fleet at `rate`, listed 4090 first, then A100 first.
std::pair<metrics::Summary, metrics::Summary> both_orders(double rate) {
  Json a = fleet_json("round_robin", rate);
  Json b = a;
  std::swap(b["hardware"]["fleet"][0], b["hardware"]["fleet"][1]);
  return {fleet_summary(a), fleet_summary(b)};
}

}  // namespace

TEST_CASE("a fleet's speed-aware routers send the faster card more requests; round robin splits them evenly", "[fleet]") {
  const auto [rr4090, rr_a100] = served(fleet_json("round_robin"));
  CHECK(std::abs(rr4090 - rr_a100) <= 1);
  for (const char* router : {"weighted_least_outstanding", "shortest_expected_delay"}) {
    INFO(router);
    const auto [s4090, s_a100] = served(fleet_json(router));
    // The A100 decodes ~2x as fast (2039 vs 1008 GB/s for 16 GB of weights): it takes well over half.
    CHECK(s_a100 > 1.3 * s4090);
  }
}

TEST_CASE("replica_speed: the A100 outruns the 4090 in every estimate, and the bound is above the estimate", "[fleet]") {
  const auto a = test::make(test::scenario({}, {}, "a100-80gb-sxm"));
  const auto b = test::make(test::scenario({}, {}, "rtx4090-24gb"));
  const auto len = engine::mean_lengths(a.scenario.workload);
  CHECK(len.input == 1150);
  CHECK(len.output == 210);
  auto speed = [&](const spec::ResolvedScenario& s) {
    const auto plan = memory::plan_memory(s.model, s.quant, s.gpu, s.scenario.hardware.parallel, s.scenario.engine,
                                          s.max_model_len);
    return engine::replica_speed(perf::make_cost_model(s), plan, s.scenario.engine, len);
  };
  const auto fa = speed(a), fb = speed(b);
  CHECK(fa.decode_tokens_per_s > 1.5 * fb.decode_tokens_per_s);
  CHECK(fa.requests_per_s > fb.requests_per_s);
  CHECK(fa.requests_per_s_bound > fa.requests_per_s);
  CHECK(fb.requests_per_s_bound > fb.requests_per_s);
}

TEST_CASE("a fleet of one pool runs exactly as the same hardware written plainly", "[fleet]") {
  Json plain = fleet_json("least_outstanding", 3.0);
  plain["hardware"] = {{"gpu", "a100-80gb-sxm"}, {"replicas", 2}, {"price_per_gpu_hour", 1.8}};
  Json fleet = fleet_json("least_outstanding", 3.0);
  fleet["hardware"]["fleet"] = Json::array({Json{{"gpu", "a100-80gb-sxm"}, {"replicas", 2}, {"price_per_gpu_hour", 1.8}}});
  const auto a = engine::simulate(test::make(plain)).summary;
  const auto b = engine::simulate(test::make(fleet)).summary;
  CHECK(a.ttft_ms.p95 == b.ttft_ms.p95);
  CHECK(a.tpot_ms.p95 == b.tpot_ms.p95);
  CHECK(a.iterations == b.iterations);
}

TEST_CASE("a fleet member's engine overrides apply to that member only", "[fleet]") {
  Json j = fleet_json("round_robin", 2.0);
  j["hardware"]["fleet"][1]["engine"] = {{"max_num_seqs", 7}};
  const auto rs = test::make(j);
  REQUIRE(rs.fleet.size() == 2);
  CHECK(rs.fleet[1].scenario.engine.max_num_seqs == 7);
  CHECK(rs.fleet[0].scenario.engine.max_num_seqs != 7);
  CHECK(spec::total_gpus(rs) == 2);
  // The GPU-weighted mean price: (0.4 + 1.8) / 2.
  CHECK(rs.price_per_gpu_hour == 1.1);
}

TEST_CASE("bad fleets name hardware.fleet[i]", "[fleet]") {
  Json empty = fleet_json("round_robin");
  empty["hardware"]["fleet"] = Json::array();
  CHECK_THROWS_WITH(test::make(empty), Contains("hardware.fleet"));
  Json bad_gpu = fleet_json("round_robin");
  bad_gpu["hardware"]["fleet"][1]["gpu"] = "a200-nonsense";
  CHECK_THROWS_WITH(test::make(bad_gpu), Contains("hardware.fleet[1]"));
  Json bad_knob = fleet_json("round_robin");
  bad_knob["hardware"]["fleet"][0]["engine"] = {{"max_num_seqs", -3}};
  CHECK_THROWS_WITH(test::make(bad_knob), Contains("hardware.fleet[0]"));
  Json mixed = fleet_json("round_robin");
  mixed["hardware"]["gpu"] = "a100-80gb-sxm";
  CHECK_THROWS_AS(test::make(mixed), ConfigError);
  // llama-3.1-70b in fp16 (140 GB) cannot fit one 4090: the run says which member, and why.
  Json big = fleet_json("round_robin");
  big["model"] = "llama-3.1-70b";
  big["hardware"]["fleet"][1]["gpu"] = "8xa100-80gb-sxm";
  const auto r = engine::simulate(test::make(big));
  CHECK_FALSE(r.summary.fits);
  CHECK_THAT(r.summary.reason, Contains("hardware.fleet[0]"));
}

TEST_CASE("a fleet member without a card, or with an unknown one, is named with its field", "[fleet]") {
  // A member that names no card ran on the Deployment's default card, an A100 nobody asked for.
  Json missing = fleet_json("round_robin");
  missing["hardware"]["fleet"][1].erase("gpu");
  CHECK_THROWS_WITH(test::make(missing), Contains("hardware.fleet[1].gpu: required") && Contains("llmsim catalog gpus"));
  // A misspelt card: the member's field by its place in the file, and the close names.
  Json typo = fleet_json("round_robin");
  typo["hardware"]["fleet"][1]["gpu"] = "a100-80gb-sxn";
  CHECK_THROWS_WITH(test::make(typo), Contains("hardware.fleet[1].gpu: unknown GPU 'a100-80gb-sxn'") &&
                                          Contains("did you mean 'a100-80gb-sxm'"));
  // So is the card of a counted option, and a member's other fields (its tp).
  Json counted = fleet_json("round_robin");
  counted["hardware"]["fleet"][0]["gpu"] = "2xrtx4090-24gx";
  CHECK_THROWS_WITH(test::make(counted), Contains("hardware.fleet[0].gpu") && Contains("did you mean 'rtx4090-24gb'"));
  Json tp = fleet_json("round_robin");
  tp["hardware"]["fleet"][0]["tp"] = 3;  // 32 heads do not split over 3 GPUs
  CHECK_THROWS_WITH(test::make(tp), Contains("hardware.fleet[0].tp"));
}

TEST_CASE("a fleet round-trips through its JSON", "[fleet]") {
  const auto s = spec::scenario_from_json(JsonView(fleet_json("shortest_expected_delay"), ""));
  const auto back = spec::scenario_from_json(JsonView(spec::to_json(s), ""));
  REQUIRE(back.hardware.fleet.size() == 2);
  CHECK(back.hardware.fleet[0].hardware.gpu == "rtx4090-24gb");
  CHECK(back.hardware.router == spec::RouterPolicy::shortest_expected_delay);
}

TEST_CASE("a fleet's MFU, MBU and busy fraction count each member's work against its own card", "[fleet]") {
  // The same two cards listed in either order carry the same work under round robin (requests alternate), so the
  // fleet's utilisation must not depend on which card is listed first (it once used the first member's peaks).
  const auto [sa, sb] = both_orders(0.5);
  CHECK(sa.mbu == Approx(sb.mbu).epsilon(0.05));
  CHECK(sa.mfu == Approx(sb.mfu).epsilon(0.05));
  CHECK(sa.busy_fraction == Approx(sb.busy_fraction).epsilon(0.05));
  CHECK(sa.busy_fraction < 0.9);  // 0.5 req/s on two replicas: neither is busy all the time
  // A fleet of two identical members is the homogeneous deployment of two replicas: the same figures.
  const Json a = fleet_json("round_robin", 0.5);
  Json same = a;
  same["hardware"]["fleet"][0]["gpu"] = "a100-80gb-sxm";
  Json homo = a;
  homo["hardware"] = {{"router", "round_robin"}, {"gpu", "a100-80gb-sxm"}, {"replicas", 2}, {"price_per_gpu_hour", 1.8}};
  const auto sf = fleet_summary(same), sh = fleet_summary(homo);
  CHECK(sf.mbu == Approx(sh.mbu).epsilon(1e-9));
  CHECK(sf.mfu == Approx(sh.mfu).epsilon(1e-9));
  CHECK(sf.busy_fraction == Approx(sh.busy_fraction).epsilon(1e-9));
}

TEST_CASE("each fleet member is measured on its own replicas; the fleet's KV room is the smallest member's", "[fleet]") {
  // Round robin gives the 4090 and the A100 the same requests; the 4090 (1008 vs 2039 GB/s) takes about twice as
  // long over each, so it is busy more of the time. Its members' figures recombine into the fleet's.
  const auto [sa, sb] = both_orders(0.5);
  REQUIRE(sa.fleet_pools.size() == 2);
  REQUIRE(sb.fleet_pools.size() == 2);
  const auto& r4090 = sa.fleet_pools[0];
  const auto& a100 = sa.fleet_pools[1];
  CHECK(r4090.role == "fleet");
  CHECK(r4090.gpu == "rtx4090-24gb");
  CHECK(a100.gpu == "a100-80gb-sxm");
  CHECK(r4090.replicas == 1);
  CHECK(r4090.gpus == 1);
  CHECK(r4090.price_per_gpu_hour == 0.4);
  CHECK(r4090.busy_fraction > 1.4 * a100.busy_fraction);
  CHECK(sa.busy_fraction == Approx((r4090.busy_fraction + a100.busy_fraction) / 2).epsilon(1e-9));
  // Each member against its own card's peaks: a share in (0, 1].
  for (const auto& p : sa.fleet_pools) {
    CHECK(p.mbu > 0);
    CHECK(p.mbu <= 1);
    CHECK(p.kv_mean_used_fraction > 0);
  }
  // The KV room: the 4090's (24 GB) far below the A100's (80 GB); the fleet's is the 4090's in either order.
  CHECK(r4090.kv_capacity_tokens < a100.kv_capacity_tokens / 3);
  CHECK(sa.kv.capacity_tokens == r4090.kv_capacity_tokens);
  CHECK(sb.kv.capacity_tokens == r4090.kv_capacity_tokens);
  CHECK(sb.fleet_pools[0].gpu == "a100-80gb-sxm");
  CHECK(sb.fleet_pools[1].busy_fraction == Approx(r4090.busy_fraction).epsilon(0.05));
  // In the result: one entry per member, in the fleet's order; none for a deployment that is not a fleet.
  const Json j = metrics::to_json(sa);
  REQUIRE(j.contains("fleet_pools"));
  CHECK(j["fleet_pools"].size() == 2);
  CHECK(j["fleet_pools"][1]["gpu"] == "a100-80gb-sxm");
  CHECK(j["fleet_pools"][0]["kv_capacity_tokens"] == r4090.kv_capacity_tokens);
  Json homo = fleet_json("round_robin", 0.5);
  homo["hardware"] = {{"gpu", "a100-80gb-sxm"}, {"replicas", 2}, {"price_per_gpu_hour", 1.8}};
  const auto sh = fleet_summary(homo);
  CHECK(sh.fleet_pools.empty());
  CHECK_FALSE(metrics::to_json(sh).contains("fleet_pools"));
}
