// Behaviour tests of the serving engine (issue 4 acceptance).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "llmsim/core/error.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"
#include "engine_test_util.hpp"

using namespace llmsim;
using engine::SimulationOptions;
using engine::simulate;
using test::make;

namespace {

/// The engine's own timing: requests come in-process (no serving path in front, test_serving_path.cpp).
Json base(const Json& workload, const Json& engine = Json::object()) {
  Json e = {{"policy", "vllm"}, {"max_num_seqs", 256}, {"max_num_batched_tokens", 8192}, {"api_server", false}};
  for (auto it = engine.begin(); it != engine.end(); ++it) e[it.key()] = it.value();
  return Json{{"model", "llama-3.1-8b"}, {"quant", {{"weights", "fp16"}, {"kv_cache", "fp16"}}},
              {"hardware", {{"gpu", "a100-80gb-sxm"}}}, {"engine", e}, {"workload", workload}};
}

/// Little's law on the measured window: time-average in system = throughput × mean E2E.
void check_little(const metrics::Summary& s) {
  REQUIRE_FALSE(s.unstable);  // an unfinished backlog is outside Little's law
  INFO("mean_in_system " << s.mean_in_system << " rps " << s.throughput.requests_per_s << " e2e " << s.e2e_ms.mean);
  REQUIRE(s.completed_requests > 0);
  REQUIRE(s.mean_in_system == Approx(s.throughput.requests_per_s * s.e2e_ms.mean / 1e3).epsilon(1e-6));
}

/// Largest number of requests simultaneously between arrival and finish.
int max_overlap(const std::vector<engine::RequestRecord>& recs) {
  std::vector<std::pair<double, int>> ev;
  for (const auto& r : recs) {
    ev.emplace_back(r.arrival_s, +1);
    ev.emplace_back(r.finish_s, -1);
  }
  std::sort(ev.begin(), ev.end());  // at equal times the departure (-1) sorts first
  int n = 0, m = 0;
  for (const auto& [t, d] : ev) m = std::max(m, n += d);
  return m;
}

}  // namespace

