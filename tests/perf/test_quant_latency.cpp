// The bytes-in-flight bound of vLLM's pre-Marlin AWQ/GPTQ kernels (issue 27, perf/quant_latency.hpp): resident CTAs
// from ptxas counts under each SM generation's limits, the bound per card, and what it does to batch-1 decode.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/provenance.hpp"
#include "llmsim/perf/quant_latency.hpp"
#include "llmsim/spec/quantization.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;

namespace quant_latency_test {

perf::CostModel ql_model(const spec::GpuSpec& g, const std::string& weights, const std::string& release) {
  spec::ModelSpec m = spec::Catalog::builtin().model("llama-3.1-8b");
  m.num_layers = 1;
  m.vocab_size = 32;  // the LM head out of the way
  spec::Quantization q;
  q.weights = spec::weight_format(weights);
  q.kernels = spec::quant_kernels_for(release);
  return perf::CostModel(m, q, g, perf::default_profile(g), spec::ParallelConfig{}, true, 0,
                         perf::Runtime::vllm_v0_sync);
}

/// The bound's bytes/s for awq_gemm at M rows on an (in x out) weight, and the GPU's.
double awq_bound(const spec::GpuSpec& g, double m, double out) {
  const auto sm = perf::sm_residency(g);
  return perf::latency_bound_bandwidth(perf::awq_gemm_footprint(sm.arch, out), sm, g, perf::awq_gemm_ctas(m, out));
}

/// o_proj of one Llama-3.1-70B layer (an 8192 x 8192 weight) at M decoding sequences: QUICK's kernel-table shape.
double ql_o_proj_8192(const spec::GpuSpec& g, double m, const std::string& release) {
  spec::ModelSpec ms = spec::Catalog::builtin().model("llama-3.1-70b");
  ms.num_layers = 1;
  ms.vocab_size = 32;
  spec::Quantization q;
  q.weights = spec::weight_format("awq-int4");
  q.kernels = spec::quant_kernels_for(release);
  const perf::CostModel cm(ms, q, g, perf::default_profile(g), spec::ParallelConfig{}, true, 0,
                           perf::Runtime::vllm_v0_sync);
  return test::op(cm, test::decode(static_cast<std::int64_t>(m), 128), "o_proj");
}

}  // namespace quant_latency_test

using namespace quant_latency_test;

TEST_CASE("resident CTAs of the pre-Marlin kernels follow their registers and shared memory", "[quant][latency]") {
  const auto a100 = perf::sm_residency(test::gpu("a100-80gb-sxm"));
  const auto ga102 = perf::sm_residency(test::gpu("rtx3090-24gb"));
  const auto ada = perf::sm_residency(test::gpu("rtx4090-24gb"));
  const auto h100 = perf::sm_residency(test::gpu("h100-80gb-sxm"));
  CHECK(a100.arch == 80);
  CHECK(ga102.arch == 86);
  CHECK(ada.arch == 89);
  CHECK(h100.arch == 90);
  // awq_gemm m16n128k32: 72 registers x 64 threads on sm_80 -> 2304 per warp, 28 warps, 14 CTAs (shared memory
  // would allow 15); on sm_86 92 -> 96 registers allow 10, and 9984 + 1024 B of shared memory in 100 KB only 9.
  const auto awq80 = perf::awq_gemm_footprint(80, 4096), awq86 = perf::awq_gemm_footprint(86, 4096);
  CHECK(perf::resident_ctas(awq80, a100) == 14);
  CHECK(perf::resident_ctas(awq86, ga102) == 9);
  // The N = 64 kernel (out_dim not a multiple of 128) is a different binary with half the bytes in flight.
  CHECK(perf::awq_gemm_footprint(80, 4160).bytes_per_iter == awq80.bytes_per_iter / 2);
  // exllama: 128 threads x 56 registers -> 9 CTAs on both.
  CHECK(perf::resident_ctas(perf::exllama_footprint(80), a100) == 9);
  // More registers never raise residency; the SM's CTA limit caps a tiny kernel.
  perf::KernelFootprint fat = awq80;
  fat.regs = 255;
  CHECK(perf::resident_ctas(fat, a100) < perf::resident_ctas(awq80, a100));
  perf::KernelFootprint tiny{"tiny", 32, 16, 0, 1, 1};
  CHECK(perf::resident_ctas(tiny, a100) == a100.max_ctas_per_sm);
  CHECK(perf::resident_ctas(tiny, ga102) == ga102.max_ctas_per_sm);
}

