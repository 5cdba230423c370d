// Published speeds that are not a validation set: a 4-bit kernel check on the RTX 4090, and vLLM's tensor-
// parallel latency benchmarks that check the all-reduce and engine-overhead mechanisms end to end.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;
using test::decode;

namespace {
perf::CostModel published_model_on(const spec::ModelSpec& m, const std::string& gpu_id, const std::string& quant, int tp = 1,
                         perf::EngineGeneration engine = perf::EngineGeneration::vllm_v1) {
  const auto g = spec::Catalog::builtin().gpu(gpu_id);
  spec::Quantization q;
  q.weights = spec::weight_format(quant);
  return perf::CostModel(m, q, g, perf::default_profile(g), spec::ParallelConfig{tp, 1}, true, 0, engine);
}
}  // namespace

TEST_CASE("4-bit batch-1 decode on the RTX 4090 vs ExLlamaV2's published speeds") {
  // turboderp/exllamav2 README @01d01a1, performance table, RTX 4090: Llama 7B / 13B GPTQ 4-bit g128 without
  // act-order: 198 / 111 tokens/s (single stream, short prompt). ExLlamaV2's generator has no serving scheduler,
  // so the comparison leaves out llmsim's engine CPU term and keeps every GPU op and launch.
  std::printf("\nExLlamaV2 4-bit on the RTX 4090 (tokens/s), llmsim GPU time without the engine CPU term\n");
  for (const auto& [model, meas] : {std::pair{"llama-2-7b", 198.0}, std::pair{"llama-2-13b", 111.0}}) {
    const perf::CostModel cm = published_model_on(spec::Catalog::builtin().model(model), "rtx4090-24gb", "gptq-int4");
    const auto s = cm.breakdown(decode(1, 256));
    double t = 0;
    for (const auto& o : s.ops) t += o.name == "cpu" ? 0.0 : o.time_s;
    const double err = (1.0 / t) / meas - 1;
    std::printf("%-12s pred %6.1f meas %6.1f err %+5.1f%%\n", model, 1.0 / t, meas, 100 * err);
    // Formerly 35-40% too slow (q_bw 0.82 on the 4090), then -13.6 / -11.3 % under the one GDDR GEMV prior; with
    // Ada's own decode-GEMV efficiency (0.915) -7.3 / -4.8 % (ExLlamaV2's own loop and sampling are in its figure).
    CHECK(std::fabs(err) < 0.10);
  }
}

TEST_CASE("vLLM tensor-parallel latency benchmarks: all-reduce and engine costs end to end") {
  // benchmark_latency: one batch of `batch` prompts prefilled together, then out-1 decode steps.
  struct Point { const char* model; const char* gpu; int tp, batch, in, out; double seconds; perf::EngineGeneration e; };
  constexpr auto V0 = perf::EngineGeneration::vllm_v0, V1 = perf::EngineGeneration::vllm_v1;
  const std::vector<Point> points = {
      // vllm-project/vllm#23197 (V1, CUDA graphs): Llama-3.3-70B (Llama-3.1-70B's shape) on 4 H100s, 256 in / 32 out.
      {"llama-3.1-70b", "h100-80gb-sxm", 4, 1, 256, 32, 0.558, V1},
      {"llama-3.1-70b", "h100-80gb-sxm", 4, 4, 256, 32, 0.629, V1},
      {"llama-3.1-70b", "h100-80gb-sxm", 4, 8, 256, 32, 0.700, V1},
      {"llama-3.1-70b", "h100-80gb-sxm", 4, 16, 256, 32, 0.855, V1},
      // vllm-project/vllm#9856 (2024-10, V0 on main): Llama-3.1-8B-Instruct on 2 A100s (80GB SXM assumed), batch 8,
      // 128 in / 256 out.
      {"llama-3.1-8b", "a100-80gb-sxm", 2, 8, 128, 256, 2.30, V0},
  };
  std::printf("\nvLLM tensor-parallel benchmark_latency (s): prediction vs measurement\n");
  for (const auto& p : points) {
    const auto cm = published_model_on(spec::Catalog::builtin().model(p.model), p.gpu, "bf16", p.tp, p.e);
    perf::BatchShape pre;
    for (int i = 0; i < p.batch; ++i) pre.add_prefill(p.in, 0, true);
    double t = cm.iteration_time(pre);
    for (int k = 1; k < p.out; ++k) t += cm.iteration_time(decode(p.batch, p.in + k));
    const double err = t / p.seconds - 1;
    std::printf("%-14s %-14s tp %d bs %2d %s: pred %.3f meas %.3f err %+5.1f%%\n", p.model, p.gpu, p.tp, p.batch,
                perf::to_string(p.e).c_str(), t, p.seconds, 100 * err);
    // With 2(t-1) x 8 us per all-reduce and 2 ms of CPU per step the 70B batch-1 point was ~45% too slow.
    CHECK(std::fabs(err) < 0.10);
  }
}
