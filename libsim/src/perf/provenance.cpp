// The provenance of every prior of the default profiles and every runtime trait. "G§Bn" is a section of
// ../shared/reference/gpus-and-efficiency.md; "[D]" in docs/cost-model.md marks the same derivations. A `looked_at`
// list names the validation sources whose rows were read while a value was chosen: those sources are then not
// blind (tests/validation, docs/trust.md "Blind sources").
#include "llmsim/perf/provenance.hpp"
#include "provenance_rows.hpp"

#include "llmsim/perf/decode_attention.hpp"
#include "llmsim/perf/eager_host.hpp"
#include "llmsim/perf/gemm_tiles.hpp"

namespace llmsim::perf {

namespace {

using provenance_rows::c;
using provenance_rows::P;

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
  t.push_back(c("custom_allreduce_latency_s", "hopper_hbm", P::public_measurement,
                "vLLM 0.20.0's one stage under CUDA graphs on 8 H100 / 8 H200, TP 2/4/8, 16-128 KiB (24 points): "
                "least-squares fixed cost with B_peer 0.83 of NVLink, 4.8 us (4.4/4.7/5.1 by world size; "
                "ai-dynamo/aiconfigurator campaign_checkpoints/{h100_sxm,h200_sxm}/custom_allreduce_perf.txt "
                "@67f90e7/@77a06bf); vLLM 0.14.0's H100 table within 0.3 us; vllm#24111's 6 us read them 6-37 % dear",
                {}, 4.8e-6));
  t.push_back(c("collective.custom_two_shot_sync_hopper", "hopper_hbm", P::public_measurement,
                "the two stages keep the 2 x 6 us fixed cost their factors k were fitted with (vllm#24111, H100 "
                "0.5-4 MiB): 2 x (6 - 4.8) us beyond two one-stage latencies",
                {}, 2.4e-6));
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

  provenance_rows::add_layer_kernel_provenance(t);
  provenance_rows::add_engine_provenance(t);
  provenance_rows::add_workload_provenance(t);
  provenance_rows::add_memory_pool_provenance(t);
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
  provenance_rows::add_quant_kernel_provenance(t);
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
