// SGLang's Mamba state pool for hybrid models (issue 29; memory/sglang_mamba_pool.hpp): a fixed pool of state slots
// beside the token pool, sized by the radix cache's memory ratio (rest x 0.9 / 1.9, running requests capped at
// slots / 3) or, with the radix cache off (a flag, or a release before the layer kind had it), by
// max_running_requests (512 when unset). The old rule reserved max_num_seqs (2,048) states and said Nemotron-3-Nano
// does not fit one H100, where SGLang starts.
#include <catch2/catch.hpp>

#include <cmath>

#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "memory_test_util.hpp"

using namespace llmsim;
using namespace llmsim::spec;
using llmsim::memory::plan_memory;
using test::cat;

namespace {

/// `model` in BF16 on one H100 under SGLang `release` ("" = no release) with `seqs` running requests at most.
memory::MemoryPlan smp_plan(const std::string& model, const std::string& release, int seqs, bool radix = true) {
  const auto g = cat().gpu("h100-80gb-sxm");
  Quantization q;
  q.weights = format_for_gpu(weight_format("bf16"), g);
  EngineConfig e;
  e.policy = SchedulerPolicy::sglang;
  e.runtime = Runtime::sglang;
  if (!release.empty()) e.runtime_release = release;
  e.max_num_seqs = seqs;
  e.gpu_memory_utilization = 0.85;
  e.enable_prefix_caching = radix;
  return plan_memory(cat().model(model), q, g, ParallelConfig{1, 1}, e, 32768);
}

/// Nemotron-3-Nano's slot: 23 Mamba layers of a BF16 conv window 3 x (4096 + 2 x 8 x 128) and an FP32 SSM state
/// 64 x 64 x 128 (its config's mamba_ssm_dtype, SGLang's default too), unpadded.
constexpr double kNanoSlot = 23.0 * (3.0 * 6144 * 2 + 64.0 * 64 * 128 * 4);

}  // namespace

TEST_CASE("SGLang's Mamba pool: Nemotron-3-Nano fits one H100 with the radix cache's share, not 2,048 states",
          "[sglang][mamba]") {
  const auto p = smp_plan("nemotron-3-nano-30b-a3b", "", 2048);
  INFO(p.reason);
  REQUIRE(p.fits);
  const auto& g = p.per_gpu;
  CHECK(p.linear_state_bytes_per_seq_per_gpu == Approx(kNanoSlot));
  // The old rule's reservation: 2,048 states, 100.5 GB, more than the card.
  CHECK(2048 * p.linear_state_bytes_per_seq_per_gpu > 100e9);
  // The states take 0.9 / 1.9 of what the token pool would have had, in whole slots.
  const double rest = static_cast<double>(g.linear_state_bytes + g.kv_cache_bytes);
  CHECK(p.linear_state_memory_ratio == 0.9);
  CHECK(p.linear_state_slots == static_cast<std::int64_t>(std::floor(rest * 0.9 / 1.9 / kNanoSlot)));
  CHECK(static_cast<double>(g.linear_state_bytes) == Approx(static_cast<double>(p.linear_state_slots) * kNanoSlot).margin(1));
  REQUIRE(p.linear_state_slots > 30);
  // Running requests: a third of the slots, below SGLang's 2,048.
  CHECK(p.max_running_requests == p.linear_state_slots / 3);
  CHECK(p.max_running_requests < 2048);
  // A lower --max-running-requests wins.
  CHECK(smp_plan("nemotron-3-nano-30b-a3b", "", 8).max_running_requests == 8);
  // The KV pool is the rest: its 1 / 1.9 share and what the whole slots leave (less than one slot), in tokens of
  // 6 attention layers x 2 KV heads x 128 x 2 x 2 bytes.
  const double kv = static_cast<double>(g.kv_cache_bytes);
  CHECK(kv >= rest / 1.9 - 1);
  CHECK(kv < rest / 1.9 + kNanoSlot);
  CHECK(static_cast<double>(p.kv_capacity_tokens) == Approx(kv / (6.0 * 2 * 128 * 2 * 2)).margin(32));  // whole blocks
  // Releases with the Mamba-2 radix cache (sglang#13584, 0.5.6) plan the same; 0.5.5 does not (below).
  CHECK(smp_plan("nemotron-3-nano-30b-a3b", "sglang==0.5.6", 2048).linear_state_slots == p.linear_state_slots);
}

