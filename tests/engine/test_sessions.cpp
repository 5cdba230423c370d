// Session workloads (workload.sessions, docs/engine.md "Session workloads"): the spec and its errors, the truncation
// rule, conservation of turns and tokens, history reuse against a hand-counted case (which blocks hit, which were
// evicted), the mechanisms combined (timeouts, failures, replicas, autoscaler), and the acceptance facts of
// examples/scenarios/multiturn-chat-8b.json.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "../../libsim/src/engine/session_driver.hpp"
#include "engine_test_util.hpp"
#include "session_test_util.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/kv_block_manager.hpp"
#include "llmsim/engine/simulator.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

// Fixed lengths: system S, user U, reply O tokens, `turns` turns, think time `think_ms`.
Json sess_fixed(std::int64_t S, std::int64_t U, std::int64_t O, std::int64_t turns, std::int64_t think_ms, double rate,
                std::int64_t n, std::int64_t system_prompts = 0) {
  return test::fixed_sessions(S, U, O, turns, think_ms, {{"process", "poisson"}, {"rate", rate}}, n, system_prompts);
}

Json sess_example() {
  const auto path = std::filesystem::path(LLMSIM_SOURCE_DIR) / "examples/scenarios/multiturn-chat-8b.json";
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str());
}

// Every measured turn is accounted for, by outcome and by turn index.
void sess_check_conserved(const metrics::Summary& s) {
  test::check_turns_conserved(s);
  CHECK(s.offered.arrivals == s.completed_requests + s.failed_requests + s.timed_out_requests + s.rejected_requests +
                                  s.unfinished_requests);
}

}  // namespace

TEST_CASE("sessions: validation names the field; presets and JSON round trip", "[sessions]") {
  Json w = sess_fixed(100, 50, 20, 3, 1000, 0.5, 30);
  w["sessions"]["turns"] = {{"dist", "lognormal"}, {"mean", -2}, {"sigma", 0.5}};
  CHECK_THAT(test::config_error(llmsim::test::scenario(w)), Catch::Contains("workload.sessions.turns.mean"));
  w = sess_fixed(100, 50, 20, 3, 1000, 0.5, 30);
  w["sessions"]["system_prompts"] = -1;
  CHECK_THAT(test::config_error(llmsim::test::scenario(w)), Catch::Contains("workload.sessions.system_prompts"));
  w = sess_fixed(100, 50, 20, 3, 1000, 0.5, 30);
  w["sessions"]["preset"] = "chatty";
  CHECK_THAT(test::config_error(llmsim::test::scenario(w)), Catch::Contains("workload.sessions.preset"));
  w = sess_fixed(100, 50, 20, 3, 1000, 0.5, 30);
  w["arrival"] = {{"process", "closed"}, {"concurrency", 4}};
  CHECK_THAT(test::config_error(llmsim::test::scenario(w)), Catch::Contains("workload.arrival.process"));
  w = sess_fixed(100, 50, 20, 3, 1000, 0.5, 30);
  w["sessions"]["think_ms"] = 3;
  CHECK_THAT(test::config_error(llmsim::test::scenario(w)), Catch::Contains("think_time_ms"));  // the valid keys listed
  // A bound names the unit of what it bounds (think_time_ms said "1..1e9 tokens", turns too).
  w = sess_fixed(100, 50, 20, 3, 0, 0.5, 30);
  CHECK_THAT(test::config_error(llmsim::test::scenario(w)),
             Catch::Contains("think_time_ms.value: must be in 1..1e9 ms") && !Catch::Contains("tokens"));
  w = sess_fixed(100, 50, 20, 0, 1000, 0.5, 30);
  CHECK_THAT(test::config_error(llmsim::test::scenario(w)),
             Catch::Contains("turns.value: must be in 1..1e9 turns") && !Catch::Contains("tokens"));
  w = sess_fixed(100, 0, 20, 3, 1000, 0.5, 30);
  CHECK_THAT(test::config_error(llmsim::test::scenario(w)), Catch::Contains("user_tokens.value: must be in 1..1e9 tokens"));

  for (const auto& p : spec::kSessionPresets) {
    Json pw = {{"arrival", {{"process", "poisson"}, {"rate", 0.2}}}, {"sessions", {{"preset", p}}}, {"num_requests", 200}};
    const auto rs = make(llmsim::test::scenario(pw));
    REQUIRE(rs.scenario.workload.sessions);
    CHECK(rs.scenario.workload.sessions->preset == p);
    // The scenario's JSON reads back to the same spec.
    const auto again = make(spec::to_json(rs.scenario));
    CHECK(spec::to_json(again.scenario) == spec::to_json(rs.scenario));
    const auto r = engine::simulate(rs);
    REQUIRE(r.summary.fits);
    sess_check_conserved(r.summary);
  }
}

