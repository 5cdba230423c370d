// Decode runs (docs/engine.md, decode_run.cpp): a replica's decode-only steps between an admission and a completion
// are simulated without an event each. They must be invisible: the same summary, bit for bit, and the same request
// records as the engine with an event per step — over the example scenarios and the mechanisms that interrupt a run
// (arrivals, client timeouts, failures, a horizon, an early stop, the window's start).
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "engine_test_util.hpp"
#include "llmsim/engine/simulator.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

struct Pair {
  engine::SimulationResult with, without;
};

Pair both(const spec::ResolvedScenario& rs, engine::SimulationOptions opt = {}) {
  opt.record_requests = true;
  opt.decode_runs = true;
  Pair p{engine::simulate(rs, opt), {}};
  opt.decode_runs = false;
  p.without = engine::simulate(rs, opt);
  return p;
}

/// The two runs agree on every summary field (their JSON, doubles printed exactly) and every request record.
void check_same(const Pair& p, const std::string& what) {
  INFO(what);
  const std::string a = metrics::to_json(p.with.summary).dump(), b = metrics::to_json(p.without.summary).dump();
  CHECK(a == b);
  REQUIRE(p.with.requests.size() == p.without.requests.size());
  std::size_t differ = 0;
  for (std::size_t k = 0; k < p.with.requests.size(); ++k) {
    const auto& x = p.with.requests[k];
    const auto& y = p.without.requests[k];
    differ += x.id != y.id || x.replica != y.replica || x.arrival_s != y.arrival_s || x.admitted_s != y.admitted_s ||
              x.first_token_s != y.first_token_s || x.finish_s != y.finish_s || x.preemptions != y.preemptions;
  }
  CHECK(differ == 0);
  CHECK(p.with.kv_blocks_in_use_at_end == p.without.kv_blocks_in_use_at_end);
}

Json example(const std::string& name) {
  std::ifstream in(std::string(LLMSIM_SOURCE_DIR) + "/examples/scenarios/" + name);
  REQUIRE(in.good());
  return Json::parse(in);
}

Json chat(double rate, int n, int replicas = 1) {
  Json j = llmsim::test::scenario({{"arrival", {{"process", "poisson"}, {"rate", rate}}},
                                   {"input_tokens", {{"dist", "lognormal"}, {"mean", 512}, {"sigma", 0.8}}},
                                   {"output_tokens", {{"dist", "lognormal"}, {"mean", 200}, {"sigma", 0.8}}},
                                   {"num_requests", n},
                                   {"warmup_requests", n / 10}});
  j["hardware"]["replicas"] = replicas;
  j["slo"] = {{"ttft_ms", {{"p95", 2000}}}, {"tpot_ms", {{"p95", 100}}}};
  return j;
}

}  // namespace

TEST_CASE("decode runs give the event-per-step engine's bits: example scenarios", "[decode_runs]") {
  for (const char* name : {"chat-8b.json", "spike-8b.json", "offline-sharegpt-8b.json", "fleet-4090-a100.json"}) {
    Json j = example(name);
    if (j["workload"].contains("num_requests") && j["workload"]["num_requests"].get<double>() > 4000)
      j["workload"]["num_requests"] = 4000;
    check_same(both(make(j)), name);
  }
}

TEST_CASE("decode runs give the same bits under load, with preemptions, on a fleet and in a day", "[decode_runs]") {
  // Near saturation on one small-KV replica: runs end on KV growth and preemptions.
  Json tight = chat(14, 3000);
  tight["engine"]["gpu_memory_utilization"] = 0.25;
  const auto t = both(make(tight));
  CHECK(t.with.summary.preemptions > 0);  // the case is not vacuous
  check_same(t, "tight KV");
  check_same(both(make(chat(30, 4000, 3))), "three replicas, least outstanding");
  Json rr = chat(30, 4000, 3);
  rr["hardware"]["router"] = "round_robin";
  check_same(both(make(rr)), "round robin");
  Json day = example("month-autoscale.json");  // a daily curve with an autoscaler: cold starts, drains
  day["workload"]["arrival"]["rate"] = 40;
  day["workload"]["num_requests"] = 30000;
  const auto d = both(make(day));
  CHECK(d.with.summary.fleet.scale_ups > 0);
  check_same(d, "autoscaled day");
  // SGLang's scheduler: prefill-only steps between the runs, retraction at the KV edge.
  Json sg = chat(14, 3000);
  sg["engine"]["runtime"] = "sglang==0.4.9";
  sg["engine"]["gpu_memory_utilization"] = 0.25;
  const auto g = both(make(sg));
  CHECK(g.with.summary.preemptions > 0);
  check_same(g, "SGLang, tight KV");
  Json sg3 = chat(30, 4000, 3);
  sg3["engine"]["runtime"] = "sglang";
  check_same(both(make(sg3)), "SGLang, three replicas");
}