TEST_CASE("a single request: TTFT = queueing + prefill time, TPOT = decode iteration time") {
  const Json w = {{"arrival", {{"process", "constant"}, {"rate", 1.0}}},
                  {"input_tokens", {{"dist", "fixed"}, {"value", 512}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", 64}}},
                  {"num_requests", 1}, {"warmup_requests", 0}};
  const auto rs = make(base(w));
  SimulationOptions opt;
  opt.record_requests = true;
  opt.record_iterations = true;
  const auto res = simulate(rs, opt);
  const auto cost = perf::make_cost_model(rs);
  perf::BatchShape prefill;
  prefill.add_prefill(512, 0, true);
  const double ttft = cost.iteration_time(prefill);
  double decode_sum = 0;
  for (int j = 0; j < 63; ++j) {
    perf::BatchShape d;
    d.add_decode(512 + j);
    decode_sum += cost.iteration_time(d);
  }
  const auto& s = res.summary;
  const double hop = test::in_process_hop_s(rs);  // V1's AsyncLLM -> EngineCore, on the client's stamps only
  REQUIRE(s.completed_requests == 1);
  REQUIRE(s.queue_ms.mean == 0.0);
  REQUIRE(s.ttft_ms.mean == Approx((ttft + hop) * 1e3).epsilon(1e-9));
  REQUIRE(s.tpot_ms.mean == Approx(decode_sum / 63 * 1e3).epsilon(1e-9));
  REQUIRE(s.e2e_ms.mean == Approx((ttft + decode_sum + hop) * 1e3).epsilon(1e-9));
  REQUIRE(s.itl_ms.count == 63);
  REQUIRE(s.iterations == 64);
  REQUIRE(res.iterations.size() == 64);
  REQUIRE(res.iterations[0].prefill_tokens == 512);
  REQUIRE(res.iterations[1].decode_seqs == 1);
  REQUIRE(res.requests.size() == 1);
  REQUIRE(res.requests[0].first_token_s - res.requests[0].arrival_s == Approx(ttft + hop));
  // 512 + 63 tokens in 16-token blocks at the peak.
  REQUIRE(res.iterations.back().kv_blocks_used == (512 + 63 + 15) / 16);
  check_little(s);
}

TEST_CASE("queueing adds to TTFT: two simultaneous prompts under a one-sequence limit") {
  const Json w = {{"arrival", {{"process", "trace"}, {"path", "/tmp/llmsim_two.csv"}}},
                  {"num_requests", 2}, {"warmup_requests", 0}};
  {
    std::ofstream f("/tmp/llmsim_two.csv");
    f << "arrival_time_s,input_tokens,output_tokens\n0,256,4\n0,256,4\n";
  }
  const auto rs = make(base(w, {{"max_num_seqs", 1}}));
  SimulationOptions opt;
  opt.record_requests = true;
  const auto res = simulate(rs, opt);
  REQUIRE(res.requests.size() == 2);
  const auto& second = res.requests[1];
  const auto& first = res.requests[0];
  // Waits for the only slot: the engine's finish, before the first reply's hop back to the caller.
  REQUIRE(second.admitted_s == Approx(first.finish_s - test::in_process_hop_s(rs)));
  const double prefill = first.first_token_s - first.arrival_s;
  REQUIRE(second.first_token_s - second.arrival_s == Approx((second.admitted_s - second.arrival_s) + prefill));
  check_little(res.summary);
}

TEST_CASE("requests arriving at the same instant share the idle replica's first batch") {
  // Four closed-loop users send at t = 0 and again the instant their reply ends: every batch holds all four.
  const Json w = {{"arrival", {{"process", "closed"}, {"concurrency", 4}}},
                  {"input_tokens", {{"dist", "fixed"}, {"value", 512}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", 64}}},
                  {"num_requests", 40}, {"warmup_requests", 0}};
  for (const char* policy : {"static", "vllm", "vllm-v0", "chunked", "sglang"}) {
    INFO(policy);
    SimulationOptions opt;
    opt.record_iterations = true;
    const auto rs = make(base(w, {{"policy", policy}, {"max_num_seqs", 4}}));
    const auto res = simulate(rs, opt);
    REQUIRE(res.summary.completed_requests == 40);
    for (const auto& it : res.iterations) REQUIRE(it.prefill_seqs + it.decode_seqs == 4);
    // Ten rounds of one prefill and 63 decode steps; under vLLM V0's asynchronous output processor one more, in
    // which the engine finds the four stops (docs/engine.md).
    const bool late_stop = perf::first_token_after_next_step(rs.scenario.engine, 1, false);
    REQUIRE(res.iterations.size() == static_cast<std::size_t>(10 * (64 + (late_stop ? 1 : 0))));
  }
}

TEST_CASE("chunked prefill (V1, V0 chunked) lowers P99 ITL against vLLM V0's prefill-first steps") {
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 3.0}}},
                  {"input_tokens", {{"dist", "lognormal"}, {"mean", 3000}, {"sigma", 0.6}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", 200}}},
                  {"num_requests", 1500}, {"warmup_requests", 100}, {"seed", 11}};
  const auto v = simulate(make(base(w, {{"policy", "vllm-v0"}, {"max_num_batched_tokens", 16384}}))).summary;
  const auto c = simulate(make(base(w, {{"policy", "chunked"}, {"max_num_batched_tokens", 512}}))).summary;
  const auto v1 = simulate(make(base(w, {{"policy", "vllm"}, {"max_num_batched_tokens", 2048}}))).summary;
  INFO("vllm-v0 p99 ITL " << v.itl_ms.p99 << " ms, chunked " << c.itl_ms.p99 << " ms, V1 " << v1.itl_ms.p99 << " ms");
  REQUIRE_FALSE(v.unstable);
  REQUIRE_FALSE(c.unstable);
  REQUIRE_FALSE(v1.unstable);
  REQUIRE(c.itl_ms.p99 < 0.7 * v.itl_ms.p99);
  REQUIRE(v1.itl_ms.p99 < 0.7 * v.itl_ms.p99);  // V1 never stalls decodes for a whole prompt
  REQUIRE(v.ttft_ms.p50 < c.ttft_ms.p50);  // prefill-first admits prompts sooner
  check_little(v);
  check_little(c);
  check_little(v1);
}

TEST_CASE("KV exhaustion preempts, and every preempted request still finishes with all its tokens") {
  // V1 preempts by recompute only; swapping is vLLM V0's.
  for (const auto& [policy, mode] : {std::pair{"vllm", "recompute"}, std::pair{"vllm-v0", "swap"}}) {
    DYNAMIC_SECTION("policy " << policy << ", preemption " << mode) {
      const Json w = {{"arrival", {{"process", "closed"}, {"concurrency", 48}}},
                      {"input_tokens", {{"dist", "uniform"}, {"min", 500}, {"max", 1500}}},
                      {"output_tokens", {{"dist", "fixed"}, {"value", 700}}},
                      {"num_requests", 300}, {"warmup_requests", 0}};
      Json j = base(w, {{"policy", policy}, {"preemption", mode}, {"max_num_batched_tokens", 4096},
                        {"max_model_len", 4096}});
      j["hardware"]["gpu"] = "rtx4090-24gb";
      const auto rs = make(j);
      SimulationOptions opt;
      opt.record_requests = true;
      const auto res = simulate(rs, opt);
      const auto& s = res.summary;
      REQUIRE(s.fits);
      INFO("KV capacity " << s.kv.capacity_tokens << " tokens");
      REQUIRE(s.preemptions > 0);
      REQUIRE(s.completed_requests == 300);
      REQUIRE(res.requests.size() == 300);
      int preempted = 0;
      for (const auto& r : res.requests) {
        REQUIRE(r.output_tokens == 700);
        REQUIRE(r.finish_s > r.first_token_s);
        preempted += r.preemptions > 0;
      }
      REQUIRE(preempted > 0);
      REQUIRE(s.kv.peak_used_fraction <= 1.0);
      REQUIRE(s.kv.peak_used_fraction > 0.9);
      check_little(s);
    }
  }
}

TEST_CASE("every policy survives KV exhaustion with either preemption mode") {
  for (const char* policy : {"vllm", "vllm-v0", "chunked", "static", "sglang"})
    for (const char* mode : {"recompute", "swap"}) {
      // V1 and SGLang have no swap path
      if ((std::string(policy) == "vllm" || std::string(policy) == "sglang") && std::string(mode) == "swap") continue;
      const Json w = {{"arrival", {{"process", "closed"}, {"concurrency", 40}}},
                      {"input_tokens", {{"dist", "uniform"}, {"min", 200}, {"max", 2000}}},
                      {"output_tokens", {{"dist", "uniform"}, {"min", 200}, {"max", 1500}}},
                      {"num_requests", 300}, {"warmup_requests", 0}};
      Json j = base(w, {{"policy", policy}, {"preemption", mode}, {"max_num_batched_tokens", 4096},
                        {"max_num_seqs", 128}, {"swap_space_gb", 0.5}, {"max_model_len", 4096}});
      j["hardware"]["gpu"] = "rtx4090-24gb";
      const auto s = simulate(make(j)).summary;
      INFO(policy << " / " << mode << ": " << s.preemptions << " preemptions " << s.reason);
      REQUIRE(s.completed_requests == 300);
      // Static batches are sized by the token budget (about 4 prompts here) and rarely run out of blocks.
      if (std::string(policy) != "static") REQUIRE(s.preemptions > 0);
      check_little(s);
    }
}

TEST_CASE("closed loop with N users never has more than N requests in the system") {
  const Json w = {{"arrival", {{"process", "closed"}, {"concurrency", 8}, {"think_time_s", 0.5}}},
                  {"input_tokens", {{"dist", "lognormal"}, {"mean", 800}, {"sigma", 0.8}}},
                  {"output_tokens", {{"dist", "lognormal"}, {"mean", 150}, {"sigma", 0.8}}},
                  {"num_requests", 400}, {"warmup_requests", 0}};
  SimulationOptions opt;
  opt.record_requests = true;
  const auto res = simulate(make(base(w)), opt);
  REQUIRE(res.summary.completed_requests == 400);
  REQUIRE(max_overlap(res.requests) <= 8);
  REQUIRE(max_overlap(res.requests) >= 2);
  REQUIRE(res.summary.mean_in_system <= 8.0);
  check_little(res.summary);
}

TEST_CASE("same scenario and seed give an identical summary; another seed is consistent") {
  Json w = {{"arrival", {{"process", "poisson"}, {"rate", 6.0}}},
            {"input_tokens", {{"dist", "lognormal"}, {"mean", 1000}, {"sigma", 1.0}}},
            {"output_tokens", {{"dist", "lognormal"}, {"mean", 200}, {"sigma", 0.8}}},
            {"num_requests", 3000}, {"warmup_requests", 200}, {"seed", 1}};
  const auto a = metrics::to_json(simulate(make(base(w))).summary).dump();
  const auto b = metrics::to_json(simulate(make(base(w))).summary).dump();
  REQUIRE(a == b);
  w["seed"] = 2;
  const auto s1 = simulate(make(base(w))).summary;
  const auto c = metrics::to_json(s1).dump();
  REQUIRE(c != a);
  w["seed"] = 1;
  const auto s0 = simulate(make(base(w))).summary;
  REQUIRE(s1.throughput.requests_per_s == Approx(s0.throughput.requests_per_s).epsilon(0.08));
  REQUIRE(s1.throughput.output_tokens_per_s == Approx(s0.throughput.output_tokens_per_s).epsilon(0.1));
  REQUIRE(s1.e2e_ms.mean == Approx(s0.e2e_ms.mean).epsilon(0.25));
  check_little(s0);
  check_little(s1);
}

TEST_CASE("synthetic service reproduces M/M/1, M/D/1 and M/M/c") {
  auto run = [](const std::string& kind, double lambda, double mean_s, int servers) {
    Json j = base({{"arrival", {{"process", "poisson"}, {"rate", lambda}}},
                   {"input_tokens", {{"dist", "fixed"}, {"value", 10}}},
                   {"output_tokens", {{"dist", "fixed"}, {"value", 10}}},
                   {"num_requests", 200000}, {"warmup_requests", 2000}, {"seed", 3}},
                  {{"synthetic_service", {{"kind", kind}, {"mean_s", mean_s}}}});
    j["hardware"]["replicas"] = servers;
    return simulate(make(j)).summary;
  };
  // M/M/1, rho = 0.8: E[T] = 1/(mu - lambda) = 0.5 s.
  const auto mm1 = run("exponential", 8.0, 0.1, 1);
  REQUIRE(mm1.e2e_ms.mean == Approx(500).epsilon(0.06));
  REQUIRE(mm1.ttft_ms.mean == Approx(mm1.e2e_ms.mean));
  REQUIRE(mm1.mean_in_system == Approx(4.0).epsilon(0.06));  // L = rho/(1-rho)
  // M/M/1 sojourn is exponential: P95 = ln(20) × 0.5 s.
  REQUIRE(mm1.e2e_ms.p95 == Approx(std::log(20.0) * 500).epsilon(0.06));
  check_little(mm1);
  // M/D/1: W = 1/mu + rho/(2 mu (1 - rho)) = 0.1 + 0.2 = 0.3 s.
  const auto md1 = run("fixed", 8.0, 0.1, 1);
  REQUIRE(md1.e2e_ms.mean == Approx(300).epsilon(0.05));
  check_little(md1);
  // M/M/2 at rho = 0.8 (Erlang C): W = 1/mu + C/(c mu - lambda).
  const double a = 1.6, c = 2;
  const double tail = a * a / 2 / (1 - a / c);
  const double erlang_c = tail / (1 + a + tail);
  const auto mm2 = run("exponential", 16.0, 0.1, 2);
  REQUIRE(mm2.e2e_ms.mean == Approx((0.1 + erlang_c / (20 - 16)) * 1e3).epsilon(0.06));
  check_little(mm2);
}

TEST_CASE("overload is flagged unstable, and a finite run still serves every request") {
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 500.0}}},
                  {"input_tokens", {{"dist", "fixed"}, {"value", 1000}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", 500}}},
                  {"num_requests", 3000}, {"warmup_requests", 0}};
  const auto s = simulate(make(base(w))).summary;
  REQUIRE(s.unstable);
  REQUIRE(s.complete);
  REQUIRE(s.completed_requests == 3000);
  REQUIRE_FALSE(s.slo_met);
  REQUIRE_THAT(s.reason, Catch::Contains("unstable") && Catch::Contains("saturation throughput"));
  // The capacity search's shortcut stops as soon as the run is known to be unstable.
  SimulationOptions stop;
  stop.stop_when_unstable = true;
  const auto big = base({{"arrival", {{"process", "poisson"}, {"rate", 500.0}}},
                         {"input_tokens", {{"dist", "fixed"}, {"value", 1000}}},
                         {"output_tokens", {{"dist", "fixed"}, {"value", 500}}},
                         {"num_requests", 1000000}, {"warmup_requests", 0}});
  const auto early = simulate(make(big), stop).summary;
  REQUIRE(early.unstable);
  REQUIRE_FALSE(early.complete);
  REQUIRE(early.iterations < 20000);
  Json syn = base({{"arrival", {{"process", "poisson"}, {"rate", 20.0}}}, {"num_requests", 1000000}},
                  {{"synthetic_service", {{"kind", "fixed"}, {"mean_s", 0.1}}}});
  REQUIRE(simulate(make(syn), stop).summary.unstable);
  // Mild overload that never reaches the queue bound is caught by the growth check.
  Json mild = base({{"arrival", {{"process", "poisson"}, {"rate", 13.0}}}, {"num_requests", 4000}, {"warmup_requests", 0}},
                   {{"synthetic_service", {{"kind", "fixed"}, {"mean_s", 0.1}}}});
  const auto m = simulate(make(mild)).summary;
  REQUIRE(m.unstable);
  REQUIRE(m.complete);
  REQUIRE(m.completed_requests == 4000);
  Json fine = base({{"arrival", {{"process", "poisson"}, {"rate", 8.0}}}, {"num_requests", 4000}, {"warmup_requests", 0}},
                   {{"synthetic_service", {{"kind", "fixed"}, {"mean_s", 0.1}}}});
  REQUIRE_FALSE(simulate(make(fine)).summary.unstable);
}

