// Sustained clocks of power-limited cards (perf/tensor_clock.hpp, docs/cost-model.md "Sustained clocks"): under
// continuous tensor work a board with a low power limit for its SMs holds a lower clock than the one its tensor peaks
// are quoted at. In direction and size: compute-bound work (large-M GEMMs, prefill attention) slows by the ratio of
// the clocks, bandwidth-bound decode does not; a profile measured on the card is not scaled again.
#include <catch2/catch.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/perf/tensor_clock.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;
using test::decode;
using test::gpu;
using test::op;

namespace {

perf::CostModel clock_cost(const spec::GpuSpec& g, const perf::HardwareProfile& p) {
  spec::Quantization q;
  q.weights = spec::weight_format("bf16");
  return perf::CostModel(spec::Catalog::builtin().model("llama-3.1-8b"), q, g, p, spec::ParallelConfig{1, 1}, true, 0,
                         perf::Runtime::vllm_v1);
}

perf::BatchShape clock_prefill(std::int64_t tokens) {
  perf::BatchShape b;
  b.prefill_seqs = 1;
  b.prefill_tokens = tokens;
  b.prefill_attn_pairs = tokens * (tokens + 1) / 2;
  b.prefill_kv_tokens = tokens;
  b.prefill_last_chunks = 1;
  return b;
}

}  // namespace

TEST_CASE("the A100 PCIe (250 W) sustains 1180 of the 1410 MHz its peaks are quoted at; the SXM (400 W) all of it",
          "[tensor_clock]") {
  const auto pcie = gpu("a100-40gb-pcie"), sxm = gpu("a100-40gb-sxm");
  // Fire-Flyer 2's A1 artifact (SC24): square FP16 GEMMs in PyTorch, 220 TF on the A100 PCIe 40GB against 263 TF on
  // the DGX A100's SXM4 40GB, same software: 0.837 × 1410 MHz.
  const double f = perf::sustained_tensor_fraction(pcie);
  CHECK(f == Approx(1180.0 / 1410.0));
  CHECK(f == Approx(220.0 / 263.0).epsilon(0.01));
  CHECK(perf::sustained_tensor_fraction(sxm) == 1.0);
  // The datasheets are the same die at the same peaks and bandwidth: only the clock under load differs.
  REQUIRE(pcie.fp16_flops == sxm.fp16_flops);
  REQUIRE(pcie.memory_bandwidth == sxm.memory_bandwidth);

  const auto pp = perf::default_profile(pcie), ps = perf::default_profile(sxm);
  for (const auto& [dtype, curve] : ps.gemm_eff_vs_m)
    CHECK(pp.gemm_eff_vs_m.at(dtype).at(4096) == Approx(curve.at(4096) * f));
  CHECK(pp.attn_prefill_efficiency == Approx(ps.attn_prefill_efficiency * f));
  // Streams keep their rates: the memory clock does not drop, and bandwidth-bound work draws less SM power.
  CHECK(pp.gemm_bw_eff_vs_m.at(1) == ps.gemm_bw_eff_vs_m.at(1));
  CHECK(pp.mem_bw_efficiency == ps.mem_bw_efficiency);
  CHECK(pp.attn_decode_bw_efficiency == ps.attn_decode_bw_efficiency);
  CHECK(pp.source.find("1180 of 1410 MHz") != std::string::npos);

  // Effect on Llama-3.1-8B BF16: a 4096-token prefill's MLP (M = 4096, compute-bound) takes 1410/1180 as long on the
  // PCIe card, the whole prefill step 12-19.5 % longer (its norms and fixed costs are not tensor work) ...
  const auto on_pcie = clock_cost(pcie, pp), on_sxm = clock_cost(sxm, ps);
  const auto big = clock_prefill(4096);
  CHECK(op(on_pcie, big, "mlp") / op(on_sxm, big, "mlp") == Approx(1.0 / f).epsilon(0.01));
  CHECK(op(on_pcie, big, "attention_prefill") / op(on_sxm, big, "attention_prefill") == Approx(1.0 / f).epsilon(0.02));
  const double prefill_ratio = on_pcie.iteration_time(big) / on_sxm.iteration_time(big);
  CHECK(prefill_ratio > 1.12);
  CHECK(prefill_ratio < 1.0 / f);
  // ... while a batch-1 decode step, weight streaming, is the same to 0.1 %.
  const auto one = decode(1, 1024);
  CHECK(on_pcie.iteration_time(one) / on_sxm.iteration_time(one) == Approx(1.0).margin(0.001));
  // In between, a 256-sequence decode step (M = 256 sits at the A100's ridge) pays part of it.
  const auto wide = decode(256, 1024);
  const double mid = on_pcie.iteration_time(wide) / on_sxm.iteration_time(wide);
  CHECK(mid > 1.02);
  CHECK(mid < prefill_ratio);
}

