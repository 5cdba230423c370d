#include "llmsim/perf/hardware_profile.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/perf/tensor_clock.hpp"

namespace llmsim::perf {

// ---------------------------------------------------------------------------------------------------------
// Curve

double Curve::at(double xv) const {
  if (x.empty()) return 1.0;
  if (x.size() == 1 || xv <= x.front()) return y.front();
  if (xv >= x.back()) return y.back();
  // Few points (a handful): a linear scan is faster than a binary search and allocation-free.
  std::size_t i = 1;
  while (x[i] < xv) ++i;
  const double l0 = std::log(x[i - 1]), l1 = std::log(x[i]);
  const double w = (std::log(xv) - l0) / (l1 - l0);
  return y[i - 1] + w * (y[i] - y[i - 1]);
}

namespace {

Curve curve(std::vector<double> x, std::vector<double> y) { return Curve{std::move(x), std::move(y)}; }

Curve scaled(const Curve& c, double f) {
  Curve r = c;
  for (auto& v : r.y) v *= f;
  return r;
}

using Family = GpuFamily;

}  // namespace

// NVIDIA's architecture whitepapers: the GA100 SM has 64 FP32 cores in 4 partitions; the GA102, AD102 and GH100 SMs
// have 128 (GA102/AD102 pair a dedicated FP32 datapath with an FP32/INT32 one); each partition's scheduler issues one
// warp-instruction per clock on all of them.
double instruction_issue_rate(const spec::GpuSpec& gpu) {
  const double fp32_lanes_per_sm = gpu_family(gpu) == Family::ampere_hbm ? 64.0 : 128.0;
  return gpu.fp32_flops / 2.0 * (128.0 / fp32_lanes_per_sm);
}

namespace {

void check_curve(const Curve& c, const std::string& path, double max_y, Problems& p) {
  if (c.x.size() != c.y.size()) {
    p.add(path, "x and y must have the same length, got " + std::to_string(c.x.size()) + " and " +
                    std::to_string(c.y.size()));
    return;
  }
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    if (!(c.x[i] > 0) || !std::isfinite(c.x[i]))
      p.add(path + ".x[" + std::to_string(i) + "]", "must be > 0, got " + format_given(c.x[i]));
    else if (i > 0 && !(c.x[i] > c.x[i - 1]))
      p.add(path + ".x[" + std::to_string(i) + "]", "must be strictly increasing, got " + format_given(c.x[i]) +
                                                        " after " + format_value(c.x[i - 1]));
    if (!(c.y[i] > 0) || !(c.y[i] <= max_y))
      p.add(path + ".y[" + std::to_string(i) + "]",
            "must be in (0, " + format_value(max_y) + "], got " + format_given(c.y[i]));
  }
}

}  // namespace

void HardwareProfile::validate(const std::string& path) const {
  Problems p;
  auto in_range = [&](const char* field, double v, double lo, double hi, bool lo_open = true) {
    const bool ok = std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
    if (!ok)
      p.add(path + "." + field, std::string("must be in ") + (lo_open ? "(" : "[") + format_value(lo) + ", " +
                                    format_value(hi) + "], got " + format_given(v));
  };
  if (gpu_id.empty()) p.add(path + ".gpu_id", "must name the GPU the profile describes");
  in_range("mem_bw_efficiency", mem_bw_efficiency, 0, 1.5);
  in_range("gemm_fixed_s", gemm_fixed_s, 0, 1e-2, false);
  in_range("roofline_exponent", roofline_exponent, 1, 64, false);
  in_range("attn_prefill_efficiency", attn_prefill_efficiency, 0, 1.5);
  in_range("kernel_launch_s", kernel_launch_s, 0, 1e-2, false);
  in_range("graph_launch_s", graph_launch_s, 0, 1e-2, false);
  in_range("attn_decode_bw_efficiency", attn_decode_bw_efficiency, 0, 1.5);
  in_range("attn_decode_cta_bandwidth", attn_decode_cta_bandwidth, 0, 1e13);
  in_range("attn_decode_cta_s", attn_decode_cta_s, 0, 1e-2, false);
  in_range("attn_decode_fixed_s", attn_decode_fixed_s, 0, 1e-2, false);
  in_range("cpu_overhead_per_iter_s", cpu_overhead_per_iter_s, 0, 1.0, false);
  in_range("cpu_overhead_per_seq_s", cpu_overhead_per_seq_s, 0, 1e-1, false);
  in_range("v0_cpu_overhead_per_iter_s", v0_cpu_overhead_per_iter_s, 0, 1.0, false);
  in_range("v0_cpu_overhead_per_seq_s", v0_cpu_overhead_per_seq_s, 0, 1e-1, false);
  in_range("link_bandwidth", link_bandwidth, 0, 1e13, false);
  in_range("link_latency_s", link_latency_s, 0, 1e-1, false);
  in_range("nccl_ll_step_s", nccl_ll_step_s, 0, 1e-2, false);
  in_range("custom_allreduce_latency_s", custom_allreduce_latency_s, 0, 1e-1, false);
  in_range("custom_allreduce_bandwidth", custom_allreduce_bandwidth, 0, 1e13, false);
  in_range("host_bandwidth", host_bandwidth, 0, 1e13, false);
  if (api_server_s) in_range("api_server_s", *api_server_s, 0, 1.0, false);
  if (inprocess_server_per_output_s)
    in_range("inprocess_server_per_output_s", *inprocess_server_per_output_s, 0, 1e-1, false);
  if (inprocess_server_per_request_s)
    in_range("inprocess_server_per_request_s", *inprocess_server_per_request_s, 0, 1.0, false);
  check_curve(mem_bw_vs_bytes, path + ".mem_bw_vs_bytes", 1.5, p);
  check_curve(gemm_bw_eff_vs_m, path + ".gemm_bw_eff_vs_m", 1.5, p);
  for (const auto& [dt, c] : gemm_eff_vs_m)
    check_curve(c, path + ".gemm_eff_vs_m." + std::string(spec::to_string(dt)), 1.5, p);
  if (gemm_bw_eff_vs_m.empty()) p.add(path + ".gemm_bw_eff_vs_m", "missing (a curve or a number is required)");
  if (gemm_eff_vs_m.find(spec::DType::fp16) == gemm_eff_vs_m.end())
    p.add(path + ".gemm_eff_vs_m.fp16", "missing (every profile needs the fp16 GEMM curve)");
  p.throw_if_any();
}