TEST_CASE("awq_gemm at batch 1 is bound by bytes in flight: 4096-wide projections on an A100 and a 3090",
          "[quant][latency]") {
  const auto a100 = test::gpu("a100-40gb-sxm"), rtx3090 = test::gpu("rtx3090-24gb");
  // A 4096-wide projection at M = 1: 32 column tiles x 8 split-K parts = 256 CTAs, 2.4 per A100 SM. Each keeps 2 KB
  // in flight for 392 ns of DRAM latency + 311 warp-instructions at 1.41 GHz x 0.46 (the loop's issue efficiency):
  // 2.4 GB/s per CTA, 0.60 TB/s in all, against the A100's 1.55 TB/s bus.
  CHECK(perf::awq_gemm_ctas(1, 4096) == 256);
  const double b_a100 = awq_bound(a100, 1, 4096);
  INFO("A100 bound " << b_a100 / 1e9 << " GB/s, 3090 " << awq_bound(rtx3090, 1, 4096) / 1e9 << " GB/s");
  CHECK(b_a100 < 0.45 * a100.memory_bandwidth);
  CHECK(b_a100 > 0.33 * a100.memory_bandwidth);
  // More columns, more CTAs in flight: a 28672-wide gate_up (1792 CTAs, capped by 14 resident per SM) is bus-bound.
  CHECK(awq_bound(a100, 1, 28672) > 2.0 * a100.memory_bandwidth);
  // GA102: a shorter DRAM latency (320 ns) and a faster clock, but its loop issues at 0.36: 256 CTAs stay under the
  // 3090's GEMV stream (0.8 of 936 GB/s); twice the CTAs (an 8192-wide projection) exceed its bus.
  CHECK(awq_bound(rtx3090, 1, 4096) < 0.8 * rtx3090.memory_bandwidth);
  CHECK(awq_bound(rtx3090, 1, 8192) > rtx3090.memory_bandwidth);
  // exllama's CTAs keep 8 KB in flight: far above the A100's bus at the same shape (the bound does not explain GPTQ).
  const auto sm = perf::sm_residency(a100);
  CHECK(perf::latency_bound_bandwidth(perf::exllama_footprint(80), sm, a100, perf::exllama_ctas(4096, 4096)) >
        1.5 * a100.memory_bandwidth);
}

TEST_CASE("batch-1 AWQ on an A100 under pre-Marlin releases streams o_proj at the bound; Marlin releases do not",
          "[quant][latency]") {
  const auto g = test::gpu("a100-40gb-sxm");
  auto fast = g;  // the same A100 with twice the DRAM bandwidth: a stream gains, a latency-bound kernel does not
  fast.memory_bandwidth *= 2;
  const auto o_proj = [](const spec::GpuSpec& gpu, const std::string& release) {
    return test::op(ql_model(gpu, "awq-int4", release), test::decode(1, 512), "o_proj");
  };
  const double legacy = o_proj(g, "vllm==0.4.1"), legacy_fast = o_proj(fast, "vllm==0.4.1");
  const double marlin = o_proj(g, "vllm==0.5.3"), marlin_fast = o_proj(fast, "vllm==0.5.3");
  const double weights = 4096.0 * 4096.0 * spec::weight_format("awq-int4").bits_per_weight / 8.0;
  const double at_bound = weights / awq_bound(g, 1, 4096);
  INFO("o_proj: awq_gemm " << legacy * 1e6 << " us (2x bus " << legacy_fast * 1e6 << "), awq_marlin " << marlin * 1e6
                           << " us (2x bus " << marlin_fast * 1e6 << "), weights at the bound " << at_bound * 1e6
                           << " us");
  // awq_gemm's o_proj never streams its weights faster than the bound, however fast the bus.
  CHECK(legacy >= at_bound);
  CHECK(legacy_fast >= at_bound);
  // Marlin (cp.async pipelines, 0.5.3 on) streams at the bus: twice the bus saves it a large part of its time; the
  // same change saves awq_gemm almost nothing (its activations and split-K partials only).
  CHECK(marlin - marlin_fast > 0.15 * marlin);
  CHECK(legacy - legacy_fast < 0.25 * (marlin - marlin_fast));
  CHECK(legacy > marlin);
  // At 64 sequences (4 row tiles, 4x the CTAs in flight) the bound no longer binds o_proj.
  const auto sm = perf::sm_residency(g);
  const auto extra = [&](double m, double out, const spec::GpuSpec& gpu, perf::QuantGemmKernel k) {
    return perf::latency_bound_extra_s(k, m, 4096.0 * out, 4096, out, 0.5, 1, 0.8 * gpu.memory_bandwidth,
                                       perf::sm_residency(gpu), gpu.sm_count, perf::sm_clock_hz(gpu));
  };
  CHECK(extra(1, 4096, g, perf::QuantGemmKernel::awq_gemm) > 0);
  CHECK(extra(64, 4096, g, perf::QuantGemmKernel::awq_gemm) == 0);
  // A gated MLP: gate_up (2 x 14336 wide) has CTAs enough; only down (4096 wide, a third of the weights) is bound.
  const double mlp = perf::latency_bound_extra_s(perf::QuantGemmKernel::awq_gemm, 1, 3.0 * 4096 * 14336,
                                                 4096 + 14336, 2 * 14336 + 4096, 0.5, 2, 0.8 * g.memory_bandwidth, sm,
                                                 g.sm_count, perf::sm_clock_hz(g));
  const double down = perf::latency_bound_extra_s(perf::QuantGemmKernel::awq_gemm, 1, 4096.0 * 14336, 14336, 4096,
                                                  0.5, 1, 0.8 * g.memory_bandwidth, sm, g.sm_count,
                                                  perf::sm_clock_hz(g));
  CHECK(down > 0);
  CHECK(mlp == Approx(down));
  // On a 3090 the bound binds a 4096-wide projection at batch 1 (256 CTAs), not an 8192-wide one (512).
  CHECK(extra(1, 4096, test::gpu("rtx3090-24gb"), perf::QuantGemmKernel::awq_gemm) > 0);
  CHECK(extra(1, 8192, test::gpu("rtx3090-24gb"), perf::QuantGemmKernel::awq_gemm) == 0);
  // exllama (GPTQ) keeps 8 KB per CTA in flight: not bound on the A100; native kernels never take it.
  CHECK(extra(1, 4096, g, perf::QuantGemmKernel::exllama) == 0);
  CHECK(extra(1, 4096, g, perf::QuantGemmKernel::native) == 0);
}