TEST_CASE("power-limited Ada and Hopper boards: L40S, L4, H100 PCIe; GeForce cards hold their spec clock",
          "[tensor_clock]") {
  // zzc0721/torch-performance-test-data: the L40S's large BF16/FP16 GEMMs read 0.73 of its 362 TF where the 4090's
  // read 1.01 of 165.2 in the same script; the L4's sustained (8192-10240) ones 0.46 of 121 where the 4090's 0.955;
  // the H100 PCIe's 0.61 of 756 where the H100 SXM's 0.74 of 989.
  CHECK(perf::sustained_tensor_fraction(gpu("l40s-48gb")) == Approx(0.73).epsilon(0.01));
  CHECK(perf::sustained_tensor_fraction(gpu("l4-24gb")) == Approx(0.48).epsilon(0.01));
  CHECK(perf::sustained_tensor_fraction(gpu("h100-80gb-pcie")) == Approx(0.83).epsilon(0.01));
  // The same script reads the 3090, 4090 and 5090 at or above their FP32-accumulate specs, and the GDDR prior
  // (gemm_eff 1.0) was taken from such cards: no sustained clock below spec, no change.
  for (const char* id : {"rtx3090-24gb", "rtx4090-24gb", "rtx5090-32gb", "a100-80gb-sxm", "h100-80gb-sxm", "h200-141gb-sxm"})
    CHECK(perf::sustained_tensor_fraction(gpu(id)) == 1.0);
  // An FP8 prefill on the L40S is compute-bound: its MLP slows by most of the ratio (at FP8's rate the activations'
  // stream is a third of the compute time), its batch-1 decode not at all.
  const auto l40s = gpu("l40s-48gb");
  spec::GpuSpec unlimited = l40s;
  unlimited.sustained_tensor_clock_mhz = 0;
  spec::Quantization q;
  q.weights = spec::weight_format("fp8");
  const auto& model = spec::Catalog::builtin().model("llama-3.1-8b");
  const perf::CostModel limited_cm(model, q, l40s, perf::default_profile(l40s), spec::ParallelConfig{1, 1}, true, 0,
                                   perf::Runtime::vllm_v1);
  const perf::CostModel unlimited_cm(model, q, unlimited, perf::default_profile(unlimited), spec::ParallelConfig{1, 1},
                                     true, 0, perf::Runtime::vllm_v1);
  const double f = perf::sustained_tensor_fraction(l40s);
  const double mlp = op(limited_cm, clock_prefill(4096), "mlp") / op(unlimited_cm, clock_prefill(4096), "mlp");
  CHECK(mlp > 1.3);
  CHECK(mlp <= 1.0 / f);
  CHECK(limited_cm.iteration_time(decode(1, 1024)) / unlimited_cm.iteration_time(decode(1, 1024)) ==
        Approx(1.0).margin(0.001));
  // A MIG slice keeps the board's clock.
  CHECK(perf::sustained_tensor_fraction(gpu("a100-40gb-pcie:mig-3g.20gb")) ==
        perf::sustained_tensor_fraction(gpu("a100-40gb-pcie")));
}

TEST_CASE("a profile measured on the card carries its clock and is not scaled again", "[tensor_clock]") {
  const auto pcie = gpu("a100-40gb-pcie");
  const Json doc = parse_json(R"({"gpu_id": "a100-40gb-pcie", "gemm_eff_vs_m": {"fp16": 0.6}, "attn_prefill_efficiency": 0.5})",
                              "profile");
  const auto measured = perf::profile_from_json(JsonView(doc, "profile"), perf::default_profile(pcie));
  CHECK(measured.gemm_eff_vs_m.at(spec::DType::fp16).at(4096) == 0.6);
  CHECK(measured.attn_prefill_efficiency == 0.5);
}

TEST_CASE("a sustained clock needs the clock the peaks are quoted at, and cannot exceed it", "[tensor_clock]") {
  auto load = [](const std::string& extra) {
    const Json doc = parse_json(R"({"id": "x", "memory_gib": 24, "memory_bandwidth_gb_per_s": 1000,
      "tensor_tflops": {"fp16": 100}, "fp32_tflops": 50, "sm_count": 100)" + extra + "}",
                                "gpu");
    return spec::gpu_spec_from_json(JsonView(doc, "gpu"));
  };
  CHECK(load(R"(, "boost_clock_mhz": 2000, "sustained_tensor_clock_mhz": 1500)").sustained_tensor_clock_mhz == 1500);
  CHECK_THROWS_WITH(load(R"(, "sustained_tensor_clock_mhz": 1500)"), Catch::Contains("gpu.boost_clock_mhz"));
  CHECK_THROWS_WITH(load(R"(, "boost_clock_mhz": 2000, "sustained_tensor_clock_mhz": 2500)"),
                    Catch::Contains("gpu.sustained_tensor_clock_mhz") && Catch::Contains("2500"));
  CHECK_THROWS_WITH(load(R"(, "boost_clock_mhz": 2000, "sustained_tensor_clock_mhz": -1)"),
                    Catch::Contains("sustained_tensor_clock_mhz"));
  CHECK_THROWS_WITH(load(R"(, "boost_clock_mhz": "fast")"), Catch::Contains("boost_clock_mhz"));
  // The catalogue's clocks survive a round trip through to_json (inline GPU specs, Python).
  const auto pcie = gpu("a100-40gb-pcie");
  const Json j = spec::to_json(pcie);
  const auto back = spec::gpu_spec_from_json(JsonView(j, "gpu"));
  CHECK(back.sustained_tensor_clock_mhz == pcie.sustained_tensor_clock_mhz);
  CHECK(back.boost_clock_mhz == pcie.boost_clock_mhz);
  // Unset: the peaks hold.
  CHECK(perf::sustained_tensor_fraction(load("")) == 1.0);
}