// Every number below is cited in docs/cost-model.md; [D] = derived there from the cited data.
HardwareProfile default_profile(const spec::GpuSpec& gpu) {
  HardwareProfile p;
  p.gpu_id = gpu.id;
  const Family fam = gpu_family(gpu);

  // Kernel fixed costs: RRZE gpu-small-kernels A100/H200 2.5-2.6 us eager, 1.3-1.4 us graph
  // (gpus-and-efficiency.md B6, prior B8).
  p.kernel_launch_s = 2.5e-6;
  p.graph_launch_s = 1.3e-6;
  // Engine CPU time serialized with the GPU (docs/cost-model.md, "Overheads"). vLLM V0: ~2 ms per step, +~10 us
  // per sequence [D] from V0's decode gaps (RFC vllm-project/vllm#6854, 0.5.x: ~4 ms bubbles between steps, 5-13 ms
  // before async output processing; #10634's 5-6 ms at batch 256 is V1's AsyncLLM prototype, not V0) and vllm#9856's TP2
  // Llama-3.1-8B latency on two A100s under V0 (2.30 s, reproduced within 2% with these values). vLLM V1 keeps a persistent batch and prepares inputs incrementally: ~1 ms per step
  // [D] from Llama-3.2-1B serving at TPOT 2.64 ms on V1 (vllm-project/vllm#17866) less its ~1.5 ms of GPU time, and
  // the 0.2 ms scheduler + 0.2 ms state update + 0.05 ms input preparation per decode step that #42131 measures;
  // per sequence ~4 us [D] (#42131: the decode fast path cuts the scheduler's per-step work 5×, so V1's
  // per-request bookkeeping is well below V0's 10 us).
  p.cpu_overhead_per_iter_s = 1e-3;
  p.cpu_overhead_per_seq_s = 4e-6;
  p.v0_cpu_overhead_per_iter_s = 2e-3;
  p.v0_cpu_overhead_per_seq_s = 1e-5;
  p.roofline_exponent = 2.0;  // [D] least-error exponent on Vidur A100/H100 GEMMs (1.5-2)

  // Decode attention (decode_attention.hpp): per call ~5 us and per wave of CTAs ~5 us [D] from Vidur's kernel
  // timings (A100 FlashInfer, Llama-3-8B TP4, 384 cached tokens: 19-21 us for 11-54 sequences, +6-8 us when the
  // grid passes one wave of 108 CTAs; H100 FlashAttention, Llama-3.1-405B TP1, 32 tokens: +7 us per wave of 132
  // CTAs) and ONNX Runtime's FA2 H100 nvbench (~3 us per wave at 32 tokens, microsoft/onnxruntime#21414).
  p.attn_decode_fixed_s = 5e-6;
  p.attn_decode_cta_s = 5e-6;
  switch (fam) {
    case Family::ampere_hbm:
      // Streaming: HBM prior 0.85 (B1 A100 80GB triad 0.83-0.88; B8).
      p.mem_bw_efficiency = 0.85;
      // GEMMs: [D] least-median-error fit to Vidur A100 Llama QKV/O/up/down times (B3) with p = 2: 0.735 of
      // 312 TF at full waves (B2 large GEMMs 0.71-0.87; 0.725 before the wave term of perf/gemm_tiles.hpp took the
      // partly empty last waves out of it), 0.8 of BW plus 6 us per kernel (= 76% effective at M=1 on the
      // 180 MB up-projection, as B3 reads).
      p.gemm_eff_vs_m[spec::DType::fp16] = Curve::constant(0.735);
      p.gemm_bw_eff_vs_m = Curve::constant(0.8);
      p.gemm_fixed_s = 6e-6;
      p.attn_prefill_efficiency = 0.6;  // FlashAttention-2 fwd on A100 SXM: 58% of 312 (B4)
      // Vidur A100 FlashInfer decode (Llama-3-8B TP1, 3392 tokens, 40-112 sequences): 77-84% of 2039 GB/s; one
      // wave of 108 CTAs streams 1.74 MB each in 0.112 ms = 15.5 GB/s per CTA, so 108 CTAs already reach the cap.
      p.attn_decode_bw_efficiency = 0.83;
      p.attn_decode_cta_bandwidth = 16e9;
      p.source = "default: datasheet x priors for HBM data-centre Ampere (docs/cost-model.md)";
      break;
    case Family::hopper_hbm:
    case Family::blackwell_hbm:
      // Blackwell HBM (B200, GB200) takes Hopper's priors (provenance: "assumed", carried over): MAMF reaches 77.6 %
      // of the B200's BF16 peak and 76.3 % of FP8 against 80.3 % / 70.9 % on the H100 (stas00/ml-engineering), and
      // NCCL's ring all-reduce on 4 GB200s (680 GB/s busbw at 8 GB, Azure ND GB200 v6) is what the Hopper link
      // prior predicts (0.9 × (1 − 0.6/4) × 900 = 688). Decode attention differs: below.
      p.mem_bw_efficiency = 0.85;  // B1 H100 SXM triad 0.89, H200 0.86 (B8 prior 0.85)
      // [D] fit to Vidur H100 Llama GEMM times (B3): 0.725 of 989 TF at full waves (the same with and without the
      // wave term of perf/gemm_tiles.hpp), 0.925 of BW with a 6 us fixed cost
      // (i.e. ≈84% effective on the 180 MB up-projection at M=1, as B3 reads).
      p.gemm_eff_vs_m[spec::DType::fp16] = Curve::constant(0.725);
      p.gemm_bw_eff_vs_m = Curve::constant(0.925);
      p.gemm_fixed_s = 6e-6;
      p.attn_prefill_efficiency = 0.5;  // between FA2 (33%) and FA3 (75%) on H100 (B4)
      // Paged decode on H100 reaches only ~half of its 3.35 TB/s: Vidur FlashAttention (405B TP1, 2176 tokens,
      // 64-128 sequences) 1.5-1.65 TB/s; FA3 paged, 16 sequences × 2000-4000 tokens, 1.80-1.85 TB/s
      // (Dao-AILab/flash-attention#1572); FA2 paged nvbench 47% at 256 tokens and rising
      // (microsoft/onnxruntime#21414). 132 CTAs, one per SM, at ~13 GB/s each (bytes in flight / HBM latency)
      // give 1.7 TB/s: the same per-CTA rate as on the A100, on a card with 2.2× its bandwidth [D].
      // The cap itself is reached only by grids that keep several CTAs on every SM (FA2's split-KV kernel, 2 per SM;
      // PagedAttention): microsoft/onnxruntime#21414's nvbench of 64 MHA sequences (32 / 32 heads of 128, page 256)
      // on the H100 SXM adds 3.05-3.2 TB/s of reads per extra second between 128 and 512 tokens (GPU time 66.5,
      // 110.4, 194.2 us for 128.5, 256.5, 512.5 MiB): 0.91-0.96 of 3.35 TB/s, taken as 0.93 [D]; vllm#9471's
      // flash_fwd_splitkv_kernel averages 2.9 TB/s with its fixed costs included.
      p.attn_decode_bw_efficiency = 0.93;
      p.attn_decode_cta_bandwidth = 13e9;
      p.source = "default: datasheet x priors for HBM Hopper (docs/cost-model.md)";
      if (fam == Family::blackwell_hbm) {
        // Blackwell's decode kernels stream far more per CTA: FlashInfer's trtllm-gen decode (vLLM's default on
        // SM100, vllm-project/vllm#19825) on a B200 reads 4 × 16,384 tokens of a 64/8-head, head_dim-64 cache at
        // 4185 GB/s (flashinfer-ai/flashinfer#1415), i.e. 32 KV-head items split 4 ways to fill 148 SMs = 128 CTAs
        // at 32.7 GB/s each [D]; with 13 GB/s per CTA the 148 SMs would cap it at 1.9 TB/s. The same benchmark's
        // best point, 128 × 4096 tokens, reads 5831 GB/s = 0.76 of 7.7 TB/s, within the 0.85 cap carried over.
        p.attn_decode_cta_bandwidth = 32e9;
        p.attn_decode_bw_efficiency = 0.85;  // the Hopper prior before the H100 cap was measured; B200 0.76 within it
        p.source = "default: datasheet x priors for HBM Blackwell (Hopper's, carried over; docs/cost-model.md)";
      }
      break;
    case Family::gddr:
      p.mem_bw_efficiency = 0.92;  // B1: GDDR6/6X Ada/Ampere 0.90-0.98 (B8 prior 0.92)
      // GeForce large GEMMs reach ~100% of the FP32-acc spec (B2: 4090 172 TF, 158.6-167 in an issue, of 165.2;
      // 3090 Ti ~100%): boost clocks run above the spec clock. llama.cpp's F16 pp512 stays 3-8% slow even at 1.0.
      // With the wave term (perf/gemm_tiles.hpp) the prior is the full-wave rate a best-shape large GEMM measures:
      // the 4090's 172 TF of 165.2 = 1.04 (1.0 averaged llama.cpp's pp512 shapes, partly empty waves included).
      p.gemm_eff_vs_m[spec::DType::fp16] = Curve::constant(1.04);
      // Decode GEMVs stream weights at a fraction of peak that depends on the die's generation, not on what a
      // linear read reaches (clpeak reads 0.914 of peak on a 4090 and 0.915 on a 3090, whose F16 GEMVs differ by
      // 6 points). [D] from llama.cpp's batch-1 F16 decode (reference CSV, Llama-3-8B tg512, build 2824-2843) on the
      // cards llmsim does not score, with this model's own non-GEMV time per token (~2 ms) taken off: Ada (AD10x,
      // the GDDR parts with FP8 tensor cores) RTX 4080 0.925, RTX 4000 Ada 0.910, 5000 Ada 0.916, 6000 Ada 0.914
      // -> 0.915; Ampere GA102 RTX A6000 0.866, A40 0.797 with ECC on (0.850 without, below) -> 0.85 (B8's decode
      // GEMV prior 0.80 -> 0.85; Vidur's A40 cuBLAS GEMV at M = 1 reads 0.81 with ECC).
      p.gemm_bw_eff_vs_m = Curve::constant(gpu.fp8_flops > 0 ? 0.915 : 0.85);
      p.gemm_fixed_s = 4e-6;
      p.attn_prefill_efficiency = 0.6;  // FA2-class kernels on Ampere/Ada, as on A100 (B4) [D]
      // FlashInfer decode: "close to 100%" of the 4090's bandwidth for long contexts (B4); 0.9 as for streaming.
      // The per-CTA rate of the A100 (16 GB/s × 128 SMs = 2 TB/s) never binds on a 1 TB/s card.
      p.attn_decode_bw_efficiency = 0.9;
      p.attn_decode_cta_bandwidth = 16e9;
      // Kernel fixed costs measured on the GDDR dies themselves (RRZE gpu-small-kernels @1038c5d, 64 KiB SCALE
      // kernels back to back, a40*.txt / l40*.txt) [D]: AD102 (L40, the 4090's and L40S's die; FP8 tensor cores)
      // 1.64-1.77 us per kernel enqueued on a stream, 0.94-1.13 us replayed from a graph; GA102 (A40, the 3090's and
      // A10's class; no FP8) 2.05-2.26 / 1.09-1.39 us. The A100/H200 values above stay for HBM parts.
      if (gpu.fp8_flops > 0) {
        p.kernel_launch_s = 1.7e-6;
        p.graph_launch_s = 1.0e-6;
      } else {
        p.kernel_launch_s = 2.1e-6;
        p.graph_launch_s = 1.2e-6;
      }
      if (gpu.ecc_data_fraction() < 1.0) {
        // GDDR has no side-band ECC bits: with ECC on (data-centre GDDR cards ship with it on) the check bits live in
        // 1/16 of the DRAM itself — nvidia-smi shows 46,068 of 49,152 MiB on an L40S, A40 or L20, 23,028 of 24,576
        // MiB on an A10 (spec::GpuSpec::inline_ecc; the memory plan sizes the KV cache on the rest) — and are read
        // along with the data, so every DRAM stream carries 15/16 of the bus's bytes.
        // Cross-check [D]: llama.cpp F16 decode on the same die with and without ECC: A40 / RTX A6000 0.797 / 0.866
        // (0.92), L40S / RTX 6000 Ada 0.836 / 0.914 (0.91), against 15/16 = 0.94. HBM parts keep ECC out of band.
        const double kInlineEcc = gpu.ecc_data_fraction();
        p.mem_bw_efficiency *= kInlineEcc;
        p.gemm_bw_eff_vs_m = scaled(p.gemm_bw_eff_vs_m, kInlineEcc);
        p.attn_decode_bw_efficiency *= kInlineEcc;
      }
      p.source = "default: datasheet x priors for GDDR GeForce/workstation cards (docs/cost-model.md)";
      break;
  }
  // Low-precision tensor paths reach a lower fraction of their peak: H100 FP8 best shape 70.9% vs BF16 80.3%
  // (B2) -> x0.88; INT8 assumed alike (x0.9) [D].
  const Curve& c16 = p.gemm_eff_vs_m[spec::DType::fp16];
  p.gemm_eff_vs_m[spec::DType::bf16] = c16;
  p.gemm_eff_vs_m[spec::DType::fp8] = scaled(c16, 0.88);
  p.gemm_eff_vs_m[spec::DType::int8] = scaled(c16, 0.9);
  p.gemm_eff_vs_m[spec::DType::int4] = scaled(c16, 0.8);
  // Blackwell FP4 (NVFP4/MXFP4 block-scaled MMA): no measurement in data/ yet; taken as FP8's fraction [D].
  p.gemm_eff_vs_m[spec::DType::fp4] = scaled(c16, 0.88);
  // Power-limited boards hold a lower clock under sustained tensor work than the cards the GEMM priors were measured
  // on (perf/tensor_clock.hpp; the catalogue's sustained_tensor_clock_mhz): their tensor efficiencies scale with it.
  apply_sustained_tensor_clock(gpu, p);
  // Small element-wise kernels do not reach the streaming rate (calculon's memory table: 0.6 at 1 MB, 0.75 at
  // 10 MB, 0.9 at >=100 MB relative to peak; here relative to the streaming efficiency, C4) [D].
  p.mem_bw_vs_bytes = curve({1e5, 1e6, 1e7, 1e8}, {0.4, 0.65, 0.85, 1.0});

  // Links. NVLink ring all-reduce busbw 0.78-0.82 of the per-direction link (B5/B8); PCIe without P2P
  // (host-staged through SHM) ~18-21 GB/s on Gen4 x16 = ~0.6 of the x16 rate (B5); PCIe with P2P 22-25 GB/s
  // (patched 4090 P2P, A40 P2P on: 40-50 bidirectional) = ~0.75 (B5). Latency per ring step: tens of us
  // (B5; Vidur pairwise NVLink 2-GPU all-reduce of small messages 7-60 us) [D].
  // vLLM's custom all-reduce: ~6 us fixed on NVLink [D] (H100 one stage, vllm-project/vllm#24111: TP2 0.5 MB 7 us;
  // TP4 0.5/1/2/4 MB 10/15/22/38 us = 6 us + peer reads; B300 16-256 KiB 7-9 us, #37756; A100 5.4-6.0 us, collective.cpp);
  // over PCIe P2P the flag round trips cross PCIe: 10 us assumed [D]. The peer-read bandwidth is derived in
  // collective.cpp. Hopper (sm90) at decode sizes: 4.8 us, the least-squares fixed cost of vLLM 0.20.0's one stage
  // under CUDA graphs on 8 H100 and 8 H200 at TP 2/4/8, 16-128 KiB (24 points, ai-dynamo/aiconfigurator
  // campaign_checkpoints/{h100_sxm,h200_sxm}/custom_allreduce_perf.txt; 4.4 / 4.7 / 5.1 us by world size), with the
  // peers read at B_peer as above; vLLM 0.14.0's H100 table agrees within 0.3 us. 6 us read those 24 points 6-37 %
  // dear. The two stages keep #24111's 2 x 6 us (collective.cpp) [D].
  // NCCL over NVLink for the messages serving sends (8-512 MiB, prefill chunks): Vidur's all-reduce timings
  // (vidur/profiling/network/{a100,h100}_{dgx,pairwise_nvlink}, CUDA-graph replays, message = its "size" in
  // bytes as Vidur's own predictor reads it) fit t = α + 2(n-1)/n·S/busbw with busbw 171/190/188 GB/s on A100
  // and 286/345/377 GB/s on H100 for 2/4/8 GPUs, α 45/67/91 us and 16/23/41 us [D]. As B·(1 − k/n): B = 0.65 of
  // the per-direction NVLink, k = 0.25 (A100) and B = 0.9, k = 0.6 (H100) — collective.cpp applies the (1 − k/n);
  // α = (n + 2) × 11 us and × 4 us. nccl-tests reach 0.78-0.82 only at >= 256 MB-1 GB (B5).
  // Small messages go through NCCL's LL protocol instead (collective.cpp): 6.6 us + 2(n-1) steps [D]. PCIe: 2 RTX
  // 4090s without P2P all-reduce 8 B-2 KB in 8.3-8.6 us (nccl-tests, tinygrad/open-gpu-kernel-modules#45): ~1 us;
  // eight PCIe GPUs span two sockets and collective.cpp triples the step there. Hopper NVLink: vLLM's PyNccl on 4
  // H100s 0.5 MB in 17 us under CUDA graphs (vllm-project/vllm#24111) = 6.6 + 6 × 1 us + the bytes at the LL rate.
  // Ampere NVLink: 8 A100s 32 KB in 44 us (nccl-tests, gpus-and-efficiency.md B5) = 6.6 + 14 × 2.7 us.
  p.nccl_ll_step_s = gpu.nvlink_bandwidth > 0 && fam == Family::ampere_hbm ? 2.7e-6 : 1e-6;
  const double pcie = gpu.pcie_bandwidth();
  if (gpu.nvlink_bandwidth > 0) {
    const bool hopper = hopper_class(fam);
    p.link_bandwidth = (hopper ? 0.9 : 0.65) * gpu.nvlink_bandwidth;
    p.link_latency_s = hopper ? 4e-6 : 11e-6;
    p.custom_allreduce_latency_s = fam == Family::hopper_hbm ? 4.8e-6 : 6e-6;
  } else if (gpu.p2p) {
    p.link_bandwidth = 0.75 * pcie;
    p.link_latency_s = 12e-6;
    p.custom_allreduce_latency_s = 10e-6;
  } else {
    p.link_bandwidth = 0.6 * pcie;
    p.link_latency_s = 25e-6;
    p.custom_allreduce_latency_s = 10e-6;  // unused: no P2P, no custom all-reduce
  }
  p.host_bandwidth = 0.85 * pcie;  // host<->device 0.82-0.88 of PCIe x16 per direction (B5/B8)
  return p;
}

