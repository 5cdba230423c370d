// The host KV tier (engine.kv_offload_gb, engine/kv_host_tier.hpp, docs/engine.md "Host KV tier"): its LRU by hand,
// a session whose history the GPU evicted and the host tier gives back (hand-counted blocks and bytes), the load
// rule, conservation with timeouts, failures and several replicas, and what the tier buys on multiturn-chat-8b.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine_test_util.hpp"
#include "session_test_util.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/kv_host_tier.hpp"
#include "llmsim/engine/simulator.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

void off_check_conserved(const metrics::Summary& s) {
  test::check_turns_conserved(s);
  // Every prompt token looked up is found in one tier at most.
  CHECK(s.kv.prefix_cache_hit_tokens + s.kv.host_cache_hit_tokens <= s.kv.prefix_cache_query_tokens);
}

}  // namespace

TEST_CASE("host tier: LRU by hand; a stored block is not copied twice", "[offload]") {
  engine::KvHostTier t(3);
  CHECK(t.store(1));
  CHECK(t.store(2));
  CHECK(t.store(3));
  CHECK_FALSE(t.store(1));  // held already: no copy, and no change of recency (vLLM's prepare_store filters it)
  CHECK(t.store(4));        // full: the least recently used, 1, goes
  CHECK_FALSE(t.contains(1));
  CHECK(t.touch(2));        // 2 becomes the most recent: 3 is now the least
  CHECK_FALSE(t.touch(1));
  CHECK(t.store(5));
  CHECK_FALSE(t.contains(3));
  CHECK((t.contains(2) && t.contains(4) && t.contains(5)));
  CHECK(t.size() == 3);
  CHECK(t.stored_blocks() == 5);
  CHECK(t.evicted_blocks() == 2);
  engine::KvHostTier none;
  CHECK_FALSE(none.enabled());
  CHECK_FALSE(none.store(1));
  CHECK_FALSE(none.contains(1));
}

TEST_CASE("host tier: a history the GPU evicted is loaded back, blocks and bytes as hand-counted", "[offload]") {
  // A small GPU pool (gpu_memory_utilization) of C tokens. Session A's first turn fills ~0.6 C, session B's
  // (another system prompt, 20 s later) needs ~0.6 C more: the GPU evicts A's deepest history blocks. A's second
  // turn (think time 30 s) then finds the first of A's blocks on the GPU and the rest in the host tier, which holds
  // every block A computed (write-through). Three turns in all.
  const Json probe = llmsim::test::scenario(llmsim::test::fixed_sessions(100, 50, 20, 2, 30000, {{"process", "constant"}, {"rate", 0.05}}, 3),
                                            {{"gpu_memory_utilization", 0.3}, {"max_model_len", "auto"}});
  const std::int64_t C = engine::simulate(make(probe)).summary.kv.capacity_tokens;
  REQUIRE(C > 8000);
  const std::int64_t S = C * 6 / 10, U = 50, O = 20;
  auto run = [&](double offload_gb) {
    Json e = {{"gpu_memory_utilization", 0.3}, {"max_model_len", "auto"}};
    if (offload_gb > 0) e["kv_offload_gb"] = offload_gb;
    return engine::simulate(
        make(llmsim::test::scenario(llmsim::test::fixed_sessions(S, U, O, 2, 30000, {{"process", "constant"}, {"rate", 0.05}}, 3), e)));
  };
  const auto with = run(64);
  const auto without = run(0);
  REQUIRE(with.summary.completed_requests == 3);
  REQUIRE(without.summary.completed_requests == 3);
  const std::int64_t B = 16;
  const std::int64_t F1 = (S + U + O - 1) / B;          // full blocks turn 1 computed (prompt + reply − the last token)
  const std::int64_t F2 = (S + 2 * U + 2 * O - 1) / B;  // full blocks after A's turn 2
  const double in2 = static_cast<double>(S + 2 * U + O);
  const auto& t = with.summary.sessions->by_turn;
  REQUIRE(t.size() == 2);
  // With the tier A's second turn recomputes nothing of its history: all F1 blocks hit, GPU and host together.
  CHECK(t[1].prefix_hit_rate == Approx(static_cast<double>(F1 * B) / in2));  // turn index 1: A's second turn alone
  const auto& k = with.summary.kv;
  REQUIRE(k.host_tier);
  CHECK(k.host_cache_hit_tokens > 0);
  CHECK(k.prefix_cache_hit_tokens > 0);
  CHECK(k.prefix_cache_hit_tokens + k.host_cache_hit_tokens == Approx(static_cast<double>(F1 * B)));
  // Bytes: every block computed once is stored once (A: F1, B: F1, A's turn 2: F2 − F1 new ones); the loads are the
  // host hits. Llama-3.1-8B fp16: 128 KiB a token, 2 MiB a block.
  CHECK(k.host_stored_gb == Approx(static_cast<double>(F1 + F2) * 2.0 / 1024.0));
  CHECK(k.host_loaded_gb == Approx(k.host_cache_hit_tokens / B * 2.0 / 1024.0));
  CHECK(k.host_capacity_gb == Approx(64.0).epsilon(0.001));
  CHECK(k.host_recomputed_tokens == 0);
  // Without the tier the evicted blocks are recomputed: fewer hits, a later first token for A's second turn.
  CHECK_FALSE(without.summary.kv.host_tier);
  CHECK(without.summary.kv.prefix_cache_hit_tokens == Approx(k.prefix_cache_hit_tokens));  // the same GPU hits
  CHECK(without.summary.sessions->by_turn[1].prefix_hit_rate < t[1].prefix_hit_rate);
  CHECK(without.summary.sessions->by_turn[1].ttft_ms.mean > t[1].ttft_ms.mean);
  // The load rule: over a 1 MB/s link loading a block takes 2 s, recomputing its 16 tokens milliseconds: recompute.
  Json slow = llmsim::test::scenario(llmsim::test::fixed_sessions(S, U, O, 2, 30000, {{"process", "constant"}, {"rate", 0.05}}, 3),
                                     {{"gpu_memory_utilization", 0.3}, {"max_model_len", "auto"}, {"kv_offload_gb", 64}});
  slow["hardware"]["gpu_profile"] = {{"gpu_id", "a100-80gb-sxm"}, {"host_bandwidth", 1e6}};
  const auto rs = engine::simulate(make(slow));
  CHECK(rs.summary.kv.host_cache_hit_tokens == 0);
  CHECK(rs.summary.kv.host_recomputed_tokens == Approx(k.host_cache_hit_tokens));
  CHECK(rs.summary.sessions->by_turn[1].prefix_hit_rate == Approx(without.summary.sessions->by_turn[1].prefix_hit_rate));
}