TEST_CASE("sessions: the truncation rule drops the oldest whole turns", "[sessions]") {
  const std::vector<spec::SessionTurn> h{{100, 200}, {50, 50}, {10, 10}};
  CHECK(spec::turns_to_drop(h, 100, 20, 30, 0) == 0);      // no limit
  CHECK(spec::turns_to_drop(h, 100, 20, 30, 570) == 0);    // 100 + 420 + 20 + 30 = 570 fits exactly
  CHECK(spec::turns_to_drop(h, 100, 20, 30, 569) == 1);    // drop the first (300): 270
  CHECK(spec::turns_to_drop(h, 100, 20, 30, 269) == 2);    // then the second (100): 170
  CHECK(spec::turns_to_drop(h, 100, 20, 30, 100) == 3);    // nothing fits: all dropped, too_long decides
}

TEST_CASE("sessions: turns and tokens are conserved; turn k sends the whole history", "[sessions]") {
  // Sessions of 3 turns: 100 system + 50 user + 20 reply; turn k's prompt is 100 + k·70 + 50. The run issues 120
  // turns; sessions still going then are cut short (their later turns never issued).
  engine::SimulationOptions opt;
  opt.record_requests = true;
  const auto r = engine::simulate(make(llmsim::test::scenario(sess_fixed(100, 50, 20, 3, 2000, 0.5, 120))), opt);
  const auto& s = r.summary;
  REQUIRE(s.complete);
  sess_check_conserved(s);
  CHECK(s.completed_requests == 120);
  REQUIRE(s.sessions->by_turn.size() == 3);
  std::map<std::int64_t, std::int64_t> by_input;
  std::int64_t tokens = 0;
  for (const auto& q : r.requests) {
    ++by_input[q.input_tokens];
    tokens += q.output_tokens;
  }
  CHECK(tokens == 120 * 20);
  std::int64_t turns = 0;
  for (int k = 0; k < 3; ++k) {
    const auto& t = s.sessions->by_turn[static_cast<std::size_t>(k)];
    CHECK(t.mean_input_tokens == Approx(150 + 70 * k));
    CHECK(by_input[150 + 70 * k] == t.completed);
    turns += t.completed;
    if (k > 0) CHECK(t.completed <= s.sessions->by_turn[static_cast<std::size_t>(k - 1)].completed);  // a turn follows its predecessor
  }
  CHECK(turns == 120);
  CHECK(s.sessions->by_turn[0].completed == s.sessions->started);  // every session starts with turn 1
  CHECK(s.sessions->finished <= s.sessions->started);
  // Sessions cut short by the end of the run are counted apart (no warm-up here: started counts every session).
  CHECK(s.sessions->in_progress > 0);
  CHECK(s.sessions->finished + s.sessions->in_progress == s.sessions->started);
  CHECK(s.sessions->turns_per_session == Approx(120.0 / static_cast<double>(s.sessions->started)));
  // Memory follows the active sessions, not those of the run.
  CHECK(s.sessions->peak_active < s.sessions->started / 2);
}

