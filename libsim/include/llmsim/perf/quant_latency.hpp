#pragma once
// The bytes-in-flight bound of vLLM's pre-Marlin 4-bit kernels (issue 27; docs/cost-model.md "Pre-Marlin kernels: bytes
// in flight"). awq_gemm's CTAs load their weight tile, wait for it, dequantise it into shared memory and multiply, with
// no load in flight meanwhile (no cp.async, no prefetch of the next K step), so by Little's law a CTA streams at most
//
//   r_cta = bytes in flight per main-loop iteration / (DRAM latency + warp-instructions per iteration / (SM clock × e))
//
// (a warp issues at most one instruction per clock; awq_gemm's loop at the share e of it that QUICK's public kernel
// table measures, awq_gemm_issue_efficiency), and a kernel of C CTAs at most min(C, SMs × resident) × r_cta.
// Resident CTAs per SM follow from the kernel's registers and shared memory (ptxas) under the SM generation's
// residency limits. exllama's kernel (GPTQ) gets the same treatment; its CTAs keep 8 KB in flight, so the bound does
// not bind at the shapes of 7B-70B models. The facts: ptxas -v counts and the SASS main loop of each kernel compiled
// from vLLM's source by nvcc 13.0; the CUDA C++ Programming Guide's residency table; RRZE gpu-latency's pointer-chase
// DRAM latencies (provenance in perf/provenance.cpp).
#include <string>

#include "llmsim/perf/quant_kernels.hpp"
#include "llmsim/spec/gpu_spec.hpp"

