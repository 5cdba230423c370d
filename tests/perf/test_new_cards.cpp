// Issue 30's cards in the cost model: the datasheet figures of data/gpus flow through to step times in the
// directions and sizes those figures say.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;
using test::decode;
using test::gpu;
using perf::CostModel;

namespace {

CostModel cards_model(const spec::GpuSpec& g, const std::string& model = "llama-3.1-8b", int tp = 1) {
  spec::Quantization q;
  q.weights = spec::weight_format("fp16");
  q.kv_dtype = spec::DType::fp16;
  return CostModel(spec::Catalog::builtin().model(model), q, g, perf::default_profile(g), spec::ParallelConfig{tp, 1});
}

double cards_gpu_time(const perf::StepCost& s) {  // everything but the per-step launch and CPU overheads
  double t = 0;
  for (const auto& o : s.ops) t += o.bound == perf::Bound::overhead ? 0 : o.time_s;
  return t;
}

double cards_weight_time(const perf::StepCost& s) {  // the weight-streaming GEMMs
  double t = 0;
  for (const auto& o : s.ops)
    if (o.name == "qkv_proj" || o.name == "o_proj" || o.name == "mlp" || o.name == "lm_head") t += o.time_s;
  return t;
}

perf::BatchShape cards_prefill(std::int64_t tokens) {
  perf::BatchShape b;
  b.add_prefill(tokens, 0, true);
  return b;
}

}  // namespace

TEST_CASE("a decode step on a B200 beats an H100's by about their bandwidth ratio") {
  const auto b200 = gpu("b200-180gb-sxm"), h100 = gpu("h100-80gb-sxm");
  const double bw_ratio = b200.memory_bandwidth / h100.memory_bandwidth;  // 7.7 / 3.35 = 2.30
  REQUIRE(bw_ratio == Approx(2.30).epsilon(0.01));
  const auto sb = cards_model(b200).breakdown(decode(1, 512));
  const auto sh = cards_model(h100).breakdown(decode(1, 512));
  const double weights = cards_weight_time(sh) / cards_weight_time(sb);
  const double gpu_ratio = cards_gpu_time(sh) / cards_gpu_time(sb);
  INFO("weight GEMMs " << weights << "x, GPU time " << gpu_ratio << "x, total " << sh.time_s / sb.time_s
                       << "x, bandwidth " << bw_ratio << "x");
  CHECK(sb.bound == perf::Bound::memory);
  // Llama-3.1-8B batch 1: the weight GEMMs speed up by the bandwidth ratio less their fixed 6 us per kernel (the
  // same on both: ~0.6 ms of a 2.8 ms B200 step), so 1.95x of 2.30; the rest of the step has more fixed costs still.
  CHECK(weights > 0.8 * bw_ratio);
  CHECK(weights < bw_ratio);
  CHECK(gpu_ratio > 0.75 * bw_ratio);
  CHECK(gpu_ratio < bw_ratio);
  CHECK(sh.time_s / sb.time_s > 1.4);  // + the per-step CPU and launch overheads, the same on both
  // The bandwidth term itself is the datasheet's: what halving a card's bandwidth adds to its weight GEMMs (the
  // fixed costs cancel) is weights / (bandwidth x 0.925) -- Hopper's streaming prior, carried over to Blackwell --
  // and its H100 / B200 ratio is the bandwidth ratio.
  auto bw_term = [&](spec::GpuSpec g) {
    const double full = cards_weight_time(cards_model(g).breakdown(decode(1, 512)));
    g.memory_bandwidth /= 2;
    return cards_weight_time(cards_model(g).breakdown(decode(1, 512))) - full;
  };
  const double weight_bytes = cards_model(b200).weight_bytes_per_gpu();
  CHECK(bw_term(b200) == Approx(weight_bytes / (7700e9 * 0.925)).epsilon(0.05));
  CHECK(bw_term(h100) / bw_term(b200) == Approx(bw_ratio).epsilon(0.03));
  // On a 70B model the fixed costs matter less: the weight GEMMs run within 6 % of the bandwidth ratio.
  const double w70 = cards_weight_time(cards_model(h100, "llama-3.1-70b").breakdown(decode(1, 512))) /
                     cards_weight_time(cards_model(b200, "llama-3.1-70b").breakdown(decode(1, 512)));
  CHECK(w70 == Approx(bw_ratio).epsilon(0.06));
}

