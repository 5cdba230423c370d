// Speculative decoding in the engine (engine/speculative.hpp, docs/speculative-decoding.md): a decoder emits the
// expected (1 − α^{k+1}) / (1 − α) tokens per step, never past its output; acceptance 0 only costs; high acceptance
// at batch 1 cuts TPOT by at most k + 1; at a large compute-bound batch speculation loses throughput.
#include <catch2/catch.hpp>

#include "engine_test_util.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/memory/memory_plan.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

/// llama-3.1-8b on one `gpu` (default an RTX 4090), fixed lengths; `speculative` null = off.
Json spec_scenario(const Json& arrival, int output, std::int64_t requests, const Json& speculative,
              std::optional<double> acceptance = std::nullopt, const char* gpu = "rtx4090-24gb") {
  Json w{{"arrival", arrival},
         {"input_tokens", {{"dist", "fixed"}, {"value", 512}}},
         {"output_tokens", {{"dist", "fixed"}, {"value", output}}},
         {"num_requests", requests},
         {"warmup_requests", 0},
         {"seed", 7}};
  if (acceptance) w["speculative_acceptance_rate"] = *acceptance;
  Json e{{"max_model_len", 4096}, {"max_num_seqs", 256}, {"max_num_batched_tokens", 4096}};
  if (!speculative.is_null()) e["speculative"] = speculative;
  return Json{{"model", "llama-3.1-8b"}, {"hardware", {{"gpu", gpu}}}, {"engine", e}, {"workload", w}};
}

const Json kOne = {{"process", "closed"}, {"concurrency", 1}, {"think_time_s", 0}};
const Json kOffline = {{"process", "offline"}};
const Json kEagle4 = {{"method", "eagle"}, {"num_speculative_tokens", 4}};

engine::SimulationResult spec_run(const Json& j) { return engine::simulate(make(j)); }

}  // namespace

TEST_CASE("speculative decoding: acceptance 0 is strictly slower than none", "[speculative]") {
  const auto off = spec_run(spec_scenario(kOne, 128, 8, nullptr)).summary;
  const auto zero = spec_run(spec_scenario(kOne, 128, 8, kEagle4, 0.0)).summary;
  REQUIRE(zero.speculative.enabled);
  CHECK(zero.speculative.mean_accepted_tokens == 0);
  CHECK(zero.speculative.mean_tokens_per_step == 1);
  CHECK(zero.tpot_ms.mean > off.tpot_ms.mean);
  // At load (every request at once, batches of 256): the verification and the proposer are pure overhead.
  const auto off_load = spec_run(spec_scenario(kOffline, 128, 512, nullptr)).summary;
  const auto zero_load = spec_run(spec_scenario(kOffline, 128, 512, kEagle4, 0.0)).summary;
  CHECK(zero_load.throughput.output_tokens_per_s < off_load.throughput.output_tokens_per_s);
  CHECK(zero_load.speculative.proposer_time_fraction > 0);
}

TEST_CASE("speculative decoding: high acceptance at batch 1 cuts TPOT by more than 1x and at most (k+1)x",
          "[speculative]") {
  const auto off = spec_run(spec_scenario(kOne, 256, 6, nullptr)).summary;
  for (const double a : {0.6, 0.9, 1.0}) {
    const auto on = spec_run(spec_scenario(kOne, 256, 6, kEagle4, a)).summary;
    const double gain = off.tpot_ms.mean / on.tpot_ms.mean;
    INFO("acceptance " << a << ": TPOT " << off.tpot_ms.mean << " -> " << on.tpot_ms.mean << " ms");
    CHECK(gain > 1.2);
    CHECK(gain <= 5.0);
    // ... and less than the tokens per step: each step costs more than a plain decode step.
    CHECK(gain < on.speculative.mean_tokens_per_step);
  }
}

TEST_CASE("speculative decoding: the crossover from a win at batch 1 to a loss at a compute-bound batch",
          "[speculative]") {
  // One configuration at two loads: EAGLE, k = 4, acceptance 0.6 (2.3 tokens per step) on an A100 80GB, whose
  // KV cache holds 256 sequences of this workload (on a 4090 the KV cache caps the batch near 65, where the step
  // is still bandwidth-bound and speculation still wins, 1.3x).
  const double a = 0.6;
  const auto off1 = spec_run(spec_scenario(kOne, 256, 6, nullptr, a, "a100-80gb-sxm")).summary;
  const auto on1 = spec_run(spec_scenario(kOne, 256, 6, kEagle4, a, "a100-80gb-sxm")).summary;
  INFO("batch 1: " << off1.throughput.output_tokens_per_s << " -> " << on1.throughput.output_tokens_per_s);
  CHECK(on1.throughput.output_tokens_per_s > 1.3 * off1.throughput.output_tokens_per_s);
  // 256 sequences verifying 5 tokens each: 1280 tokens per step through 8B parameters is compute-bound, so a step
  // costs about three decode steps and the 2.3 tokens it yields no longer pay for it.
  const auto off = spec_run(spec_scenario(kOffline, 256, 1024, nullptr, a, "a100-80gb-sxm")).summary;
  const auto on = spec_run(spec_scenario(kOffline, 256, 1024, kEagle4, a, "a100-80gb-sxm")).summary;
  INFO("batch " << on.batch.mean_seqs << ": " << off.throughput.output_tokens_per_s << " -> "
                << on.throughput.output_tokens_per_s << " output tok/s");
  CHECK(on.batch.mean_seqs > 150);
  CHECK(on.throughput.output_tokens_per_s < off.throughput.output_tokens_per_s);
}

