// The eager host path of V0 prefills at TP > 1 (perf/eager_host.hpp, docs/cost-model.md "Eager steps of vLLM V0",
// issue 27): every V0 release runs a step that carries a prefill without a CUDA graph, so its Python forward, and at
// TP > 1 each layer's two all-reduces through their Python call path, run ahead of the GPU, which waits where its own
// work per layer is shorter. Direction and size: a 70B model's short prefill at TP 8 on H100s becomes host-bound by
// several milliseconds; a 4k-token prefill, a TP 1 8B prefill and a graphed decode step do not move; V1 is unchanged.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/eager_host.hpp"
#include "llmsim/perf/engine_overhead.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;

namespace eager_host_tp_test {

perf::BatchShape ehtp_prefill(std::int64_t tokens) {
  perf::BatchShape b;
  b.add_prefill(tokens, 0, true);
  return b;
}


}  // namespace eager_host_tp_test

using namespace eager_host_tp_test;
using perf::Runtime;

TEST_CASE("an eager forward's host time per layer: the runtime's Python plus, at TP > 1, two eager all-reduces",
          "[eager_host]") {
  const auto v0 = perf::runtime_traits(Runtime::vllm_v0);
  const double layer = perf::eager_host::kVllmV0PerLayerS;
  const double ar = perf::eager_host::kEagerAllReduceHostS;
  CHECK(perf::eager_layer_host_s(v0, 1) == Approx(layer));
  CHECK(perf::eager_layer_host_s(v0, 2) == Approx(layer + 2 * ar));
  CHECK(perf::eager_layer_host_s(v0, 8) == Approx(layer + 2 * ar));
  CHECK(perf::eager_forward_host_s(v0, 80, 8) == Approx(80 * (layer + 2 * ar)));
  CHECK(perf::eager_layer_host_s(perf::runtime_traits(Runtime::sglang), 4) ==
        Approx(perf::eager_host::kSglangPerLayerS + 2 * ar));
  // Runtimes whose eager steps are priced by their launches alone get no all-reduce term either.
  for (const Runtime r : {Runtime::vllm_v1, Runtime::gpt_fast, Runtime::lmdeploy_turbomind})
    CHECK(perf::eager_layer_host_s(perf::runtime_traits(r), 8) == 0);
  // The engine-overhead model applies the TP it is given: a 4-layer eager step whose GPU work is 0.1 ms.
  const auto p = perf::default_profile(test::gpu("h100-80gb-sxm"));
  const perf::EngineOverheadModel tp1(p, Runtime::vllm_v0, true, 1, 1);
  const perf::EngineOverheadModel tp8(p, Runtime::vllm_v0, true, 8, 8);
  CHECK(tp1.launch_s(50, 4, 100, false, 0.1e-3, 4) == Approx(4 * layer - 0.1e-3));
  CHECK(tp8.launch_s(50, 4, 100, false, 0.1e-3, 4) == Approx(4 * (layer + 2 * ar) - 0.1e-3));
}

TEST_CASE("V0 0.7 prefills at TP 8: a 70B short prompt waits on the host, a long one and TP 1 8B do not",
          "[eager_host]") {
  const std::string rel = "vllm==0.7.3";
  const auto v0 = test::release_model("llama-3.1-70b", "h100-80gb-sxm", 8, Runtime::vllm_v0, rel);
  const auto v1 = test::release_model("llama-3.1-70b", "h100-80gb-sxm", 8, Runtime::vllm_v1, rel);
  const double host = 80 * perf::eager_layer_host_s(perf::runtime_traits(Runtime::vllm_v0), 8);
  // 240 tokens (AccelMark's prompts): ~19 ms of GPU work against ~28 ms of host, so the step costs the host's time
  // plus V0's serialized CPU time; the launch term carries the wait.
  const auto p240 = ehtp_prefill(240);
  const double busy = test::gpu_busy(v0, p240);
  REQUIRE(busy < host);
  CHECK(test::op(v0, p240, "launch") == Approx(host - busy).epsilon(1e-9));
  CHECK(v0.iteration_time(p240) == Approx(host + test::op(v0, p240, "cpu")).epsilon(1e-9));
  CHECK(host - busy > 5e-3);  // several milliseconds of a ~30 ms step
  // The same GPU work (the ops other than launch and cpu do not depend on the runtime for an unquantised model), but
  // for V0's sampler, which makes more passes over the logits (perf/v0_sampler.hpp).
  CHECK(test::op(v0, p240, "sampling") > test::op(v1, p240, "sampling"));
  CHECK(test::gpu_busy(v1, p240) - test::op(v1, p240, "sampling") ==
        Approx(busy - test::op(v0, p240, "sampling")).epsilon(1e-9));
  // 4096 tokens: the GPU's work hides the host; only the eager launches' own cost remains, as before.
  const auto p4k = ehtp_prefill(4096);
  REQUIRE(test::gpu_busy(v0, p4k) > host);
  CHECK(test::op(v0, p4k, "launch") == Approx(test::op(v1, p4k, "launch")).epsilon(1e-12));
  // A graphed decode step replays its graph: no host term, the same graph replays as V1's full decode graph.
  const auto d = test::decode(8, 600);
  const perf::EngineOverheadModel v0_overhead(perf::default_profile(test::gpu("h100-80gb-sxm")), Runtime::vllm_v0,
                                              true, 8, 8);
  CHECK(v0_overhead.replays_graph(8, true));
  CHECK(test::op(v0, d, "launch") == Approx(test::op(v1, d, "launch")).epsilon(1e-12));
  // TP 1, 8B, 240 tokens on an A100: ~0.5 ms of GPU work per layer against 0.31 ms of host: hidden.
  const auto small = test::release_model("llama-3.1-8b", "a100-40gb-sxm", 1, Runtime::vllm_v0, rel);
  const auto small_v1 = test::release_model("llama-3.1-8b", "a100-40gb-sxm", 1, Runtime::vllm_v1, rel);
  REQUIRE(test::gpu_busy(small, p240) > 32 * perf::eager_host::kVllmV0PerLayerS);
  // (V1 at 600 tokens: above its 512-token graphs, the same kernels launched eagerly.)
  CHECK(test::op(small, p240, "launch") == Approx(test::op(small_v1, ehtp_prefill(600), "launch")).epsilon(1e-12));
}