TEST_CASE("sessions: the session counts are of the measured sessions whatever the warm-up", "[sessions]") {
  // Issue 29: `finished` counted every session (warm-up ones too) while `started` counted measured ones only, so
  // with a warm-up finished exceeded started (485 of 442 on multiturn-chat-8b.json). Across warm-ups (none, some
  // sessions, most of the run), lengths (sessions cut short or not) and several replicas, one population.
  for (const std::int64_t warmup : {0, 7, 60, 150}) {
    for (const int replicas : {1, 3}) {
      Json w = sess_fixed(100, 50, 20, 4, 800, 1.5, 200);
      w["warmup_requests"] = warmup;
      Json j = llmsim::test::scenario(w);
      j["hardware"]["replicas"] = replicas;
      const auto r = engine::simulate(make(j));
      const auto& s = r.summary;
      CAPTURE(warmup, replicas);
      REQUIRE(s.complete);
      sess_check_conserved(s);  // finished + in_progress == started, among the rest
      CHECK(s.sessions->finished <= s.sessions->started);
      // 4 turns each: the measured sessions sent at most 4 turns each and at least their first.
      CHECK(s.sessions->turns_per_session >= 1.0);
      CHECK(s.sessions->turns_per_session <= 4.0);
      // Sessions are measured from the first measured arrival on: the warm-up's leave fewer measured ones.
      CHECK(s.sessions->started * 4 >= s.offered.arrivals - 3 * (warmup > 0 ? s.sessions->peak_active : 0));
      if (warmup == 0) CHECK(s.sessions->turns_per_session * static_cast<double>(s.sessions->started) ==
                             Approx(static_cast<double>(s.offered.arrivals)));
    }
  }
  // The shipped example (warm-up 300): the case the attack found.
  const auto r = engine::simulate(make(sess_example()));
  sess_check_conserved(r.summary);
  CHECK(r.summary.sessions->finished <= r.summary.sessions->started);
}

TEST_CASE("sessions: history blocks hit as hand-counted", "[sessions]") {
  // One session alone (block 16): turn 1 sends 150 tokens and computes 150 + 20 − 1 = 169 → 10 full blocks cached
  // (prompt 9 + the one holding the prompt's end and the reply's start). Turn 2 (220 tokens) hits those 10 = 160
  // tokens; turn 3 (290) computes 239 → 14 blocks = 224 tokens.
  const auto r = engine::simulate(make(llmsim::test::scenario(sess_fixed(100, 50, 20, 3, 1000, 0.01, 3))));
  const auto& t = r.summary.sessions->by_turn;
  REQUIRE(t.size() == 3);
  CHECK(t[0].prefix_hit_rate == 0);
  CHECK(t[1].prefix_hit_rate == Approx(160.0 / 220.0));
  CHECK(t[2].prefix_hit_rate == Approx(224.0 / 290.0));
  // Prefix caching off: nothing hits.
  const auto off = engine::simulate(
      make(llmsim::test::scenario(sess_fixed(100, 50, 20, 3, 1000, 0.01, 3), {{"enable_prefix_caching", false}})));
  for (const auto& x : off.summary.sessions->by_turn) CHECK(x.prefix_hit_rate == 0);
}