TEST_CASE("a mild overload that grows the queue steadily is caught as unstable") {
  // Two classes on a 4090: offered 2.3 req/s, a little above what it serves (2 req/s was, before GeForce GEMMs were
  // priced at their measured ~100 % of spec); the number in system climbs steadily.
  auto cls = [](const char* name, double rate, const Json& in, const Json& out) {
    return Json{{"name", name}, {"arrival", {{"process", "poisson"}, {"rate", rate}}}, {"input_tokens", in}, {"output_tokens", out}};
  };
  const Json w = {{"classes", {cls("chat", 1.725, {{"dist", "lognormal"}, {"mean", 800}, {"sigma", 0.8}},
                                   {{"dist", "lognormal"}, {"mean", 200}, {"sigma", 0.8}}),
                               cls("rag", 0.575, {{"dist", "fixed"}, {"value", 6000}}, {{"dist", "fixed"}, {"value", 300}})}},
                  {"num_requests", 2000}, {"warmup_requests", 100}, {"seed", 1}};
  Json j = base(w, {{"max_model_len", 8192}});
  j["hardware"]["gpu"] = "rtx4090-24gb";
  const auto s = simulate(make(j)).summary;
  REQUIRE(s.unstable);
  REQUIRE_THAT(s.reason, Catch::Contains("grew by"));
  // Half the load is comfortably stable and not flagged.
  j["workload"]["classes"][0]["arrival"]["rate"] = 0.75;
  j["workload"]["classes"][1]["arrival"]["rate"] = 0.25;
  REQUIRE_FALSE(simulate(make(j)).summary.unstable);
}

