// Invariants that must hold for every scenario, checked over randomized scenarios (seeds × policies ×
// preemption modes × replicas × routers × tenant classes), using the per-request and per-iteration records.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>

#include "llmsim/core/error.hpp"
#include "llmsim/engine/kv_block_manager.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/perf/serving_path.hpp"
#include "llmsim/spec/workload.hpp"
#include "trust_util.hpp"

using namespace llmsim;

namespace {

/// Picks from a list with the test's own generator (std::mt19937's output is fixed by the standard; we
/// avoid std:: distributions, whose output is not).
struct Pick {
  std::mt19937 gen;
  explicit Pick(std::uint32_t seed) : gen(seed) {}
  std::size_t index(std::size_t n) { return static_cast<std::size_t>(gen() % n); }
  template <class T>
  T of(const std::vector<T>& v) { return v[index(v.size())]; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * (gen() / 4294967296.0); }
};

struct Generated {
  Json scenario;
  std::vector<std::int64_t> output_per_class;  ///< every request of class c has exactly this many output tokens
};

Generated random_scenario(std::uint32_t seed) {
  Pick p(seed);
  Generated g;
  const std::string policy = p.of<std::string>({"vllm", "vllm-v0", "chunked", "static", "sglang"});
  const bool v1 = policy == "vllm", chunks = v1 || policy == "chunked" || policy == "sglang";
  const bool recompute_only = v1 || policy == "sglang";  // V1 and SGLang have no swap path
  const int classes = static_cast<int>(1 + p.index(2));
  Json workload = {{"num_requests", 240}, {"warmup_requests", 20}, {"seed", seed}};
  auto class_json = [&](double rate) {
    const std::int64_t out = p.of<std::int64_t>({1, 2, 17, 200, 600, 1500});
    const std::int64_t in_max = p.of<std::int64_t>({64, 1024, 6000});
    g.output_per_class.push_back(out);
    Json arrival = p.index(4) == 0 ? Json{{"process", "gamma"}, {"rate", rate}, {"cv", 3.0}}
                                   : Json{{"process", "poisson"}, {"rate", rate}};
    return Json{{"arrival", arrival},
                {"input_tokens", {{"dist", "uniform"}, {"min", 1}, {"max", in_max}}},
                {"output_tokens", {{"dist", "fixed"}, {"value", out}}}};
  };
  const double rate = p.uniform(0.5, 12);
  if (classes == 1) {
    const Json one = class_json(rate);
    for (auto it = one.begin(); it != one.end(); ++it) workload[it.key()] = it.value();
  } else {
    Json list = Json::array();
    for (int c = 0; c < classes; ++c) {
      Json cj = class_json(rate / classes);
      cj["name"] = "tenant" + std::to_string(c);
      list.push_back(cj);
    }
    workload["classes"] = list;
  }
  const int max_seqs = p.of<int>({4, 32, 256});
  g.scenario = Json{
      {"model", "llama-3.1-8b"},
      {"hardware",
       {{"gpu", p.of<std::string>({"rtx4090-24gb", "a100-40gb-pcie", "l4-24gb"})},
        {"replicas", static_cast<int>(1 + p.index(3))},
        {"router", p.of<std::string>({"round_robin", "least_outstanding", "least_kv", "weighted_least_outstanding", "shortest_expected_delay", "power_of_two"})}}},
      {"engine",
       {{"policy", policy},
        {"preemption", recompute_only ? std::string("recompute") : p.of<std::string>({"recompute", "swap"})},
        {"max_num_seqs", max_seqs},
        {"max_num_batched_tokens", p.of<int>({512, 2048, 8192})},
        {"gpu_memory_utilization", p.uniform(0.80, 0.95)},
        // 0 = the model's 131072 tokens, which needs a large card when prefills are chunked (as in vLLM V1).
        {"max_model_len", chunks ? p.of<int>({4096, 8192}) : p.of<int>({0, 8192})},
        {"enable_prefix_caching", p.index(2) == 0}}},
      {"workload", workload}};
  // vLLM requires one iteration's token budget to hold a whole prompt unless prefills are chunked.
  auto& eng = g.scenario["engine"];
  if (!chunks && eng["max_model_len"].get<int>() > eng["max_num_batched_tokens"].get<int>())
    eng["max_num_batched_tokens"] = eng["max_model_len"];
  // vLLM V0's multi-step scheduling with the rest (docs/engine.md): drawn last, so the other scenarios keep their draws.
  if (policy == "vllm-v0") eng["num_scheduler_steps"] = p.of<int>({1, 4, 10});
  return g;
}

double pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1];
}

}  // namespace

