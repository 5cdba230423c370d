// SGLang caps its running requests by its Mamba pool (issue 29; memory/sglang_mamba_pool.hpp): a third of the slots
// with the radix cache, the slots themselves without it. The engine runs at most MemoryPlan::max_running_requests, so
// a burst on Nemotron-3-Nano never has more sequences in a step than SGLang's scheduler would admit.
#include <catch2/catch.hpp>

#include <algorithm>

#include "engine_test_util.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/memory/memory_plan.hpp"

using namespace llmsim;

namespace {
// An offline burst of `n` prompts of 256 tokens, 32 out, on Nemotron-3-Nano / one H100 under SGLang `engine`.
test::OfflineBurst mamba_cap_burst(int n, const Json& engine) {
  return test::offline_burst("nemotron-3-nano-30b-a3b", "h100-80gb-sxm", n, 256, 32, engine);
}
}  // namespace

TEST_CASE("SGLang's Mamba pool caps the running requests of a hybrid model in simulate", "[sglang][mamba]") {
  // Radix cache on (no release: the newest line modelled): slots / 3, far below SGLang's 2,048.
  const auto on = mamba_cap_burst(400, {{"runtime", "sglang"}});
  INFO(on.plan.reason);
  REQUIRE(on.plan.fits);
  REQUIRE(on.result.summary.fits);
  CHECK(on.result.summary.completed_requests == 400);
  const std::int64_t cap = on.plan.max_running_requests;
  CHECK(cap == on.plan.linear_state_slots / 3);
  REQUIRE(cap < 400);
  CHECK(on.most_running <= cap);
  CHECK(on.most_running == cap);  // the KV pool holds far more of these short requests: the pool is the bound
  // Radix cache off by release (0.5.5: before the Mamba-2 radix cache) with --max-running-requests 24: 24 slots.
  const auto off = mamba_cap_burst(200, {{"runtime", "sglang==0.5.5"}, {"max_num_seqs", 24}});
  INFO(off.plan.reason);
  REQUIRE(off.plan.fits);
  CHECK(off.plan.linear_state_slots == 24);
  CHECK(off.result.summary.completed_requests == 200);
  CHECK(off.most_running == 24);
}