TEST_CASE("host tier: field, vLLM's name, the compare suffix and their errors", "[offload]") {
  const Json w = llmsim::test::fixed_sessions(100, 50, 20, 3, 1000, {{"process", "poisson"}, {"rate", 0.5}}, 30);
  CHECK_THAT(test::config_error(llmsim::test::scenario(w, {{"kv_offload_gb", -1}})), Catch::Contains("engine.kv_offload_gb"));
  CHECK_THAT(test::config_error(llmsim::test::scenario(w, {{"kv_offload_gb", 8}, {"enable_prefix_caching", false}})),
             Catch::Contains("engine.kv_offload_gb") && Catch::Contains("prefix caching") && Catch::Contains("set false"));
  // Off by the policy's default (V0's prefix caching is opt-in): the error says so and how to turn it on.
  CHECK_THAT(test::config_error(llmsim::test::scenario(w, {{"kv_offload_gb", 8}, {"policy", "vllm-v0"}})),
             Catch::Contains("policy 'vllm-v0' leaves it off unless enable_prefix_caching is true"));
  // A tier asked for but smaller than one KV block would silently be no tier (1e-9 GiB ran as none).
  for (const double tiny : {1e-9, 1e-4})
    CHECK_THAT(test::config_error(llmsim::test::scenario(w, {{"kv_offload_gb", tiny}})),
               Catch::Contains("engine.kv_offload_gb") && Catch::Contains("holds no KV block"));
  CHECK(test::config_error(llmsim::test::scenario(w, {{"kv_offload_gb", 0.01}})).empty());  // 10 MiB: a few 2 MiB blocks (8B fp16)
  // vLLM's --kv-offloading-size, top level or in engine.
  Json a = llmsim::test::scenario(w);
  a["kv_offloading_size"] = 8;
  CHECK(make(a).scenario.engine.kv_offload_gb == 8);
  // The GPU option's suffix, and a contradiction with the field.
  Json g = llmsim::test::scenario(w, Json::object(), "rtx4090-24gb+offload32");
  CHECK(make(g).scenario.engine.kv_offload_gb == 32);
  g["engine"]["kv_offload_gb"] = 16;
  CHECK_THAT(test::config_error(g), Catch::Contains("hardware.gpu") && Catch::Contains("kv_offload_gb"));
  CHECK_THAT(test::config_error(llmsim::test::scenario(w, Json::object(), "rtx4090-24gb+offload")), Catch::Contains("+offload"));
  CHECK_THAT(test::config_error(llmsim::test::scenario(w, Json::object(), "rtx4090-24gb+offload0")), Catch::Contains("1..1000000"));
  // Without a block-hashed workload (sessions, traces with hash ids) the tier is there but holds nothing.
  Json plain = llmsim::test::scenario({{"arrival", {{"process", "poisson"}, {"rate", 2}}},
                                       {"input_tokens", {{"dist", "fixed"}, {"value", 500}}},
                                       {"output_tokens", {{"dist", "fixed"}, {"value", 50}}},
                                       {"num_requests", 50}},
                                      {{"kv_offload_gb", 8}});
  const auto rp = engine::simulate(make(plain));
  CHECK(rp.summary.kv.host_tier);
  CHECK(rp.summary.kv.host_stored_gb == 0);
}

