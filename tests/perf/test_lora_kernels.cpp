// vLLM's LoRA kernels in a step's time (perf/lora_kernels.hpp): a shrink and an expand per wrapped linear and
// layer, a fixed cost per kernel plus the adapters' and tokens' bytes; nothing at all without LoRA.
#include <catch2/catch.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/lora_kernels.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;

namespace {
perf::CostModel lora_cost_model(bool lora, int slots = 1, int rank = 16) {
  Json j{{"model", "llama-3.1-8b"},
         {"hardware", {{"gpu", "h100-80gb-sxm"}}},
         {"engine", {{"max_model_len", 8192}}}};
  if (lora) j["engine"].update({{"enable_lora", true}, {"max_loras", slots}, {"max_lora_rank", rank}});
  return perf::make_cost_model(spec::resolve(spec::scenario_from_json(JsonView(j, "")), spec::Catalog::builtin()));
}

perf::BatchShape prefill_chunk(std::int64_t tokens) {
  perf::BatchShape b;
  b.add_prefill(tokens, 0, true);
  return b;
}
}  // namespace

TEST_CASE("LoRA's per-layer kernels follow vLLM's wrapped linears") {
  const auto m = spec::Catalog::builtin().model("llama-3.1-8b");
  const auto t = perf::lora_layer_terms(m, 1, 16, true);
  CHECK(t.kernels == 8);  // shrink + expand for qkv, o, gate_up, down
  // One adapter's A and B per layer are the slot's bytes per layer (memory/lora_memory.cpp: 1,310,720 parameters).
  CHECK(t.adapter_bytes == 1310720.0 * 2);
  CHECK(perf::lora_layer_terms(m, 1, 64, true).adapter_bytes == 4 * t.adapter_bytes);
  CHECK(perf::lora_layer_terms(m, 1, 16, false).kernels == 4);
}

TEST_CASE("LoRA adds a fixed cost per step and a per-token term; off, every step is unchanged") {
  const auto base = lora_cost_model(false), lora = lora_cost_model(true), wide = lora_cost_model(true, 4, 64);
  for (const auto& b : {test::decode(1, 1000), test::decode(64, 1000), test::decode(256, 2000), prefill_chunk(4096)}) {
    INFO("decode " << b.decode_seqs << ", prefill " << b.prefill_tokens);
    CHECK(test::op(base, b, "lora") == 0);
    CHECK(test::op(lora, b, "lora") > 0);
    CHECK(lora.iteration_time(b) > base.iteration_time(b));
    CHECK(wide.iteration_time(b) > lora.iteration_time(b));  // more slots in use and a larger rank read more
  }
  // 32 layers x 8 kernels at the profile's fixed GEMM cost (6 us, Vidur's H100 fit) dominate a small decode step:
  // about 1.5 ms on a ~7 ms step, where a 256-sequence step carries the same kernels over a longer step.
  const double one = test::op(lora, test::decode(1, 1000), "lora");
  CHECK(one == Approx(256 * 6e-6).epsilon(0.05));
  const auto share = [&](const perf::BatchShape& b) { return lora.iteration_time(b) / base.iteration_time(b) - 1; };
  CHECK(share(test::decode(1, 1000)) > 0.10);
  CHECK(share(test::decode(1, 1000)) < 0.35);
  CHECK(share(test::decode(256, 2000)) < share(test::decode(1, 1000)));
  // A long prefill moves every token's input and output through the kernels again: a few percent of its time.
  CHECK(share(prefill_chunk(4096)) > 0.01);
  CHECK(share(prefill_chunk(4096)) < 0.25);
  // The hot path agrees with the direct sum (DecodeSteps carries the op like any other).
  const auto steps = lora.decode_steps(64);
  CHECK(steps.time(64 * 1000) == lora.iteration_time(test::decode(64, 1000)));
  CHECK_THROWS_AS(base.with_lora(0, 16), ConfigError);
}