TEST_CASE("randomized scenarios keep every invariant", "[invariants]") {
  int ran = 0, with_preemption = 0, not_fitting = 0, unstable = 0, swaps = 0;
  std::set<std::string> policies_seen;
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    const auto gen = random_scenario(seed);
    INFO("seed " << seed << " scenario " << gen.scenario.dump());
    const auto rs = trust::resolve_json(gen.scenario);
    engine::SimulationOptions opt;
    opt.record_requests = true;
    opt.record_iterations = true;
    const auto r = engine::simulate(rs, opt);
    const auto& s = r.summary;
    if (!s.fits) {
      ++not_fitting;
      CHECK_FALSE(s.reason.empty());
      continue;
    }
    ++ran;
    policies_seen.insert(gen.scenario["engine"]["policy"].get<std::string>());
    const auto& e = rs.scenario.engine;
    const std::int64_t n = rs.scenario.workload.num_requests;

    // Every arrived request finishes exactly once (or is counted rejected), with exactly its output tokens.
    std::set<std::int64_t> ids;
    std::int64_t measured = 0, preempted = 0;
    double out_tokens = 0, in_tokens = 0;
    std::vector<double> e2e, ttft;
    for (const auto& q : r.requests) {
      REQUIRE(ids.insert(q.id).second);
      REQUIRE(q.id >= 0);
      REQUIRE(q.id < n);
      // Exactly the class's output length, unless the request was clipped to max_model_len (input first).
      const std::int64_t want = gen.output_per_class[static_cast<std::size_t>(q.tenant)];
      const std::int64_t max_len = rs.max_model_len > 0 ? rs.max_model_len : want + q.input_tokens;
      REQUIRE(q.output_tokens == std::min<std::int64_t>(want, max_len - q.input_tokens));
      REQUIRE(q.input_tokens + q.output_tokens <= max_len);
      REQUIRE(q.input_tokens >= 1);
      REQUIRE(q.arrival_s <= q.admitted_s);
      REQUIRE(q.admitted_s <= q.first_token_s);
      REQUIRE(q.first_token_s <= q.finish_s);
      if (q.output_tokens > 1) REQUIRE(q.first_token_s < q.finish_s);
      REQUIRE(q.replica >= 0);
      REQUIRE(q.replica < rs.scenario.hardware.replicas);
      preempted += q.preemptions;
      if (!q.warmup) {
        ++measured;
        out_tokens += q.output_tokens;
        in_tokens += q.input_tokens;
        e2e.push_back(1e3 * (q.finish_s - q.arrival_s));
        ttft.push_back(1e3 * (q.first_token_s - q.arrival_s));
      }
    }
    if (s.unstable) {
      ++unstable;
      CHECK(s.reason.find("unstable") != std::string::npos);
    }
    // A finite run serves every request to its end, overloaded or not.
    REQUIRE(s.complete);
    // One record per request that entered (rejected ones never did; warm-up rejections are counted apart), each
    // completed: these scenarios have no timeouts or failures.
    REQUIRE(static_cast<std::int64_t>(r.requests.size()) + s.rejected_requests + s.warmup.rejected == n);
    for (const auto& q : r.requests) REQUIRE(q.outcome == engine::RequestOutcome::completed);
    REQUIRE(s.offered.arrivals == s.rejected_requests + s.completed_requests);
    REQUIRE(s.preemptions == preempted);
    REQUIRE(r.kv_blocks_in_use_at_end == 0);  // every block returned once the run drained
    if (s.preemptions > 0) ++with_preemption;
    if (s.preemptions > 0 && e.preemption == spec::PreemptionMode::swap) ++swaps;

    // Simulated time never goes backwards: records are appended as events happen — the engine's last tokens, which the
    // client sees after the serving path (perf/serving_path.hpp), longer for a longer prompt (its tokenisation).
    const perf::ServingPath path = perf::serving_path(e, spec::offline_workload(rs.scenario.workload));
    auto engine_finish_s = [&](const engine::RequestRecord& q) {
      return q.outcome == engine::RequestOutcome::completed ? q.finish_s - path.latency_s(q.input_tokens) : q.finish_s;
    };
    for (std::size_t i = 1; i < r.requests.size(); ++i)
      REQUIRE(engine_finish_s(r.requests[i - 1]) <= engine_finish_s(r.requests[i]) + 1e-9);
    for (std::size_t i = 1; i < r.iterations.size(); ++i)
      REQUIRE(r.iterations[i - 1].start_s <= r.iterations[i].start_s);

    // KV blocks in use never exceed the pool; a replica runs one iteration at a time.
    const auto plan = memory::plan_memory(rs.model, rs.quant, rs.gpu, rs.scenario.hardware.parallel, e, rs.max_model_len);
    std::map<int, double> replica_free_at;
    for (const auto& it : r.iterations) {
      REQUIRE(it.kv_blocks_used >= 0);
      REQUIRE(it.kv_blocks_used <= plan.kv_capacity_blocks);
      REQUIRE(it.duration_s > 0);
      REQUIRE(it.decode_seqs + it.prefill_seqs <= e.max_num_seqs);
      if (e.policy != spec::SchedulerPolicy::static_batching) REQUIRE(it.prefill_tokens + it.decode_seqs <= e.max_num_batched_tokens);
      auto [slot, fresh] = replica_free_at.emplace(it.replica, 0.0);
      REQUIRE(it.start_s >= slot->second * (1 - 1e-12));
      slot->second = it.start_s + it.duration_s;
    }
    REQUIRE(s.kv.peak_used_fraction <= 1.0);

    // The summary agrees with the per-request records.
    REQUIRE(s.completed_requests == measured);
    if (measured == 0) continue;
    const double dur = s.duration_s;
    REQUIRE(dur > 0);
    CHECK(s.throughput.requests_per_s == Approx(static_cast<double>(measured) / dur).epsilon(1e-9));
    CHECK(s.throughput.output_tokens_per_s == Approx(out_tokens / dur).epsilon(1e-9));
    CHECK(s.throughput.input_tokens_per_s == Approx(in_tokens / dur).epsilon(1e-9));
    double e2e_sum = 0, ttft_sum = 0;
    for (double v : e2e) e2e_sum += v;
    for (double v : ttft) ttft_sum += v;
    CHECK(s.e2e_ms.mean == Approx(e2e_sum / measured).epsilon(1e-9));
    CHECK(s.ttft_ms.mean == Approx(ttft_sum / measured).epsilon(1e-9));
    // Percentiles come from a log-bucketed histogram documented to within 1% of the order statistic.
    CHECK(s.e2e_ms.p50 == Approx(pct(e2e, 0.50)).epsilon(0.015));
    CHECK(s.e2e_ms.p99 == Approx(pct(e2e, 0.99)).epsilon(0.015));
    CHECK(s.e2e_ms.max == Approx(*std::max_element(e2e.begin(), e2e.end())).epsilon(1e-9));
    // Little's law on the measured window: time-average in system = throughput × mean time in system.
    CHECK(s.mean_in_system == Approx(s.throughput.requests_per_s * s.e2e_ms.mean / 1e3).epsilon(1e-6));
  }
  std::printf("invariants: %d scenarios ran (%d with preemption, %d of them by swap, %d unstable), %d did not fit\n",
              ran, with_preemption, swaps, unstable, not_fitting);
  // The generator must actually reach the interesting corners, or the test proves little.
  CHECK(ran >= 150);
  CHECK(with_preemption >= 8);
  CHECK(swaps >= 2);
  CHECK(policies_seen.size() == 5);
}