TEST_CASE("a 70B decode step fits one B200 and runs there at B200 speed") {
  // Llama-3.1-70B in BF16 (141 GB) needs two H100s (TP 2) but one B200: 141 GB / (7.7 TB/s x 0.925) = 19.8 ms of
  // streaming, plus 6 us for each of its ~240 GEMM kernels.
  const auto s = cards_model(gpu("b200-180gb-sxm"), "llama-3.1-70b").breakdown(decode(1, 512));
  CHECK(cards_weight_time(s) * 1e3 > 141.1 / (7700 * 0.925) * 1e3);
  CHECK(cards_weight_time(s) * 1e3 < 141.1 / (7700 * 0.925) * 1e3 + 2.5);
  const auto h2 = cards_model(gpu("h100-80gb-sxm"), "llama-3.1-70b", 2).breakdown(decode(1, 512));
  CHECK(s.time_s < h2.time_s * 1.3);  // one B200 keeps up with two H100s and their all-reduces
}

TEST_CASE("the H20 streams faster than an H100 but computes at 15 % of its rate") {
  const auto h20 = gpu("h20-96gb"), h100 = gpu("h100-80gb-sxm");
  // Batch-1 decode: bandwidth-bound, 4.0 vs 3.35 TB/s.
  const double decode_ratio = cards_gpu_time(cards_model(h100).breakdown(decode(1, 512))) /
                              cards_gpu_time(cards_model(h20).breakdown(decode(1, 512)));
  CHECK(decode_ratio == Approx(4000.0 / 3350).epsilon(0.08));
  // An 8k-token prefill: compute-bound, 148 vs 989 TFLOPS.
  const double prefill_ratio =
      cards_model(h20).breakdown(cards_prefill(8192)).time_s / cards_model(h100).breakdown(cards_prefill(8192)).time_s;
  INFO("H20 / H100 prefill " << prefill_ratio);
  CHECK(prefill_ratio > 4.5);
  CHECK(prefill_ratio < 989.4 / 148 * 1.05);
}

TEST_CASE("China-market and workstation variants differ from their base cards where their datasheets do") {
  // RTX 4090 D: the 4090's memory (same decode), 114 of 128 SMs (slower prefill, by at most 128/114).
  const auto d4 = gpu("rtx4090d-24gb"), g4 = gpu("rtx4090-24gb");
  CHECK(cards_gpu_time(cards_model(d4).breakdown(decode(1, 512))) ==
        Approx(cards_gpu_time(cards_model(g4).breakdown(decode(1, 512)))).epsilon(0.03));
  const double p4 = cards_model(d4).breakdown(cards_prefill(4096)).time_s / cards_model(g4).breakdown(cards_prefill(4096)).time_s;
  CHECK(p4 > 1.05);
  CHECK(p4 < 128.0 / 114 + 0.01);
  // RTX PRO 6000 Blackwell vs RTX 5090: the same 1792 GB/s, but the PRO's full-rate FP32 accumulate (503.8 vs 209.5).
  const auto pro = gpu("rtxpro6000-96gb"), g5 = gpu("rtx5090-32gb");
  CHECK(cards_gpu_time(cards_model(pro).breakdown(decode(1, 512))) ==
        Approx(cards_gpu_time(cards_model(g5).breakdown(decode(1, 512)))).epsilon(0.05));
  const double p5 = cards_model(g5).breakdown(cards_prefill(4096)).time_s / cards_model(pro).breakdown(cards_prefill(4096)).time_s;
  CHECK(p5 > 1.8);
  // The Server Edition's slower GDDR7 (1597 GB/s) shows in decode.
  const double srv = cards_gpu_time(cards_model(gpu("rtxpro6000-server-96gb")).breakdown(decode(1, 512))) /
                     cards_gpu_time(cards_model(pro).breakdown(decode(1, 512)));
  CHECK(srv == Approx(1792.0 / 1597).epsilon(0.05));
  // L20 vs L40S: the same memory system, a third of the compute.
  const auto l20 = gpu("l20-48gb"), l40s = gpu("l40s-48gb");
  CHECK(cards_gpu_time(cards_model(l20).breakdown(decode(1, 512))) ==
        Approx(cards_gpu_time(cards_model(l40s).breakdown(decode(1, 512)))).epsilon(0.05));
  CHECK(cards_model(l20).breakdown(cards_prefill(4096)).time_s >
        2.0 * cards_model(l40s).breakdown(cards_prefill(4096)).time_s);
}
