// The provenance of every prior of the default profiles and every runtime trait. "G§Bn" is a section of
// ../shared/reference/gpus-and-efficiency.md; "[D]" in docs/cost-model.md marks the same derivations. A `looked_at`
// list names the validation sources whose rows were read while a value was chosen: those sources are then not
// blind (tests/validation, docs/trust.md "Blind sources").
#include "llmsim/perf/provenance.hpp"
#include "provenance_rows.hpp"

#include "llmsim/perf/ada_fp8.hpp"
#include "llmsim/perf/block_fp8.hpp"
#include "llmsim/perf/hopper_fp8.hpp"
#include "llmsim/perf/lora_kernels.hpp"
#include "llmsim/perf/decode_attention.hpp"
#include "llmsim/perf/eager_host.hpp"
#include "llmsim/perf/gemm_tiles.hpp"

#include "llmsim/perf/quant_kernels.hpp"
#include "llmsim/perf/quant_latency.hpp"
#include "llmsim/spec/engine_config.hpp"

namespace llmsim::perf {

namespace {

using provenance_rows::c;
using provenance_rows::P;

// --- The pre-Marlin kernels' bytes-in-flight bound (perf/quant_latency.hpp). ptxas -v and the SASS main loop of each
// kernel compiled by nvcc 13.0 (V13.0.88) from vLLM's source (awq: gemm_kernels.cu @v0.2.5 31c1f325 and @v0.4.1
// 221d93ec; gptq: q_gemm.cu @v0.2.7 2e0b6e77 and @v0.4.1; both tags give the same counts). The wheels of those
// releases were built by CUDA 12.1, whose ptxas may allocate a few registers differently.
void add_quant_latency(std::vector<ConstantProvenance>& t) {
  const std::string cc = "CUDA C++ Programming Guide, technical specifications per compute capability: ";
  const std::string rrze = "RRZE-HPC/gpu-benches @1038c5d gpu-latency/";
  const std::pair<int, const char*> lat[] = {
      {75, "assumed: no Turing file; GA102's (a40.txt)"}, {80, "a100_80.txt: 552.3 cycles at 1410 MHz"},
      {86, "a40.txt (GA102): 556.6 cycles at 1740 MHz"},  {89, "l40.txt (AD102): 625.0 cycles at 2490 MHz"},
      {90, "gh200.txt (GH100): 689.2 cycles at 1980 MHz"}, {100, "assumed: no Blackwell file; GH100's"},
      {120, "assumed: no Blackwell GeForce file; AD102's"}};
  for (const auto& [arch, src] : lat) {
    const SmResidency sm = sm_residency_of_arch(arch);
    const bool measured = std::string(src).rfind("assumed", 0) != 0;
    t.push_back(c("quant_latency.dram_latency_s.sm_" + std::to_string(arch), "all",
                  measured ? P::microbenchmark : P::assumed, rrze + src + " (pointer chase beyond L2)", {},
                  sm.dram_latency_s));
    const char* l2 = arch == 80   ? "a100_80.txt: 3097 GB/s / (108 SMs x 1410 MHz)"
                     : arch == 86 ? "a40.txt (GA102): 1686 GB/s / (84 x 1740 MHz)"
                     : arch == 89 ? "l40.txt (AD102): 3858 GB/s / (142 x 2490 MHz)"
                     : arch == 90 ? "gh200.txt (GH100): 5893 GB/s / (132 x 1980 MHz)"
                                  : "assumed: no file; carried as the DRAM latency";
    t.push_back(c("quant_latency.l2_bytes_per_sm_clock.sm_" + std::to_string(arch), "all",
                  measured ? P::microbenchmark : P::assumed,
                  "RRZE-HPC/gpu-benches @1038c5d gpu-l2-stream/" + std::string(l2) +
                      ", the read kernel's best rate at 100 % occupancy (L2-resident buffer)",
                  {}, sm.l2_bytes_per_sm_clock));
    t.push_back(c("quant_latency.max_ctas_per_sm.sm_" + std::to_string(arch), "all", P::datasheet,
                  cc + "resident blocks, warps (" + std::to_string(static_cast<int>(sm.max_warps_per_sm)) +
                      "), shared memory per SM (" + std::to_string(static_cast<int>(sm.smem_per_sm)) + " B, " +
                      std::to_string(static_cast<int>(sm.smem_reserved_per_cta)) +
                      " B reserved per block), 64 K registers allocated per warp in units of 256",
                  {}, sm.max_ctas_per_sm));
  }
  const std::string awq = "vllm-project/vllm csrc/quantization/awq/gemm_kernels.cu gemm_forward_4bit_cuda_m16n128k32: ";
  const std::string gptq = "vllm-project/vllm csrc/quantization/gptq/q_gemm.cu gemm_half_q_half_gptq_kernel<true, 1>: ";
  for (const int arch : {75, 80, 86, 89, 90}) {
    const std::string a = "sm_" + std::to_string(arch);
    const KernelFootprint k = awq_gemm_footprint(arch, 4096), k64 = awq_gemm_footprint(arch, 4160);
    const KernelFootprint e = exllama_footprint(arch);
    const std::string sass = arch == 90 ? " (sm_90 SASS not decoded: sm_80's loop)" : "";
    t.push_back(c("quant_latency.awq_gemm_regs." + a, "all", P::engine_code,
                  awq + "ptxas " + a + " registers per thread, 9984 B smem, 64 threads (the N = 64 kernel: " +
                      std::to_string(static_cast<int>(k64.regs)) + " registers, 5888 B)",
                  {}, k.regs));
    t.push_back(c("quant_latency.awq_gemm_instr_per_iter." + a, "all", P::engine_code,
                  awq + "SASS instructions per warp in the K loop" + sass +
                      ": its 8 weight loads per thread (2048 B per CTA) issued together, then waited for; no prefetch "
                      "of the next K step (N = 64: " + std::to_string(static_cast<int>(k64.instr_per_iter)) +
                      ", 1024 B)",
                  {}, k.instr_per_iter));
    const char* quick = arch == 80   ? "A100 (108 SMs x 1410 MHz): 57.43 -> 58.46 TFLOPS"
                        : arch == 86 ? "RTX A6000 (84 SMs x 1800 MHz): 44.85 -> 46.05 TFLOPS"
                        : arch == 89 ? "RTX 4090 (128 SMs x 2520 MHz): 91.39 -> 104.36 TFLOPS (the L40's 72.9 -> "
                                       "64.28, 0.19, not used: its rate falls with more tiles)"
                        : arch == 90 ? "no Hopper row: the A100's (sm_90 runs the same loop, sm_80's SASS count)"
                                     : "no Turing row: the A6000's (GA102)";
    t.push_back(c("quant_latency.awq_gemm_issue_efficiency." + a, "all",
                  arch == 80 || arch == 86 || arch == 89 ? P::public_measurement : P::assumed,
                  std::string("SqueezeBits/QUICK README @265d234 kernel table (arXiv 2402.10076; not a corpus or "
                              "reserved source), AWQ = AutoAWQ_kernels gemm_forward_4bit_cuda_m16n128k32 (llm-awq's "
                              "kernel, as vLLM's gemm_kernels.cu), split_k 8, M x 8192 x 8192: the 4 tiles from M = 64 "
                              "to 128 (every resident slot full) against the SASS count at SMs x 128 x boost clock; ") +
                      quick + " [D]",
                  {}, k.issue_efficiency));
    t.push_back(c("quant_latency.exllama_regs." + a, "all", P::engine_code,
                  gptq + "ptxas " + a + " registers per thread, 256 B smem, 128 threads", {}, e.regs));
    t.push_back(c("quant_latency.exllama_instr_per_iter." + a, "all", P::engine_code,
                  gptq + "SASS instructions per warp per 32 rows of K" + sass +
                      ": four 16-byte weight loads per thread (8 KB per CTA) in flight",
                  {}, e.instr_per_iter));
  }
}

std::vector<ConstantProvenance> build() {
  std::vector<ConstantProvenance> t;
  // --- Streaming memory.
  t.push_back(c("mem_bw_efficiency", "ampere_hbm", P::microbenchmark, "G§B1: A100 80GB STREAM triad 0.83-0.88 of peak; G§B8 prior", {}, 0.85));
  t.push_back(c("mem_bw_efficiency", "hopper_hbm", P::microbenchmark, "G§B1: H100 SXM triad 0.89, H200 0.86; G§B8 prior 0.85", {}, 0.85));
  t.push_back(c("mem_bw_efficiency", "gddr", P::microbenchmark,
                "G§B1: GDDR6/6X Ada/Ampere 0.90-0.98 (prior 0.92); x 15/16 on inline-ECC cards (datasheet: the check "
                "bits take 1/16 of the DRAM, nvidia-smi 46,068 of 49,152 MiB on an L40S)"));
  t.push_back(c("mem_bw_vs_bytes", "all", P::public_measurement,
                "calculon's memory-efficiency table (G§C4): 0.6 at 1 MB, 0.75 at 10 MB, 0.9 at >= 100 MB of peak"));
  // --- GEMMs.
  t.push_back(c("gemm_eff_vs_m", "ampere_hbm", P::fitted,
                "least-median-error fit to Vidur's A100 Llama QKV/O/up/down operator times (G§B3), with p = 2 and the "
                "wave term (gemm_tiles.*): 0.735 of the 312 TF peak at full waves (0.725 without the wave term) (G§B2 large GEMMs 0.71-0.87); fp8/int8/int4 x0.88/0.9/0.8 (G§B2: H100 FP8 best "
                "shape 70.9 % vs BF16 80.3 %)",
                {"vidur-ops"}));
  t.push_back(c("gemm_eff_vs_m", "hopper_hbm", P::fitted, "as Ampere, on Vidur's H100 operator times: 0.725 of 989 TF (with or without the wave term)",
                {"vidur-ops"}));
  // GEMM wave quantization (perf/gemm_tiles.hpp).
  t.push_back(c("gemm_tiles.tile_m", "all", P::engine_code,
                "NVIDIA Matrix Multiplication Background User's Guide (docs.nvidia.com/deeplearning/performance), "
                "2.3 'Typical Tile Dimensions In cuBLAS' (256x128, 128x256, 128x128, ...), 3.1-3.2 tile and wave "
                "quantization; vLLM's CUTLASS sm80 GEMM default for M > 128 is 128x128x64 (csrc/quantization/"
                "cutlass_w8a8 scaled_mm_c2x_sm80_dispatch.cuh sm80_config_default); one tile for every GPU",
                {}, gemm_tiles::kTileM));
  t.push_back(c("gemm_tiles.tile_n", "all", P::engine_code, "as gemm_tiles.tile_m", {}, gemm_tiles::kTileN));
  t.push_back(c("gemm_tiles.wave_damping", "all", P::fitted,
                "least-median-error fit to Vidur's A100 and H100 Llama QKV/O/up/down operator times: the measured share "
                "of the naive 1/utilization loss (the M-only roofline's residual rises from ~0 at full 128x128 waves to "
                "+13 % A100 / +17 % H100 at half-empty ones; the naive term, d = 1, makes vidur-ops 4.9 -> 5.8 % A100, "
                "6.7 -> 8.0 % H100 median; 0.2-0.4 fit alike): cuBLAS's choice among tiles, split-K and stream-K fills "
                "much of the last wave",
                {"vidur-ops"}, gemm_tiles::kWaveDamping));
  t.push_back(c("gemm_eff_vs_m", "gddr", P::public_measurement,
                "G§B2: GeForce large GEMMs reach ~100 % of the FP32-accumulate spec (4090 172 TF of 165.2; 3090 Ti "
                "~100 %); chosen over 0.9 after llama.cpp's F16 pp512/pp1024 read 3-8 % slow even at 1.0; 1.04 (the "
                "4090's best-shape 172/165.2, i.e. at full waves) since the wave term (gemm_tiles.*) prices partly "
                "empty waves: 1.0 averaged them over llama.cpp's pp512 shapes",
                {"llamacpp"}));
  // --- Sustained clocks of power-limited boards (perf/tensor_clock.hpp): per card, the catalogue's
  // sustained_tensor_clock_mhz; the default profile's tensor efficiencies (gemm_eff_vs_m, attn_prefill_efficiency)
  // are the family's x sustained / boost_clock_mhz. Each from a large-GEMM microbenchmark of the card against the
  // family's reference card (the one its GEMM prior was measured on) in the same script.
  t.push_back(c("sustained_tensor_clock_mhz", "a100-40gb-pcie", P::microbenchmark,
                "Fire-Flyer 2 SC24 artifact A1 (haswelliris/sc_ad@299cfbd, A1/bench_gemm.py: square PyTorch GEMMs "
                "N = 2048-16384, 100 iterations): FP16 220 TF on the A100 PCIe 40GB (250 W) vs 263 TF on the DGX "
                "A100's SXM4 40GB (400 W), same software; 220/263 x 1410 MHz = 1180. Cross-check: "
                "zzc0721/torch-performance-test-data#108, A100-PCIE-40GB 8192-10240 FP16/BF16 207.5 TF = 0.665 of 312 "
                "against 0.81-0.82 for an SXM4 at the same sizes (G§B2 [S16]): 0.81",
                {}, 1180));
  t.push_back(c("sustained_tensor_clock_mhz", "l40s-48gb", P::microbenchmark,
                "zzc0721/torch-performance-test-data (test.py: square torch.mm 1024-10240, 30 iterations after 10): "
                "L40S best FP16/BF16 264.0/269.2 TF = 0.736 of 362 (issue #43), where the 4090 24GB reads 1.009 of "
                "165.2 in the same script (mean of six runs' best FP16/BF16): 0.730 x 2520 MHz = 1840. Best-of-sizes "
                "for both (no per-size L40S run is public), so it may read high",
                {}, 1840));
  t.push_back(c("sustained_tensor_clock_mhz", "l4-24gb", P::microbenchmark,
                "zzc0721/torch-performance-test-data#120: L4 8192-10240 FP16/BF16 55.6 TF = 0.460 of 121 (2048: "
                "70.9, above half rate, so FP32 accumulate runs at the full rate), where the 4090 reads 0.955 at the "
                "same sizes (#78): 0.482 x 2040 MHz = 980. NVIDIA's forum answer on the T4 (70 W): continuous "
                "matrix multiplies run power-capped, ~24 of 65 TF",
                {}, 980));
  t.push_back(c("sustained_tensor_clock_mhz", "h100-80gb-pcie", P::microbenchmark,
                "zzc0721/torch-performance-test-data: H100 PCIe 8192-10240 FP16/BF16 463 TF = 0.612 of 756 (#95), "
                "H100 SXM 730.5 TF = 0.739 of 989.4 (#79): 0.829 x 1620 MHz (the clock 756 TF implies: 114 SMs x "
                "4096 FLOP per clock) = 1340; G§B7: the H100 PCIe held 1395 MHz even in bandwidth microbenchmarks at "
                "its 350 W limit [S32]",
                {}, 1340));
  t.push_back(c("gemm_bw_eff_vs_m", "ampere_hbm", P::fitted,
                "fit to Vidur's A100 GEMMs with gemm_fixed_s (76 % effective at M = 1 on the 180 MB up-projection, "
                "as G§B3 reads)",
                {"vidur-ops"}, 0.8));
  t.push_back(c("gemm_bw_eff_vs_m", "hopper_hbm", P::fitted, "fit to Vidur's H100 GEMMs (84 % effective at M = 1)",
                {"vidur-ops"}, 0.925));
  t.push_back(c("gemm_bw_eff_vs_m", "gddr", P::fitted,
                "llama.cpp batch-1 F16 decode (reference CSV, Llama-3-8B tg512) on the cards llmsim does not score: "
                "Ada 0.915 (RTX 4080/4000/5000/6000 Ada), GA102 0.85 (RTX A6000, A40 without ECC); x 15/16 with "
                "inline ECC",
                {"llamacpp"}));
  t.push_back(c("gemm_fixed_s", "ampere_hbm", P::fitted, "Vidur A100 GEMM fit", {"vidur-ops"}, 6e-6));
  t.push_back(c("gemm_fixed_s", "hopper_hbm", P::fitted, "Vidur H100 GEMM fit", {"vidur-ops"}, 6e-6));
  t.push_back(c("gemm_fixed_s", "gddr", P::assumed, "below the HBM parts' 6 us with the GDDR dies' shorter launches",
                {}, 4e-6));
  t.push_back(c("roofline_exponent", "all", P::fitted, "least-error exponent on Vidur A100/H100 GEMMs (1.5-2)",
                {"vidur-ops"}, 2.0));
  // --- Attention.
  t.push_back(c("attn_prefill_efficiency", "ampere_hbm", P::public_measurement, "FlashAttention-2 fwd on A100 SXM: 58 % of 312 TF (G§B4)", {}, 0.6));
  t.push_back(c("attn_prefill_efficiency", "hopper_hbm", P::public_measurement, "between FA2 (33 %) and FA3 (75 %) on H100 (G§B4)", {}, 0.5));
  t.push_back(c("attn_prefill_efficiency", "gddr", P::assumed, "FA2-class kernels on Ampere/Ada, as on the A100 (G§B4)", {}, 0.6));
  t.push_back(c("attn_decode_bw_efficiency", "ampere_hbm", P::public_measurement,
                "Vidur's A100 FlashInfer decode kernel timings (Llama-3-8B TP1, 3392 tokens, 40-112 sequences): 77-84 % "
                "of 2039 GB/s",
                {}, 0.83));
  t.push_back(c("attn_decode_bw_efficiency", "hopper_hbm", P::public_measurement,
                "H100 SXM paged decode of 64 MHA sequences with every SM full (microsoft/onnxruntime#21414 nvbench, "
                "32 / 32 heads, 128-512 tokens): 3.05-3.2 TB/s of added reads per added second = 0.91-0.96 of "
                "3.35 TB/s; vllm#9471's FA2 split-KV kernel 2.9 TB/s with its fixed costs (the per-CTA-bound Vidur "
                "and FA3 timings set attn_decode_cta_bandwidth, not this cap)",
                {}, 0.93));
  t.push_back(c("attn_decode_bw_efficiency", "gddr", P::public_measurement,
                "FlashInfer decode 'close to 100 %' of the 4090's bandwidth at long context (G§B4), taken as 0.9; "
                "x 15/16 with inline ECC"));
  t.push_back(c("attn_decode_cta_bandwidth", "ampere_hbm", P::public_measurement,
                "Vidur A100 decode: one wave of 108 CTAs streams 1.74 MB each in 0.112 ms = 15.5 GB/s per CTA", {}, 16e9));
  t.push_back(c("attn_decode_cta_bandwidth", "hopper_hbm", P::public_measurement,
                "132 CTAs at ~13 GB/s give the 1.7 TB/s Vidur and FA#1572 read on H100; FA2's split-KV kernel runs 2 "
                "per SM, 264 x 13 GB/s above the cap, as vllm#9471 (2.9 TB/s at 512 CTAs) and ORT#21414 read",
                {}, 13e9));
  t.push_back(c("attn_decode_cta_bandwidth", "gddr", P::assumed, "the A100's per-CTA rate; never binds on a 1 TB/s card", {}, 16e9));
  // FlashAttention-2's split-KV decode kernel (perf/decode_attention.cpp, backend flash-attn2-splitkv: vLLM 0.4.3-0.5.x).
  const std::string fa2 = "Dao-AILab/flash-attention @0251105 csrc/flash_attn/";
  t.push_back(c("decode_attention.fa2_splitkv.threads", "all", P::engine_code,
                fa2 + "src/kernel_traits.h Flash_fwd_kernel_traits<d, 64, kBlockN, 4 warps> as instantiated by "
                "src/flash_fwd_launch_template.h run_mha_fwd_splitkv_dispatch: 128 threads", {}, fa2_splitkv::kThreads));
  t.push_back(c("decode_attention.fa2_splitkv.block_m", "all", P::engine_code,
                fa2 + "src/flash_fwd_launch_template.h run_mha_fwd_splitkv_dispatch: kBlockM = 64; kBlockN = 256 / 128 / "
                "64 for head_dim <= 64 / <= 128 / larger; shared memory kSmemQSize + kSmemKVSize (kernel_traits.h)",
                {}, fa2_splitkv::kBlockM));
  t.push_back(c("decode_attention.fa2_splitkv.split_ctas_per_sm", "all", P::engine_code,
                fa2 + "flash_api.cpp set_params_splitkv: num_splits_heuristic(b * h * m_blocks, num_sm * 2, ...), "
                "\"multiply number of SMs by 2 to hard-code the fact that we're using 128 threads per block\"",
                {}, fa2_splitkv::kSplitCtasPerSm));
  t.push_back(c("decode_attention.fa2_splitkv.regs_per_thread", "all", P::assumed,
                "not read off ptxas: FA2's forward kernels may use up to 255 registers; at 255 a 128-thread CTA takes "
                "half the register file (2 per SM, the split heuristic's assumption); shared memory decides on 100 KiB "
                "parts",
                {}, fa2_splitkv::kRegsPerThread));
  t.push_back(c("decode_attention.fa2_splitkv.release_range", "all", P::engine_code,
                "vLLM decodes with vllm-flash-attn's FA2 flash_attn_with_kvcache from 0.4.3 (vllm#4907); FA3 is the "
                "default on Hopper from 0.7.0 (vllm#12093, vllm#15231's description); modelled for the vllm-v0.5 "
                "runtime (0.4.3-0.5.x) only: 0.6.x on Hopper keeps FA3's decode price (with FA2's, vllm#8092's 0.6.x "
                "H100 ShareGPT runs read 11-13 % fast); its prefill is capped at FA2's share (below)"));
  t.push_back(c("attn_prefill_efficiency.fa2_hopper_cap", "hopper_hbm", P::public_measurement,
                "FlashAttention-2 fwd on H100 SXM (hdim 128, b=2, s=8192): 327.9 TF of 989 = 33 % (G§B4, S16; the FA3 "
                "paper: FA2 reaches 35 % on H100); caps the prefill efficiency of a named vLLM release before 0.7.0 "
                "on Hopper (FA3 from vllm#12093)",
                {}, fa2_splitkv::kHopperPrefillEfficiency));
  t.push_back(c("decode_attention.fa3.persistent_ctas_per_sm", "hopper_hbm", P::engine_code,
                "vllm-project/flash-attention hopper/flash_fwd_launch_template.h: a persistent tile scheduler whenever "
                "varlen (UsePersistentScheduler = !(Split && !Varlen) on sm90), grid = the SM count; "
                "flash_fwd_kernel_sm90.h MinBlocksPerMultiprocessor = 1: one wave, the per-wave cost paid once (backend "
                "flash-attn3, and flash-attn3-fp8 on Hopper). Checked, not set, against Dao-AILab/flash-attention#1572 "
                "(H100 and H20, MHA 32/32, 16 sequences, 128-32000 tokens)",
                {}, 1.0));
  // FA3's one-MMA-warp-group decode (backend flash-attn3-1wg: vLLM 0.8.5+ on Hopper, 16-bit cache; fa3_1wg).
  const std::string aic = "ai-dynamo/aiconfigurator systems/data/h100_sxm/attention/vllm/0.14.0/"
                          "generation_attention_perf.parquet (vLLM's FlashAttentionImpl.forward under CUDA graphs, "
                          "paged bf16 cache, collector/vllm/collect_attn.py @5ef50c9b9)";
  t.push_back(c("decode_attention.fa3_1wg.cta_bandwidth_ratio", "hopper_hbm", P::public_measurement,
                aic + ": one KV head at 131,072 tokens, run as vLLM's 32 CUDA-graph splits "
                "(VLLM_FLASH_ATTN_MAX_NUM_SPLITS_FOR_CUDA_GRAPH), reads 0.77 TB/s = 24 GB/s per CTA; 132 of them reach "
                "the 0.93 cap (3.0-3.17 TB/s measured from 512 tiles at >= 2048 tokens, the 0.19.0 table alike); over "
                "the Hopper prior's 13 GB/s (FA#1572's two-warp-group build): 24 / 13. FA#1572's H20 run with both "
                "tiles: 23.7 / 13.8 GB/s per CTA (1.72)",
                {}, fa3_1wg::kCtaBandwidthRatio));
  t.push_back(c("decode_attention.fa3_1wg.tile_s", "hopper_hbm", P::public_measurement,
                aic + ": rows of >= 1056 tiles of <= 16 tokens, time beyond the call's fixed costs and the bytes at "
                "the cap per tile per SM, median 3.16 us over 344 rows (0.19.0: 3.06, 0.24.0's FA3 rows: 3.28)",
                {}, fa3_1wg::kTileS));
  t.push_back(c("decode_attention.fa3_1wg.max_packed_rows", "hopper_hbm", P::engine_code,
                "vllm-project/flash-attention hopper/tile_size.h tile_size_fwd_sm90(..., use_one_mma_wg): kBlockM = 64 "
                "for head_dim 64 and 128 on a 16-bit cache (flash_fwd_launch_template.h Use_one_mma_wg), chosen when a "
                "KV head's query rows fit the tile; vllm#16864 (merged 2025-04-24) first in 0.8.5",
                {}, fa3_1wg::kMaxPackedRows));
  t.push_back(c("attn_decode_cta_s", "all", P::public_measurement,
                "Vidur kernel timings (+6-8 us per wave of 108 CTAs on A100, +7 us per wave of 132 on H100); ONNX "
                "Runtime FA2 H100 nvbench ~3 us per wave (microsoft/onnxruntime#21414)",
                {}, 5e-6));
  t.push_back(c("attn_decode_fixed_s", "all", P::public_measurement,
                "Vidur A100 FlashInfer decode 19-21 us for 11-54 sequences at 384 tokens", {}, 5e-6));
  // --- Launches and host time.
  t.push_back(c("kernel_launch_s", "ampere_hbm", P::microbenchmark, "RRZE gpu-small-kernels @1038c5d A100/H200: 2.5-2.6 us eager (G§B6)", {}, 2.5e-6));
  t.push_back(c("kernel_launch_s", "hopper_hbm", P::microbenchmark, "RRZE gpu-small-kernels @1038c5d A100/H200 (G§B6)", {}, 2.5e-6));
  t.push_back(c("kernel_launch_s", "gddr", P::microbenchmark,
                "RRZE gpu-small-kernels @1038c5d l40*.txt 1.64-1.77 us (Ada, FP8 tensor cores), a40*.txt 2.05-2.26 us "
                "(GA102)"));
  t.push_back(c("graph_launch_s", "ampere_hbm", P::microbenchmark, "RRZE gpu-small-kernels: 1.3-1.4 us from a graph (G§B6)", {}, 1.3e-6));
  t.push_back(c("graph_launch_s", "hopper_hbm", P::microbenchmark, "RRZE gpu-small-kernels: 1.3-1.4 us from a graph (G§B6)", {}, 1.3e-6));
  t.push_back(c("graph_launch_s", "gddr", P::microbenchmark, "RRZE l40*.txt 0.94-1.13 us, a40*.txt 1.09-1.39 us"));
  t.push_back(c("cpu_overhead_per_iter_s", "all", P::engine_code,
                "vLLM V1: Llama-3.2-1B serving at TPOT 2.64 ms less its ~1.5 ms of GPU time (vllm#17866); scheduler "
                "0.2 ms + state update 0.2 ms + input preparation 0.05 ms per decode step (vllm#42131)",
                {}, 1e-3));
  t.push_back(c("cpu_overhead_per_seq_s", "all", P::engine_code,
                "vllm#42131: the decode fast path cuts the scheduler's per-step work 5x; well below V0's 10 us", {}, 4e-6));
  t.push_back(c("v0_cpu_overhead_per_iter_s", "all", P::engine_code,
                "vLLM V0 decode gaps: RFC vllm#6854 (0.5.x, before async output: ~4 ms bubbles in its trace, 5-13 ms "
                "quoted, output processing included); vllm#9856's TP2 Llama-3.1-8B latency reproduced within 2 %. "
                "(vllm#10634's 5-6 ms at batch 256 is V1's AsyncLLM prototype, PR #9826, not V0: no V0 value)",
                {}, 2e-3));
  t.push_back(c("v0_cpu_overhead_per_seq_s", "all", P::engine_code, "as v0_cpu_overhead_per_iter_s (vllm#6854)", {}, 1e-5));
  // --- Links.
  t.push_back(c("link_bandwidth", "all", P::fitted,
                "NVLink: Vidur's all-reduce timings fit busbw = B(1 - k/n) with B 0.65 (A100) / 0.9 (H100) of the "
                "per-direction NVLink; PCIe: host-staged ~0.6 and P2P ~0.75 of x16 (G§B5: nccl-tests, patched 4090 P2P)",
                {"vidur-allreduce"}));
  t.push_back(c("link_latency_s", "all", P::fitted,
                "Vidur all-reduce fit: alpha = (n + 2) x 11 us (A100) / 4 us (H100); PCIe 12 us (P2P) / 25 us per "
                "ring step (G§B5)",
                {"vidur-allreduce"}));
  t.push_back(c("nccl_ll_step_s", "all", P::microbenchmark,
                "nccl-tests: 8 A100s 32 KB in 44 us = 6.6 + 14 x 2.7 us (G§B5); 2 RTX 4090s 8 B-2 KB in 8.3-8.6 us "
                "(tinygrad/open-gpu-kernel-modules#45); PyNccl on 4 H100s 0.5 MB in 17 us (vllm#24111)"));
  t.push_back(c("custom_allreduce_latency_s", "all", P::engine_code,
                "vLLM custom all-reduce one stage on NVLink ~6 us (vllm#24111: TP2 0.5 MB 7 us; #37756); over PCIe "
                "P2P 10 us assumed"));
  t.push_back(c("custom_allreduce_bandwidth", "all", P::datasheet,
                "0 = derived from the link in perf/collective.cpp (peer reads at the NVLink / PCIe rate)", {}, 0.0));
  t.push_back(c("collective.custom_peer_read_fraction", "all", P::public_measurement,
                "vLLM custom all-reduce, one stage: custom_allreduce_latency_s + (t-1) x S / B_peer, B_peer this "
                "fraction of the per-direction NVLink: vllm#24111's H100 TP4 ca_1stage 0.5/1/2/4 MB in 10/15/22/38 us",
                {}, 0.83));
  t.push_back(c("collective.custom_peer_read_fraction", "ampere_hbm", P::public_measurement,
                "as Hopper's, least squares over vLLM's all-reduce on 8 x A100-SXM4-80GB under CUDA graphs, TP 2/4/8 "
                "one stage 16 KiB-4 MiB (ai-dynamo/aiconfigurator campaign_checkpoints/a100_sxm/"
                "custom_allreduce_perf.txt @563b2c4, vLLM 0.20.0, collector/network/collect_all_reduce.py)",
                {}, 0.69));
  t.push_back(c("collective.custom_two_shot_factor_tp4", "all", P::public_measurement,
                "vLLM custom all-reduce, two stages: 2 x custom_allreduce_latency_s + k x S / B_peer; k least-squares "
                "fitted to vllm#24111's H100 TP4 ca_2stage 0.5-4 MiB (17/18/27/27/35/43 us, CUDA graphs): 2.78",
                {}, 2.8));
  t.push_back(c("collective.custom_two_shot_factor_tp6_up", "all", P::public_measurement,
                "as the TP4 factor, vllm#24111's H100 TP6 ca_2stage 0.5-4 MiB (15/17/20/26/29/37 us): 2.16; TP8 "
                "takes TP6's (assumed: no vLLM source times the two stages at TP8 on Hopper; vLLM 0.11+ sends TP8 "
                "messages of 256 KiB and more to symmetric memory on sm90). Corroborated within 20 %: SGLang 0.5.9's "
                "port of the kernel on 8 H100s, 0.25-4 MiB 15.0/15.8/17.3/20.9/34.3 us (aiconfigurator), whose TP4 "
                "is 30-40 % under vllm#24111's",
                {}, 2.2));
  t.push_back(c("collective.custom_two_shot_factor_ampere", "ampere_hbm", P::public_measurement,
                "A100 two stages, free least-squares fit c + k x S / B_peer (B_peer 0.69 of NVLink): TP4 0.5-4 MiB "
                "14.4/18.5/26.2/41.1 us k = 1.50, TP8 0.25-4 MiB 17.7/19.3/21.7/28.4/45.4 us k = 1.46 (aiconfigurator "
                "@563b2c4, vLLM 0.20.0, as the peer-read fraction)",
                {}, 1.5));
  t.push_back(c("collective.custom_two_shot_sync_ampere_tp6_up", "ampere_hbm", P::public_measurement,
                "the same fits' fixed costs: TP4 10.8 us (= the one stage's two latencies), TP8 15.0 us: 3 us more "
                "at 8 A100s; TP6 (not measured) takes TP8's",
                {}, 3e-6));
  t.push_back(c("collective.embedding_and_logits", "all", P::engine_code,
                "vLLM VocabParallelEmbedding: tensor_model_parallel_all_reduce of its output (one more all-reduce "
                "per step); LogitsProcessor._gather_logits: all_gather (V1, vllm#9856; SGLang) or gather (V0) of "
                "the vocab-parallel 16-bit logits over NCCL; no constant"));
  t.push_back(c("host_bandwidth", "all", P::microbenchmark, "host<->device 0.82-0.88 of PCIe x16 per direction (G§B5/B8)"));

  // --- MoE kernels (perf/moe_kernels.cpp): vLLM's fused-MoE layer beyond the two expert GEMMs.
  t.push_back(c("moe.mxfp4_marlin_padding", "all", P::engine_code,
                "vLLM Mxfp4MoEMethod.create_weights, Mxfp4Backend.MARLIN (FP4 Marlin MoE, vllm#22428, 0.10.2 on; vLLM's "
                "Hopper/Ampere default while triton_kernels was not a dependency, added by vllm#27370 / #28788 after "
                "0.11.0): 'the moe marlin kernel requires that for each linear n % 256 == 0 and k % 128 == 0': "
                "round_up(intermediate_size_per_partition, 128), round_up(hidden_size, 256)",
                {}, 128));
  t.push_back(c("moe.mxfp4_triton_padding", "all", P::engine_code,
                "vLLM Mxfp4MoEMethod.create_weights, CUDA `else` branch (Mxfp4Backend.TRITON, triton_kernels' "
                "matmul_ogs; Hopper's default once vllm#28788 bundled triton_kernels, first released in 0.12.0): "
                "round_up(intermediate_size_per_partition, 64), hidden unpadded",
                {}, 64));
  t.push_back(c("moe.triton_split_k_max_tokens", "all", P::engine_code,
                "vllm#30528 (2025-12-12, first released in 0.13.0): triton_kernels v3.5 opt_flags_nvidia split_k = "
                "max(n_sms // grid_size, 1) exceeds 1 'when m become smaller than 32 (roughly)', and a split-K "
                "matmul_ogs writes fp32 partials; set to 1 on sm90",
                {}, 32));
  t.push_back(c("moe.triton_split_k_expert_factor", "all", P::public_measurement,
                "vllm#27523: gpt-oss-120b vllm bench latency, TP 1, batch 8, 32 in / 128 out on SM90: Triton "
                "matmul_ogs 1.58 s vs Marlin 1.17 s; the routed-expert time multiplier that gives this cost model's "
                "batch-8 H100 decode step the same ratio (0.12's layout against 0.11's) [D: solved, "
                "tests/perf/test_moe_kernels.cpp]",
                {}, 1.72));
  t.push_back(c("moe.mxfp4_flashinfer_padding", "all", P::engine_code,
                "vLLM Mxfp4MoEMethod.create_weights, SM100 FlashInfer MXFP4 backends: intermediate and hidden "
                "round_up(..., 256)",
                {}, 256));
  t.push_back(c("moe.combine_bytes_per_token", "all", P::engine_code,
                "vLLM fused_experts / fused_marlin_moe: the down GEMM writes k rows per token, ops.moe_sum reads them "
                "and writes one: (k + 1) x hidden x 2 bytes"));
  t.push_back(c("moe.extra_kernels_per_layer", "all", P::engine_code,
                "vLLM FusedMoE: router GEMM, topk_softmax, moe_align_block_size, moe_sum beside gate_up, activation "
                "and down",
                {}, 4));
  t.push_back(c("moe.marlin_hopper_compute_factor", "all", P::public_measurement,
                "aiconfigurator (ai-dynamo/aiconfigurator) systems/data/h100_sxm/moe/vllm/0.14.0/moe_perf.parquet, "
                "kernel_source vllm_marlin_moe: vLLM 0.14's fused_marlin_moe (GPTQ int4, the Marlin MoE kernel that "
                "FP4 Marlin shares) timed on an H100 SXM under CUDA graphs, balanced routing, six MoE shapes (hidden x "
                "expert width, E, k, TP: 3072 x 1536, 256, 8, 2; 2048 x 768, 128, 8, 1; 7168 x 2048, 256, 8, 8; 4096 "
                "x 1536, 128, 8, 4; 6144 x 2048, 256, 8, 8; 4096 x 14336, 8, 2, 8) at 2048-16384 tokens (e.g. 3.857 "
                "ms per layer at 8192 tokens for the first, ~240 TF); least squares in log time of this cost model's "
                "routed-expert op with the factor on the 4-bit Marlin q_c: 0.49, median error 6 %, largest 15 % [D]; "
                "Hopper only (Ampere's mma.sync path is Marlin's native one). SGLang 0.5.9's port on an H200 reads the "
                "same (DeepSeek's int4 shape at 8192 tokens: 3.87 ms against vLLM's 3.78 ms on the H100)",
                {}, 0.49));
  t.push_back(c("moe.block_fp8_compute_factor", "all", P::public_measurement,
                "aiconfigurator (ai-dynamo/aiconfigurator) systems/data/{h100_sxm,h200_sxm}/moe/vllm/0.14.0/"
                "moe_perf.parquet, kernel_source vllm_fused_moe, moe_dtype fp8_block: vLLM 0.14's fused_experts with "
                "128 x 128 block scales (the Triton fused_moe_kernel) under CUDA graphs, balanced routing; six shapes "
                "(hidden x expert width, E, k, TP: 7168 x 2048, 256, 8, 8 and 4 (DeepSeek-V3/R1); 6144 x 2048, 256, 8, "
                "8; 4096 x 1536, 128, 8, 4; 3072 x 1536, 256, 8, 2; 2048 x 768, 128, 8, 1 (Qwen3-30B-A3B)) on the H100 "
                "SXM and H200 at 128-16384 tokens, e.g. DeepSeek's TP-8 layer at 8192 tokens 2.48 ms (H100) / 2.33 ms "
                "(H200); least squares in log time of this cost model's routed-expert op: 0.36 of the FP8 GEMM rate, "
                "median error 4.6 %, largest 14 % over 96 points [D]; vLLM 0.19.0's tables read the same within 2 %. "
                "vLLM from 0.14.0 and SGLang (its 0.5.9 H200 table is faster still: 1.89 ms)",
                {}, 0.36));
  t.push_back(c("moe.block_fp8_bandwidth_factor", "all", P::public_measurement,
                "as moe.block_fp8_compute_factor: 0.82 of the GEMM weight stream [D, the same fit]", {}, 0.82));
  t.push_back(c("moe.block_fp8_slow_compute_factor", "all", P::public_measurement,
                "vllm#24700: vLLM's benchmark_moe.py on an H100 80GB HBM3, Qwen3-30B-A3B-FP8 (block [128, 128]) TP 1, "
                "'Main' (September 2025) kernel times at 1-4096 tokens (44.5 us ... 1647.6 us); least squares in log "
                "time of this cost model's fused-MoE terms: 0.15 of the dense FP8 rate (~190 TF at 4096 tokens), "
                "median error 5.5 % [D]. aiconfigurator's vLLM 0.14.0 table times the same shape 1.8x faster at 4096 "
                "tokens and alike at <= 128: vLLM releases before 0.14.0 keep this reading (which release changed it "
                "is not established). The BF16 Mixtral kernel of the same benchmark is within -2...-18 % without any "
                "factor",
                {}, 0.15));
  t.push_back(c("moe.block_fp8_slow_bandwidth_factor", "all", P::public_measurement,
                "vllm#24700 as moe.block_fp8_slow_compute_factor: 0.75 of the GEMM weight stream at 8-128 tokens [D]",
                {}, 0.75));
  // --- Block-scaled FP8 linears (perf/block_fp8.cpp): vLLM's apply_w8a8_block_fp8_linear beside the fused MoE.
  const std::string bfp8 =
      "sglang#5820 (2025-04-28, 'test time interval' in us of vLLM's cutlass_scaled_mm with 128 x 128 block scales, "
      "the kernel of vLLM 0.8: DeepSeek-V3 shapes N x K = 3072 x 1536, 512 x 7168, 7168 x 2304, 7168 x 16384, "
      "7168 x 18432, 32768 x 512, 24576 x 7168 at 1-4096 tokens, e.g. 14.5 us for 3072 x 1536 from 1 to 512 tokens, "
      "20.9 us for 512 x 7168; H200 as the author's sglang#3893) against this cost model's FP8 GEMM roofline: least "
      "squares in log time over 24 points, median error 13 % [D]. vllm#23280's H100 table (Sept. 2025 kernels, "
      "N 2112 x K 7168: 23-34 us at 1-128 tokens, 400-490 TFLOP/s at 4096-8192) is slower still at small N";
  t.push_back(c("block_fp8.linear_compute_factor", "all", P::public_measurement, bfp8 + ": 0.82 of the FP8 rate", {},
                kBlockFp8LinearCompute));
  t.push_back(c("block_fp8.linear_bandwidth_factor", "all", P::public_measurement,
                bfp8 + ": 0.52 of the GEMM weight stream", {}, kBlockFp8LinearBandwidth));
  t.push_back(c("block_fp8.linear_extra_fixed_s", "all", P::public_measurement,
                bfp8 + ": 7 us per kernel beyond gemm_fixed_s", {}, kBlockFp8LinearExtraFixedS));
  // --- vLLM's LoRA shrink/expand kernels (perf/lora_kernels.hpp): their fixed time per kernel.
  t.push_back(c("lora.kernel_fixed_s", "all", P::engine_code,
                "vllm#32425 (vLLM's profile of gpt-oss-20b with one rank-16 adapter, <= 16 sequences, CUDA graphs): the "
                "qkv_proj _lora_expand_kernel 14 us before the PR's block_n heuristic, 10 us after, the shrink faster; "
                "its bytes (B of 5,120 x 16 and 16 rows) take < 0.2 us at HBM rates, so that is the kernel's fixed "
                "time, taken for shrink and expand and every card (not measured per card); checked, not set, against "
                "vllm#10062's vLLM 0.6 A100 40GB runs (Llama-2-7B, 96 ShareGPT prompts, rank 64: 28 s -> 35 s; "
                "simulated x1.28, tests/cli/test_cli_lora.cpp)",
                {}, kLoraKernelFixedS));
  // --- Per-tensor/channel/token FP8 linears on Hopper under vLLM (perf/hopper_fp8.cpp): CUTLASS's sm90 scaled_mm.
  const std::string sm90fp8 =
      "ai-dynamo/aiconfigurator systems/data/h100_sxm/gemm/vllm/0.14.0/gemm_perf.parquet (vLLM 0.14.0's "
      "RowParallelLinear on an H100 SXM under CUDA graphs, Fp8Config static per-tensor scales vs the unquantised "
      "layer; collector/vllm/collect_gemm.py @3f82c6b20): at M 1-64, N and K 2048-16384, weights >= 8 MB, least squares "
      "t = a + bytes / (3.10 TB/s x q): BF16 a 4.6 us q 0.99 (1,616 shapes), FP8 a 15.0 us q 0.91 (1,280 shapes, median "
      "error 5.6 %); the FP8 call less the BF16 one, less the input-quantisation kernel the cost model prices (1.3 us "
      "graph launch and its bytes) [D]; applied to releases before 0.15.0: the same collector on vLLM 0.19.0 "
      "(systems/data/h100_sxm/gemm/vllm/0.19.0) gives FP8 a 7.6 us q 0.97 against BF16 4.2 us 0.92, the plain FP8 GEMM";
  t.push_back(c("sm90_fp8.scaled_mm_bandwidth_factor", "hopper_hbm", P::public_measurement,
                sm90fp8 + ": 0.91 / 0.99 = 0.92 of the GEMM weight stream", {}, kSm90ScaledMmBandwidth));
  t.push_back(c("sm90_fp8.scaled_mm_extra_fixed_s", "hopper_hbm", P::public_measurement,
                sm90fp8 + ": 15.0 - 4.6 - 1.4 = 9 us per kernel beyond gemm_fixed_s", {}, kSm90ScaledMmExtraFixedS));
  // --- FP8 linears on Ada (perf/ada_fp8.cpp): vLLM's CUTLASS 2.x sm89 kernel and SGLang's, measured on an L40S.
  const std::string afp8 =
      "sglang#6756 ('L40S FP8 Benchresult', 'Main (with L40S)', May 2025: sgl-kernel/benchmark/bench_fp8_gemm.py, "
      "triton do_bench with the L2 flushed before every call; its 'GB/s' column is 4 x GFLOP/s, float32 a): "
      "Llama-3.1-8B qkv (N 6144) and o (N 4096), K 4096, 512 / 1024 / 2048 tokens, against this cost model's L40S "
      "FP8 GEMMs without the factor (qkv 324 / 399 / 431 TF, o 321 / 385 / 420 TF, compute- and stream-bound terms "
      "separated from two evaluations) [D]. Cross-check: sglang#3047 on "
      "an L40 (vLLM 0.43 of its 362 TF FP8 peak at 2048 x 6144 x 4096). Not used: vllm#6677's L2-resident timings "
      "(367 TF at 512 x 12288 x 4096), which read this model's curve unchanged";
  t.push_back(c("ada_fp8.vllm_cutlass_compute_factor", "gddr", P::public_measurement,
                afp8 + ": vLLM's cutlass_scaled_mm (vllm column: qkv 171 / 204 / 261 TF, o 177 / 245 / 294 TF), "
                       "fitted through this cost model's GEMM roofline, least squares in log time: 0.51, median |error| 13.5 %",
                {}, kAdaFp8VllmCutlassCompute));
  t.push_back(c("ada_fp8.sglang_compute_factor", "gddr", P::public_measurement,
                afp8 + ": sgl-kernel fp8_scaled_mm (sglang column: qkv 206 / 319 / 362 TF, o 193 / 277 TF), fitted the "
                       "same way: 0.65, residuals -22...+23 %",
                {}, kAdaFp8SglangCompute));
  t.push_back(c("block_fp8.unfused_input_quant", "all", P::engine_code,
                "vLLM fp8_utils.apply_w8a8_block_fp8_linear (0.7-0.10): per_token_group_quant_fp8, a Triton kernel of "
                "its own, quantises the GEMM input per token and 128-wide group; Inductor does not fuse it into the "
                "RMSNorm / SiLU x mul that produces the input"));
  t.push_back(c("mla.qkv_kernels", "all", P::engine_code,
                "vLLM DeepseekV2MLAAttention: q_a_proj, kv_a_proj_with_mqa and q_b_proj (q_proj and kv_a_proj_with_mqa "
                "without a query LoRA) are linear layers of their own",
                {}, 3));
  provenance_rows::add_engine_provenance(t);
  provenance_rows::add_workload_provenance(t);
  // --- Blackwell HBM (B200, GB200): Hopper's priors carried over. No Blackwell measurement was fitted; these public
  // ones say the Hopper fractions hold: MAMF (stas00/ml-engineering compute/accelerator/README.md) BF16 77.6 % of
  // the B200's 2250 TF and FP8 76.3 % of 4500 against the H100's 80.3 % / 70.9 % (GB200 72.9 % / 72.3 %); Azure ND
  // GB200 v6 (Azure/AI-benchmarking-guide) NCCL ring all-reduce 680 GB/s busbw at 8 GB on 4 GPUs, the link prior's
  // 688. The one prior a Blackwell measurement moved is the decode kernels' per-CTA rate.
  const std::string carried = "carried over from hopper_hbm (a Hopper-class HBM part: datasheet x the same priors); ";
  t.push_back(c("mem_bw_efficiency", "blackwell_hbm", P::assumed,
                carried + "Hopper: G§B1 H100 SXM triad 0.89, H200 0.86 (prior 0.85); no public B200 STREAM run found",
                {}, 0.85));
  t.push_back(c("gemm_eff_vs_m", "blackwell_hbm", P::assumed,
                carried + "Hopper: 0.725 of peak fitted on Vidur's H100 operators; B200 MAMF BF16 77.6 % / FP8 76.3 % vs "
                "H100 80.3 % / 70.9 % (ml-engineering) keeps the ratio within 0.97-1.08"));
  t.push_back(c("gemm_bw_eff_vs_m", "blackwell_hbm", P::assumed, carried + "Hopper: fit to Vidur's H100 GEMMs", {}, 0.925));
  t.push_back(c("gemm_fixed_s", "blackwell_hbm", P::assumed, carried + "Hopper: Vidur H100 GEMM fit", {}, 6e-6));
  t.push_back(c("attn_prefill_efficiency", "blackwell_hbm", P::assumed,
                carried + "Hopper: between FA2 and FA3 on H100 (G§B4); FA2 on a GB200 reaches only 15 % (373.9 of "
                "2500 TF, Azure ND GB200 v6), Blackwell-native kernels more",
                {}, 0.5));
  t.push_back(c("attn_decode_bw_efficiency", "blackwell_hbm", P::assumed,
                "assumed: the Hopper prior before its cap was measured (0.85); FlashInfer trtllm-gen decode on a B200 reaches 5831 GB/s = 0.76 of 7.7 TB/s "
                "at 128 x 4096 tokens (flashinfer-ai/flashinfer#1415), within it",
                {}, 0.85));
  t.push_back(c("attn_decode_cta_bandwidth", "blackwell_hbm", P::public_measurement,
                "FlashInfer trtllm-gen decode on a B200 (flashinfer-ai/flashinfer#1415; vLLM's SM100 default, "
                "vllm#19825): 4 x 16,384 tokens, 64/8 heads, head_dim 64 at 4185 GB/s over 128 CTAs (32 items x 4 "
                "splits) = 32.7 GB/s per CTA [D]; Hopper's 13 GB/s would cap 148 SMs at 1.9 TB/s",
                {}, 32e9));
  t.push_back(c("kernel_launch_s", "blackwell_hbm", P::assumed, carried + "RRZE gpu-small-kernels A100/H200 (G§B6)", {}, 2.5e-6));
  t.push_back(c("graph_launch_s", "blackwell_hbm", P::assumed, carried + "RRZE gpu-small-kernels A100/H200 (G§B6)", {}, 1.3e-6));
  // --- Quantised kernels by release (perf/quant_kernels.hpp; issue 27). Read from vLLM's kernels and configs.
  namespace qk = quant_kernel;
  const std::string awq = "vllm-project/vllm csrc/quantization/awq/gemm_kernels.cu ";
  const std::string gptq = "vllm-project/vllm csrc/quantization/gptq/q_gemm.cu (from exllamav2) ";
  t.push_back(c("quant_kernel.awq_tile_rows", "all", P::engine_code,
                awq + "gemm_forward_4bit_cuda_m16nXk32: one CTA per 16 rows of M x 128 columns x split-K part", {},
                qk::kAwqTileRows));
  t.push_back(c("quant_kernel.awq_split_k", "all", P::engine_code,
                awq + "awq_gemm: split_k_iters = pack_factor (8, awq.py) fp16 partial outputs, _out_feats.sum(0)", {},
                qk::kAwqSplitK));
  t.push_back(c("quant_kernel.awq_dequant_min_rows", "all", P::engine_code,
                "vllm-project/vllm awq.py FP16_MATMUL_HEURISTIC_CONDITION (vllm#2566, from 0.3.0): awq_dequantize + "
                "torch.matmul at >= 256 tokens",
                {}, qk::kAwqDequantMinRows));
  t.push_back(c("quant_kernel.awq_dequant_ops_per_weight", "all", P::engine_code,
                awq + "dequantize_weights: weight and zero unpacking (2 x 9), scale load, 4 sub + 4 mul.f16x2, a 16-byte "
                "store per 8 weights ~ 30 [D]",
                {}, qk::kAwqDequantOpsPerWeight));
  t.push_back(c("quant_kernel.awq_dequant_stores_per_sector", "all", P::engine_code,
                awq + "dequantize_weights: `for (int i = 0; i < 8; ++i) *(C_ptr2 + i) = B_shared[i];` = 8 x "
                "st.global.u16 per thread (PTX of nvcc 13.0 for sm_80: the half* output is not known 16-byte aligned), "
                "so 8 partial-sector L2 requests per 32-byte sector of the fp16 weight",
                {}, qk::kAwqDequantStoresPerSector));
  t.push_back(c("quant.marlin_compute_efficiency", "all", P::microbenchmark,
                "HandH1998/QQQ @54c5c99 README 'W4A8 GEMM performance' (assets/figures/gemm_performance.png): "
                "Marlin-g128 (W4A16) at 0.87 / 0.87 / 0.82 of PyTorch's fp16 GEMM at 256 / 512 / 1024 tokens, "
                "N = 8192, K = 21760 (an A100; not a corpus or reserved source): the q_c with which llmsim's Marlin / "
                "fp16 GEMM there is their mean 1/0.85 [D]; was 0.7 from the IST-DASLab kernel (vllm#2497)",
                {}, spec::kMarlinComputeEfficiency));
  t.push_back(c("quant.marlin_compute_efficiency_hopper", "hopper_hbm", P::assumed,
                "the former Marlin q_c (IST-DASLab kernel's 141 TFLOP/s plateau on an A100, vllm#2497) kept on Hopper and "
                "Blackwell: Marlin issues mma.sync, not wgmma, and no public large-M Marlin/Machete figure on those cards "
                "was found; vllm#23197's H100 GPTQ rows (a development source) read faster with the A100's 0.86",
                {}, quant_kernel::kMarlinHopperComputeEfficiency));
  t.push_back(c("quant_kernel.exllama_block_rows", "all", P::engine_code, gptq + "BLOCK_M_SIZE_MAX = 8", {},
                qk::kExllamaBlockRows));
  t.push_back(c("quant_kernel.exllama_max_rows", "all", P::engine_code,
                gptq + "MAX_Q_GEMM_ROWS = 50: above it reconstruct_exllama + cublasHgemm", {}, qk::kExllamaMaxRows));
  t.push_back(c("quant_kernel.exllama_ops_per_weight", "all", P::engine_code,
                gptq + "gemm_half_q_half_gptq_kernel: dequant_4bit_8_gptq (4 lop3, a shift, 4 half2 ops) per 8 weights + "
                "a 16-byte load per 32 [D]",
                {}, qk::kExllamaOpsPerWeight));
  t.push_back(c("quant_kernel.exllama_ops_per_weight_row", "all", P::engine_code,
                gptq + "dot22_8_f per row and 8 weights: 4 hfma2, 2 half->float, an add, the scale fma, a shared load "
                "[D]",
                {}, qk::kExllamaOpsPerWeightRow));
  t.push_back(c("quant_kernel.exllama_reconstruct_ops_per_weight", "all", P::engine_code,
                gptq + "reconstruct_exllama_kernel: the unpacking, 4 hmul2 by the scales and 2 set4 stores per 8 weights "
                "[D]",
                {}, qk::kExllamaReconstructOpsPerWeight));
  t.push_back(c("quant_kernel.fp8_unfused_extra_out_bytes", "all", P::engine_code,
                "vllm-project/vllm quantization/utils/w8a8_utils.py apply_fp8_linear without cutlass: torch._scaled_mm "
                "with out_dtype=torch.float32, then output * x_scale * weight_scale.t() and .to(input.dtype)",
                {}, qk::kFp8UnfusedExtraGemmOutBytes));
  t.push_back(c("quant_kernel.fp8_unfused_kernels", "all", P::engine_code,
                "apply_fp8_linear's unfused fallback: the two multiplications and the cast, one kernel each", {},
                qk::kFp8UnfusedKernels));
  t.push_back(c("quant_kernels.release_boundaries", "all", P::engine_code,
                "vLLM: awq_gemm's dequant path from 0.3.0 (vllm#2566), gptq_marlin by default from 0.4.2 (vllm#3922), "
                "awq_marlin from 0.5.3 (vllm#6612), PyPI wheels on CUDA 12.4 (CUTLASS FP8 on sm89) from 0.7.0 "
                "(vllm#12098; vllm#7777: earlier wheels use torch._scaled_mm on Ada)"));
  add_quant_latency(t);
  provenance_rows::add_run_fit_provenance(t);
  return t;
}

}  // namespace

std::string to_string(Provenance p) {
  switch (p) {
    case Provenance::datasheet: return "datasheet";
    case Provenance::microbenchmark: return "microbenchmark";
    case Provenance::engine_code: return "engine code";
    case Provenance::public_measurement: return "public measurement";
    case Provenance::fitted: return "set while looking at";
    case Provenance::assumed: return "assumed";
  }
  return "assumed";
}

const std::vector<ConstantProvenance>& constant_provenance() {
  static const std::vector<ConstantProvenance> table = build();
  return table;
}

std::string family_name(GpuFamily f) {
  switch (f) {
    case GpuFamily::ampere_hbm: return "ampere_hbm";
    case GpuFamily::hopper_hbm: return "hopper_hbm";
    case GpuFamily::gddr: return "gddr";
    case GpuFamily::blackwell_hbm: return "blackwell_hbm";
  }
  return "gddr";
}

}  // namespace llmsim::perf