// ---------------------------------------------------------------------------------------------------------
// JSON

namespace {

Curve curve_from_json(const JsonView& v) {
  if (v.json().is_number()) return Curve::constant(v.as_number());
  v.allow_only({"x", "y"});
  Curve c;
  for (const auto& e : v["x"].elements()) c.x.push_back(e.as_number());
  for (const auto& e : v["y"].elements()) c.y.push_back(e.as_number());
  if (c.x.empty()) v.fail("a curve needs at least one point");
  return c;
}

Json curve_to_json(const Curve& c) { return Json{{"x", c.x}, {"y", c.y}}; }

}  // namespace

HardwareProfile profile_from_json(const JsonView& v, const HardwareProfile& base) {
  if (v.has("attn_decode_bw_vs_context"))
    v["attn_decode_bw_vs_context"].fail(
        "was replaced by the decode-attention kernel model: attn_decode_bw_efficiency, attn_decode_cta_bandwidth, "
        "attn_decode_cta_s, attn_decode_fixed_s (docs/cost-model.md; `llmsim calibrate-fit` writes them)");
  v.allow_only({"format", "gpu_id", "source", "runtime", "engine_version", "cross_validated_error", "mem_bw_efficiency", "mem_bw_vs_bytes", "gemm_eff_vs_m",
                "gemm_bw_eff_vs_m", "gemm_fixed_s", "roofline_exponent", "attn_prefill_efficiency",
                "attn_decode_bw_efficiency", "attn_decode_cta_bandwidth", "attn_decode_cta_s", "attn_decode_fixed_s",
                "kernel_launch_s", "graph_launch_s", "cpu_overhead_per_iter_s", "cpu_overhead_per_seq_s",
                "v0_cpu_overhead_per_iter_s", "v0_cpu_overhead_per_seq_s", "link_bandwidth", "link_latency_s", "nccl_ll_step_s",
                "custom_allreduce_latency_s", "custom_allreduce_bandwidth", "host_bandwidth", "api_server_s",
                "inprocess_server_per_output_s", "inprocess_server_per_request_s"});
  if (v.has("format")) {
    const std::string f = v.string("format");
    if (f != "llmsim-hardware-profile/1")
      v["format"].fail("unsupported profile format '" + f + "' (expected 'llmsim-hardware-profile/1')");
  }
  HardwareProfile p = base;
  p.gpu_id = v.string("gpu_id");
  p.source = v.string_or("source", "profile file");
  p.runtime = v.string_or("runtime", "");
  if (!p.runtime.empty()) (void)spec::parse_runtime(p.runtime, v.child_path("runtime"));
  p.engine_version = v.string_or("engine_version", "");
  if (v.has("cross_validated_error")) {
    const JsonView c = v["cross_validated_error"];
    c.allow_only({"runs", "values", "median_abs", "p90_abs", "signed_median"});
    HardwareProfile::CrossValidatedError e;
    e.runs = static_cast<int>(c["runs"].as_integer_in(2, 1'000'000));
    e.values = static_cast<int>(c["values"].as_integer_in(e.runs, 100'000'000));
    e.median_abs = c["median_abs"].as_number_in(0, 100);
    e.p90_abs = c["p90_abs"].as_number_in(e.median_abs, 100);
    e.signed_median = c.has("signed_median") ? c["signed_median"].as_number_in(-100, 100) : 0.0;
    p.cross_validated_error = e;
  }
  p.mem_bw_efficiency = v.number_or("mem_bw_efficiency", p.mem_bw_efficiency);
  if (v.has("mem_bw_vs_bytes")) p.mem_bw_vs_bytes = curve_from_json(v["mem_bw_vs_bytes"]);
  if (v.has("gemm_eff_vs_m")) {
    const JsonView g = v["gemm_eff_vs_m"];
    g.expect_object();
    for (const auto& [key, value] : g.json().items()) {
      const spec::DType dt = spec::parse_dtype(key, g.child_path(key));
      p.gemm_eff_vs_m[dt] = curve_from_json(JsonView(value, g.child_path(key)));
    }
  }
  if (v.has("gemm_bw_eff_vs_m")) p.gemm_bw_eff_vs_m = curve_from_json(v["gemm_bw_eff_vs_m"]);
  p.gemm_fixed_s = v.number_or("gemm_fixed_s", p.gemm_fixed_s);
  p.roofline_exponent = v.number_or("roofline_exponent", p.roofline_exponent);
  p.attn_prefill_efficiency = v.number_or("attn_prefill_efficiency", p.attn_prefill_efficiency);
  p.attn_decode_bw_efficiency = v.number_or("attn_decode_bw_efficiency", p.attn_decode_bw_efficiency);
  p.attn_decode_cta_bandwidth = v.number_or("attn_decode_cta_bandwidth", p.attn_decode_cta_bandwidth);
  p.attn_decode_cta_s = v.number_or("attn_decode_cta_s", p.attn_decode_cta_s);
  p.attn_decode_fixed_s = v.number_or("attn_decode_fixed_s", p.attn_decode_fixed_s);
  p.kernel_launch_s = v.number_or("kernel_launch_s", p.kernel_launch_s);
  p.graph_launch_s = v.number_or("graph_launch_s", p.graph_launch_s);
  p.cpu_overhead_per_iter_s = v.number_or("cpu_overhead_per_iter_s", p.cpu_overhead_per_iter_s);
  p.cpu_overhead_per_seq_s = v.number_or("cpu_overhead_per_seq_s", p.cpu_overhead_per_seq_s);
  p.v0_cpu_overhead_per_iter_s = v.number_or("v0_cpu_overhead_per_iter_s", p.v0_cpu_overhead_per_iter_s);
  p.v0_cpu_overhead_per_seq_s = v.number_or("v0_cpu_overhead_per_seq_s", p.v0_cpu_overhead_per_seq_s);
  p.link_bandwidth = v.number_or("link_bandwidth", p.link_bandwidth);
  p.link_latency_s = v.number_or("link_latency_s", p.link_latency_s);
  p.nccl_ll_step_s = v.number_or("nccl_ll_step_s", p.nccl_ll_step_s);
  p.custom_allreduce_latency_s = v.number_or("custom_allreduce_latency_s", p.custom_allreduce_latency_s);
  p.custom_allreduce_bandwidth = v.number_or("custom_allreduce_bandwidth", p.custom_allreduce_bandwidth);
  p.host_bandwidth = v.number_or("host_bandwidth", p.host_bandwidth);
  if (v.has("api_server_s")) p.api_server_s = v["api_server_s"].as_number();
  if (v.has("inprocess_server_per_output_s"))
    p.inprocess_server_per_output_s = v["inprocess_server_per_output_s"].as_number();
  if (v.has("inprocess_server_per_request_s"))
    p.inprocess_server_per_request_s = v["inprocess_server_per_request_s"].as_number();
  p.validate(v.path().empty() ? "profile" : v.path());
  return p;
}