TEST_CASE("host tier with sessions, timeouts, failures and several replicas: counts conserved", "[offload]") {
  std::vector<Json> cases;
  Json w = llmsim::test::fixed_sessions(800, 200, 300, 6, 200, {{"process", "poisson"}, {"rate", 3.0}}, 1500, 4);
  w["timeout_s"] = 4;
  cases.push_back(llmsim::test::scenario(w, {{"kv_offload_gb", 4}}));
  Json f = llmsim::test::scenario(llmsim::test::fixed_sessions(800, 200, 300, 6, 200, {{"process", "poisson"}, {"rate", 2.0}}, 1500, 4),
                                  {{"kv_offload_gb", 2}}, "rtx4090-24gb");
  f["hardware"]["replicas"] = 3;
  f["hardware"]["router"] = "round_robin";  // turns move between replicas: each replica's tier is its own
  f["failures"] = {{"outages", {{20, 30, 0}, {40, 20, 1}}}, {"max_retries", 1}};
  f["workload"]["timeout_s"] = 6;
  cases.push_back(f);
  Json pp = llmsim::test::scenario(llmsim::test::fixed_sessions(800, 200, 300, 6, 200, {{"process", "poisson"}, {"rate", 1.0}}, 600, 4),
                                   {{"kv_offload_gb", 1}, {"policy", "sglang"}}, "2xrtx4090-24gb@pp");
  cases.push_back(pp);
  for (const auto& j : cases) {
    INFO(j.dump());
    const auto r = engine::simulate(make(j));
    REQUIRE(r.summary.fits);
    off_check_conserved(r.summary);
    CHECK(r.kv_blocks_in_use_at_end == 0);
    CHECK(r.summary.kv.host_stored_gb > 0);
    // A tier smaller than what the run computes fills up: it can never hold more than its capacity, and the loads
    // are never more than what it stored.
    CHECK(r.summary.kv.host_loaded_gb <= r.summary.kv.host_stored_gb * 50);
  }
}

TEST_CASE("multiturn-chat-8b: a host tier raises the hit rate and lowers TTFT p95 on the 24 GB 4090", "[offload][example]") {
  const auto path = std::filesystem::path(LLMSIM_SOURCE_DIR) / "examples/scenarios/multiturn-chat-8b.json";
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  const Json base = Json::parse(ss.str());
  const auto r = engine::simulate(make(base));
  Json host = base;
  host["engine"]["kv_offload_gb"] = 64;
  const auto rh = engine::simulate(make(host));
  INFO("hit " << r.summary.sessions->prefix_hit_rate << " -> " << rh.summary.sessions->prefix_hit_rate << ", TTFT p95 "
              << r.summary.ttft_ms.p95 << " -> " << rh.summary.ttft_ms.p95 << " ms, host hits "
              << rh.summary.kv.host_cache_hit_tokens);
  CHECK(rh.summary.sessions->prefix_hit_rate > r.summary.sessions->prefix_hit_rate + 0.05);
  CHECK(rh.summary.ttft_ms.p95 < r.summary.ttft_ms.p95);
  CHECK(rh.summary.kv.host_cache_hit_tokens > 0);
  // The GPU's own hits stay what the GPU keeps.
  CHECK(rh.summary.kv.prefix_cache_hit_tokens / rh.summary.kv.prefix_cache_query_tokens ==
        Approx(r.summary.kv.prefix_cache_hit_tokens / r.summary.kv.prefix_cache_query_tokens).margin(0.05));
}
