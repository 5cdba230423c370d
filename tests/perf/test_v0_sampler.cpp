// vLLM V0's sampler over the logits (perf/v0_sampler.hpp, docs/cost-model.md "V0's sampler passes", issue 27): V0
// casts the logits to fp32, divides them by the temperatures, writes fp32 softmax and log-softmax copies and copies
// the greedy rows before their argmax — 42 bytes per logit, not the default 8. Direction and size: a V0 step
// pays that stream over rows × vocabulary (Qwen3-8B's 151,936 tokens at 256 rows on an A100 PCIe: ~1 ms per step), in
// proportion to the rows and the vocabulary and not to the context; V1 and SGLang keep the default.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/perf/v0_sampler.hpp"
#include "llmsim/spec/catalog.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;

namespace v0_sampler_test {

perf::CostModel v0s_model(const std::string& model, perf::Runtime runtime) {
  const auto g = test::gpu("a100-40gb-pcie");
  return perf::CostModel(spec::Catalog::builtin().model(model), spec::Quantization{}, g, perf::default_profile(g),
                         spec::ParallelConfig{}, true, 0, runtime);
}

/// The sampling op's bytes in the step's breakdown.
double v0s_sampling_bytes(const perf::CostModel& cm, const perf::BatchShape& b) {
  for (const auto& o : cm.breakdown(b).ops)
    if (o.name == "sampling") return o.bytes;
  return 0;
}

}  // namespace v0_sampler_test

using namespace v0_sampler_test;
using perf::Runtime;

TEST_CASE("V0's sampler moves 42 bytes per logit, V1 and SGLang the default 8", "[v0_sampler]") {
  namespace vs = perf::v0_sampler;
  CHECK(vs::kBytesPerLogit == 42);
  CHECK(vs::kCastBytes + vs::kTemperatureBytes + vs::kSoftmaxBytes + vs::kLogSoftmaxBytes + vs::kGatherBytes +
            vs::kArgmaxBytes ==
        vs::kBytesPerLogit);
  CHECK(perf::runtime_traits(Runtime::vllm_v0).sampler_bytes_per_logit == vs::kBytesPerLogit);
  for (auto r : {Runtime::vllm_v1, Runtime::sglang}) CHECK(perf::runtime_traits(r).sampler_bytes_per_logit == 8);
}

TEST_CASE("a V0 step streams its sampler's passes over rows x vocabulary", "[v0_sampler]") {
  const double vocab = spec::Catalog::builtin().model("qwen3-8b").vocab_size;
  REQUIRE(vocab == 151936);
  const auto v0 = v0s_model("qwen3-8b", Runtime::vllm_v0);
  const auto v1 = v0s_model("qwen3-8b", Runtime::vllm_v1);
  const auto b = test::decode(256, 400);
  CHECK(v0s_sampling_bytes(v0, b) == Approx(256 * vocab * 42));
  CHECK(v0s_sampling_bytes(v1, b) == Approx(256 * vocab * 8));
  // ~1.56 GB at the A100 PCIe's 1.56 TB/s: about a millisecond of the step, where the former 8 bytes cost 0.24 ms.
  const double t0 = test::op(v0, b, "sampling");
  CHECK(t0 > 0.9e-3);
  CHECK(t0 < 1.6e-3);
  CHECK(t0 > 4 * test::op(v1, b, "sampling"));
  // Rows, not context: the same rows at ten times the context pay the same; twice the rows twice the bytes.
  CHECK(test::op(v0, test::decode(256, 4000), "sampling") == Approx(t0).epsilon(1e-12));
  CHECK(v0s_sampling_bytes(v0, test::decode(128, 400)) == Approx(v0s_sampling_bytes(v0, b) / 2));
  // A 32,000-token vocabulary moves ~1/4.7 of it.
  const auto mistral = v0s_model("mistral-7b", Runtime::vllm_v0);
  CHECK(v0s_sampling_bytes(mistral, b) == Approx(256 * 32000.0 * 42));
}