HardwareProfile profile_from_json(const JsonView& v) { return profile_from_json(v, HardwareProfile{}); }

HardwareProfile load_profile(const std::string& path, const HardwareProfile& base) {
  const auto doc = profile_document(path);  // a file (read once while unchanged), or a scenario's inline object
  return profile_from_json(JsonView(*doc, is_inline_json(path) ? "hardware.gpu_profile" : path), base);
}

HardwareProfile load_profile(const std::string& path) { return load_profile(path, HardwareProfile{}); }

Json to_json(const HardwareProfile& p) {
  Json g = Json::object();
  for (const auto& [dt, c] : p.gemm_eff_vs_m) g[std::string(spec::to_string(dt))] = curve_to_json(c);
  Json j{{"format", "llmsim-hardware-profile/1"},
              {"gpu_id", p.gpu_id},
              {"source", p.source},
              {"mem_bw_efficiency", p.mem_bw_efficiency},
              {"mem_bw_vs_bytes", curve_to_json(p.mem_bw_vs_bytes)},
              {"gemm_eff_vs_m", g},
              {"gemm_bw_eff_vs_m", curve_to_json(p.gemm_bw_eff_vs_m)},
              {"gemm_fixed_s", p.gemm_fixed_s},
              {"roofline_exponent", p.roofline_exponent},
              {"attn_prefill_efficiency", p.attn_prefill_efficiency},
              {"attn_decode_bw_efficiency", p.attn_decode_bw_efficiency},
              {"attn_decode_cta_bandwidth", p.attn_decode_cta_bandwidth},
              {"attn_decode_cta_s", p.attn_decode_cta_s},
              {"attn_decode_fixed_s", p.attn_decode_fixed_s},
              {"kernel_launch_s", p.kernel_launch_s},
              {"graph_launch_s", p.graph_launch_s},
              {"cpu_overhead_per_iter_s", p.cpu_overhead_per_iter_s},
              {"cpu_overhead_per_seq_s", p.cpu_overhead_per_seq_s},
              {"v0_cpu_overhead_per_iter_s", p.v0_cpu_overhead_per_iter_s},
              {"v0_cpu_overhead_per_seq_s", p.v0_cpu_overhead_per_seq_s},
              {"link_bandwidth", p.link_bandwidth},
              {"link_latency_s", p.link_latency_s},
              {"nccl_ll_step_s", p.nccl_ll_step_s},
              {"custom_allreduce_latency_s", p.custom_allreduce_latency_s},
              {"custom_allreduce_bandwidth", p.custom_allreduce_bandwidth},
              {"host_bandwidth", p.host_bandwidth}};
  // Only a profile fitted from an engine's runs is tied to a runtime (kernels are not): written only then.
  if (!p.runtime.empty()) j["runtime"] = p.runtime;
  if (!p.engine_version.empty()) j["engine_version"] = p.engine_version;
  // Unset: the runtime's own serving path (written only when a profile sets it, e.g. a fit to serving runs).
  if (p.api_server_s) j["api_server_s"] = *p.api_server_s;
  // Unset: the runtime's in-process server cost (written only when a fit to a pre-0.6 vLLM's served runs set it).
  if (p.inprocess_server_per_output_s) j["inprocess_server_per_output_s"] = *p.inprocess_server_per_output_s;
  if (p.inprocess_server_per_request_s) j["inprocess_server_per_request_s"] = *p.inprocess_server_per_request_s;
  if (const auto& e = p.cross_validated_error) {
    j["cross_validated_error"] = {{"runs", e->runs}, {"values", e->values}, {"median_abs", e->median_abs},
                                  {"p90_abs", e->p90_abs}, {"signed_median", e->signed_median}};
  }
  return j;
}

std::optional<std::string> runtime_mismatch(const HardwareProfile& p, spec::Runtime runtime) {
  if (p.runtime.empty() || p.runtime == spec::to_string(runtime)) return std::nullopt;
  return "the GPU profile was fitted from runs on runtime '" + p.runtime + "'" +
         (p.engine_version.empty() ? std::string() : " (" + p.engine_version + ")") +
         " but the scenario prices runtime '" + spec::to_string(runtime) +
         "': its host costs and kernel efficiencies are that runtime's" +
         (p.api_server_s ? std::string(", and its fitted serving path (api_server_s) is not used: this runtime keeps "
                                       "its own")
                         : std::string()) +
         (p.inprocess_server_per_output_s
              ? std::string(", and its fitted in-process server cost (inprocess_server_per_output_s) is not used: this "
                            "runtime keeps its own")
              : std::string()) +
         (p.inprocess_server_per_request_s
              ? std::string(", and its fitted in-process server front part (inprocess_server_per_request_s) is not "
                            "used: this runtime keeps its own")
              : std::string()) +
         " (set engine.runtime to match, or fit a profile from runs of this runtime)";
}

}  // namespace llmsim::perf