TEST_CASE("sessions: eviction takes a released history's deepest blocks first", "[sessions]") {
  // The driver's hashes for turns 1 and 2 of one session, through the block manager as the replica uses them.
  spec::SessionSpec sp;
  sp.turns = spec::FixedLength{2};
  sp.system_tokens = spec::FixedLength{100};
  sp.system_prompts = 0;
  sp.user_tokens = spec::FixedLength{50};
  sp.output_tokens = spec::FixedLength{20};
  sp.think_time_ms = spec::FixedLength{1000};
  engine::detail::SessionDriver d(sp, 7, 0, spec::TooLongPolicy::clip, 16, true);
  const std::int32_t slot = d.start();
  const auto t1 = d.draw_turn(slot);
  REQUIRE(t1.input == 150);
  REQUIRE(t1.keys->size() == 10);  // (150 + 20) / 16 full blocks of prompt + reply
  const std::vector<std::uint64_t> k1 = *t1.keys;
  engine::KvBlockManager kv(20, 16, 0.0, 0);
  kv.allocate(10);
  const engine::KvBlockManager::ChainKeys keys1{k1.data()};
  REQUIRE(kv.publish_chain(keys1, 0, 10) == 10);
  // Released deepest first (vLLM frees a request's blocks in reverse), so the deepest are least recently released.
  kv.release_chain(keys1, 10);
  CHECK(kv.cached_free() == 10);
  kv.allocate(13);  // 10 raw free blocks, then 3 evicted: blocks 9, 8, 7
  CHECK(kv.cached_free() == 7);
  d.turn_ended(slot, true);
  REQUIRE(*d.next_turn_time(slot, 5.0) == Approx(6.0));
  const auto t2 = d.draw_turn(slot);
  REQUIRE(t2.input == 220);
  // Turn 2 starts with turn 1's prompt + reply: the same first 10 block keys; the lookup stops at the first missing.
  std::int64_t hit = 0;
  while (hit < 13 && kv.block_state((*t2.keys)[static_cast<std::size_t>(hit)]) >= 0) ++hit;
  CHECK(hit == 7);
  for (std::size_t k = 0; k < 10; ++k) CHECK((*t2.keys)[k] == k1[k]);
  // The blocks it adds have keys of their own: none equals a block of turn 1's or another of its own.
  std::vector<std::uint64_t> all = *t2.keys;
  std::sort(all.begin(), all.end());
  CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
  // The session has had its turns: the slot is freed.
  d.turn_ended(slot, true);
  CHECK(!d.next_turn_time(slot, 10.0));
  CHECK(d.active() == 0);
}

TEST_CASE("sessions: a shared system prompt hits across sessions; its own does not", "[sessions]") {
  // Sessions of one turn, far apart: only the system prompt can hit (992 of 1000 tokens in whole blocks, 62 blocks).
  const auto shared = engine::simulate(make(llmsim::test::scenario(sess_fixed(1000, 50, 20, 1, 1000, 0.05, 20, 1))));
  const auto own = engine::simulate(make(llmsim::test::scenario(sess_fixed(1000, 50, 20, 1, 1000, 0.05, 20, 0))));
  CHECK(own.summary.sessions->prefix_hit_rate == 0);
  CHECK(shared.summary.sessions->prefix_hit_rate == Approx(19.0 / 20.0 * 992.0 / 1050.0));
}

TEST_CASE("sessions with timeouts, failures, several replicas and an autoscaler: no crash, counts conserved", "[sessions]") {
  std::vector<Json> cases;
  Json w = sess_fixed(800, 200, 300, 6, 200, 3.0, 1500, 4);
  w["timeout_s"] = 4;  // an overloaded A100: turns time out in queue, in prefill and in decode
  cases.push_back(llmsim::test::scenario(w));
  Json f = llmsim::test::scenario(sess_fixed(800, 200, 300, 6, 200, 2.0, 1500, 4));
  f["hardware"]["replicas"] = 3;
  f["hardware"]["router"] = "session_affinity";
  f["failures"] = {{"outages", {{20, 30, 0}, {40, 20, 1}}}, {"max_retries", 1}};
  cases.push_back(f);
  Json as = llmsim::test::scenario(sess_fixed(800, 200, 300, 6, 200, 2.0, 1500, 4));
  as["hardware"]["router"] = "session_affinity";
  as["autoscaler"] = {{"min_replicas", 1}, {"max_replicas", 3}, {"interval_s", 5}, {"scale_up_delay_s", 10},
                      {"queue_per_replica", 8}};
  as["workload"]["timeout_s"] = 6;
  cases.push_back(as);
  Json clipped = llmsim::test::scenario(sess_fixed(800, 2000, 500, 8, 100, 1.0, 600, 2), {{"max_model_len", 4096}});
  cases.push_back(clipped);
  for (const auto& j : cases) {
    INFO(j.dump());
    const auto r = engine::simulate(make(j));
    REQUIRE(r.summary.fits);
    sess_check_conserved(r.summary);
    CHECK(r.kv_blocks_in_use_at_end == 0);
  }
  const auto t = engine::simulate(make(cases[0]));
  CHECK(t.summary.timed_out_requests > 0);
  const auto c = engine::simulate(make(cases[3]));
  CHECK(c.summary.sessions->dropped_turns > 0);  // 4096 holds about one turn of 2,500 beside the system prompt
}

