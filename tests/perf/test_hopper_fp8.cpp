// vLLM's CUTLASS sm90 FP8 linears at decode sizes (issue 27, perf/hopper_fp8): vLLM 0.14.0's own linear layer timed
// on an H100 under CUDA graphs (aiconfigurator's table) streams FP8 weights with a ~10 us larger fixed cost per call
// and at 0.92 of the rate of its BF16 GEMM. The factors come from that table's straight-line fit; the checks here are
// where they apply and their consequence on shapes of the same table.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/hopper_fp8.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;

namespace {

/// The quantised kernels of a vLLM release ("" = a runtime named without one: the current kernels).
spec::QuantKernels sm90_release_kernels(const std::string& release) {
  return release.empty() ? spec::QuantKernels{} : spec::quant_kernels_for(release, "test");
}

spec::WeightFormat sm90_format_on(const std::string& w, const std::string& gpu_id) {
  return spec::format_for_gpu(spec::weight_format(w), spec::Catalog::builtin().gpu(gpu_id), "quant.weights");
}

/// Llama-3.1-70B at TP 8 on H100s in `weights` under `runtime` with vLLM 0.14.0's kernels: its MLP shard per GPU is
/// gate_up N 7168 x K 8192 and down N 8192 x K 3584, two shapes of the table.
perf::CostModel llama70b_tp8(const std::string& weights, spec::Runtime runtime,
                             const std::string& release = "vllm==0.14.0") {
  const auto& cat = spec::Catalog::builtin();
  spec::Quantization q;
  q.weights = spec::weight_format(weights);
  q.kernels = sm90_release_kernels(release);
  const auto g = cat.gpu("h100-80gb-sxm");
  return perf::CostModel(cat.model("llama-3.1-70b"), q, g, perf::default_profile(g), spec::ParallelConfig{8, 1}, true,
                         0, runtime);
}

}  // namespace

TEST_CASE("vLLM's sm90 scaled_mm terms apply to per-tensor/token FP8 on Hopper under vLLM 0.6-0.14 only",
          "[sm90_fp8]") {
  const auto& cat = spec::Catalog::builtin();
  const auto old = sm90_release_kernels("vllm==0.14.0");
  for (const char* r : {"vllm==0.6.3", "vllm==0.10.1", "vllm==0.14.1"}) CHECK(sm90_release_kernels(r).sm90_fp8_slow_small_m);
  // 0.19.0's table has the FP8 call within ~2 us of BF16 (the plain FP8 GEMM); 0.15-0.18 and no release take it.
  for (const char* r : {"vllm==0.15.0", "vllm==0.19.0", ""}) CHECK_FALSE(sm90_release_kernels(r).sm90_fp8_slow_small_m);
  for (const char* g : {"h100-80gb-sxm", "h200-141gb-sxm"})
    for (const char* w : {"fp8", "fp8-dynamic"})
      for (auto rt : {spec::Runtime::vllm_v0, spec::Runtime::vllm_v1}) {
        INFO(g << " " << w << " " << spec::to_string(rt));
        const auto f = perf::sm90_scaled_mm_factors(sm90_format_on(w, g), false, cat.gpu(g), rt, old);
        CHECK(f.bandwidth == perf::kSm90ScaledMmBandwidth);
        CHECK(f.extra_fixed_s == perf::kSm90ScaledMmExtraFixedS);
      }
  const auto none = [](const perf::Sm90ScaledMmFactors& f) { return f.bandwidth == 1.0 && f.extra_fixed_s == 0.0; };
  const auto h100 = cat.gpu("h100-80gb-sxm");
  const auto v1 = spec::Runtime::vllm_v1;
  // Block-scaled FP8 (its own kernels), 16-bit weights, SGLang and vLLM before 0.6 (not measured), FP8 Marlin on an
  // A100, CUTLASS 2.x on an L40S, Blackwell: untouched.
  CHECK(none(perf::sm90_scaled_mm_factors(sm90_format_on("fp8", "h100-80gb-sxm"), true, h100, v1, old)));
  CHECK(none(perf::sm90_scaled_mm_factors(sm90_format_on("bf16", "h100-80gb-sxm"), false, h100, v1, old)));
  CHECK(none(perf::sm90_scaled_mm_factors(sm90_format_on("fp8", "h100-80gb-sxm"), false, h100, spec::Runtime::sglang, old)));
  CHECK(none(
      perf::sm90_scaled_mm_factors(sm90_format_on("fp8", "h100-80gb-sxm"), false, h100, spec::Runtime::vllm_v0_sync, old)));
  CHECK(none(perf::sm90_scaled_mm_factors(sm90_format_on("fp8", "a100-80gb-sxm"), false, cat.gpu("a100-80gb-sxm"), v1, old)));
  CHECK(none(perf::sm90_scaled_mm_factors(sm90_format_on("fp8", "l40s-48gb"), false, cat.gpu("l40s-48gb"), v1, old)));
  CHECK(none(perf::sm90_scaled_mm_factors(sm90_format_on("fp8", "b200-180gb-sxm"), false, cat.gpu("b200-180gb-sxm"), v1, old)));
  // A current release: the plain FP8 GEMM.
  CHECK(none(perf::sm90_scaled_mm_factors(sm90_format_on("fp8", "h100-80gb-sxm"), false, h100, v1,
                                          sm90_release_kernels("vllm==0.19.0"))));
  test::check_public_measurements({{"sm90_fp8.scaled_mm_bandwidth_factor", perf::kSm90ScaledMmBandwidth},
                                   {"sm90_fp8.scaled_mm_extra_fixed_s", perf::kSm90ScaledMmExtraFixedS}});
}