TEST_CASE("KV block manager: blocks for a token count are its ceiling division by the block size", "[invariants]") {
  // A power-of-two block size takes a shift and a mask, any other the division: the same integers either way. A
  // position's offset in its block is the non-negative remainder, for negative positions too (a decoder's phase).
  std::int64_t checked = 0;
  for (const int bs : {1, 2, 12, 16, 24, 32, 100, 128, 256}) {
    const engine::KvBlockManager kv(10, bs, 0.0, 0);
    for (std::int64_t tokens = 0; tokens <= 5000; ++tokens) {
      REQUIRE(kv.blocks_for(tokens) == (tokens + bs - 1) / bs);
      REQUIRE(kv.block_offset(tokens) == tokens % bs);
      REQUIRE(kv.block_offset(-tokens) == (bs - tokens % bs) % bs);
      ++checked;
    }
    const std::int64_t big = std::int64_t{1} << 40;  // a long prompt's tokens times a large batch
    REQUIRE(kv.blocks_for(big + 1) == (big + bs) / bs);
  }
  REQUIRE(checked == 9 * 5001);
}

TEST_CASE("KV block manager: random admit/grow/preempt/swap sequences stay within capacity and end at zero",
          "[invariants]") {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    Pick p(seed);
    const std::int64_t cap = 50 + static_cast<std::int64_t>(p.index(500));
    engine::KvBlockManager kv(cap, 16, 0.01, cap / 2);
    std::vector<std::int64_t> held, swapped;  // blocks per live sequence, on GPU / on host
    for (int step = 0; step < 5000; ++step) {
      const auto op = p.index(5);
      const std::int64_t b = 1 + static_cast<std::int64_t>(p.index(20));
      if (op == 0 && kv.can_admit(b)) {
        kv.allocate(b);
        held.push_back(b);
      } else if (op == 1 && !held.empty() && kv.can_grow(1)) {
        kv.allocate(1);
        ++held[p.index(held.size())];
      } else if (op == 2 && !held.empty()) {
        const auto i = p.index(held.size());
        kv.release(held[i]);
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (op == 3 && !held.empty()) {
        const auto i = p.index(held.size());
        if (kv.can_swap_out(held[i])) {
          kv.swap_out(held[i]);
          swapped.push_back(held[i]);
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
        }
      } else if (op == 4 && !swapped.empty() && kv.can_grow(swapped.back())) {
        kv.swap_in(swapped.back());
        held.push_back(swapped.back());
        swapped.pop_back();
      }
      std::int64_t sum = 0;
      for (auto h : held) sum += h;
      REQUIRE(kv.used() == sum);
      REQUIRE(kv.used() <= kv.capacity());
    }
    for (auto h : held) kv.release(h);
    for (auto h : swapped) {
      kv.swap_in(h);
      kv.release(h);
    }
    REQUIRE(kv.used() == 0);
    REQUIRE(kv.peak_used() <= cap);
    // Releasing more than is held is an internal error, not silent corruption.
    REQUIRE_THROWS_AS(kv.release(1), InternalError);
  }
}