TEST_CASE("multiturn-chat-8b: what the 48 GB card, prefix caching and session affinity buy", "[sessions][example]") {
  const Json base = sess_example();
  const auto r24 = engine::simulate(make(base));
  Json j48 = base;
  j48["hardware"]["gpu"] = "rtx4090-48gb";
  const auto r48 = engine::simulate(make(j48));
  INFO("hit 24 GB " << r24.summary.sessions->prefix_hit_rate << ", 48 GB " << r48.summary.sessions->prefix_hit_rate);
  // More KV memory keeps more histories between turns at the same load.
  CHECK(r48.summary.sessions->prefix_hit_rate > 0.3);
  CHECK(r48.summary.sessions->prefix_hit_rate > r24.summary.sessions->prefix_hit_rate);
  CHECK(r48.summary.ttft_ms.p95 < r24.summary.ttft_ms.p95);
  // Without prefix caching every turn recomputes its history.
  Json off = base;
  off["engine"]["enable_prefix_caching"] = false;
  const auto roff = engine::simulate(make(off));
  CHECK(roff.summary.ttft_ms.p95 > r24.summary.ttft_ms.p95);
  // Four replicas at four times the load: a session's turns on the replica that holds its history.
  Json four = base;
  four["hardware"]["replicas"] = 4;
  four["workload"]["arrival"]["rate"] = 4 * base["workload"]["arrival"]["rate"].get<double>();
  four["workload"]["num_requests"] = 6000;
  Json rr = four;
  rr["hardware"]["router"] = "round_robin";
  const auto ra = engine::simulate(make(four));
  const auto rrr = engine::simulate(make(rr));
  INFO("affinity " << ra.summary.sessions->prefix_hit_rate << ", round robin " << rrr.summary.sessions->prefix_hit_rate);
  CHECK(ra.summary.sessions->prefix_hit_rate > rrr.summary.sessions->prefix_hit_rate);
}

