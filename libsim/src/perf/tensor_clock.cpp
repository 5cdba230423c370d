#include "llmsim/perf/tensor_clock.hpp"

#include "llmsim/core/number.hpp"

namespace llmsim::perf {

double sustained_tensor_fraction(const spec::GpuSpec& gpu) noexcept {
  if (!(gpu.sustained_tensor_clock_mhz > 0) || !(gpu.boost_clock_mhz > 0)) return 1.0;
  const double f = gpu.sustained_tensor_clock_mhz / gpu.boost_clock_mhz;
  return f < 1.0 ? f : 1.0;
}

void apply_sustained_tensor_clock(const spec::GpuSpec& gpu, HardwareProfile& p) {
  const double f = sustained_tensor_fraction(gpu);
  if (f >= 1.0) return;
  // The clock scales the tensor cores' rate, so every dtype's GEMM curve and the FlashAttention-class prefill (which
  // runs on the fp16 tensor path) alike; the weight stream, element-wise kernels and decode attention are bandwidth
  // work and keep their efficiencies.
  for (auto& [dtype, curve] : p.gemm_eff_vs_m)
    for (auto& y : curve.y) y *= f;
  p.attn_prefill_efficiency *= f;
  p.source += "; " + describe_sustained_tensor_clock(gpu);
}

std::string describe_sustained_tensor_clock(const spec::GpuSpec& gpu) {
  const double f = sustained_tensor_fraction(gpu);
  if (f >= 1.0) return "";
  // A MIG slice carries its share of the board power; the clock is the whole board's.
  const double board_watts = gpu.tdp_watts / gpu.compute_fraction;
  return "tensor work at " + format_fixed(gpu.sustained_tensor_clock_mhz, 0) + " of " +
         format_fixed(gpu.boost_clock_mhz, 0) + " MHz, power-limited" +
         (board_watts > 0 ? " at " + format_fixed(board_watts, 0) + " W" : std::string()) + ": x" +
         format_fixed(f, 3) + " of the tensor peaks";
}

}  // namespace llmsim::perf