TEST_CASE("CPU weight offload runs a 70B model on a 4090 at the pace of PCIe") {
  const Json w = {{"arrival", {{"process", "closed"}, {"concurrency", 1}}},
                  {"input_tokens", {{"dist", "fixed"}, {"value", 512}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", 16}}},
                  {"num_requests", 2}, {"warmup_requests", 0}};
  Json j = base(w, {{"max_num_seqs", 16}, {"max_model_len", 4096}, {"max_num_batched_tokens", 4096}});
  j["model"] = "llama-3.1-70b";
  j["quant"]["weights"] = "awq-int4";
  j["hardware"]["gpu"] = "rtx4090-24gb";
  REQUIRE_FALSE(simulate(make(j)).summary.fits);
  j["engine"]["cpu_offload_gb"] = 20;
  const auto s = simulate(make(j)).summary;
  REQUIRE(s.fits);
  REQUIRE(s.completed_requests == 2);
  // Every decode step copies 20 GiB over PCIe 4.0 x16: well over half a second per token.
  REQUIRE(s.tpot_ms.mean > 20 * 1.073741824 / 32.0 * 1e3);
  REQUIRE(s.tpot_ms.mean < 20 * 1.073741824 / 20.0 * 1e3 + 100);
}

TEST_CASE("a model that does not fit is reported, not thrown") {
  Json j = base({{"num_requests", 10}, {"warmup_requests", 0}});
  j["model"] = "llama-3.1-70b";
  j["hardware"]["gpu"] = "rtx4090-24gb";
  const auto s = simulate(make(j)).summary;
  REQUIRE_FALSE(s.fits);
  REQUIRE_FALSE(s.reason.empty());
  REQUIRE(s.completed_requests == 0);
  REQUIRE(metrics::to_json(s)["fits"] == false);
}

TEST_CASE("static batching, replicas and routers, prefix caching, horizon") {
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 4.0}}},
                  {"input_tokens", {{"dist", "lognormal"}, {"mean", 600}, {"sigma", 0.6}}},
                  {"output_tokens", {{"dist", "uniform"}, {"min", 20}, {"max", 300}}},
                  {"num_requests", 1500}, {"warmup_requests", 100}};
  const auto cont = simulate(make(base(w))).summary;
  const auto stat =
      simulate(make(base(w, {{"policy", "static"}, {"max_num_seqs", 32}, {"max_num_batched_tokens", 32768}}))).summary;
  check_little(cont);
  check_little(stat);
  REQUIRE(stat.completed_requests == 1400);
  // A batch waits for its longest request: worse TTFT than continuous batching.
  REQUIRE(stat.ttft_ms.mean > cont.ttft_ms.mean);

  for (const char* router : {"round_robin", "least_outstanding", "least_kv", "power_of_two"}) {
    Json j = base(w);
    j["hardware"]["replicas"] = 2;
    j["hardware"]["router"] = router;
    SimulationOptions opt;
    opt.record_requests = true;
    const auto res = simulate(make(j), opt);
    int on1 = 0;
    for (const auto& r : res.requests) on1 += r.replica == 1;
    INFO(router);
    REQUIRE(on1 > 500);
    REQUIRE(on1 < 1000);
    REQUIRE(res.summary.e2e_ms.mean < cont.e2e_ms.mean);
    check_little(res.summary);
  }

  Json shared = w;
  shared["prefix_tokens"] = 1024;
  shared["prefix_groups"] = 2;
  shared["input_tokens"] = {{"dist", "uniform"}, {"min", 1100}, {"max", 1300}};
  const auto nocache = simulate(make(base(shared, {{"enable_prefix_caching", false}}))).summary;
  const auto cache = simulate(make(base(shared, {{"enable_prefix_caching", true}}))).summary;
  REQUIRE(cache.ttft_ms.mean < 0.7 * nocache.ttft_ms.mean);
  check_little(cache);

  Json h = w;
  h["horizon_s"] = 30.0;
  const auto hs = simulate(make(base(h))).summary;
  REQUIRE(hs.completed_requests < 300);
  REQUIRE(hs.duration_s <= 30.0);
}