TEST_CASE("overload (100x capacity): flagged, served to the end, memory bounded; the capacity shortcut stops early",
          "[invariants]") {
  // One A100 serves llama-3.1-8b at ~10 requests/s for 1000-in/500-out; offer 100x that.
  Json j = {{"model", "llama-3.1-8b"},
            {"hardware", {{"gpu", "a100-80gb-sxm"}}},
            {"workload",
             {{"arrival", {{"process", "poisson"}, {"rate", 1000.0}}},
              {"input_tokens", {{"dist", "fixed"}, {"value", 1000}}},
              {"output_tokens", {{"dist", "fixed"}, {"value", 500}}},
              {"num_requests", 3000},
              {"warmup_requests", 0}}}};
  engine::SimulationOptions opt;
  opt.record_requests = true;
  const auto r = engine::simulate(trust::resolve_json(j), opt);
  REQUIRE(r.summary.unstable);
  REQUIRE(r.summary.complete);
  REQUIRE_FALSE(r.summary.slo_met);
  CHECK(r.requests.size() == 3000);
  CHECK(r.kv_blocks_in_use_at_end == 0);
  // The memory bound: more requests in the system than allowed stops the run, flagged, its summary partial.
  engine::SimulationOptions small;
  small.max_in_system = 1500;
  const auto bounded = engine::simulate(trust::resolve_json(j), small).summary;
  CHECK(bounded.unstable);
  CHECK_FALSE(bounded.complete);
  CHECK_THAT(bounded.reason, Catch::Contains("memory bound"));
  CHECK(bounded.completed_requests < 3000);
  // The capacity search's early stop: ten million requests, a few thousand iterations.
  j["workload"]["num_requests"] = 10000000;
  engine::SimulationOptions stop;
  stop.stop_when_unstable = true;
  const auto early = engine::simulate(trust::resolve_json(j), stop).summary;
  REQUIRE(early.unstable);
  CHECK_FALSE(early.complete);
  CHECK(early.iterations < 20000);
  // Synthetic single server at 100x its capacity, stopped early likewise.
  Json syn = j;
  syn["engine"] = {{"synthetic_service", {{"kind", "exponential"}, {"mean_s", 1.0}}}};
  syn["workload"]["arrival"]["rate"] = 100.0;
  const auto rs = engine::simulate(trust::resolve_json(syn), stop).summary;
  REQUIRE(rs.unstable);
  CHECK(rs.iterations < 100);
}
