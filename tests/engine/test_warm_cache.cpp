// A benchmark served from a warm prefix cache (workload.warm_cache; llmsim/engine/warm_cache.hpp): the fill rule on
// a hand-counted pool (which blocks stay warm, which the capacity evicted, in which order the rest go), and a replay
// whose prompts all hit their earlier blocks: TTFT drops, the hits are exactly the prompts' full blocks.
#include <catch2/catch.hpp>

#include <vector>

#include "engine_test_util.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/kv_block_manager.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/engine/warm_cache.hpp"

using namespace llmsim;
using engine::KvBlockManager;

namespace {

std::vector<std::uint64_t> keys(std::uint64_t request, int n) {
  std::vector<std::uint64_t> k;
  for (int i = 0; i < n; ++i) k.push_back(KvBlockManager::block_key(KvBlockManager::chain_hash(0, request), i));
  return k;
}

int warm(KvBlockManager& kv, const std::vector<std::uint64_t>& k) {
  return static_cast<int>(engine::warm_request(kv, k.data(), static_cast<std::int64_t>(k.size())));
}

// One request of `in` prompt / `out` output tokens at time `t`.
Json req(double t, int in, int out) { return Json::array({t, in, out}); }

engine::SimulationResult run_replay(bool warm_cache, bool prefix_caching = true) {
  Json reqs = Json::array();
  const int in[] = {700, 1210, 333, 2048, 95, 1500, 640, 17, 980, 1999};
  for (int i = 0; i < 10; ++i) reqs.push_back(req(0.0, in[i], 50 + 7 * i));
  Json w = {{"arrival", {{"process", "trace"}, {"requests", reqs}}}, {"num_requests", 10}, {"warmup_requests", 0}};
  if (warm_cache) w["warm_cache"] = true;
  const auto rs = test::make(test::scenario(w, {{"enable_prefix_caching", prefix_caching}}));
  engine::SimulationOptions o;
  o.record_requests = true;
  return engine::simulate(rs, o);
}

double mean_ttft(const engine::SimulationResult& r) {
  double s = 0;
  for (const auto& q : r.requests) s += q.first_token_s - q.arrival_s;
  return s / static_cast<double>(r.requests.size());
}

}  // namespace

TEST_CASE("warm cache: the earlier run's blocks in its release order, bounded by the pool", "[warm_cache]") {
  KvBlockManager kv(10, 16, 0.0, 0);
  const auto a = keys(1, 5), b = keys(2, 3), c = keys(3, 4);
  CHECK(warm(kv, a) == 5);  // queue (least recent first): a4 a3 a2 a1 a0 — each request freed deepest first
  CHECK(warm(kv, b) == 3);  // a4 a3 a2 a1 a0 b2 b1 b0
  CHECK(kv.cached_free() == 8);
  CHECK(warm(kv, c) == 4);  // 2 raw blocks free, then a4 and a3 evicted: a2 a1 a0 b2 b1 b0 c3 c2 c1 c0
  CHECK(kv.used() == 0);
  CHECK(kv.cached_free() == 10);
  CHECK(kv.block_state(a[4]) == -1);
  CHECK(kv.block_state(a[3]) == -1);
  for (int i = 0; i < 3; ++i) CHECK(kv.block_state(a[i]) == 0);
  for (auto k : b) CHECK(kv.block_state(k) == 0);
  for (auto k : c) CHECK(kv.block_state(k) == 0);

  // A request sharing b's first block: b0 is reused and moves to the tail, its new block evicts the head (a2).
  const std::vector<std::uint64_t> d{b[0], keys(4, 2)[1]};
  CHECK(warm(kv, d) == 2);  // a1 a0 b2 b1 c3 c2 c1 c0 d1 b0
  CHECK(kv.block_state(a[2]) == -1);
  CHECK(kv.block_state(b[0]) == 0);
  kv.allocate(3);  // evicts the three least recent: a1, a0, b2
  CHECK(kv.block_state(a[1]) == -1);
  CHECK(kv.block_state(a[0]) == -1);
  CHECK(kv.block_state(b[2]) == -1);
  CHECK(kv.block_state(b[1]) == 0);
  CHECK(kv.block_state(b[0]) == 0);  // moved behind c and d1 by the shared use
  kv.release(3);

  // A request longer than the pool keeps its first blocks.
  KvBlockManager small(10, 16, 0.0, 0);
  const auto e = keys(5, 12);
  CHECK(warm(small, e) == 10);
  for (int i = 0; i < 10; ++i) CHECK(small.block_state(e[static_cast<std::size_t>(i)]) == 0);
  CHECK(small.block_state(e[10]) == -1);
  CHECK(small.block_state(e[11]) == -1);
}

TEST_CASE("warm cache: a replay of the same prompts hits their full blocks and its TTFT drops", "[warm_cache]") {
  const auto cold = run_replay(false);
  const auto hot = run_replay(true);
  REQUIRE(cold.requests.size() == 10);
  REQUIRE(hot.requests.size() == 10);
  // Every prompt's full blocks but the one holding its last token (whose logits must be computed), 16 tokens each.
  double expected = 0;
  for (int in : {700, 1210, 333, 2048, 95, 1500, 640, 17, 980, 1999}) expected += ((in - 1) / 16) * 16;
  CHECK(cold.summary.kv.prefix_cache_hit_tokens == 0);
  CHECK(hot.summary.kv.prefix_cache_hit_tokens == expected);
  CHECK(hot.summary.kv.prefix_cache_query_tokens == cold.summary.kv.prefix_cache_query_tokens);
  // 9,512 prompt tokens at once: cold, the last first token waits for all of them; warm, for 152 recomputed tokens.
  CHECK(mean_ttft(hot) < 0.5 * mean_ttft(cold));
  CHECK(hot.summary.throughput.output_tokens_per_s > cold.summary.throughput.output_tokens_per_s);
}

