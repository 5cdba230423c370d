// The router's power_of_two policy (engine/router.cpp): Ray Serve's default request router draws two distinct
// replicas at random and sends to the one with fewer ongoing requests. Seeded, so a run reproduces; random, so equal
// closed-loop clients fall out of step across replicas, which the deterministic least_outstanding never does.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "llmsim/engine/simulator.hpp"
#include "engine_test_util.hpp"

using namespace llmsim;
using engine::SimulationOptions;
using engine::simulate;
using test::make;
using test::scenario;

namespace {

/// `users` closed-loop clients of fixed-length requests on `replicas` A100s behind `router`.
engine::SimulationResult router_run(const char* router, int replicas, int users, std::uint64_t seed) {
  Json w = {{"arrival", {{"process", "closed"}, {"concurrency", users}}},
            {"input_tokens", {{"dist", "fixed"}, {"value", 1000}}},
            {"output_tokens", {{"dist", "fixed"}, {"value", 100}}},
            {"num_requests", 400}, {"warmup_requests", 0}, {"seed", seed}};
  Json j = scenario(w);
  j["hardware"]["replicas"] = replicas;
  j["hardware"]["router"] = router;
  SimulationOptions opt;
  opt.record_requests = true;
  return simulate(make(j), opt);
}

/// Distinct arrival instants: closed-loop clients in lockstep re-send together, so their arrivals coincide.
std::size_t distinct_arrivals(const engine::SimulationResult& r) {
  std::set<double> t;
  for (const auto& q : r.requests) t.insert(q.arrival_s);
  return t.size();
}

}  // namespace

TEST_CASE("power_of_two: seeded, every replica used, never worse balanced than chance") {
  const auto a = router_run("power_of_two", 4, 16, 7), b = router_run("power_of_two", 4, 16, 7), c = router_run("power_of_two", 4, 16, 8);
  REQUIRE(a.requests.size() == b.requests.size());
  bool same = true;
  for (std::size_t k = 0; k < a.requests.size(); ++k) same = same && a.requests[k].replica == b.requests[k].replica;
  CHECK(same);  // the same seed routes the same way
  bool differs = false;
  for (std::size_t k = 0; k < std::min(a.requests.size(), c.requests.size()); ++k)
    differs = differs || a.requests[k].replica != c.requests[k].replica;
  CHECK(differs);  // another seed draws other pairs
  std::map<int, int> per;
  for (const auto& q : a.requests) per[q.replica]++;
  REQUIRE(per.size() == 4);
  // Two choices keep the load near even: no replica takes more than twice its share of 400.
  for (const auto& [r, n] : per) CHECK(n < 200);
  CHECK(a.summary.completed_requests == 400);
}

TEST_CASE("power_of_two breaks the lockstep of equal closed-loop clients that least_outstanding keeps") {
  // 16 equal clients on 4 replicas: least_outstanding hands each replica 4 that start, finish and re-send together,
  // so the 400 arrivals fall on few instants. Random pairs move clients between replicas at different phases.
  const auto jsq = router_run("least_outstanding", 4, 16, 7), p2 = router_run("power_of_two", 4, 16, 7);
  INFO("distinct arrival instants: least_outstanding " << distinct_arrivals(jsq) << ", power_of_two "
                                                        << distinct_arrivals(p2));
  CHECK(distinct_arrivals(jsq) <= 400 / 4);
  CHECK(distinct_arrivals(p2) > 2 * distinct_arrivals(jsq));
}

TEST_CASE("power_of_two with one replica, and with a fleet whose replicas fail, routes only to ready ones") {
  const auto one = router_run("power_of_two", 1, 4, 3);
  CHECK(one.summary.completed_requests == 400);
  for (const auto& q : one.requests) CHECK(q.replica == 0);
  Json w = {{"arrival", {{"process", "poisson"}, {"rate", 4}}}, {"num_requests", 400}, {"warmup_requests", 0}};
  Json j = scenario(w);
  j["hardware"]["replicas"] = 3;
  j["hardware"]["router"] = "power_of_two";
  j["failures"] = {{"outages", Json::array({Json::array({5.0, 60.0, 1})})}};
  SimulationOptions opt;
  opt.record_requests = true;
  const auto r = simulate(make(j), opt);
  int during = 0;
  for (const auto& q : r.requests)
    if (q.arrival_s > 5.0 && q.arrival_s < 60.0) during += q.replica == 1 ? 1 : 0;
  CHECK(during == 0);  // replica 1 is down from 5 s to 65 s: nothing routed there meanwhile
  CHECK(r.summary.completed_requests + r.summary.failed_requests == 400);
}
