// The quantised GEMM paths other than the format's native one (perf/quant_kernels.hpp): vLLM's pre-Marlin AWQ and
// GPTQ kernels and FP8 through torch._scaled_mm with unfused dequantisation, each priced from what its code does by
// the same roofline as the native path (docs/cost-model.md "Quantised kernels by release"), the pre-Marlin ones with
// their bytes-in-flight bound (perf/quant_latency.hpp).
#include <cmath>

#include "cost_model_ops.hpp"

namespace llmsim::perf {

using namespace quant_kernel;  // NOLINT: the kernels' facts read as in the formulas

Raw CostModel::Constants::quant_gemm(double m, double params, double in_dim, double out_dim, const GemmPath& g,
                                     double count, double kernels, const GemmGrid& grid) const {
  GemmPath native = g;
  native.kernel = QuantGemmKernel::native;
  const double flops = 2.0 * m * params;
  if (g.kernel == QuantGemmKernel::fp8_unfused_dq) {
    // torch._scaled_mm writes fp32 (2 more bytes per output element), then `* x_scale`, `* weight_scale.t()` (each
    // reads and writes fp32) and `.to(bf16)` (reads fp32, writes 16 bits) run as kernels of their own.
    Raw r = gemm(m, params, in_dim, out_dim, native, 1, kernels, grid);
    const double out = m * out_dim;
    const double extra = out * kFp8UnfusedExtraGemmOutBytes;
    r.time_s += extra / (bw * gemm_bw.at(m) * native.q_bw);
    r.bytes += extra;
    for (const double b : {out * 8.0, out * 8.0, out * 6.0}) {
      const Raw s = stream(b, out, 1);
      r.time_s += s.time_s;
      r.bytes += b;
    }
    r.time_s *= count;
    r.flops *= count;
    r.bytes *= count;
    r.bound = Bound::memory;
    r.peak_fraction = r.bytes / r.time_s / bw;
    return r;
  }
  const bool awq = g.kernel == QuantGemmKernel::awq_gemm;
  if (m >= g.dequant_min_rows) {
    // The whole weight dequantised to fp16 by a kernel of its own (awq_dequantize / reconstruct_exllama: read the
    // packed weight, write 2 bytes per weight, CUDA-core unpacking overlapped with the stream), then cuBLAS's fp16
    // GEMM reads it back.
    Raw r = gemm(m, params, in_dim, out_dim, fp16_gemm, 1, kernels, grid);
    const double dq_bytes = params * (g.bytes_per_param + kActBytes);
    double t_stream = dq_bytes / (bw * mem_eff * mem_vs_bytes.at(dq_bytes));
    if (awq) {
      // awq_dequantize stores its output 2 bytes at a time: 8 L2 requests per 32-byte sector of the fp16 weight, served
      // at the L2's sector rate (perf/quant_latency.hpp), which binds before DRAM does.
      const double requests = params * kActBytes / 32.0 * kAwqDequantStoresPerSector;
      t_stream = std::max(t_stream, requests / l2_sector_rate(sm_residency, sm_count, sm_clock_hz));
    }
    const double t_alu = awq ? params * kAwqDequantOpsPerWeight / alu_rate
                             : params * kExllamaReconstructOpsPerWeight / issue_rate;
    r.time_s += kernels * gemm_fixed_s + pnorm(t_stream, t_alu);
    r.bytes += dq_bytes;
    r.time_s *= count;
    r.flops *= count;
    r.bytes *= count;
    r.peak_fraction = r.bound == Bound::compute ? r.flops / r.time_s / fp16_peak : r.bytes / r.time_s / bw;
    return r;
  }
  if (awq) {
    // awq_gemm: every 16-row tile re-dequantises the weights (its re-reads of a split-K slice are taken to hit L2)
    // and runs whole 16-row MMAs; the 8 split-K parts write fp16 partial outputs that a sum kernel reads and reduces
    // into the output. Its tensor work runs at the fp16 GEMM's efficiency; what the kernel costs beyond it is its
    // main loop's instructions (the unpacking, the shared-memory staging and barriers, the ldmatrix and MMA issue,
    // the addressing: the SASS count per K step of perf/quant_latency.hpp, 2 warps per CTA) once per 16-row tile at
    // the share of the SMs' issue rate it achieves, overlapped with the weight stream.
    const double tiles = std::ceil(m / kAwqTileRows);
    const double tc = 2.0 * tiles * kAwqTileRows * params / (g.peak * g.eff.at(m));
    const double partials = kAwqSplitK * m * out_dim * kActBytes;
    const double bytes = params * g.bytes_per_param + m * in_dim * kActBytes + partials;
    // Its CTAs wait for each K step's weight tile with nothing else in flight: the bytes-in-flight bound
    // (perf/quant_latency.hpp) where few CTAs run (M = 1 on 4096-wide projections of an A100).
    const double bus = bw * gemm_bw.at(m) * g.q_bw;
    const double t_stream = bytes / bus + latency_bound_extra_s(g.kernel, m, params, in_dim, out_dim, g.bytes_per_param,
                                                                kernels, bus, sm_residency, sm_count, sm_clock_hz);
    // The loop issues at the share of the SMs' rate QUICK's kernel table measured (stalls on its barriers, shared
    // memory and MMA chains with 2 warps per CTA): awq_gemm_issue_efficiency.
    const double t_issue = params * tiles * awq_gemm_instr_per_weight(sm_residency.arch, out_dim) /
                           (issue_rate * awq_gemm_issue_efficiency(sm_residency.arch));
    const double tm = pnorm(t_stream, t_issue);
    const double sum_bytes = partials + m * out_dim * kActBytes;
    Raw r = roofline(kernels * gemm_fixed_s + pnorm(tc, tm), tc, tm, flops, bytes, g.peak, 1);
    r.time_s += stream(sum_bytes, 0, 1).time_s;
    r.bytes += sum_bytes;
    r.time_s *= count;
    r.flops *= count;
    r.bytes *= count;
    r.peak_fraction = r.bound == Bound::compute ? r.flops / r.time_s / g.peak : r.bytes / r.time_s / bw;
    return r;
  }
  // exllama's quantised kernel: the weights stream once (a block's 128-row K slice is re-read from L2 by the other
  // 8-row blocks); each 8-row block unpacks them again and every row's dot products run as half2 FMAs on CUDA cores,
  // bounded by instruction issue and overlapped with the stream.
  const double blocks = std::ceil(m / kExllamaBlockRows);
  const double bytes = params * g.bytes_per_param + m * (in_dim + out_dim) * kActBytes;
  const double bus = bw * gemm_bw.at(m) * g.q_bw;
  const double tm = bytes / bus + latency_bound_extra_s(g.kernel, m, params, in_dim, out_dim, g.bytes_per_param,
                                                        kernels, bus, sm_residency, sm_count, sm_clock_hz);
  const double ti = params * (kExllamaOpsPerWeight * blocks + kExllamaOpsPerWeightRow * m) / issue_rate;
  return roofline(kernels * gemm_fixed_s + pnorm(ti, tm), ti, tm, flops, bytes, 2.0 * alu_rate, count);
}

}  // namespace llmsim::perf