TEST_CASE("warm cache: bad input names workload.warm_cache", "[warm_cache]") {
  CHECK_THROWS_WITH(run_replay(true, false), Catch::Contains("workload.warm_cache") && Catch::Contains("prefix caching"));
  Json w = {{"arrival", {{"process", "poisson"}, {"rate", 1.0}}}, {"num_requests", 10}, {"warm_cache", true}};
  CHECK_THROWS_WITH(test::make(test::scenario(w)), Catch::Contains("workload.warm_cache") && Catch::Contains("trace"));
  // It survives the scenario's JSON round trip (what check --scenario-out writes).
  Json t = {{"arrival", {{"process", "trace"}, {"requests", Json::array({req(0, 100, 10)})}}}, {"warm_cache", true}};
  const auto rs = test::make(test::scenario(t));
  CHECK(rs.scenario.workload.warm_cache);
  CHECK(spec::to_json(rs.scenario)["workload"]["warm_cache"] == true);
}

TEST_CASE("warm cache: the host tier holds what the earlier run wrote through", "[warm_cache][kv_offload]") {
  // A GPU pool that keeps about two of six long prompts, and a 64 GiB host tier that keeps them all: the earlier run
  // wrote every block it computed to the host (write-through), so the replay finds every prompt's full blocks, on the
  // GPU or in the host tier, and recomputes only the block holding each last token. Without the tier the prompts
  // the GPU evicted are recomputed.
  const Json engine_cfg = {{"gpu_memory_utilization", 0.3}, {"max_model_len", "auto"}};
  const Json probe = test::scenario({{"arrival", {{"process", "trace"}, {"requests", Json::array({req(0, 100, 10)})}}},
                                     {"num_requests", 1}, {"warmup_requests", 0}},
                                    engine_cfg);
  const std::int64_t C = engine::simulate(test::make(probe)).summary.kv.capacity_tokens;
  REQUIRE(C > 8000);
  const int L = static_cast<int>(C * 4 / 10) + 5, rows = 6;
  auto run = [&](bool warm_cache, double offload_gb) {
    Json reqs = Json::array();
    for (int i = 0; i < rows; ++i) reqs.push_back(req(100.0 * i, L + i, 10));  // one at a time
    Json w = {{"arrival", {{"process", "trace"}, {"requests", reqs}}}, {"num_requests", rows}, {"warmup_requests", 0}};
    if (warm_cache) w["warm_cache"] = true;
    Json e = engine_cfg;
    if (offload_gb > 0) e["kv_offload_gb"] = offload_gb;
    return engine::simulate(test::make(test::scenario(w, e))).summary;
  };
  double full = 0;  // every prompt's full blocks but the one with its last token
  for (int i = 0; i < rows; ++i) full += ((L + i - 1) / 16) * 16;
  const auto hot_host = run(true, 64), hot = run(true, 0), cold_host = run(false, 64);
  REQUIRE(hot_host.completed_requests == rows);
  REQUIRE(hot_host.kv.host_tier);
  CHECK(hot_host.kv.host_cache_hit_tokens > 0);
  CHECK(hot_host.kv.prefix_cache_hit_tokens + hot_host.kv.host_cache_hit_tokens == full);
  CHECK(hot_host.kv.host_recomputed_tokens == 0);
  // Without the tier the GPU kept only the last prompts, and replaying in order evicts them before their turn (an
  // LRU scan longer than the pool); cold, no prompt was seen before.
  CHECK(hot.kv.prefix_cache_hit_tokens < 0.5 * full);
  CHECK(cold_host.kv.prefix_cache_hit_tokens + cold_host.kv.host_cache_hit_tokens == 0);
  // The fill is before t = 0: the run's own stores are only what it computed (each prompt's last partial block is
  // not full; its full blocks were all loaded or hit), so nothing is stored again.
  CHECK(hot_host.kv.host_stored_gb == 0);
  CHECK(hot_host.ttft_ms.mean < hot.ttft_ms.mean);
}

TEST_CASE("warm cache: only the replicas serving at t = 0 are warm; one the autoscaler starts is a new server",
          "[warm_cache][autoscaler]") {
  // The same replay on one replica that is up at t = 0 (min_replicas 1): every prompt hits its earlier blocks. With
  // scale to zero (min_replicas 0) the first request starts a new server, whose prefix cache is empty: no hit. (The
  // fill used to go to all max_replicas, so a replica started later began with a cache it never served.)
  auto run = [](int min_replicas) {
    Json reqs = Json::array();
    const int in[] = {700, 1210, 333, 2048, 95};
    for (int i = 0; i < 5; ++i) reqs.push_back(req(0.0, in[i], 20));
    Json w = {{"arrival", {{"process", "trace"}, {"requests", reqs}}}, {"num_requests", 5}, {"warmup_requests", 0},
              {"warm_cache", true}};
    Json s = test::scenario(w);
    s["autoscaler"] = {{"min_replicas", min_replicas}, {"max_replicas", 1}, {"queue_per_replica", 4}, {"interval_s", 1}};
    return engine::simulate(test::make(s)).summary;
  };
  const auto up = run(1), from_zero = run(0);
  REQUIRE(up.completed_requests == 5);
  REQUIRE(from_zero.completed_requests == 5);
  double expected = 0;
  for (int in : {700, 1210, 333, 2048, 95}) expected += ((in - 1) / 16) * 16;
  CHECK(up.kv.prefix_cache_hit_tokens == expected);
  CHECK(from_zero.kv.prefix_cache_hit_tokens == 0);
}