namespace llmsim::perf {

/// An SM generation's residency limits, DRAM latency and L2 request rate.
struct SmResidency {
  int arch = 80;                      ///< compute capability × 10 whose limits and kernel binaries apply
  double regs_per_sm = 65536;         ///< 32-bit registers per SM (every generation from sm_75 on)
  double max_ctas_per_sm = 32;        ///< resident thread blocks per SM
  double max_warps_per_sm = 64;       ///< resident warps per SM
  double smem_per_sm = 167936;        ///< shared memory a kernel may use per SM, bytes
  double smem_reserved_per_cta = 1024;///< shared memory the system reserves per resident block (sm_80 on)
  double dram_latency_s = 391.7e-9;   ///< idle pointer-chase latency to DRAM (RRZE gpu-latency)
  /// Bytes per SM-clock per SM that the L2 serves to an L2-resident read stream (RRZE gpu-l2-stream read kernel): its
  /// 32-byte sector requests per second are this × SMs × SM clock / 32.
  double l2_bytes_per_sm_clock = 20.34;
};

/// The residency limits of `gpu`'s SM generation: GA100 sm_80, GH100 sm_90, GB100 sm_100; GDDR parts by their tensor
/// paths: FP4 sm_120, FP8 sm_89 (AD10x), BF16 sm_86 (GA10x), neither sm_75 (TU10x). Never throws.
SmResidency sm_residency(const spec::GpuSpec& gpu);
/// The limits of compute capability `arch` (75, 80, 86, 89, 90, 100, 120; others: the nearest below, sm_75 at least).
SmResidency sm_residency_of_arch(int arch);

/// A kernel's footprint on one SM generation.
struct KernelFootprint {
  std::string name;              ///< "awq_gemm m16n128k32", for notes
  double threads = 0;            ///< per CTA
  double regs = 0;               ///< registers per thread (ptxas -v)
  double smem_bytes = 0;         ///< static shared memory per CTA (ptxas -v)
  double bytes_per_iter = 0;     ///< weight bytes one CTA loads per main-loop iteration and waits for
  double instr_per_iter = 0;     ///< warp-instructions of one main-loop iteration (SASS)
  /// The share of one instruction per clock per warp, and of the SMs' issue rate, at which the main loop's
  /// instructions actually issue (stalls on shared memory, barriers, ldmatrix and MMA dependences): measured for
  /// awq_gemm (awq_gemm_issue_efficiency), 1 where no measurement exists (exllama).
  double issue_efficiency = 1;
};

/// awq_gemm's kernel for `out_dim` columns (gemm_forward_4bit_cuda_m16nXk32: N = 128 when out_dim % 128 == 0, else 64)
/// compiled for `arch`.
KernelFootprint awq_gemm_footprint(int arch, double out_dim);
/// Thread-instructions awq_gemm issues per weight per 16-row tile of M on `arch`: its K loop's SASS per warp × warps ×
/// 32 over the 4-bit weights one iteration covers (2 × bytes_per_iter): 4.86 on sm_80 (311 × 64 / 4096), 4.73 on
/// sm_86/89.
double awq_gemm_instr_per_weight(int arch, double out_dim);
/// The share of the counted instruction rate awq_gemm's K loop achieves on `arch`: its time per 16-row tile where the
/// GPU is full of its CTAs (M = 64 -> 128 of an M x 8192 x 8192 GEMM: 4 more tiles), measured by QUICK's kernel table
/// (SqueezeBits/QUICK README, arXiv 2402.10076; AutoAWQ_kernels' gemm_forward_4bit_cuda_m16n128k32, the llm-awq
/// kernel vLLM's gemm_kernels.cu carries, split_k 8), against the SASS count at the card's issue rate: 0.46 (A100,
/// sm_80), 0.36 (A6000, sm_86), 0.44 (RTX 4090, sm_89); sm_90 and sm_75 carried from sm_80 / sm_86 (no measurement).
double awq_gemm_issue_efficiency(int arch);
/// The same from QUICK's two throughputs (FLOP/s at M = 64 and 128, K = N = 8192), the card's issue rate
/// (thread-instructions/s) and the loop's instructions per weight per tile: instr × K·N / issue_rate over the
/// per-tile time (2·K·N·(128 / tflops128 − 64 / tflops64) / 4).
double issue_efficiency_from_tiles(double flops_m64, double flops_m128, double issue_rate, double instr_per_weight);
/// exllama's gemm_half_q_half_gptq_kernel (4-bit, one row of M per launch part: the batch-1 instance) for `arch`.
KernelFootprint exllama_footprint(int arch);

/// CTAs of `k` resident on one SM (registers in 256-register units per warp, shared memory, warps, the CTA limit);
/// at least 1.
double resident_ctas(const KernelFootprint& k, const SmResidency& sm);

/// awq_gemm's CTAs for M rows and an (in_dim x out_dim) weight: ceil(M/16) row tiles × out_dim/N column tiles × 8
/// split-K parts. exllama's: ceil(out_dim / 512) × ceil(in_dim / 128) (one launch per 8 rows of M).
double awq_gemm_ctas(double m, double out_dim);
double exllama_ctas(double in_dim, double out_dim);

/// The SM clock the warp schedulers run at: instruction_issue_rate / (128 thread-instructions per SM-clock × SMs).
double sm_clock_hz(const spec::GpuSpec& gpu);

/// The most bytes/s `ctas` CTAs of `k` stream on `gpu` (`sm` its residency):
/// min(ctas, SMs × resident) × bytes_per_iter / (dram_latency + instr_per_iter / (sm_clock_hz × issue_efficiency)).
/// Infinity where the GPU has no SM count or clock (the bound is then not known, not zero).
double latency_bound_bandwidth(const KernelFootprint& k, const SmResidency& sm, const spec::GpuSpec& gpu, double ctas);
/// The same from the SM count and clock (what the cost model keeps).
double latency_bound_bandwidth(const KernelFootprint& k, const SmResidency& sm, double sms, double clock_hz,
                               double ctas);

/// 32-byte sector requests per second the L2 serves on `sms` SMs at `clock_hz` (sm.l2_bytes_per_sm_clock × SMs × clock
/// / 32); infinity where the SM count or clock is not known.
double l2_sector_rate(const SmResidency& sm, double sms, double clock_hz);

/// Seconds that the bound adds to a linear op's weight stream on `kernel` (awq_gemm or exllama; 0 for any other):
/// Σ over its GEMMs of max(0, weights / bound − weights / bus_rate). The op is one GEMM (in_dim x out_dim), or a gated
/// MLP's gate_up (hidden x 2·inter) and down (inter x hidden) when kernels == 2, with in_dim = hidden + inter and
/// out_dim = 2·inter + hidden as the cost model passes them; `params` weights in all, `bytes_per_param` each.
double latency_bound_extra_s(QuantGemmKernel kernel, double m, double params, double in_dim, double out_dim,
                             double bytes_per_param, double kernels, double bus_rate, const SmResidency& sm,
                             double sms, double clock_hz);

}  // namespace llmsim::perf
