// The provenance of the kernels beyond the dense 16-bit GEMM and attention: vLLM's fused MoE, block-scaled and
// per-tensor FP8 linears (Hopper, Ada), LoRA's shrink/expand, MLA's projections, and the quantised kernels by
// release with the pre-Marlin kernels' bytes-in-flight bound. Each row is what the kernel's own file in perf/ uses;
// "[D]" in docs/cost-model.md marks the derivations.
#include <string>
#include <utility>
#include <vector>

#include "provenance_rows.hpp"

#include "llmsim/perf/ada_fp8.hpp"
#include "llmsim/perf/block_fp8.hpp"
#include "llmsim/perf/hopper_fp8.hpp"
#include "llmsim/perf/lora_kernels.hpp"
#include "llmsim/perf/quant_kernels.hpp"
#include "llmsim/perf/quant_latency.hpp"
#include "llmsim/perf/dsa_indexer.hpp"
#include "llmsim/perf/sparse_mla.hpp"
#include "llmsim/perf/triton_unified_attention.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::perf::provenance_rows {

namespace {

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

}  // namespace

void add_layer_kernel_provenance(std::vector<ConstantProvenance>& t) {
  // --- MoE kernels (perf/moe_kernels.cpp): vLLM's fused-MoE layer beyond the two expert GEMMs.
  t.push_back(c("moe.mxfp4_marlin_padding", "all", P::engine_code,
                "vLLM Mxfp4MoEMethod.create_weights, Mxfp4Backend.MARLIN (FP4 Marlin MoE, vllm#22428, 0.10.2 on; vLLM's "
                "Hopper/Ampere default while triton_kernels was not a dependency, added by vllm#27370 / #28788 after "
                "0.11.0): 'the moe marlin kernel requires that for each linear n % 256 == 0 and k % 128 == 0': "
                "round_up(intermediate_size_per_partition, 128), round_up(hidden_size, 256); w13/w2 and their scales are "
                "allocated (torch.zeros) at the padded shape and prepare_moe_fp4_layer_for_marlin keeps it, so the "
                "padding is resident: the memory plan holds it too (memory/expert_layout)",
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
  t.push_back(c("moe.marlin_ampere_compute_factor", "all", P::public_measurement,
                "aiconfigurator (ai-dynamo/aiconfigurator) aic-core/.../systems/data/a100_sxm/moe/sglang/0.5.10/"
                "moe_perf.parquet, kernel_source sglang_marlin_moe (int4_wo): SGLang 0.5.10's port of vLLM's Marlin MoE "
                "kernel timed on an A100 SXM 80GB, balanced routing, three MoE shapes (hidden x expert width, E, k, TP: "
                "3072 x 1536, 256, 8, 2; 2048 x 768, 128, 8, 1; 4096 x 1536, 128, 8, 1) at 2048-16384 tokens (e.g. "
                "35.16 ms per layer for the last at 16384 tokens, ~141 TF); its h100_sxm twin matches vLLM 0.14.0's "
                "vllm_marlin_moe at the same shapes within 8 %. Geometric mean of this cost model's routed-expert op "
                "over the table's time without the factor: 0.79 (0.74-0.88) [D]. Applied to the Marlin MoE on Ampere: "
                "GPTQ/AWQ int4 experts and an FP8 checkpoint's weight-only experts (vLLM fp8.py Fp8MoEMethod: "
                "use_marlin = not has_device_capability(89), fused_marlin_moe with float8_e4m3fn)",
                {}, 0.79));
  t.push_back(c("moe.fp4_marlin_compute_factor", "all", P::public_measurement,
                "aiconfigurator (ai-dynamo/aiconfigurator) systems/data/h100_sxm/moe/vllm/0.24.0/moe_perf.parquet, "
                "balanced routing, TP 1: vLLM 0.24's Marlin MoE kernel with FP4 weights (kernel_source "
                "vllm_compressedtensorsw4a4mxfp4moe_marlin_marlinexperts_situ_as_silu, w4a16_mxfp4, 3584 x 3072, E 896, "
                "top 16; e.g. 47.01 ms at 8192 tokens) and with int4 weights (vllm_compressedtensorswna16marlinmoe_"
                "marlin_marlinexperts, int4_wo, 7168 x 2048, E 384, top 8; 23.12 ms) on an H100 SXM in one release. "
                "Each table over this cost model's routed-expert op for its shape, FP4 reads ~1.25x the int4 kernel at "
                "2048-16384 tokens (seven sizes) and alike at 32-512 tokens; the multiplier on the card's Marlin MoE q_c "
                "that makes the two agree: 0.80 (geometric mean within 6 %) [D]. Mechanism: the same fused_marlin_moe "
                "template, FP4 E2M1 dequantised by bit manipulation (no int4 magic-number trick) with an E8M0/FP8 scale "
                "per 32/16 weights. Applied to FP4 Marlin MoE (MXFP4/NVFP4 experts) on Hopper and on Ampere (same "
                "kernel; the A100's CUDA-core to tensor rate 19.5:312 TF is the H100's 67:989 within 10 %)",
                {}, 0.80));
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
  t.push_back(c("triton_unified_attention.backend", "all", P::engine_code,
                "vllm/platforms/cuda.py (0.10.x): `if has_sink and not cls.is_device_capability(90): return "
                "TRITON_ATTN_VLLM_V1`; 0.11+: FLASH_ATTN is invalid for sinks unless FA3 "
                "(fa_utils.flash_attn_supports_sinks, sm90), FlashInfer only with its TRT-LLM kernels (sm100): gpt-oss "
                "on Ampere / Ada prefills on triton_unified_attention"));
  t.push_back(c("triton_unified_attention.block_m", "all", P::engine_code,
                "vLLM unified_attention: BLOCK_M = 16 if num_queries_per_kv <= 16 else next_power_of_2(...), BLOCK_Q = "
                "BLOCK_M // num_queries_per_kv; grid (q-blocks, KV heads); each program's tile loop reads the K and V "
                "of every key up to its causal bound from global memory (gpt-oss: 8 query heads per KV head, 2 tokens "
                "per Q-block); priced at the L2 read rate (quant_latency.l2_bytes_per_sm_clock)",
                {}, kTritonUnifiedBlockM));
  // --- vLLM's sparse MLA for DeepSeek-V3.2's DSA (perf/sparse_mla.hpp).
  const std::string sparse = "vllm-project/vllm vllm/v1/attention/backends/mla/flashmla_sparse.py @60191e18 ";
  t.push_back(c("sparse_mla.backend", "vllm-v1", P::engine_code,
                sparse + "FlashMLASparseBackend (compute capability 9.x, 10.x), forward_mqa: `the kernels want to use "
                         "MQA 576/512 approach for both prefill and decode`; with the bf16 cache (the default since "
                         "vllm#27121, 2025-10-17: `auto` no longer selects fp8_ds_mla) _forward_bf16_kv runs "
                         "flash_mla_sparse_fwd on every token, prefill and decode, over the indexer's topk_indices_buffer "
                         "(index_topk columns, -1 where the context is shorter)"));
  t.push_back(c("sparse_mla.head_tile_sm90", "vllm-v1", P::engine_code,
                sparse + "FlashMLASparseImpl.prefill_padding = 128 on sm100 else 64; _bf16_flash_mla_kernel pads "
                         "num_heads to it when num_heads % padding != 0 (TP 8 of DeepSeek-V3.2: 16 -> 64)",
                {}, kSparseMlaHeadTileSm90));
  t.push_back(c("sparse_mla.head_tile_sm100", "vllm-v1", P::engine_code, sparse + "as head_tile_sm90, on Blackwell",
                {}, kSparseMlaHeadTileSm100));
  t.push_back(c("sparse_mla.all_topk_slots", "all", P::engine_code,
                "deepseek-ai/FlashMLA csrc/kernels/sm90/prefill/sparse/phase1.cuh @02aaec71: without topk_length "
                "(vLLM 0.13 passes none) num_topk_blocks = topk / B_TOPK; invalid indices (-1) skip their cp.async "
                "loads and are masked to -inf (mask_rP), their QK^T and PV tiles are computed; the grid is "
                "(h_q / B_H) x s_q"));
  t.push_back(c("sparse_mla.efficiency_sm90", "all", P::microbenchmark,
                "deepseek-ai/FlashMLA README @066b5ba6: sparse MLA prefill `up to 640 TFlops in forward computation on "
                "H800 SXM5 with CUDA 12.8` (tests/test_flash_mla_sparse_prefill.py), over H800 SXM5's 989.4 dense BF16 "
                "TFLOPS",
                {}, 640.0 / 989.4));
  t.push_back(c("sparse_mla.efficiency_sm100", "all", P::microbenchmark,
                "deepseek-ai/FlashMLA README @066b5ba6: sparse MLA prefill `up to 1450 TFlops on B200, CUDA 12.9`, over "
                "B200's 2,250 dense BF16 TFLOPS",
                {}, 1450.0 / 2250.0));
  // --- DeepSeek-V3.2's lightning indexer on DeepGEMM's FP8 MQA-logits kernels (perf/dsa_indexer.hpp).
  t.push_back(c("dsa_indexer.backend", "vllm-v1", P::engine_code,
                "vllm-project/vllm vllm/v1/attention/backends/mla/indexer.py @60191e18 (DeepseekV32IndexerBackend: "
                "block 64, 128 FP8 bytes + 4 scale bytes a token, DeepGEMM's get_paged_mqa_logits_metadata) and "
                "sparse_attn_indexer: per prefill chunk cp_gather_indexer_k_quant_cache "
                "(the FP8 keys + fp32 scales), deep_gemm.fp8_mqa_logits (FP32 logits over each query's "
                "[cu_seqlen_ks, cu_seqlen_ke) keys) and top_k_per_row_prefill; per decode step "
                "deep_gemm.fp8_paged_mqa_logits over the paged indexer cache and "
                "top_k_per_row_decode; DeepGEMM ships sm90 / sm100 kernels only (deepseek-ai/DeepGEMM#200, 80ceeb2)"));
  t.push_back(c("dsa_indexer.mqa_logits_efficiency", "all", P::microbenchmark,
                "deepseek-ai/DeepGEMM tests/test_attention.py test_mqa_logits @v2.1.1.post3 (FLOPs = 2 x valid pairs x "
                "64 heads x 128), run on a Hopper card and posted in sgl-project/sglang#11989 (2026-01-21): S=2048, "
                "CP=0 (causal, ks=0): 1004 / 1081 / 1126 / 1144 TFLOPS at SKV = 4096 / 8192 / 16384 / 32768; the "
                "16,384 figure over 1,979 dense FP8 TFLOPS. Blackwell: the same share, assumed (no public sm100 figure)",
                {}, kMqaLogitsEfficiency));
  t.push_back(c("dsa_indexer.logit_bytes_per_pair", "vllm-v1", P::engine_code,
                "vllm-project/vllm sparse_attn_indexer: fp8_mqa_logits / fp8_paged_mqa_logits write one FP32 logit per "
                "scored (query, key) pair; top_k_per_row_prefill / _decode read each row's valid span (one pass counted)",
                {}, kIndexerLogitBytesPerPair));
}

void add_quant_kernel_provenance(std::vector<ConstantProvenance>& t) {
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
  t.push_back(c("quant.fp8_marlin_dequant_ops_per_weight", "all", P::engine_code,
                "vllm-project/vllm csrc/quantization/gptq_marlin/dequant.h dequant<half2|nv_bfloat162, kFE4M3fn>: "
                "(q & 0x80008000) | ((q & 0x7F007F00) >> s) twice with q <<= 8 between (7 integer instructions) and "
                "one __hmul2 per pair (exponent bias, or the group scale with the bias folded in) per int32 of 4 FP8 "
                "weights: 9 / 4 [D]; was INT8's prmt path (1.0)",
                {}, spec::kFp8MarlinDequantOpsPerWeight));
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
}

}  // namespace llmsim::perf::provenance_rows
