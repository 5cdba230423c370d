// Issue 29: vLLM V1 holds a linear-attention layer's state (Qwen3.5, Qwen3-Next: gated DeltaNet) as blocks of the KV
// pool, taken when a request is scheduled (MambaSpec, one block per request and mamba group): nothing is reserved for
// max_num_seqs, and the pool bounds how many run at once. The engine charges memory::MemoryPlan's
// linear_state_blocks_per_seq per running sequence; these runs check it never runs more than their states fit.
#include <catch2/catch.hpp>

#include <algorithm>

#include "llmsim/engine/simulator.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "engine_test_util.hpp"

using namespace llmsim;

TEST_CASE("issue 29: Qwen3.5-27B on one H200 at 1,024 sequences runs as many as the pool holds states for") {
  const auto r = test::offline_burst("qwen3.5-27b", "h200-141gb-sxm", 1500, 256, 64,
                                     {{"max_num_seqs", 1024},
                                      {"max_num_batched_tokens", 8192},
                                      {"max_model_len", 32768}});
  REQUIRE(r.plan.fits);
  REQUIRE(r.result.summary.fits);
  CHECK(r.result.summary.completed_requests == 1500);
  CHECK(r.result.kv_blocks_in_use_at_end == 0);  // every state block came back
  // The states bound the running set, not max_num_seqs: never more than fit, and close to that many.
  const std::int64_t fit = r.plan.linear_state_seqs_fit;
  REQUIRE(fit > 0);
  REQUIRE(fit < 1024);
  CHECK(r.most_running <= fit);
  // Each also holds its 256 + 64 tokens' KV (20 blocks beside ~147 of state): the pool fills with at least that many.
  const std::int64_t at_most_per_seq = r.plan.linear_state_blocks_per_seq + 20;
  CHECK(r.most_running >= r.plan.kv_capacity_blocks / at_most_per_seq);
}

TEST_CASE("issue 29: Qwen3-Next on two H200s: the running set is bounded by state and KV together") {
  // Long replies keep every admitted request running: the pool, not the arrivals, decides how many run.
  const auto r = test::offline_burst("qwen3-next-80b-a3b", "2xh200-141gb-sxm", 1200, 4096, 2048,
                                     {{"max_num_seqs", 1024}, {"max_model_len", 16384}, {"cuda_graphs", false}});
  REQUIRE(r.plan.fits);
  CHECK(r.result.summary.completed_requests == 1200);
  CHECK(r.result.kv_blocks_in_use_at_end == 0);
  // A sequence holds its state and 4,096 to 6,144 tokens of KV: fewer run than the states alone would allow.
  const std::int64_t state = r.plan.linear_state_blocks_per_seq;
  CHECK(r.most_running <= r.plan.kv_capacity_blocks / (state + 4096 / 16));
  CHECK(r.most_running >= r.plan.kv_capacity_blocks / (state + 6144 / 16 + 1));
  CHECK(r.most_running < r.plan.linear_state_seqs_fit);
  CHECK(r.most_running < 1024);
}