TEST_CASE("an FP8 70B MLP shard at decode sizes costs what vLLM's own linears took on an H100", "[sm90_fp8]") {
  // The table at M = 4 (us, each FP8 call with its static input quantisation): gate_up 7168 x 8192 33.89, down
  // 8192 x 3584 22.72, together 56.6; BF16 43.65 + 22.07 = 65.7. llmsim's mlp op holds the two GEMMs (its quantisation
  // kernels, ~1.5 us each, sit in norms_rotary_act). This pair sits 2-3 us per call under the table's fitted line
  // (median error 5.6 %), and llmsim's BF16 GEMMs carry the Vidur fit's 6 us against this table's 4.6, so llmsim reads
  // ~10 % above it here; the FP8/BF16 ratio is the sharper check.
  const double layers = 80;
  const auto b = test::decode(4, 1000);
  const double fp8_v0 = test::op(llama70b_tp8("fp8", spec::Runtime::vllm_v0), b, "mlp") / layers * 1e6;
  const double fp8_sglang = test::op(llama70b_tp8("fp8", spec::Runtime::sglang), b, "mlp") / layers * 1e6;
  const double fp8_v019 = test::op(llama70b_tp8("fp8", spec::Runtime::vllm_v0, "vllm==0.19.0"), b, "mlp") / layers * 1e6;
  CHECK(fp8_v019 == fp8_sglang);
  const double bf16 = test::op(llama70b_tp8("bf16", spec::Runtime::vllm_v0), b, "mlp") / layers * 1e6;
  INFO("fp8 vLLM " << fp8_v0 << " us, fp8 without the sm90 terms " << fp8_sglang << " us, bf16 " << bf16 << " us");
  CHECK(fp8_v0 + 3.0 == Approx(56.6).epsilon(0.15));
  CHECK(bf16 == Approx(65.7).epsilon(0.1));
  CHECK((fp8_v0 + 3.0) / bf16 == Approx(56.6 / 65.7).epsilon(0.1));
  // Without the terms the FP8 shard read ~40 % under the measurement: the gap this mechanism closes.
  CHECK(fp8_sglang < 0.75 * 56.6);
  // Only the decode-sized GEMMs move much: at 8192 tokens the extra fixed time is noise on a compute-bound GEMM.
  perf::BatchShape prefill;
  prefill.prefill_seqs = 1;
  prefill.prefill_tokens = 8192;
  prefill.prefill_attn_pairs = 8192.0 * 8193 / 2;
  prefill.prefill_kv_tokens = 8192;
  prefill.prefill_last_chunks = 1;
  const double big_v0 = test::op(llama70b_tp8("fp8", spec::Runtime::vllm_v0), prefill, "mlp");
  const double big_sglang = test::op(llama70b_tp8("fp8", spec::Runtime::sglang), prefill, "mlp");
  CHECK(big_v0 == Approx(big_sglang).epsilon(0.02));
}
