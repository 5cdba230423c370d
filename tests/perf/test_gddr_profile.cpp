// What differs between the GDDR dies in the default profile (docs/cost-model.md, "Hardware profile" and "Overheads"):
// the decode-GEMV streaming efficiency of the die's generation, inline ECC, and the measured kernel fixed costs —
// each in direction and size.
#include <catch2/catch.hpp>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;
using test::decode;
using test::gpu;
using test::op;

namespace {

perf::CostModel gddr_cost(const std::string& model, const spec::GpuSpec& g, const perf::HardwareProfile& p,
                     const std::string& quant = "fp16", perf::Runtime r = perf::Runtime::llama_cpp) {
  spec::Quantization q;
  q.weights = spec::weight_format(quant);
  return perf::CostModel(spec::Catalog::builtin().model(model), q, g, p, spec::ParallelConfig{1, 1}, true, 0, r);
}

}  // namespace

TEST_CASE("decode GEMVs stream at the fraction of their die's generation: Ada 0.915, Ampere GA102 0.85") {
  const auto ada = perf::default_profile(gpu("rtx4090-24gb"));
  const auto ga102 = perf::default_profile(gpu("rtx3090-24gb"));
  // llama.cpp F16 decode on the Ada cards llmsim does not score (4080, 4000/5000/6000 Ada: 0.910-0.925) and on
  // the GA102 RTX A6000 (0.866) / A40 without its ECC (0.850).
  CHECK(ada.gemm_bw_eff_vs_m.at(1) == Approx(0.915));
  CHECK(ga102.gemm_bw_eff_vs_m.at(1) == Approx(0.85));
  // Effect: a Llama-3.1-8B F16 batch-1 MLP on the 4090 runs at ~0.9 of its bandwidth (0.85 -> 0.915 is 7.6 % more
  // bandwidth, less the 4 us fixed cost per kernel), and the whole step is 5-8 % shorter than under the GA102 prior.
  const auto g = gpu("rtx4090-24gb");
  perf::HardwareProfile as_ga102 = ada;
  as_ga102.gemm_bw_eff_vs_m = ga102.gemm_bw_eff_vs_m;
  const auto fast = gddr_cost("llama-3.1-8b", g, ada), slow = gddr_cost("llama-3.1-8b", g, as_ga102);
  const auto b = decode(1, 512);
  CHECK(op(slow, b, "mlp") / op(fast, b, "mlp") == Approx(0.915 / 0.85).epsilon(0.01));
  const double gain = slow.iteration_time(b) / fast.iteration_time(b) - 1;
  CHECK(gain > 0.05);
  CHECK(gain < 0.08);
  // Stream reads do not tell the dies apart (clpeak: 0.914 on a 4090, 0.915 on a 3090), so the element-wise
  // streaming efficiency stays one GDDR prior.
  CHECK(ada.mem_bw_efficiency == Approx(ga102.mem_bw_efficiency));
}

TEST_CASE("inline ECC on GDDR: the check bits take 1/16 of every stream; HBM keeps ECC out of band") {
  const auto l40s = gpu("l40s-48gb");
  REQUIRE(l40s.ecc);
  spec::GpuSpec no_ecc = l40s;
  no_ecc.ecc = false;
  const auto on = perf::default_profile(l40s), off = perf::default_profile(no_ecc);
  CHECK(on.gemm_bw_eff_vs_m.at(1) == Approx(off.gemm_bw_eff_vs_m.at(1) * 15.0 / 16.0));
  CHECK(on.mem_bw_efficiency == Approx(off.mem_bw_efficiency * 15.0 / 16.0));
  CHECK(on.attn_decode_bw_efficiency == Approx(off.attn_decode_bw_efficiency * 15.0 / 16.0));
  // Effect: a bandwidth-bound F16 decode step of Llama-3.1-8B on an L40S is 5-7 % longer with ECC on (16/15 on the
  // streams, less the fixed costs that do not stream) — the measured same-die pairs show 8-9 %.
  const auto b = decode(1, 512);
  const double cost_of_ecc =
      gddr_cost("llama-3.1-8b", l40s, on).iteration_time(b) / gddr_cost("llama-3.1-8b", no_ecc, off).iteration_time(b) - 1;
  CHECK(cost_of_ecc > 0.05);
  CHECK(cost_of_ecc < 1.0 / 15.0);
  // HBM parts carry ECC in side-band bits: an A100 (ecc on) keeps its streaming priors.
  const auto a100 = gpu("a100-80gb-sxm");
  REQUIRE(a100.ecc);
  spec::GpuSpec a100_off = a100;
  a100_off.ecc = false;
  CHECK(perf::default_profile(a100).gemm_bw_eff_vs_m.at(1) == Approx(perf::default_profile(a100_off).gemm_bw_eff_vs_m.at(1)));
  CHECK(perf::default_profile(a100).mem_bw_efficiency == Approx(perf::default_profile(a100_off).mem_bw_efficiency));
}

TEST_CASE("kernel fixed costs of the GDDR dies: AD102 below GA102 below the HBM parts (RRZE gpu-small-kernels)") {
  const auto ada = perf::default_profile(gpu("rtx4090-24gb"));
  const auto ampere = perf::default_profile(gpu("rtx3090-24gb"));
  const auto a100 = perf::default_profile(gpu("a100-80gb-sxm"));
  // L40 (AD102): 0.94-1.13 us per graph-replayed kernel, 1.64-1.77 us per stream launch; A40 (GA102): 1.09-1.39 /
  // 2.05-2.26 us; A100/H200 1.3-1.4 / 2.5-2.6 us.
  CHECK(ada.graph_launch_s == Approx(1.0e-6).epsilon(0.15));
  CHECK(ada.kernel_launch_s == Approx(1.7e-6).epsilon(0.1));
  CHECK(ampere.graph_launch_s == Approx(1.2e-6).epsilon(0.15));
  CHECK(ampere.kernel_launch_s == Approx(2.15e-6).epsilon(0.1));
  CHECK(ada.graph_launch_s < ampere.graph_launch_s);
  CHECK(ampere.graph_launch_s < a100.graph_launch_s);
  CHECK(ada.kernel_launch_s < ampere.kernel_launch_s);
  CHECK(ampere.kernel_launch_s < a100.kernel_launch_s);
  // Effect: TurboMind's host runs ahead, so a batch-1 Llama-2-7B AWQ step on the 4090 pays the graph-rate gap per
  // kernel: ~9 kernels x 32 layers x 0.3 us less than with the A100's constants, 0.05-0.15 ms.
  const auto g = gpu("rtx4090-24gb");
  perf::HardwareProfile hbm_launch = ada;
  hbm_launch.kernel_launch_s = a100.kernel_launch_s;
  hbm_launch.graph_launch_s = a100.graph_launch_s;
  const auto tm = perf::Runtime::lmdeploy_turbomind;
  const double saved = op(gddr_cost("llama-2-7b", g, hbm_launch, "awq-int4", tm), decode(1, 256), "launch") -
                       op(gddr_cost("llama-2-7b", g, ada, "awq-int4", tm), decode(1, 256), "launch");
  CHECK(saved > 0.05e-3);
  CHECK(saved < 0.15e-3);
}
