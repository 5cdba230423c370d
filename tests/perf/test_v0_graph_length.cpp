// vLLM V0's CUDA graphs stop at max_seq_len_to_capture (perf/runtime.cpp, perf/engine_overhead.cpp; docs/cost-model.md
// "Overheads", issue 27): _use_captured_graph replays a decode batch's graph only while its longest sequence (cached
// tokens + the one decoded) is at most 8192 tokens, so one long sequence makes the whole decode step run the Python
// forward eagerly, which the GPU waits for where its own work per layer is shorter (perf/eager_host.hpp). Direction
// and size: a 70B decode batch at TP 8 on H100s with one sequence of 8192 cached tokens pays the eager host's
// 80 × 0.354 ms against a few ms of GPU work; the same batch one token shorter replays its graph; V1 and SGLang do not
// move; the engine's decode steps give iteration_time's bits on both sides.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/eager_host.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;

namespace v0_graph_length_test {

/// The release whose quantised kernels these tests' cost models take (a V0 release with CUDA graphs).
constexpr const char* kV0glRelease = "vllm==0.6.3";

/// Four decoders holding Σ = 11,192 cached tokens, the longest `longest` long (the others share the rest).
perf::BatchShape v0gl_batch(std::int64_t longest) {
  perf::BatchShape b;
  const std::int64_t rest = 11192 - longest;
  b.add_decode(rest - 2 * (rest / 3));
  b.add_decode(rest / 3);
  b.add_decode(rest / 3);
  b.add_decode(longest);
  return b;
}

double v0gl_op(const perf::CostModel& cm, const perf::BatchShape& b, const char* name) {
  for (const auto& o : cm.breakdown(b).ops)
    if (o.name == name) return o.time_s;
  return 0;
}


}  // namespace v0_graph_length_test

using namespace v0_graph_length_test;
using perf::Runtime;

TEST_CASE("V0's graph length is 8192 tokens from 0.2.6 to 0.10, and no other runtime has one", "[v0_graph_length]") {
  for (const Runtime r : {Runtime::vllm_v0, Runtime::vllm_v0_sync, Runtime::vllm_v0_paged})
    CHECK(perf::runtime_traits(r).max_graph_seq_len == 8192);
  for (const Runtime r : {Runtime::vllm_v1, Runtime::sglang, Runtime::gpt_fast, Runtime::llama_cpp,
                          Runtime::lmdeploy_turbomind})
    CHECK(perf::runtime_traits(r).max_graph_seq_len == 0);
  // A sequence of 8192 cached tokens decodes its 8193rd: seq_len 8193 > 8192, eager.
  CHECK(test::release_model("llama-3.1-8b", "h100-80gb-sxm", 1, Runtime::vllm_v0,
                            kV0glRelease).eager_decode_context() == 8192);
  CHECK(test::release_model("llama-3.1-8b", "h100-80gb-sxm", 1, Runtime::vllm_v0_sync,
                            kV0glRelease).eager_decode_context() == 8192);
  CHECK(test::release_model("llama-3.1-8b", "h100-80gb-sxm", 1, Runtime::vllm_v1,
                            kV0glRelease).eager_decode_context() == 0);
  CHECK(test::release_model("llama-3.1-8b", "h100-80gb-sxm", 1, Runtime::sglang,
                            kV0glRelease).eager_decode_context() == 0);
  // Without graphs every step is eager already: no length to cross.
  CHECK(test::release_model("llama-3.1-8b", "h100-80gb-sxm", 1, Runtime::vllm_v0, kV0glRelease,
                            false).eager_decode_context() == 0);
}

TEST_CASE("a V0 decode batch with one sequence past 8192 tokens runs eagerly and waits on the host",
          "[v0_graph_length]") {
  const auto v0 = test::release_model("llama-3.1-70b", "h100-80gb-sxm", 8, Runtime::vllm_v0, kV0glRelease);
  const perf::BatchShape under = v0gl_batch(8191), over = v0gl_batch(8192);
  REQUIRE(under.decode_context == over.decode_context);  // the same GPU work: only the longest sequence differs
  REQUIRE(under.decode_max_context == 8191);
  REQUIRE(over.decode_max_context == 8192);
  const double t_under = v0.iteration_time(under), t_over = v0.iteration_time(over);
  // Under the length the step replays its graph: the launch term is the replay's, ~1.3 us a kernel.
  CHECK(v0gl_op(v0, under, "launch") < 2e-3);
  // Over it the host enqueues 80 layers from Python (0.31 ms + two 22 us eager all-reduces each) while the GPU's
  // ~6 ms of work runs: the step waits for the host's remainder.
  const double host = 80 * perf::eager_layer_host_s(perf::runtime_traits(Runtime::vllm_v0), 8);
  const double busy = test::gpu_busy(v0, over);
  REQUIRE(busy < host);
  CHECK(v0gl_op(v0, over, "launch") == Approx(host - busy).epsilon(1e-9));
  CHECK(t_over - t_under > 15e-3);
  CHECK(t_over == Approx(t_under - v0gl_op(v0, under, "launch") + host - busy).epsilon(1e-9));
  // Only the longest sequence decides: a batch of short ones is graphed whatever their sum.
  perf::BatchShape many;
  for (int i = 0; i < 16; ++i) many.add_decode(8000);
  CHECK(v0gl_op(v0, many, "launch") == v0gl_op(v0, under, "launch"));
}