namespace {

// Two drivers, one hashing incrementally and one from scratch, through the same random interleaving of sessions:
// turns completed or not, sessions ended early, truncation, and clipped or rejected prompts.
void sess_compare_hashing(spec::TooLongPolicy too_long) {
  spec::SessionSpec sp;
  sp.turns = spec::LogNormalLength{6.0, 0.8};
  sp.system_tokens = spec::LogNormalLength{300.0, 0.8};
  sp.system_prompts = 3;
  sp.user_tokens = spec::LogNormalLength{80.0, 1.0};
  sp.output_tokens = spec::LogNormalLength{120.0, 0.8};
  sp.think_time_ms = spec::FixedLength{1000};
  engine::detail::SessionDriver inc(sp, 11, 1024, too_long, 16, true);
  engine::detail::SessionDriver ref(sp, 11, 1024, too_long, 16, true);
  ref.reference_hashing(true);
  std::mt19937_64 pick(5);
  std::vector<std::int32_t> active;
  std::int64_t draws = 0, dropped = 0, clipped = 0, rejected = 0, lost = 0, reused = 0;
  for (int step = 0; step < 6000; ++step) {
    if (active.size() < 12 && pick() % 3 == 0) {
      const auto a = inc.start();
      REQUIRE(ref.start() == a);
      active.push_back(a);
      continue;
    }
    if (active.empty()) continue;
    const std::size_t at = pick() % active.size();
    const std::int32_t slot = active[at];
    if (pick() % 50 == 0) {  // the run stops issuing this session's turns
      inc.end(slot);
      ref.end(slot);
      active.erase(active.begin() + static_cast<std::ptrdiff_t>(at));
      continue;
    }
    const std::vector<std::uint64_t> before = [&] {
      const auto d = inc.draw_turn(slot);  // (drawn below for the reference too)
      return d.keys ? *d.keys : std::vector<std::uint64_t>{};
    }();
    const auto b = ref.draw_turn(slot);
    ++draws;
    dropped += b.dropped_turns > 0;
    clipped += b.clipped;
    rejected += b.too_long;
    if (!b.too_long) {
      REQUIRE(b.keys);
      CHECK(before == *b.keys);  // block for block, the same cache keys
      // Keys are unique within a chain (a block's key fixes its place): the cache holds each key in one place.
      std::vector<std::uint64_t> sorted = *b.keys;
      std::sort(sorted.begin(), sorted.end());
      REQUIRE(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
      reused += b.keys->size() > 8;
    } else {
      CHECK(before.empty());
    }
    const bool completed = !b.too_long && pick() % 5 != 0;
    lost += !completed;
    inc.turn_ended(slot, completed);
    ref.turn_ended(slot, completed);
    const auto next = inc.next_turn_time(slot, 1.0);
    REQUIRE(next.has_value() == ref.next_turn_time(slot, 1.0).has_value());
    if (!next) active.erase(active.begin() + static_cast<std::ptrdiff_t>(at));
  }
  INFO("draws " << draws << ", dropped " << dropped << ", clipped " << clipped << ", rejected " << rejected);
  CHECK(draws > 2000);
  CHECK(dropped > 50);  // the cases the reuse must get right were exercised
  CHECK(lost > 100);
  CHECK(reused > 1000);
  if (too_long == spec::TooLongPolicy::clip) CHECK(clipped > 0);
  else CHECK(rejected > 0);
}

}  // namespace

TEST_CASE("sessions: hashing only a turn's new blocks gives the keys of hashing them all", "[sessions]") {
  sess_compare_hashing(spec::TooLongPolicy::clip);
  sess_compare_hashing(spec::TooLongPolicy::reject);
}

TEST_CASE("sessions: a chain's cached and referenced blocks stay prefixes of it (the lookup's binary search)", "[sessions]") {
  // Requests hold blocks [0, n) of a chain as the replica does: acquire the cached prefix, publish the blocks they
  // compute in order, release deepest first. Chains share prefixes (a system prompt; a turn extends the previous
  // one). Allocations evict. After every step, each chain's states read 1…1 0…0 −1…−1 (referenced, cached, absent).
  const int kChains = 6, kLen = 24;
  std::vector<std::vector<std::uint64_t>> chains(kChains);
  for (int c = 0; c < kChains; ++c)
    for (int k = 0; k < kLen; ++k) {
      const bool shared = k < 6 || (c % 2 == 1 && k < 12);  // 6 blocks for all; odd chains extend the even before
      const std::uint64_t owner = k < 6 ? 0 : shared ? static_cast<std::uint64_t>(c - 1) : static_cast<std::uint64_t>(c);
      chains[static_cast<std::size_t>(c)].push_back(engine::KvBlockManager::block_key(
          engine::KvBlockManager::chain_hash(owner + 1, static_cast<std::uint64_t>(k)), k));
    }
  engine::KvBlockManager kv(64, 16, 0.0, 0);
  struct Held {
    int chain;
    std::int64_t published, own;
  };
  std::vector<Held> held;
  std::mt19937_64 pick(3);
  std::map<std::uint64_t, int> was;  // each key's state after the previous step
  std::int64_t hits = 0, evictions = 0;
  const auto check_prefixes = [&] {
    for (const auto& ch : chains) {
      int last = 1;
      for (const auto key : ch) {
        const int st = kv.block_state(key);
        REQUIRE(st <= last);
        last = st;
        const auto it = was.find(key);
        evictions += st < 0 && it != was.end() && it->second == 0;  // cached and unreferenced, then gone
        was[key] = st;
      }
    }
  };
  for (int step = 0; step < 20000; ++step) {
    if (held.size() < 4 && pick() % 2 == 0) {
      const int c = static_cast<int>(pick() % kChains);
      const auto& ch = chains[static_cast<std::size_t>(c)];
      const std::int64_t n = 1 + static_cast<std::int64_t>(pick() % kLen);
      const engine::KvBlockManager::ChainKeys keys{ch.data()};
      std::int64_t h = 0, evictable = 0;  // the block-by-block walk ...
      while (h < n && kv.block_state(ch[static_cast<std::size_t>(h)]) >= 0) evictable += kv.block_state(ch[static_cast<std::size_t>(h++)]) == 0;
      std::int64_t referenced = -1;  // ... and the cache's own, by segments
      REQUIRE(kv.chain_cached(keys, n, &referenced) == h);
      REQUIRE(h - referenced == evictable);
      if (!kv.can_grow(n - h + evictable)) continue;
      kv.acquire_chain(keys, h);
      kv.allocate(n - h);
      const std::int64_t p = h + kv.publish_chain(keys, h, n);
      if (p < n) REQUIRE(kv.block_state(ch[static_cast<std::size_t>(p)]) >= 0);  // publishing stops at a cached block
      held.push_back({c, p, n - p});
      hits += h;
    } else if (!held.empty()) {
      const std::size_t at = pick() % held.size();
      const Held x = held[at];
      kv.release(x.own);
      kv.release_chain(engine::KvBlockManager::ChainKeys{chains[static_cast<std::size_t>(x.chain)].data()}, x.published);
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(at));
    }
    check_prefixes();
  }
  CHECK(hits > 1000);
  CHECK(evictions > 100);
}

