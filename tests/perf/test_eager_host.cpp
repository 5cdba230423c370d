// The eager steps of vLLM 0.2-0.4.2 (perf/eager_host.hpp, docs/cost-model.md "Eager steps of vLLM 0.2-0.4.2", issue
// 27): the Python forward runs ahead of the GPU, which waits on it where its own work is shorter. Direction and size:
// a 4-bit 7B model's batch-1 token on an A100 becomes host-bound; a 16-bit one, and a long prefill, do not move.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/core/error.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/eager_host.hpp"
#include "llmsim/perf/engine_overhead.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "llmsim/spec/scenario.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;

namespace eager_host_test {

perf::CostModel eh_model(const std::string& model, const std::string& weights, const std::string& release,
                         perf::Runtime runtime, bool graphs) {
  const auto g = test::gpu("a100-40gb-sxm");
  spec::Quantization q;
  q.weights = spec::weight_format(weights);
  q.kernels = spec::quant_kernels_for(release);
  return perf::CostModel(spec::Catalog::builtin().model(model), q, g, perf::default_profile(g), spec::ParallelConfig{},
                         graphs, 0, runtime);
}

perf::BatchShape eh_prefill(std::int64_t tokens) {
  perf::BatchShape b;
  b.add_prefill(tokens, 0, true);
  return b;
}

}  // namespace eager_host_test

using namespace eager_host_test;
using perf::Runtime;

TEST_CASE("vLLM before 0.2.6 has no CUDA graphs: the release runs every step eagerly", "[eager_host]") {
  CHECK_FALSE(spec::release_has_cuda_graphs(std::string("vllm==0.2.5")));
  CHECK_FALSE(spec::release_has_cuda_graphs(std::string("vllm==0.2.0")));
  CHECK(spec::release_has_cuda_graphs(std::string("vllm==0.2.6")));
  CHECK(spec::release_has_cuda_graphs(std::string("vllm==0.4.1")));
  CHECK(spec::release_has_cuda_graphs(std::string("sglang==0.4.9")));
  CHECK(spec::release_has_cuda_graphs(std::nullopt));
  // A scenario naming the release runs it eagerly; graphs asked of it are refused with the field named.
  const auto eng = [](const std::string& extra) {
    return spec::scenario_from_text(
        R"({"model": "mistral-7b", "hardware": {"gpu": "a100-40gb-sxm"}, "engine": {"runtime": "vllm==0.2.5")" +
            extra + "}}",
        "s.json");
  };
  CHECK_FALSE(eng("").engine.cuda_graphs);
  CHECK_FALSE(eng(R"(, "cuda_graphs": false)").engine.cuda_graphs);
  try {
    eng(R"(, "cuda_graphs": true)");
    FAIL("no ConfigError");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("engine.cuda_graphs") && Catch::Contains("0.2.6"));
  }
}

TEST_CASE("the host-bound rule: the GPU waits only for the part of the host's enqueue time its work does not cover",
          "[eager_host]") {
  CHECK(perf::eager_host_launch_s(0.4e-3, 10e-3, 6e-3) == Approx(4e-3));
  CHECK(perf::eager_host_launch_s(0.4e-3, 10e-3, 13e-3) == Approx(0.4e-3));  // the GPU's own launches, as before
  CHECK(perf::eager_host_launch_s(0.4e-3, 0, 0) == Approx(0.4e-3));
  const auto traits = perf::runtime_traits(Runtime::vllm_v0_paged);
  CHECK(perf::eager_forward_host_s(traits, 32) == Approx(32 * perf::eager_host::kVllmV0PagedPerLayerS));
  // Every V0 runtime carries vllm#1440's term (0.4.3-0.10 as an assumption: test_eager_host_tp.cpp); V1's compiled
  // pieces are not what it measured. SGLang's eager forward (its prefills, decode batches above cuda_graph_max_bs)
  // carries sglang#1401's (test_sglang_graphs.cpp).
  for (const Runtime r : {Runtime::vllm_v0_sync, Runtime::vllm_v0})
    CHECK(perf::eager_forward_host_s(perf::runtime_traits(r), 32) == Approx(32 * perf::eager_host::kVllmV0PerLayerS));
  CHECK(perf::eager_forward_host_s(perf::runtime_traits(Runtime::vllm_v1), 32) == 0);
  CHECK(perf::eager_forward_host_s(perf::runtime_traits(Runtime::vllm_v1), 32, 8) == 0);
  CHECK(perf::eager_forward_host_s(perf::runtime_traits(Runtime::sglang), 32) ==
        Approx(32 * perf::eager_host::kSglangPerLayerS));
  // A graphed decode step does not wait on Python: the graph replays the whole forward.
  const auto g = test::gpu("a100-40gb-sxm");
  const perf::EngineOverheadModel graphs(perf::default_profile(g), Runtime::vllm_v0_paged, true);
  const perf::EngineOverheadModel eager(perf::default_profile(g), Runtime::vllm_v0_paged, false);
  CHECK(graphs.launch_s(300, 32, 1, true, 1e-3, 32) == Approx(300 * perf::default_profile(g).graph_launch_s));
  CHECK(eager.launch_s(300, 32, 1, true, 1e-3, 32) == Approx(32 * perf::eager_host::kVllmV0PagedPerLayerS - 1e-3));
}

