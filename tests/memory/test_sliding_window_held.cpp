// What one running sequence holds in vLLM V1's hybrid KV-cache manager: a sliding-window group frees the blocks that
// left its window (SlidingWindowManager.remove_skipped_blocks, run by allocate_slots before it allocates), so a long
// decoder's sliding groups hold a constant handful of blocks (memory::KvLayout::blocks_held).
#include <catch2/catch.hpp>

#include <cstdint>

#include "llmsim/memory/kv_layout.hpp"
#include "llmsim/spec/catalog.hpp"
#include "memory_test_util.hpp"

using namespace llmsim;
using llmsim::memory::kv_layout;
using test::cat;

namespace {
std::int64_t swa_cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
}  // namespace

TEST_CASE("gpt-oss: a decoder past the window holds its full group's blocks and nine of the sliding group's") {
  const auto l = kv_layout(cat().model("gpt-oss-120b"), spec::ParallelConfig{1, 1}, 2.0, true);
  // 36 layers, alternating: one full and one sliding group of 18, window 128.
  REQUIRE(l.full_groups == 1);
  REQUIRE(l.sliding_groups == 1);
  REQUIRE(l.window == 128);
  // Decoding its 1001st token after 1000 computed: the full group 63 blocks; the sliding group's tokens
  // [873, 1001) attend, blocks 0..53 (tokens < 864) are freed: 63 − 54 = 9.
  CHECK(l.blocks_held(1000, 1, 16) == 63 + 9);
  // One token later in the block the freeing runs one block ahead of the allocation: 8 (tokens 880..1007).
  CHECK(l.blocks_held(1007, 1, 16) == 63 + 8);
  // Inside the window nothing is freed: every group holds every token, as blocks_for counts.
  CHECK(l.blocks_held(100, 1, 16) == 2 * 7);
  CHECK(l.blocks_held(127, 1, 16) == 2 * 8);
  // A prefill chunk holds the window behind its first token plus the chunk: 2048 new on 4096 computed.
  CHECK(l.blocks_held(4096, 2048, 16) == 384 + (384 - (4096 - 127) / 16));
  // What the pool spends per 400-token and 32k-token decoder against charging every group for every token (what
  // llmsim's engine charged): about 1.5x and 2x more sequences fit.
  const auto all_groups = [&](std::int64_t t) { return l.groups() * swa_cdiv(t, 16); };
  CHECK(l.blocks_held(400, 1, 16) == 26 + 9);
  CHECK(static_cast<double>(all_groups(401)) / l.blocks_held(400, 1, 16) == Approx(52.0 / 35));
  CHECK(l.blocks_held(32768, 1, 16) == 2049 + 9);
  CHECK(static_cast<double>(all_groups(32769)) / l.blocks_held(32768, 1, 16) == Approx(4098.0 / 2058));
}

TEST_CASE("blocks_held never exceeds vLLM's per-request bound and equals it inside the window") {
  for (const char* name : {"gpt-oss-20b", "gemma-3-27b", "mistral-7b", "llama-3.1-8b"}) {
    const auto l = kv_layout(cat().model(name), spec::ParallelConfig{1, 1}, 2.0, true);
    INFO(name);
    for (const std::int64_t n : {1, 5, 512, 2048})
      for (std::int64_t c = 0; c < 6000; c += 37) {
        INFO(c << " + " << n);
        const std::int64_t bound = l.blocks_for(c + n, 16, n);
        CHECK(l.blocks_held(c, n, 16) <= bound);
        if (l.window == 0 || c <= l.window - 1) CHECK(l.blocks_held(c, n, 16) == bound);
        // Monotone in the computed tokens for a fixed step size: the engine's growth is never negative over a block.
        CHECK(l.blocks_held(c + 16, n, 16) >= l.blocks_held(c, n, 16));
      }
  }
}

TEST_CASE("full attention and vLLM V0's full-context layout hold every token in every group") {
  const auto llama = kv_layout(cat().model("llama-3.1-8b"), spec::ParallelConfig{1, 1}, 2.0, true);
  REQUIRE(llama.window == 0);
  CHECK(llama.blocks_held(32768, 1, 16) == swa_cdiv(32769, 16));
  CHECK(llama.blocks_held(0, 0, 16) == 0);
  // Without the hybrid manager (V0, --disable-hybrid-kv-cache-manager) gpt-oss's sliding layers keep full context.
  const auto v0 = kv_layout(cat().model("gpt-oss-120b"), spec::ParallelConfig{1, 1}, 2.0, false);
  REQUIRE(v0.window == 0);
  CHECK(v0.blocks_held(32768, 1, 16) == v0.groups() * swa_cdiv(32769, 16));
  // Gemma-3-27B: one full group and six sliding ones of window 1024; a 32k decoder's sliding groups keep 65 blocks
  // each (tokens 31745.. of blocks 1984..2048).
  const auto g3 = kv_layout(cat().model("gemma-3-27b"), spec::ParallelConfig{1, 1}, 2.0, true);
  CHECK(g3.blocks_held(32768, 1, 16) == 2049 + 6 * (2049 - 31745 / 16));
}
