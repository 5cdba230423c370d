// The bytes-in-flight bound of vLLM's pre-Marlin AWQ and GPTQ kernels (perf/quant_latency.hpp). Every number here
// has an entry in perf/provenance.cpp ("quant_latency.*"); the kernels were compiled from vLLM's source at v0.2.5 and
// v0.4.1 (awq) / v0.2.7 and v0.4.1 (gptq) by nvcc 13.0 with -Xptxas -v; the same counts came out for both tags.
#include "llmsim/perf/quant_latency.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "llmsim/perf/hardware_profile.hpp"

namespace llmsim::perf {

namespace {

// CUDA C++ Programming Guide, "Technical Specifications per Compute Capability": resident blocks / warps per SM and
// the shared memory per SM a kernel may use (1 KB of it reserved per block from sm_80 on); 64 K registers on all.
// DRAM latency: RRZE-HPC/gpu-benches @1038c5d gpu-latency, the plateau of the pointer chase beyond L2 (cycles at the
// file's clock): a100_80.txt 552.3 @ 1410 MHz, a40.txt (GA102) 556.6 @ 1740, l40.txt (AD102) 625.0 @ 2490,
// gh200.txt (GH100) 689.2 @ 1980. Turing and Blackwell have no file: carried from GA102 / GH100 / AD102.
// L2 rate: the same repository's gpu-l2-stream read kernel (8-byte loads of an L2-resident buffer), its best rate at
// 100 % occupancy over the SMs at the file's clock: a100_80.txt 3097 GB/s / (108 × 1410 MHz) = 20.34 B per SM-clock,
// a40.txt 1686 / (84 × 1740) = 11.54, l40.txt 3858 / (142 × 2490) = 10.91, gh200.txt 5893 / (132 × 1980) = 22.55;
// the generations without a file carried as for the latency.
constexpr SmResidency kSm75{75, 65536, 16, 32, 65536, 0, 319.9e-9, 11.54};
constexpr SmResidency kSm80{80, 65536, 32, 64, 167936, 1024, 391.7e-9, 20.34};
constexpr SmResidency kSm86{86, 65536, 16, 48, 102400, 1024, 319.9e-9, 11.54};
constexpr SmResidency kSm89{89, 65536, 24, 48, 102400, 1024, 251.0e-9, 10.91};
constexpr SmResidency kSm90{90, 65536, 32, 64, 233472, 1024, 348.1e-9, 22.55};
constexpr SmResidency kSm100{100, 65536, 32, 64, 233472, 1024, 348.1e-9, 22.55};
constexpr SmResidency kSm120{120, 65536, 32, 48, 102400, 1024, 251.0e-9, 10.91};

// The binary a GPU runs: the kernels were compiled for 7.5, 8.0, 8.6, 8.9 and 9.0 (vLLM's arch list of those
// releases); a Blackwell part runs the newest of them (sm_90 for GB100, sm_89 for GB20x: the same SASS generation's
// counts as the nearest compiled one).
int binary_arch(int arch) {
  if (arch >= 120) return 89;
  if (arch >= 100) return 90;
  return arch;
}

// QUICK's kernel table (SqueezeBits/QUICK README @265d234, "Kernel benchmarks", M x 8192 x 8192): the AWQ kernel's
// TFLOPS at M = 64 and 128, where 2048 and 4096 CTAs fill every resident slot, so the 4 tiles between them cost their
// loop's issue time; each card's issue rate = SMs x 128 lanes x its boost clock (datasheets): A100 108 x 1410 MHz,
// RTX A6000 84 x 1800 MHz, RTX 4090 128 x 2520 MHz. The L40's row (72.9 -> 64.28 TFLOPS, 0.19) is not used: its
// throughput falls from 64 to 128 rows, which no tile count explains (a 300 W card's clock under load).
constexpr double kQuickA100[2] = {57.43e12, 58.46e12};
constexpr double kQuickA6000[2] = {44.85e12, 46.05e12};
constexpr double kQuickRtx4090[2] = {91.39e12, 104.36e12};
constexpr double kIssueA100 = 108 * 128 * 1410e6, kIssueA6000 = 84 * 128 * 1800e6, kIssueRtx4090 = 128 * 128 * 2520e6;

// awq_gemm's K loop: SASS warp-instructions per iteration (sm_90's loop not decoded: sm_80's count, the same source
// and register count), for the N = 128 and N = 64 binaries of the binary arch `a`.
double awq_loop_instr(int a, bool n128) {
  if (n128) return a == 75 ? 317 : (a == 86 || a == 89) ? 303 : 311;
  return a == 75 ? 172 : 171;
}

// Thread-instructions per weight per tile of the N = 128 kernel: 64 threads over the 2 x 2048 weights of a K step.
double awq_instr_per_weight_n128(int a) { return awq_loop_instr(a, true) * 64 / (2.0 * 2048); }

}  // namespace

double issue_efficiency_from_tiles(double flops_m64, double flops_m128, double issue_rate, double instr_per_weight) {
  // Per weight (K·N cancels): the 4 tiles from M = 64 to 128 take 2·(128 / flops128 − 64 / flops64) seconds.
  const double per_tile = 2.0 * (128.0 / flops_m128 - 64.0 / flops_m64) / 4.0;
  return per_tile > 0 && issue_rate > 0 ? instr_per_weight / issue_rate / per_tile : 1.0;
}

double awq_gemm_issue_efficiency(int arch) {
  const int a = binary_arch(arch);
  if (a == 86 || a == 75)  // sm_75: no measurement, GA102's carried (the same 2-warp loop, fewer resident CTAs)
    return issue_efficiency_from_tiles(kQuickA6000[0], kQuickA6000[1], kIssueA6000, awq_instr_per_weight_n128(86));
  if (a == 89)
    return issue_efficiency_from_tiles(kQuickRtx4090[0], kQuickRtx4090[1], kIssueRtx4090,
                                       awq_instr_per_weight_n128(89));
  // sm_80, and sm_90 (no measurement: the A100's, the same SASS loop as counted for sm_80).
  return issue_efficiency_from_tiles(kQuickA100[0], kQuickA100[1], kIssueA100, awq_instr_per_weight_n128(80));
}

SmResidency sm_residency_of_arch(int arch) {
  for (const SmResidency& s : {kSm120, kSm100, kSm90, kSm89, kSm86, kSm80})
    if (arch >= s.arch) return s;
  return kSm75;
}

SmResidency sm_residency(const spec::GpuSpec& gpu) {
  switch (gpu_family(gpu)) {
    case GpuFamily::ampere_hbm: return kSm80;
    case GpuFamily::hopper_hbm: return kSm90;
    case GpuFamily::blackwell_hbm: return kSm100;
    case GpuFamily::gddr: break;
  }
  if (gpu.fp4_flops > 0) return kSm120;
  if (gpu.fp8_flops > 0) return kSm89;
  if (gpu.bf16_flops > 0) return kSm86;
  return kSm75;
}

KernelFootprint awq_gemm_footprint(int arch, double out_dim) {
  // gemm_forward_4bit_cuda_m16nXk32: 64 threads (2 warps); per K step of 32 each thread loads N/16 32-bit words of
  // packed weights (all issued back to back in the SASS, then waited for), so a CTA has 32 × N / 2 bytes in flight:
  // 2048 (N = 128) or 1024 (N = 64). Shared memory 9984 / 5888 bytes. Registers and the main loop's SASS
  // instructions per arch (awq_loop_instr); the share of the issue rate the loop achieves (QUICK's measurement).
  const int a = binary_arch(arch);
  const bool n128 = std::fmod(out_dim, 128.0) == 0;
  KernelFootprint k;
  k.threads = 64;
  if (n128) {
    k.name = "awq_gemm m16n128k32";
    k.smem_bytes = 9984;
    k.bytes_per_iter = 2048;
    k.regs = a == 75 ? 95 : (a == 86 || a == 89) ? 92 : 72;
    k.instr_per_iter = awq_loop_instr(a, true);
  } else {
    k.name = "awq_gemm m16n64k32";
    k.smem_bytes = 5888;
    k.bytes_per_iter = 1024;
    k.regs = a == 75 ? 68 : a == 80 ? 56 : a == 90 ? 64 : 67;
    k.instr_per_iter = awq_loop_instr(a, false);
  }
  k.issue_efficiency = awq_gemm_issue_efficiency(a);  // the N = 64 binary: the same loop, measured at N = 128
  return k;
}

double awq_gemm_instr_per_weight(int arch, double out_dim) {
  const KernelFootprint k = awq_gemm_footprint(arch, out_dim);
  return k.instr_per_iter * k.threads / (2.0 * k.bytes_per_iter);
}

KernelFootprint exllama_footprint(int arch) {
  // gemm_half_q_half_gptq(_4bit)_kernel<true, 1>: 128 threads, each 4 columns; per 32 rows of K four 16-byte loads
  // per thread (3 issued together, the 4th mid-way), 8 KB per CTA in flight; 256 bytes of shared memory.
  const int a = binary_arch(arch);
  KernelFootprint k;
  k.name = "exllama gemm_half_q_half_gptq m1";
  k.threads = 128;
  k.smem_bytes = 256;
  k.bytes_per_iter = 8192;
  k.regs = a == 75 ? 62 : a == 90 ? 51 : 56;
  k.instr_per_iter = a == 75 ? 403 : 406;
  return k;
}

double resident_ctas(const KernelFootprint& k, const SmResidency& sm) {
  const double warps = std::ceil(k.threads / 32.0);
  // Registers are allocated per warp in units of 256 (8 per thread).
  const double regs_per_warp = std::ceil(k.regs * 32.0 / 256.0) * 256.0;
  const double by_regs = regs_per_warp > 0 ? std::floor(std::floor(sm.regs_per_sm / regs_per_warp) / warps)
                                           : sm.max_ctas_per_sm;
  const double smem = k.smem_bytes + sm.smem_reserved_per_cta;
  const double by_smem = smem > 0 ? std::floor(sm.smem_per_sm / smem) : sm.max_ctas_per_sm;
  const double by_warps = std::floor(sm.max_warps_per_sm / warps);
  return std::max(1.0, std::min({by_regs, by_smem, by_warps, sm.max_ctas_per_sm}));
}

double awq_gemm_ctas(double m, double out_dim) {
  const double n = std::fmod(out_dim, 128.0) == 0 ? 128.0 : 64.0;
  return std::ceil(m / 16.0) * std::ceil(out_dim / n) * 8.0;
}

double exllama_ctas(double in_dim, double out_dim) { return std::ceil(out_dim / 512.0) * std::ceil(in_dim / 128.0); }

double sm_clock_hz(const spec::GpuSpec& gpu) {
  return gpu.sm_count > 0 ? instruction_issue_rate(gpu) / (128.0 * gpu.sm_count) : 0.0;
}

double latency_bound_bandwidth(const KernelFootprint& k, const SmResidency& sm, double sms, double clock_hz,
                               double ctas) {
  if (!(clock_hz > 0) || !(sms > 0) || ctas <= 0) return std::numeric_limits<double>::infinity();
  const double running = std::min(ctas, sms * resident_ctas(k, sm));
  const double eff = k.issue_efficiency > 0 ? k.issue_efficiency : 1.0;
  return running * k.bytes_per_iter / (sm.dram_latency_s + k.instr_per_iter / (clock_hz * eff));
}

double latency_bound_bandwidth(const KernelFootprint& k, const SmResidency& sm, const spec::GpuSpec& gpu, double ctas) {
  return latency_bound_bandwidth(k, sm, gpu.sm_count, sm_clock_hz(gpu), ctas);
}

double l2_sector_rate(const SmResidency& sm, double sms, double clock_hz) {
  if (!(clock_hz > 0) || !(sms > 0) || !(sm.l2_bytes_per_sm_clock > 0)) return std::numeric_limits<double>::infinity();
  return sm.l2_bytes_per_sm_clock * sms * clock_hz / 32.0;
}

double latency_bound_extra_s(QuantGemmKernel kernel, double m, double params, double in_dim, double out_dim,
                             double bytes_per_param, double kernels, double bus_rate, const SmResidency& sm,
                             double sms, double clock_hz) {
  const bool awq = kernel == QuantGemmKernel::awq_gemm;
  if ((!awq && kernel != QuantGemmKernel::exllama) || !(bus_rate > 0) || params <= 0 || m <= 0) return 0;
  struct Part {
    double in, out, share;
  };
  Part parts[2] = {{in_dim, out_dim, 1.0}, {0, 0, 0}};
  int n = 1;
  const double inter = out_dim - in_dim, hidden = in_dim - inter;
  if (kernels == 2 && inter > 0 && hidden > 0) {
    parts[0] = {hidden, 2 * inter, 2.0 / 3.0};
    parts[1] = {inter, hidden, 1.0 / 3.0};
    n = 2;
  }
  double extra = 0;
  for (int i = 0; i < n; ++i) {
    const Part& p = parts[i];
    const KernelFootprint k = awq ? awq_gemm_footprint(sm.arch, p.out) : exllama_footprint(sm.arch);
    const double ctas = awq ? awq_gemm_ctas(m, p.out) : exllama_ctas(p.in, p.out);
    const double cap = latency_bound_bandwidth(k, sm, sms, clock_hz, ctas);
    const double w = params * p.share * bytes_per_param;
    extra += std::max(0.0, w / cap - w / bus_rate);
  }
  return extra;
}

}  // namespace llmsim::perf