TEST_CASE("the graph length leaves V1 and SGLang alone, and an 8B V0 decode at TP 1 pays the host's remainder",
          "[v0_graph_length]") {
  for (const Runtime r : {Runtime::vllm_v1, Runtime::sglang}) {
    const auto m = test::release_model("llama-3.1-70b", "h100-80gb-sxm", 8, r, kV0glRelease);
    CHECK(m.iteration_time(v0gl_batch(8192)) == m.iteration_time(v0gl_batch(8191)));
    perf::BatchShape one_long, all_short;  // Σ 32,000 both: one sequence of 30,000 against four of 8,000
    for (const std::int64_t c : {1000, 500, 500, 30000}) one_long.add_decode(c);
    for (int i = 0; i < 4; ++i) all_short.add_decode(8000);
    CHECK(m.iteration_time(one_long) == m.iteration_time(all_short));
  }
  // Llama-3.1-8B on one H100: ~6 ms of GPU work at batch 4 against 32 × 0.31 = 9.9 ms of host.
  const auto v0 = test::release_model("llama-3.1-8b", "h100-80gb-sxm", 1, Runtime::vllm_v0, kV0glRelease);
  const double host = 32 * perf::eager_host::kVllmV0PerLayerS;
  const double busy = test::gpu_busy(v0, v0gl_batch(8192));
  REQUIRE(busy < host);
  CHECK(v0.iteration_time(v0gl_batch(8192)) - v0.iteration_time(v0gl_batch(8191)) > 0.5 * (host - busy));
}

TEST_CASE("the engine's decode steps price a long batch as iteration_time does, bit for bit", "[v0_graph_length]") {
  for (const char* model : {"llama-3.1-8b", "llama-3.1-70b"}) {
    const auto v0 = test::release_model(model, "h100-80gb-sxm", std::string(model) == "llama-3.1-8b" ? 1 : 8,
                                        Runtime::vllm_v0, kV0glRelease);
    const perf::DecodeSteps graphed = v0.decode_steps(4), eager = v0.decode_steps(4, true);
    CHECK_FALSE(graphed.long_context());
    CHECK(eager.long_context());
    for (const std::int64_t longest : {8192, 8193, 11000}) {
      INFO(model << " longest " << longest);
      const perf::BatchShape b = v0gl_batch(longest);
      CHECK(eager.time(b.decode_context) == v0.iteration_time(b));
    }
    const perf::BatchShape b = v0gl_batch(8191);
    CHECK(graphed.time(b.decode_context) == v0.iteration_time(b));
    double run[3];
    eager.times(11192, 4, 3, run);
    for (int k = 0; k < 3; ++k) {
      perf::BatchShape s = v0gl_batch(8192);
      s.decode_context += 4 * k;
      s.decode_max_context += k;
      CHECK(run[k] == v0.iteration_time(s));
    }
  }
}

TEST_CASE("a batch's longest context is checked against its sum", "[v0_graph_length]") {
  const auto v0 = test::release_model("llama-3.1-8b", "h100-80gb-sxm", 1, Runtime::vllm_v0, kV0glRelease);
  perf::BatchShape b = v0gl_batch(8192);
  b.decode_max_context = b.decode_context + 1;
  CHECK_THROWS_WITH(v0.iteration_time(b), Catch::Contains("batch.decode_max_context"));
  b.decode_max_context = -1;
  CHECK_THROWS_WITH(v0.iteration_time(b), Catch::Contains("batch.decode_max_context"));
}

TEST_CASE("eager decode steps match iteration_time on MoE, MLA and sliding-window models too", "[v0_graph_length]") {
  // The table-priced eager steps (dense models) and the direct fallback (family terms: MLA's kv_b_proj, sliding
  // windows) give iteration_time's bits at and past the length.
  const struct { const char* model; const char* gpu; int tp; } cases[] = {
      {"qwen3-30b-a3b", "h100-80gb-sxm", 1}, {"gemma-2-9b", "a100-80gb-sxm", 1}, {"deepseek-r1", "h200-141gb-sxm", 8}};
  for (const auto& k : cases) {
    INFO(k.model);
    const auto v0 = test::release_model(k.model, k.gpu, k.tp, Runtime::vllm_v0, kV0glRelease);
    const perf::DecodeSteps eager = v0.decode_steps(4, true);
    for (const std::int64_t longest : {8192, 9000}) {
      const perf::BatchShape b = v0gl_batch(longest);
      CHECK(eager.time(b.decode_context) == v0.iteration_time(b));
      CHECK(v0.iteration_time(b) > v0.iteration_time(v0gl_batch(8191)));
    }
  }
}
