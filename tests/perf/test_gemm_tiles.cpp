// GEMM wave quantization (perf/gemm_tiles.hpp): the tile grid's utilization, and its direction and size in the
// cost model's compute-bound GEMMs.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/gemm_tiles.hpp"
#include "llmsim/spec/quantization.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;

namespace {

// An MHA model whose o_proj has N = K = heads · 128: the tile grid's width is `heads` tiles of 128.
spec::ModelSpec square_model(int heads) {
  spec::ModelSpec m;
  m.id = "waves-" + std::to_string(heads);
  m.hidden_size = heads * 128;
  m.num_layers = 1;
  m.num_heads = heads;
  m.num_kv_heads = heads;
  m.head_dim = 128;
  m.intermediate_size = 4 * heads * 128;
  m.vocab_size = 32000;
  m.max_position_embeddings = 8192;
  return m;
}

/// Seconds per FLOP of o_proj over `tokens` prefill tokens on `gpu_id`.
double o_proj_s_per_flop(const std::string& gpu_id, int heads, std::int64_t tokens) {
  const auto g = test::gpu(gpu_id);
  spec::Quantization q;
  q.weights = spec::weight_format("fp16");
  q.kv_dtype = spec::DType::fp16;
  const perf::CostModel cm(square_model(heads), q, g, perf::default_profile(g), spec::ParallelConfig{1, 1});
  perf::BatchShape b;
  b.add_prefill(tokens, 0, true);
  for (const auto& o : cm.breakdown(b).ops)
    if (o.name == "o_proj") return o.time_s / o.flops;
  FAIL("no o_proj in the breakdown");
  return 0;
}

}  // namespace

TEST_CASE("the tile grid's utilization: full waves 1, one tile over a wave about half", "[perf][gemm_tiles]") {
  using perf::gemm_wave_utilization;
  // 108 SMs (A100): 8 × 27 = 216 tiles fill two waves; 8 × 28 = 224 run in three, the last 8 of 108 busy.
  CHECK(gemm_wave_utilization(1024, 27 * 128, 108) == Approx(1.0));
  CHECK(gemm_wave_utilization(1024, 28 * 128, 108) == Approx(224.0 / 324.0));
  // A partial tile is a whole tile: M = 1025 has 9 row tiles.
  CHECK(gemm_wave_utilization(1025, 12 * 128, 108) == Approx(1.0));
  CHECK(gemm_wave_utilization(1024, 12 * 128 + 1, 108) == Approx(104.0 / 108.0));
  // One row of tiles that does not fill the SMs runs split-K (cuBLAS's small-grid kernels): full.
  CHECK(gemm_wave_utilization(64, 4096, 108) == 1.0);
  CHECK(gemm_wave_utilization(256, 4096, 108) == Approx(64.0 / 108.0));
  // Unknown grid or GPU: no wave term.
  CHECK(gemm_wave_utilization(1024, 0, 108) == 1.0);
  CHECK(gemm_wave_utilization(1024, 4096, 0) == 1.0);
  // The factor keeps the measured share of the loss: d = 0.3 of (1 − u).
  CHECK(perf::gemm_wave_factor(1024, 28 * 128, 108) ==
        Approx(1.0 - perf::gemm_tiles::kWaveDamping * (1.0 - 224.0 / 324.0)));
  CHECK(perf::gemm_wave_factor(1024, 27 * 128, 108) == Approx(1.0));
}

TEST_CASE("a GEMM whose tiles spill into a new wave costs more per FLOP; the M-only curve could not say so",
          "[perf][gemm_tiles]") {
  // A100 (108 SMs), 1024 tokens, compute-bound o_proj: N = 27 tiles fill two waves, N = 28 spill 8 tiles into a third.
  const double full = o_proj_s_per_flop("a100-80gb-sxm", 27, 1024);
  const double spill = o_proj_s_per_flop("a100-80gb-sxm", 28, 1024);
  // Compute time / f with f = 1 − 0.3·(1 − 224/324) = 0.907: +10 % on the compute term, a little less overall (the
  // memory term in the smooth roofline). Vidur's A100 GEMMs at this utilization read +5…+9 % over full waves.
  CHECK(spill / full > 1.06);
  CHECK(spill / full < 1.11);
  // H100 (132 SMs): 8 × 33 = 264 tiles fill two waves exactly; 8 × 34 = 272 spill into a third.
  const double h_full = o_proj_s_per_flop("h100-80gb-sxm", 33, 1024);
  const double h_spill = o_proj_s_per_flop("h100-80gb-sxm", 34, 1024);
  CHECK(h_spill / h_full > 1.05);
  // One tile more per wave than full (28 → 29 tiles wide at 8 rows: 232 of 324) costs less per FLOP than the spill.
  CHECK(o_proj_s_per_flop("a100-80gb-sxm", 29, 1024) < spill);
}