TEST_CASE("sessions: the driver's memory follows the active sessions, not the finished ones", "[sessions]") {
  spec::SessionSpec sp;
  sp.turns = spec::FixedLength{20};
  sp.system_tokens = spec::LogNormalLength{300.0, 0.8};
  sp.system_prompts = 1000;  // more prompts than the driver keeps
  sp.user_tokens = spec::LogNormalLength{80.0, 1.0};
  sp.output_tokens = spec::LogNormalLength{120.0, 0.8};
  sp.think_time_ms = spec::FixedLength{1000};
  engine::detail::SessionDriver d(sp, 3, 1024, spec::TooLongPolicy::clip, 16, true);
  std::vector<std::int32_t> active;
  std::mt19937_64 pick(9);
  std::size_t bytes_early = 0;
  while (d.finished() < 20000) {
    if (active.size() < 8) active.push_back(d.start());
    const std::size_t at = pick() % active.size();
    (void)d.draw_turn(active[at]);
    d.turn_ended(active[at], true);
    if (!d.next_turn_time(active[at], 0.0)) active.erase(active.begin() + static_cast<std::ptrdiff_t>(at));
    if (d.finished() == 1000 && bytes_early == 0) bytes_early = d.state_bytes();
  }
  INFO("bytes after 1,000 sessions " << bytes_early << ", after 20,000 " << d.state_bytes());
  CHECK(d.slots() <= 8);
  CHECK(d.peak_active() <= 8);
  // 20x the finished sessions in the same footprint: each slot's vectors are bounded by max_model_len (1024 tokens:
  // at most 64 blocks, 20 turns), the kept system prompts by 64 slots.
  CHECK(d.state_bytes() < 2 * bytes_early);
  CHECK(d.state_bytes() < 160 * 1024);
}
