// The lifecycle's KV invariant (engine/kv_holdings.hpp) and the engine's count of its requests
// (request_lifecycle.hpp): the check catches a broken state, and runs where mechanisms meet satisfy it. Debug and
// sanitizer builds run Simulation::check_holdings inside every simulation of every test; here the check itself is
// called on states built by hand, so a leak or a double free fails in Release too.
#include <catch2/catch.hpp>

#include "../../libsim/src/engine/kv_holdings.hpp"
#include "../../libsim/src/engine/request_lifecycle.hpp"
#include "engine_test_util.hpp"
#include "session_test_util.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/simulator.hpp"

using namespace llmsim;
using engine::KvBlockManager;
using engine::detail::check_kv_holdings;
using engine::detail::KvHoldings;

namespace {

bool holds(const KvBlockManager& kv, KvHoldings h) {
  try {
    check_kv_holdings(kv, h, 3);
    return true;
  } catch (const InternalError& e) {
    CHECK(std::string(e.what()).find("engine 3") != std::string::npos);
    return false;
  }
}

}  // namespace

TEST_CASE("the KV check: blocks in use = own blocks + each shared block referenced, once", "[lifecycle][kv_holdings]") {
  KvBlockManager kv(64, 16, 0.0, 0);
  kv.allocate(3);
  CHECK(holds(kv, {3, {}, {}, 0}));
  CHECK_FALSE(holds(kv, {2, {}, {}, 0}));  // a block leaked: in use, held by nobody
  CHECK_FALSE(holds(kv, {4, {}, {}, 0}));  // a block freed twice: held, not in use

  // A shared prefix of 4 blocks, referenced by two requests: counted once.
  const std::uint64_t prefix = 77;
  kv.acquire_prefix(prefix, 4);
  kv.acquire_prefix(prefix, 4);
  CHECK(kv.used() == 7);
  CHECK(holds(kv, {3, {prefix, prefix}, {}, 0}));
  CHECK_FALSE(holds(kv, {3, {}, {}, 0}));            // nobody claims the prefix
  CHECK_FALSE(holds(kv, {3, {prefix, 78}, {}, 0}));  // a prefix the cache does not hold
  kv.release_prefix(prefix);
  CHECK(holds(kv, {3, {prefix}, {}, 0}));
  kv.release_prefix(prefix);  // unreferenced: cached as free, no longer in use
  CHECK(kv.used() == 3);
  CHECK(holds(kv, {3, {}, {}, 0}));
  CHECK_FALSE(holds(kv, {3, {prefix}, {}, 0}));  // a request still claims a prefix it released

  // A hashed block (block-hash traces, sessions): one of the request's blocks registered under its key.
  const std::uint64_t key = KvBlockManager::block_key(KvBlockManager::chain_hash(0, 5), 0);
  const std::uint64_t keys[] = {key};
  const KvBlockManager::ChainKeys chain{keys};
  kv.allocate(1);
  REQUIRE(kv.publish_chain(chain, 0, 1) == 1);
  CHECK(holds(kv, {3, {}, {key, key}, 0}));
  CHECK_FALSE(holds(kv, {4, {}, {key}, 0}));  // counted as own and as shared
  kv.release_chain(chain, 1);
  CHECK(holds(kv, {3, {}, {}, 0}));
  CHECK_FALSE(holds(kv, {3, {}, {key}, 0}));
}

TEST_CASE("an engine's count of its requests moves only with the lifecycle's engine moves", "[lifecycle][kv_holdings]") {
  using engine::detail::Seq;
  using engine::detail::SeqState;
  std::int64_t outstanding = 0;
  Seq s;
  engine::detail::enter_engine(s, outstanding);
  CHECK((s.state == SeqState::waiting && outstanding == 1));
  engine::detail::transition(s, SeqState::prefill);
  engine::detail::finish_at_engine(s, outstanding);
  CHECK((s.finished && outstanding == 0 && s.state == SeqState::prefill));

  Seq t;
  engine::detail::enter_engine(t, outstanding);
  engine::detail::transition(t, SeqState::prefill);
  engine::detail::leave_engine(t, SeqState::handoff, outstanding);  // a prompt handed to the decode pool
  CHECK((t.state == SeqState::handoff && outstanding == 0));
  // The move itself is checked always: a handed-off request cannot be prefilled again.
  CHECK_THROWS_AS(engine::detail::leave_engine(t, SeqState::prefill, outstanding), InternalError);
#ifdef LLMSIM_DEEP_CHECKS_ON
  // Debug and sanitizer builds: a second finish, or a leave of an engine that did not count it, fails where it happens.
  outstanding = 0;
  CHECK_THROWS_AS(engine::detail::finish_at_engine(s, outstanding), InternalError);
#endif
}

TEST_CASE("sessions where timeouts, failures and an autoscaler meet: every turn counted once", "[lifecycle][sessions]") {
  // Session turns are closed-loop requests whose history rides the prefix cache: a timed-out or failed turn frees its
  // blocks (its history's shared blocks stay cached), and its session moves on.
  for (const char* policy : {"vllm", "chunked"}) {
    for (const bool autoscale : {false, true}) {
      CAPTURE(policy, autoscale);
      Json w = {{"arrival", {{"process", "poisson"}, {"rate", 3}}},
                {"sessions", {{"preset", "chat"}, {"turns", {{"dist", "fixed"}, {"value", 4}}},
                              {"think_time_ms", {{"dist", "fixed"}, {"value", 200}}}}},
                {"num_requests", 600},
                {"warmup_requests", 30},
                {"timeout_s", 1.5}};
      Json j = llmsim::test::scenario(w, {{"policy", policy}});
      j["hardware"] = {{"gpu", "rtx4090-24gb"}, {"replicas", 2}, {"router", "session_affinity"}};
      j["failures"] = {{"mtbf_h", 20.0 / 3600}, {"mttr_h", 3.0 / 3600}, {"on_failure", "requeue"}, {"max_retries", 1}};
      if (autoscale)
        j["autoscaler"] = {{"min_replicas", 1}, {"max_replicas", 3}, {"interval_s", 1}, {"scale_up_delay_s", 5},
                           {"queue_per_replica", 4}};
      engine::SimulationOptions opt;
      opt.record_requests = true;
      const auto r = engine::simulate(llmsim::test::make(j), opt);
      const auto& s = r.summary;
      REQUIRE(s.complete);
      CHECK(r.kv_blocks_in_use_at_end == 0);
      CHECK(s.offered.arrivals + s.warmup.arrivals == 600);
      CHECK(s.offered.arrivals == s.rejected_requests + s.completed_requests + s.failed_requests + s.timed_out_requests +
                                      s.unfinished_requests);
      CHECK(s.timed_out_requests + s.failed_requests > 0);  // the features met
      llmsim::test::check_turns_conserved(s);
      CHECK(static_cast<std::int64_t>(r.requests.size()) == 600 - s.rejected_requests - s.warmup.rejected);
    }
  }
}