TEST_CASE("awq_gemm's loop issues at the share QUICK measured: M x 8192 x 8192 near QUICK's kernel times",
          "[quant][latency]") {
  // QUICK's kernel table (M x 8192 x 8192, AutoAWQ's copy of the kernel vLLM runs): the 4 tiles from M = 64 to 128
  // cost 36 us on an A100 where the SASS count at the issue rate gives 16.7: the loop issues at 0.46 of the rate
  // (0.36 on an A6000, 0.44 on a 4090). Never above the count, carried where no card was measured.
  const double e80 = perf::awq_gemm_issue_efficiency(80), e86 = perf::awq_gemm_issue_efficiency(86);
  const double e89 = perf::awq_gemm_issue_efficiency(89);
  INFO("issue efficiency sm_80 " << e80 << ", sm_86 " << e86 << ", sm_89 " << e89);
  CHECK(e80 == Approx(0.464).epsilon(0.01));
  CHECK(e86 == Approx(0.362).epsilon(0.01));
  CHECK(e89 == Approx(0.436).epsilon(0.01));
  CHECK(perf::awq_gemm_issue_efficiency(90) == e80);
  CHECK(perf::awq_gemm_issue_efficiency(75) == e86);
  CHECK(perf::awq_gemm_footprint(86, 4160).issue_efficiency == e86);
  CHECK(perf::exllama_footprint(80).issue_efficiency == 1.0);  // no measurement: the count at full rate
  // The efficiency lowers the per-CTA rate of the bytes-in-flight bound too: 391.7 ns + 311 / (1.41 GHz x 0.46).
  const auto a100 = test::gpu("a100-80gb-sxm");
  const auto sm = perf::sm_residency(a100);
  perf::KernelFootprint counted = perf::awq_gemm_footprint(80, 4096);
  counted.issue_efficiency = 1;
  const double ctas = perf::awq_gemm_ctas(1, 4096);
  CHECK(perf::latency_bound_bandwidth(perf::awq_gemm_footprint(80, 4096), sm, a100, ctas) ==
        Approx(perf::latency_bound_bandwidth(counted, sm, a100, ctas) * (391.7e-9 + 311 / perf::sm_clock_hz(a100)) /
               (391.7e-9 + 311 / (perf::sm_clock_hz(a100) * e80))));
  // QUICK's times 2·M·8192² / TFLOPS. Fitted: only the 64 -> 128 step (per tile). Checks (not fitted): M = 1 on the
  // A100 (45.6 us: 0.76 TB/s, where the bus and the count alone gave ~25 us) and the 4090 (43.2 us), M = 32 on the
  // A100 (88.0 us). M = 16 reads 62.7 us on the A100, slower than one tile at M = 1: llmsim prices the two alike.
  const auto quick_us = [](double m, double tflops) { return 2.0 * m * 8192.0 * 8192.0 / (tflops * 1e12) * 1e6; };
  const auto us = [](const spec::GpuSpec& g, double m) { return ql_o_proj_8192(g, m, "vllm==0.4.1") * 1e6; };
  const auto rtx4090 = test::gpu("rtx4090-24gb");
  const double a1 = us(a100, 1), a16 = us(a100, 16), a32 = us(a100, 32), a64 = us(a100, 64), a128 = us(a100, 128);
  const double g1 = us(rtx4090, 1);
  INFO("A100 o_proj 8192^2: M=1 " << a1 << " us (QUICK " << quick_us(1, 2.94) << "), 16: " << a16 << " ("
                                  << quick_us(16, 34.23) << "), 32: " << a32 << " (" << quick_us(32, 48.83)
                                  << "), 64: " << a64 << " (" << quick_us(64, 57.43) << "), 128: " << a128 << " ("
                                  << quick_us(128, 58.46) << "); 4090 M=1 " << g1 << " (" << quick_us(1, 3.11) << ")");
  CHECK((a128 - a64) == Approx(quick_us(128, 58.46) - quick_us(64, 57.43)).epsilon(0.15));
  CHECK(a1 == Approx(quick_us(1, 2.94)).epsilon(0.2));
  CHECK(g1 == Approx(quick_us(1, 3.11)).epsilon(0.2));
  CHECK(a32 == Approx(quick_us(32, 48.83)).epsilon(0.2));
  CHECK(a16 < quick_us(16, 34.23));
  // awq_marlin (0.5.3 on) keeps its own price: its 8192² weights at batch 1 stream near the bus, well under awq_gemm.
  CHECK(ql_o_proj_8192(a100, 1, "vllm==0.5.3") * 1e6 < 0.75 * a1);
}