TEST_CASE("decode runs give the same bits when something interrupts them", "[decode_runs]") {
  // Client timeouts cancel requests mid-run; a failure evicts a replica mid-run (re-queued, then lost).
  Json to = chat(16, 3000);
  to["workload"]["timeout_s"] = 3;
  const auto a = both(make(to));
  CHECK(a.with.summary.timed_out_requests > 0);
  check_same(a, "timeouts");
  for (const char* mode : {"requeue", "fail"}) {
    Json f = chat(20, 3000, 2);
    f["failures"] = {{"outages", {{40.0123, 20, 0}}}, {"on_failure", mode}};
    const auto p = both(make(f));
    CHECK(p.with.summary.fleet.failures == 1);
    check_same(p, std::string("failure, ") + mode);
  }
  Json mt = chat(20, 3000, 2);
  mt["failures"] = {{"mtbf_h", 0.02}, {"mttr_h", 0.003}};
  check_same(both(make(mt)), "random failures");
  // A horizon and the capacity search's early stop end the run with runs under way.
  Json h = chat(12, 3000);
  h["workload"]["horizon_s"] = 77.7;
  const auto hp = both(make(h));
  CHECK_FALSE(hp.with.summary.complete);
  check_same(hp, "horizon");
  engine::SimulationOptions stop;
  stop.stop_when_unstable = true;
  const auto sp = both(make(chat(60, 3000)), stop);
  CHECK(sp.with.summary.unstable);
  check_same(sp, "early stop");
}

TEST_CASE("decode runs give the same bits with sessions whose histories the cache evicts", "[decode_runs]") {
  // Conversations on a 24 GB card: the cache is full of released histories, so a run's KV growth evicts them (a
  // catch-up allocates its steps' growth at once, which must evict the same blocks as step by step), and later turns
  // find part of their history gone. Two replicas with session affinity, and one with several system prompts.
  Json j = example("multiturn-chat-8b.json");
  j["workload"]["num_requests"] = 2000;
  j["workload"]["warmup_requests"] = 200;
  const auto one = both(make(j));
  REQUIRE(one.with.summary.sessions);
  CHECK(one.with.summary.sessions->prefix_hit_rate > 0.3);  // histories hit...
  CHECK(one.with.summary.sessions->prefix_hit_rate < 0.95);  // ...and some were evicted
  CHECK(one.with.events < one.without.events);  // runs were taken
  check_same(one, "sessions, one 4090");
  j["hardware"]["replicas"] = 2;
  j["workload"]["arrival"]["rate"] = 0.6;
  check_same(both(make(j)), "sessions, two replicas, affinity");
  j["hardware"]["replicas"] = 1;
  j["workload"]["arrival"]["rate"] = 0.4;
  j["workload"]["sessions"]["system_prompts"] = 5;
  check_same(both(make(j)), "sessions, five system prompts");
}

TEST_CASE("decode runs take most of a busy replica's steps off the event queue", "[decode_runs]") {
  const auto p = both(make(chat(5, 3000)));
  REQUIRE(p.with.summary.iterations == p.without.summary.iterations);
  INFO("iterations " << p.with.summary.iterations << ", events " << p.with.events << " with runs, " << p.without.events
                     << " without");
  // Without runs every step is an event (plus arrivals); with them well under half the steps remain events.
  CHECK(p.without.events > p.with.summary.iterations);
  CHECK(p.with.events < p.without.events / 2);
  // Iteration records watch every step: runs are off, and the summary is the same.
  engine::SimulationOptions opt;
  opt.record_iterations = true;
  const auto recorded = engine::simulate(make(chat(5, 3000)), opt);
  CHECK(static_cast<std::int64_t>(recorded.iterations.size()) == recorded.summary.iterations);
  CHECK(metrics::to_json(recorded.summary).dump() == metrics::to_json(p.with.summary).dump());
}