TEST_CASE("SGLang's Mamba pool without the radix cache: max_running_requests slots, 512 when unset",
          "[sglang][mamba]") {
  const ModelSpec nano = cat().model("nemotron-3-nano-30b-a3b");
  const ModelSpec next = cat().model("qwen3-next-80b-a3b");
  const auto h100 = cat().gpu("h100-80gb-sxm");
  // Which releases force it off: Mamba-2 before 0.5.6 (sglang#13584), gated DeltaNet before 0.5.4 (sglang#11214).
  CHECK(sglang_release_without_hybrid_radix_cache(std::string("sglang==0.5.5.post3"), true).has_value());
  CHECK_FALSE(sglang_release_without_hybrid_radix_cache(std::string("sglang==0.5.6"), true).has_value());
  CHECK(sglang_release_without_hybrid_radix_cache(std::string("sglang==0.5.3"), false).has_value());
  CHECK_FALSE(sglang_release_without_hybrid_radix_cache(std::string("sglang==0.5.4"), false).has_value());
  CHECK_FALSE(sglang_release_without_hybrid_radix_cache(std::nullopt, true).has_value());
  CHECK_FALSE(sglang_release_without_hybrid_radix_cache(std::string("vllm==0.10.0"), true).has_value());
  // An unset max_running_requests: 512 where the radix cache is off, SGLang's 2,048 where it is on.
  auto seqs = [&](const ModelSpec& m, const char* release, bool radix) {
    EngineConfig e;
    e.policy = SchedulerPolicy::sglang;
    e.runtime = Runtime::sglang;
    if (*release) e.runtime_release = release;
    e.max_num_seqs = 0;
    e.enable_prefix_caching = radix;
    return effective_engine(e, h100, false, &m).max_num_seqs;
  };
  CHECK(seqs(nano, "sglang==0.5.5", true) == 512);
  CHECK(seqs(nano, "sglang==0.5.6", true) == 2048);
  CHECK(seqs(nano, "", false) == 512);  // --disable-radix-cache
  CHECK(seqs(next, "sglang==0.5.3", true) == 512);
  CHECK(seqs(next, "sglang==0.5.4", true) == 2048);
  CHECK(seqs(cat().model("llama-3.1-8b"), "sglang==0.5.3", false) == 2048);  // no Mamba pool: unchanged

  // The pool is that many slots, and as many run.
  const auto p = smp_plan("nemotron-3-nano-30b-a3b", "sglang==0.5.5", 64);
  INFO(p.reason);
  REQUIRE(p.fits);
  CHECK(p.linear_state_slots == 64);
  CHECK(p.linear_state_memory_ratio == 0);
  CHECK(p.max_running_requests == 64);
  CHECK(static_cast<double>(p.per_gpu.linear_state_bytes) == Approx(64 * kNanoSlot).margin(1));
  CHECK(smp_plan("nemotron-3-nano-30b-a3b", "", 64, false).linear_state_slots == 64);
  // 512 states (25 GB) do not fit beside 63 GB of weights: SGLang fails to allocate them, and the plan says so.
  const auto dflt = smp_plan("nemotron-3-nano-30b-a3b", "sglang==0.5.5", 512);
  CHECK_FALSE(dflt.fits);
  CHECK_THAT(dflt.reason, Catch::Contains("max_num_seqs 512"));
  // Qwen3-Next at 0.5.3 (radix cache forced off) and 0.5.4 (on) on one H200 in FP8.
  const auto g = cat().gpu("h200-141gb-sxm");
  Quantization q;
  q.weights = format_for_gpu(weight_format("fp8"), g);
  EngineConfig e;
  e.policy = SchedulerPolicy::sglang;
  e.runtime = Runtime::sglang;
  e.gpu_memory_utilization = 0.85;
  e.runtime_release = "sglang==0.5.3";
  e.max_num_seqs = 256;
  const auto old = plan_memory(next, q, g, ParallelConfig{1, 1}, e, 32768);
  e.runtime_release = "sglang==0.5.4";
  e.max_num_seqs = 2048;
  const auto now = plan_memory(next, q, g, ParallelConfig{1, 1}, e, 32768);
  INFO(old.reason << " / " << now.reason);
  REQUIRE(old.fits);
  REQUIRE(now.fits);
  CHECK(old.linear_state_slots == 256);
  CHECK(old.max_running_requests == 256);
  CHECK(now.linear_state_memory_ratio == 0.9);
  CHECK(now.max_running_requests == now.linear_state_slots / 3);
  // A gated-DeltaNet slot: its DeltaNet layers' conv window in BF16 and FP32 recurrent state (SGLang's default dtype).
  const double conv = static_cast<double>(next.linear_conv_state_elements_per_layer());
  const double ssm = static_cast<double>(next.linear_state_elements_per_layer()) - conv;
  CHECK(now.linear_state_bytes_per_seq_per_gpu ==
        Approx((conv * 2 + ssm * 4) * next.linear_attention_layers));
}

TEST_CASE("vLLM's hybrid plans have no SGLang pool: V1 pages, V0 max_num_seqs states", "[sglang][mamba]") {
  const auto g = cat().gpu("h100-80gb-sxm");
  Quantization q;
  q.weights = format_for_gpu(weight_format("bf16"), g);
  EngineConfig v1;
  v1.max_num_seqs = 256;
  const auto a = plan_memory(cat().model("nemotron-3-nano-30b-a3b"), q, g, ParallelConfig{1, 1}, v1, 32768);
  REQUIRE(a.fits);
  CHECK(a.linear_state_slots == 0);
  CHECK(a.linear_state_memory_ratio == 0);
  CHECK(a.per_gpu.linear_state_bytes == 0);
  CHECK(a.max_running_requests == 256);
  CHECK(a.linear_state_blocks_per_seq > 0);
  EngineConfig v0;
  v0.policy = SchedulerPolicy::vllm_v0;
  v0.max_num_seqs = 32;
  const auto b = plan_memory(cat().model("nemotron-3-nano-30b-a3b"), q, g, ParallelConfig{1, 1}, v0, 32768);
  REQUIRE(b.fits);
  CHECK(b.linear_state_slots == 0);
  CHECK(b.max_running_requests == 32);
  CHECK(static_cast<double>(b.per_gpu.linear_state_bytes) == Approx(32 * b.linear_state_bytes_per_seq_per_gpu).margin(1));
}