TEST_CASE("vLLM 0.2.5: a 4-bit 7B token at batch 1 waits on Python; a 16-bit one does not", "[eager_host]") {
  const auto one = test::decode(1, 600);
  const double host = 32 * perf::eager_host::kVllmV0PagedPerLayerS;
  // AWQ (awq_gemm at every M in 0.2.5) on the A100 40GB: ~7.4 ms of GPU work per token (its loop at the issue
  // efficiency QUICK measured, perf/quant_latency.hpp) against ~9.9 ms of host.
  const auto awq_eager = eh_model("mistral-7b", "awq-int4", "vllm==0.2.5", Runtime::vllm_v0_paged, false);
  const auto awq_graph = eh_model("mistral-7b", "awq-int4", "vllm==0.2.5", Runtime::vllm_v0_paged, true);
  const double cpu = test::op(awq_eager, one, "cpu");
  CHECK(awq_eager.iteration_time(one) == Approx(cpu + host).epsilon(1e-9));
  CHECK(awq_eager.iteration_time(one) > 1.15 * awq_graph.iteration_time(one));
  CHECK(awq_eager.iteration_time(one) < 1.6 * awq_graph.iteration_time(one));
  // fp16: ~13 ms of GPU work hides the host; only the eager launches' own cost remains (kernel_launch_s per kernel
  // in place of graph_launch_s: ~0.4 ms, < 4 % of the token).
  const auto fp_eager = eh_model("mistral-7b", "fp16", "vllm==0.2.5", Runtime::vllm_v0_paged, false);
  const auto fp_graph = eh_model("mistral-7b", "fp16", "vllm==0.2.5", Runtime::vllm_v0_paged, true);
  const auto p = perf::default_profile(test::gpu("a100-40gb-sxm"));
  CHECK(test::op(fp_eager, one, "launch") ==
        Approx(test::op(fp_graph, one, "launch") * p.kernel_launch_s / p.graph_launch_s).epsilon(1e-9));
  CHECK(fp_eager.iteration_time(one) < 1.04 * fp_graph.iteration_time(one));
  // The breakdown says where the time went: the launch op carries the wait, and sums to the step.
  double sum = 0;
  for (const auto& o : awq_eager.breakdown(one).ops) sum += o.time_s;
  CHECK(sum == Approx(awq_eager.iteration_time(one)).epsilon(1e-9));
}

TEST_CASE("eager prefills of vLLM 0.2.6-0.4.2: a long prompt hides the host, a short 4-bit one does not",
          "[eager_host]") {
  // The launch term as the reference: a prefill hidden behind the GPU's work pays its eager kernel launches alone,
  // exactly what a graphed runtime's eager prefill pays.
  const auto paged = eh_model("mistral-7b", "fp16", "vllm==0.4.1", Runtime::vllm_v0_paged, true);
  const auto v1 = eh_model("mistral-7b", "fp16", "vllm==0.4.1", Runtime::vllm_v1, true);
  const auto long_prompt = eh_prefill(2048);  // above V1's 512-token graphs: eager there too
  CHECK(test::op(paged, long_prompt, "launch") == Approx(test::op(v1, long_prompt, "launch")).epsilon(1e-12));
  const auto awq_paged = eh_model("mistral-7b", "awq-int4", "vllm==0.4.1", Runtime::vllm_v0_paged, true);
  const auto short_prompt = eh_prefill(16);
  const double host = 32 * perf::eager_host::kVllmV0PagedPerLayerS;
  CHECK(test::op(awq_paged, short_prompt, "launch") > 2 * test::op(v1, short_prompt, "launch"));
  CHECK(awq_paged.iteration_time(short_prompt) ==
        Approx(test::op(awq_paged, short_prompt, "cpu") + host).epsilon(1e-9));
}