TEST_CASE("several tenant classes get their own summaries and SLOs") {
  Json j = base({{"classes",
                  {{{"name", "chat"}, {"arrival", {{"process", "poisson"}, {"rate", 3.0}}},
                    {"input_tokens", {{"dist", "fixed"}, {"value", 500}}},
                    {"output_tokens", {{"dist", "fixed"}, {"value", 100}}},
                    {"slo", {{"ttft_ms", {{"p95", 5000}}}}}},
                   {{"name", "batch"}, {"arrival", {{"process", "poisson"}, {"rate", 1.0}}},
                    {"input_tokens", {{"dist", "fixed"}, {"value", 3000}}},
                    {"output_tokens", {{"dist", "fixed"}, {"value", 20}}},
                    {"slo", {{"ttft_ms", {{"p95", 0.001}}}}}}}},
                 {"num_requests", 800}, {"warmup_requests", 0}});
  const auto s = simulate(make(j)).summary;
  REQUIRE(s.classes.size() == 2);
  REQUIRE(s.classes[0].name == "chat");
  REQUIRE(s.classes[0].slo_met);
  REQUIRE_FALSE(s.classes[1].slo_met);
  REQUIRE_FALSE(s.slo_met);
  REQUIRE(s.classes[0].completed_requests + s.classes[1].completed_requests == s.completed_requests);
  REQUIRE(s.classes[1].ttft_ms.mean > s.classes[0].ttft_ms.mean);
  check_little(s);
}