TEST_CASE("the bound's constants have provenances with the values in use", "[quant][latency][provenance]") {
  const auto find = [](const std::string& field) -> const perf::ConstantProvenance* {
    for (const auto& x : perf::constant_provenance())
      if (x.field == field) return &x;
    return nullptr;
  };
  for (const int arch : {75, 80, 86, 89, 90, 100, 120}) {
    const std::string a = "sm_" + std::to_string(arch);
    INFO(a);
    const auto sm = perf::sm_residency_of_arch(arch);
    CHECK(sm.arch == arch);
    const auto* lat = find("quant_latency.dram_latency_s." + a);
    REQUIRE(lat);
    REQUIRE(lat->value);
    CHECK(*lat->value == sm.dram_latency_s);
    const auto* ctas = find("quant_latency.max_ctas_per_sm." + a);
    REQUIRE(ctas);
    REQUIRE(ctas->value);
    CHECK(*ctas->value == sm.max_ctas_per_sm);
  }
  for (const int arch : {75, 80, 86, 89, 90}) {
    const std::string a = "sm_" + std::to_string(arch);
    INFO(a);
    const std::pair<std::string, double> used[] = {
        {"quant_latency.awq_gemm_regs." + a, perf::awq_gemm_footprint(arch, 4096).regs},
        {"quant_latency.awq_gemm_instr_per_iter." + a, perf::awq_gemm_footprint(arch, 4096).instr_per_iter},
        {"quant_latency.exllama_regs." + a, perf::exllama_footprint(arch).regs},
        {"quant_latency.exllama_instr_per_iter." + a, perf::exllama_footprint(arch).instr_per_iter}};
    for (const auto& [field, value] : used) {
      INFO(field);
      const auto* e = find(field);
      REQUIRE(e);
      CHECK(e->kind == perf::Provenance::engine_code);
      REQUIRE(e->value);
      CHECK(*e->value == value);
    }
    const auto* eff = find("quant_latency.awq_gemm_issue_efficiency." + a);
    REQUIRE(eff);
    REQUIRE(eff->value);
    CHECK(*eff->value == perf::awq_gemm_issue_efficiency(arch));
    CHECK(eff->kind == (arch == 80 || arch == 86 || arch == 89 ? perf::Provenance::public_measurement
                                                                : perf::Provenance::assumed));
  }
}