TEST_CASE("speculative decoding: tokens per step follow (1 - a^(k+1)) / (1 - a), never past the output",
          "[speculative]") {
  for (const auto& [a, k] : {std::pair{0.7, 3}, std::pair{0.5, 1}, std::pair{0.95, 6}}) {
    const Json sp = {{"method", "eagle"}, {"num_speculative_tokens", k}};
    const int output = 2000;
    const auto res = spec_run(spec_scenario(kOne, output, 3, sp, a));
    const auto& s = res.summary;
    const double expected = spec::expected_tokens_per_step(a, k);
    INFO("a " << a << " k " << k);
    // Deterministic accounting: the mean is exact but for each request's last step, which stops at its output.
    CHECK(s.speculative.mean_tokens_per_step == Approx(expected).epsilon(0.01));
    CHECK(s.speculative.steps == Approx(3 * (output - 1) / expected).epsilon(0.01));
    // Exactly the requested tokens were produced.
    CHECK(s.throughput.output_tokens_per_s * s.duration_s == Approx(3.0 * output));
  }
  // Short outputs: a step never emits past a request's end (9 tokens after the first, 3.4 per step).
  const auto s = spec_run(spec_scenario(kOne, 10, 5, kEagle4, 0.8)).summary;
  CHECK(s.completed_requests == 5);
  CHECK(s.throughput.output_tokens_per_s * s.duration_s == Approx(50.0));
  CHECK(s.speculative.mean_tokens_per_step < spec::expected_tokens_per_step(0.8, 4));
}

TEST_CASE("speculative decoding: reproducible, and off when absent", "[speculative]") {
  const Json j = spec_scenario(Json{{"process", "poisson"}, {"rate", 4.0}}, 128, 200, kEagle4);
  const auto a = spec_run(j).summary, b = spec_run(j).summary;
  CHECK(a.tpot_ms.p95 == b.tpot_ms.p95);
  CHECK(a.speculative.steps == b.speculative.steps);
  CHECK(to_json(a).dump() == to_json(b).dump());
  const auto off = spec_run(spec_scenario(Json{{"process", "poisson"}, {"rate", 4.0}}, 128, 200, nullptr)).summary;
  CHECK_FALSE(off.speculative.enabled);
  CHECK(to_json(off)["speculative"].is_null());
  // The proposer's weights and KV come out of the KV cache.
  CHECK(a.kv.capacity_tokens < off.kv.capacity_tokens);
}

TEST_CASE("speculative decoding: the proposer's weights and KV come out of the KV cache", "[speculative]") {
  const auto plain = memory::plan_memory(make(spec_scenario(kOne, 128, 1, nullptr)));
  const auto draft = memory::plan_memory(make(spec_scenario(
      kOne, 128, 1, {{"method", "draft"}, {"draft_model", "llama-3.2-1b"}, {"num_speculative_tokens", 4}})));
  const auto eagle = memory::plan_memory(make(spec_scenario(kOne, 128, 1, kEagle4)));
  const auto ngram = memory::plan_memory(make(spec_scenario(kOne, 128, 1, {{"method", "ngram"}}, 0.5)));
  REQUIRE(plain.fits);
  REQUIRE(draft.fits);
  // Llama-3.2-1B: 1.24 B parameters at 2 bytes; 16 layers x 8 KV heads x 64 x 2 (K, V) x 2 bytes = 32 KiB per token.
  CHECK(draft.per_gpu.proposer_weights_bytes == Approx(2.47e9).epsilon(0.02));
  CHECK(draft.proposer_kv_bytes_per_token_per_gpu == 32768);
  CHECK(draft.kv_bytes_per_token_per_gpu == plain.kv_bytes_per_token_per_gpu + 32768);
  // Every byte is still accounted for, the proposer's weights beside the target's.
  const auto& g = draft.per_gpu;
  CHECK(g.weights_bytes + g.proposer_weights_bytes + g.kv_cache_bytes + g.activation_bytes + g.runtime_bytes +
            g.free_bytes == Approx(static_cast<double>(g.total_bytes)).margin(4));
  CHECK(g.weights_bytes == plain.per_gpu.weights_bytes);
  // Capacity: (pool − 2.47 GB) / (128 + 32 KiB) per token.
  const double expected = (static_cast<double>(plain.per_gpu.kv_cache_bytes) - 2.47e9) / (131072.0 + 32768.0);
  CHECK(static_cast<double>(draft.kv_capacity_tokens) == Approx(expected).epsilon(0.02));
  // EAGLE: one layer (~0.22 B) + its 2h x h projection (~0.03 B) at 2 bytes, one layer of KV (4 KiB per token).
  CHECK(eagle.per_gpu.proposer_weights_bytes == Approx(2 * (218e6 + 33.6e6)).epsilon(0.05));
  CHECK(eagle.proposer_kv_bytes_per_token_per_gpu == 4096);
  CHECK(eagle.kv_capacity_tokens < plain.kv_capacity_tokens);
  CHECK(eagle.kv_capacity_tokens > draft.kv_capacity_tokens);
  CHECK(ngram.kv_capacity_tokens == plain.kv_capacity_tokens);
}