TEST_CASE("bad inputs get clear errors") {
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 1.0}}}, {"num_requests", 10}, {"warmup_requests", 0}};
  REQUIRE_THROWS_AS(make(base(w, {{"policy", "fifo"}})), ConfigError);
  for (double rate : {0.0, -3.0}) {
    Json bad = w;
    bad["arrival"]["rate"] = rate;
    REQUIRE_THROWS_WITH(simulate(make(base(bad))), Catch::Contains("workload.arrival.rate"));
  }
  REQUIRE_THROWS_WITH(simulate(make(base(w, {{"block_size", 0}}))), Catch::Contains("block_size"));
  {
    std::ofstream f("/tmp/llmsim_bad_trace.csv");
    f << "arrival_time_s,input_tokens,output_tokens\n0,10,10\n0.5,10,ten\n";
  }
  Json tr = w;
  tr["arrival"] = {{"process", "trace"}, {"path", "/tmp/llmsim_bad_trace.csv"}};
  REQUIRE_THROWS_WITH(simulate(make(base(tr))), Catch::Contains("llmsim_bad_trace.csv:3"));
  // Lengths beyond max_model_len: clipped and counted, or rejected and counted.
  Json lw = {{"arrival", {{"process", "poisson"}, {"rate", 2.0}}},
             {"input_tokens", {{"dist", "uniform"}, {"min", 100}, {"max", 1500}}},
             {"output_tokens", {{"dist", "fixed"}, {"value", 100}}},
             {"num_requests", 200}, {"warmup_requests", 0}};
  const auto clipped = simulate(make(base(lw, {{"max_model_len", 1024}, {"max_num_batched_tokens", 2048}}))).summary;
  REQUIRE(clipped.clipped_requests > 0);
  REQUIRE(clipped.rejected_requests == 0);
  REQUIRE(clipped.completed_requests == 200);
  lw["too_long"] = "reject";
  const auto rejected = simulate(make(base(lw, {{"max_model_len", 1024}, {"max_num_batched_tokens", 2048}}))).summary;
  REQUIRE(rejected.rejected_requests > 0);
  REQUIRE(rejected.completed_requests + rejected.rejected_requests == 200);
  check_little(rejected);
}
