#include "llmsim/spec/quantization.hpp"

#include <algorithm>
#include <map>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/gpu_spec.hpp"

namespace llmsim::spec {

namespace {
// Every figure below comes from ../shared/reference/quantization.md ("Q§n" = its section n):
// bits per weight include scales/zeros (§1), which tensors stay 16-bit (§2), the kernel multipliers q_bw
// (weight-streaming, decode) and q_c (compute, prefill) relative to the FP16 kernels (§6).
std::vector<WeightFormat> make_formats() {
  std::vector<WeightFormat> f;
  auto add = [&](WeightFormat w) { f.push_back(std::move(w)); };
  // Q§1 "BF16/FP16": 16 bits; Q§6 row 1: q = 1.
  add({"fp16", "FP16 weights and activations", 16, 0, false, 16, false, DType::fp16, DType::fp16, 1.0, 1.0});
  add({"bf16", "BF16 weights and activations", 16, 0, false, 16, false, DType::bf16, DType::fp16, 1.0, 1.0});
  // Q§1 "FP8 E4M3, per-tensor/per-channel": 8.0 bpw; Q§2: lm_head (and embeddings) stay 16-bit under vLLM FP8;
  // Q§4: FP8 W8A8 needs compute capability >= 8.9, below it runs as FP8-Marlin W8A16 (the fallback);
  // Q§6 FP8 W8A8 row: q_bw ≈ 1, q_c ≈ 1.
  add({"fp8", "FP8 E4M3 weights and activations (W8A8; W8A16 Marlin on GPUs without FP8)", 8.0, 0, false, 16,
       false, DType::fp8, DType::fp16, 1.0, 1.0});
  // The same bytes and tensor path with the scales computed at run time (vLLM's apply_fp8_linear, w8a8_utils.py):
  // "fp8-dynamic" = per-output-channel weight scales and per-token activation scales (llm-compressor's FP8_DYNAMIC
  // scheme, fbgemm_fp8 such as Meta's Llama-3.1-405B-FP8); "fp8-online" = one weight scale per tensor and one
  // activation scale per tensor found at run time (`--quantization fp8` on a 16-bit checkpoint, activation_scheme
  // "dynamic"). What each costs is in perf/quant_kernels.hpp.
  WeightFormat fp8_dynamic{"fp8-dynamic",
                           "FP8 E4M3, per-channel weight scales, dynamic per-token activation scales (FP8_DYNAMIC)",
                           8.0, 0, false, 16, false, DType::fp8, DType::fp16, 1.0, 1.0};
  fp8_dynamic.fp8_scales = Fp8Scales::dynamic_token;
  add(fp8_dynamic);
  WeightFormat fp8_online{"fp8-online",
                          "FP8 E4M3, per-tensor weight scale, dynamic per-tensor activation scale (online FP8)", 8.0,
                          0, false, 16, false, DType::fp8, DType::fp16, 1.0, 1.0};
  fp8_online.fp8_scales = Fp8Scales::dynamic_tensor;
  add(fp8_online);
  // Marlin-class weight-only kernels (vLLM gptq_marlin/awq_marlin, Q§4) stream weights as well as the FP16 kernels
  // do — "essentially ideal speedups" to batch 16-32 on an A10 (IST-DASLab/marlin README) — so q_bw = 1; what they
  // lose on some GPUs is CUDA-core time to dequantise (README: dequantisation and tensor-core instructions ordered
  // "to ensure that both GPU pipelines are well saturated"). Instructions per weight: 4-bit 2.25 [D]: Marlin's
  // dequant() spends 2 lop3 + hsub2 + hfma2 per 4 weights and a scale hmul2 per pair (≈1.6) plus addressing; 2.25
  // reproduces its measured 3.12× of the ideal 3.87× on an A100 (vllm-project/vllm#2497, bench.py, 1158 GB/s at
  // batch 1; Q§5.1), and then gives 99% of ideal on the A10 and ~100% on the 4090. 8-bit 1.0 [D]: one prmt +
  // hsub2 per pair and the scale.
  constexpr double kMarlin4bitOps = 2.25, kMarlin8bitOps = 1.0;
  // Q§1 "LLM.int8 / per-channel INT8": 8 + 32/K ≈ 8.0 bpw; Q§6 W8A16 row: compute at FP16 after dequantisation,
  // q_c as W4 Marlin (kMarlinComputeEfficiency); vLLM runs GPTQ-Int8 on Marlin (Q§4).
  add({"int8", "INT8 weight-only (W8A16), per-channel scales (Marlin kernel)", 8.0, 0, false, 16, true, DType::fp16,
       DType::fp16, 1.0, kMarlinComputeEfficiency, 0, kMarlin8bitOps});
  // Q§1 "INT8 W8A8 (SmoothQuant / compressed-tensors)": ≈ 8.0 bpw; Q§6 INT8 W8A8 row: INT8 tensor cores, q ≈ 1.
  add({"w8a8", "INT8 weights and activations (SmoothQuant-style W8A8)", 8.0, 0, false, 16, false, DType::int8,
       DType::fp16, 1.0, 1.0});
  // Q§1 AWQ row: 4 + 16/128 (fp16 scales) + 4/128 (packed zeros) = 4.156 bpw; Q§2: embed_tokens and lm_head
  // stay 16-bit; Q§4: vLLM runs AWQ on awq_marlin; q_c kMarlinComputeEfficiency (vLLM's Marlin at large M; Q§6's
  // 0.6–0.75 was the IST-DASLab kernel's); q_bw and the dequantisation
  // work as above (Q§6's q_bw 0.80–0.83 is the A100's, which the ALU term reproduces).
  // Releases before Marlin ran AWQ and GPTQ on kernels of their own (QuantMethod, perf/quant_kernels.hpp).
  WeightFormat awq{"awq-int4", "AWQ 4-bit, group 128, asymmetric (Marlin kernel)", 4.0 + 16.0 / 128 + 4.0 / 128, 128,
                   false, 16, true, DType::fp16, DType::fp16, 1.0, kMarlinComputeEfficiency, 0, kMarlin4bitOps};
  awq.method = QuantMethod::awq;
  add(awq);
  // Q§1 GPTQ row: 4.156 + 32/N (g_idx) ≈ 4.16 bpw; otherwise as AWQ (Q§2, Q§6 Marlin row; Machete on Hopper is
  // assumed to behave as Marlin at small M, Q§6).
  WeightFormat gptq{"gptq-int4", "GPTQ 4-bit, group 128 (Marlin kernel)", 4.16, 128, false, 16, true, DType::fp16,
                    DType::fp16, 1.0, kMarlinComputeEfficiency, 0, kMarlin4bitOps};
  gptq.method = QuantMethod::gptq;
  add(gptq);
  // Q§1 "W4A16 symmetric, no zeros (compressed-tensors pack-quantized, native Marlin format)": 4 + 16/128 = 4.125 bpw;
  // vLLM runs it on the same Marlin kernel as GPTQ (CompressedTensorsWNA16 → MarlinLinearKernel, Q§4), so the
  // kernel multipliers are GPTQ's.
  add({"w4a16", "compressed-tensors W4A16, symmetric, group 128 (Marlin kernel)", 4.125, 128, false, 16, true,
       DType::fp16, DType::fp16, 1.0, kMarlinComputeEfficiency, 0, kMarlin4bitOps});
  // Q§1 bitsandbytes NF4 row: 4 + 32/64 (fp32 absmax per 64-block) = 4.5 bpw without double quantization
  // (transformers' default); Q§2: embeddings and lm_head skipped; Q§6 NF4 row: q_bw ≈ 0.47 (4090) / 0.25 (H100),
  // q_c < 0.6.
  add({"nf4", "bitsandbytes NF4, block 64, no double quantization", 4.5, 64, false, 16, true, DType::fp16,
       DType::fp16, 0.45, 0.55});
  // Q§1 "NF4 + double quantization": 4 + 8/64 + 32/(64·256) = 4.127 bpw. Q§5.1 (bitsandbytes benchmark, Llama-3.1-8B,
  // × BF16): NF4+DQ reaches 1.20 / 0.59 at batch 1 (4090 / H100) where NF4 reaches 1.43 / 0.74 over 16/4.127 vs
  // 16/4.5 of the bytes: its streaming efficiency is 0.77 / 0.73 of NF4's [D] -> q_bw 0.45 × 0.75; at batch 32
  // 0.64 / 0.45 against 0.66 / 0.54 -> q_c 0.55 × 0.9 [D].
  add({"nf4-dq", "bitsandbytes NF4, block 64, double quantization", 4.0 + 8.0 / 64 + 32.0 / (64 * 256), 64, false,
       16, true, DType::fp16, DType::fp16, 0.45 * 0.75, 0.55 * 0.9});
  // Q§1 "LLM.int8() (bnb Linear8bitLt)": 8 + 32/K ≈ 8.0 bpw, 16-bit outlier path. Q§5.1: 0.47× (4090) and 0.30× (H100)
  // of BF16 at batch 1 while streaming half the bytes -> q_bw = speed / (16/8) = 0.235 / 0.15, midpoint 0.19 [D];
  // Q§6 "never faster than BF16": 0.59 / 0.30 at batch 32 -> q_c 0.45 [D].
  add({"bnb-int8", "bitsandbytes LLM.int8 (8-bit, fp16 outlier columns)", 8.0, 0, false, 16, true, DType::fp16,
       DType::fp16, 0.19, 0.45});
  // Q§1/Q§2/Q§3 GGUF Q4_K_M: Q4_K (4.5 bpw) with attn_v and ffn_down in Q6_K (6.5625) in 16 of 32 layers ->
  // 4.80 bpw over a Llama's linears [D]; token_embd in the base type, output.weight in Q6_K; gives the 4.91 GB
  // of the published Llama-3.1-8B file (Q§3). Q§6 GGUF row: q_c 0.84–0.96 of F16.
  // llama.cpp's prefill (pp512, Llama-3 8B/70B Q4_K_M on 3090, 4090, L40S, A100, H100; llamacpp-gpu-benchmarks.csv)
  // plateaus near 1.0e14 FLOP/s of linear layers on every card above a 3090: the fit of max_compute_flops
  // (median |error| 10% over those 10 rows, tests/validation/reference_sets.cpp, make validate).
  constexpr double kGgufMaxFlops = 1.0e14;
  // Decode (M <= 8, MMVQ_MAX_BATCH_SIZE) runs ggml-cuda's mul_mat_vec_q: integer dp4a dot products against the
  // activations quantised to q8_1, on CUDA cores. Its weight stream is not what limits it: 128-thread CTAs of 32-38
  // registers (ptxas, sm_80/86/89/90) fit 12-16 per SM, each with a 1152-byte iteration of Q4_K super-blocks in
  // flight (14-18 KB per SM), where DRAM needs 1.3-4.8 KB per SM to saturate (RRZE gpu-stream occupancy scans,
  // docs/cost-model.md) -> q_bw = 1. What it costs is issue slots: the kernel's loop at llama.cpp build 2824
  // (4426e29, the reference runs' build; PTX of nvcc 13.0 for sm_89, counted for 1..8 columns) issues per weight
  // 1.44 (Q4_K) / 4.69 (Q6_K) / 1.5 (Q8_0) thread-instructions to unpack weights and scales, plus 3.88 / 4.25 / 1.19
  // per weight and activation column for the dp4a products and their scaling. Q4_K_M's mixture (20 % of a Llama-3-8B's
  // streamed weights in Q6_K: ffn_down and attn_v of 16 layers, output.weight) -> 2.1 + 3.95·M [D].
  // FP4 block formats (Blackwell): 4-bit E2M1 values with a scale per block. NVFP4 (NVIDIA ModelOpt,
  // compressed-tensors): an FP8 E4M3 scale per 16 values (+ one FP32 scale per tensor) = 4 + 8/16 = 4.5 bpw. MXFP4 (OCP
  // microscaling; gpt-oss): an E8M0 scale per 32 values = 4 + 8/32 = 4.25 bpw. Embeddings and lm_head stay 16-bit
  // (ModelOpt's exclude_modules, gpt-oss's modules_to_not_convert). Kernels per card: FP4 tensor cores where the GPU
  // has an fp4 peak (Blackwell: CUTLASS / FlashInfer block-scaled GEMMs, activations quantized on the fly); elsewhere
  // vLLM runs them weight-only through its FP4 Marlin kernels (dequantised to 16 bits, as W4A16): format_for_gpu's
  // fallback, with the 4-bit Marlin multipliers and dequantisation work above [D: the same kernel family].
  add({"nvfp4", "NVFP4: FP4 E2M1 + FP8 scale per 16 (W4A4 on Blackwell, FP4-Marlin W4A16 elsewhere)", 4.5, 16, false,
       16, false, DType::fp4, DType::fp16, 1.0, 1.0, 0, kMarlin4bitOps});
  add({"nvfp4-a16", "NVFP4 weights, 16-bit activations (FP4-Marlin W4A16; FP4 tensor cores unused)", 4.5, 16, false,
       16, true, DType::fp16, DType::fp16, 1.0, kMarlinComputeEfficiency, 0, kMarlin4bitOps});
  add({"mxfp4", "MXFP4: FP4 E2M1 + E8M0 scale per 32 (FP4 tensor cores on Blackwell, Marlin W4A16 elsewhere)", 4.25,
       32, false, 16, false, DType::fp4, DType::fp16, 1.0, 1.0, 0, kMarlin4bitOps});
  WeightFormat mx_experts{"mxfp4-experts", "MXFP4 routed experts, everything else BF16 (gpt-oss checkpoint)", 4.25,
                          32, false, 16, false, DType::fp4, DType::fp16, 1.0, 1.0, 0, kMarlin4bitOps};
  mx_experts.experts_only = true;
  add(mx_experts);
  // ModelOpt NVFP4 exports of MoE models that leave attention, the dense MLPs and the shared experts unquantized
  // (their ignore / exclude_modules: nvidia/Gemma-4-26B-A4B-NVFP4, nvidia/Kimi-K2.6-NVFP4): only the routed experts
  // are NVFP4, as gpt-oss's are MXFP4 (quantization_config.cpp, modelopt_quantization).
  WeightFormat nv_experts{"nvfp4-experts", "NVFP4 routed experts, everything else BF16 (ModelOpt MoE exports)", 4.5,
                          16, false, 16, false, DType::fp4, DType::fp16, 1.0, 1.0, 0, kMarlin4bitOps};
  nv_experts.experts_only = true;
  add(nv_experts);
  WeightFormat q4km{"gguf-q4_k_m", "llama.cpp GGUF Q4_K_M mixture (Q4_K + Q6_K)", 4.80, 256, true, 6.5625, true,
                    DType::fp16, DType::fp16, 1.0, 0.9, kGgufMaxFlops};
  q4km.gemv_ops_per_weight = 0.8 * 1.44 + 0.2 * 4.69;
  q4km.gemv_ops_per_weight_column = 0.8 * 3.88 + 0.2 * 4.25;
  q4km.gemv_max_rows = 8;
  add(q4km);
  // Q§1 GGUF Q8_0: 32-weight blocks of int8 + fp16 scale = 8.5 bpw for every tensor incl. output (Q§2: Q8_0
  // stays Q8_0). Same kernels as Q4_K_M: the same prefill plateau is assumed [D] and decode runs mul_mat_vec_q with
  // the Q8_0 instruction counts above (q_bw = 1, as for Q4_K_M; formerly 0.93 from Q§5.1's README ratio).
  WeightFormat q80{"gguf-q8_0", "llama.cpp GGUF Q8_0", 8.5, 32, true, 8.5, true, DType::fp16, DType::fp16, 1.0, 0.9,
                   kGgufMaxFlops};
  q80.gemv_ops_per_weight = 1.5;
  q80.gemv_ops_per_weight_column = 1.19;
  q80.gemv_max_rows = 8;
  add(q80);
  return f;
}
}  // namespace

const std::vector<WeightFormat>& weight_formats() {
  static const std::vector<WeightFormat> formats = make_formats();
  return formats;
}

std::vector<std::string> weight_format_ids() {
  std::vector<std::string> ids;
  for (const auto& f : weight_formats()) ids.push_back(f.id);
  return ids;
}

namespace {
// Stored bits per weight of a group-quantized format at group size g (0 = one scale per output channel, whose
// overhead over K >= 1024 inputs is below 0.02 bit and taken as 0.01). Q§1: AWQ packs a 4-bit zero beside each fp16
// scale (+20/g), GPTQ likewise plus g_idx (+~0.004), compressed-tensors' symmetric W4A16 stores scales only (+16/g),
// GPTQ 8-bit stores an 8-bit zero (+24/g).
double group_bits(const std::string& base, int g) {
  const double per_channel = 0.01;
  if (base == "awq-int4") return 4 + (g > 0 ? 20.0 / g : per_channel);
  if (base == "gptq-int4") return 4 + (g > 0 ? 20.0 / g : per_channel) + 0.004;
  if (base == "w4a16") return 4 + (g > 0 ? 16.0 / g : per_channel);
  return 8 + (g > 0 ? 24.0 / g : per_channel);  // int8 (GPTQ 8-bit)
}
}  // namespace

std::string canonical_weight_format_id(const std::string& s) {
  static const std::map<std::string, std::string> m{
      {"awq", "awq-int4"},      {"awq_marlin", "awq-int4"}, {"gptq", "gptq-int4"}, {"gptq_marlin", "gptq-int4"},
      {"bitsandbytes", "nf4"},  {"fbgemm_fp8", "fp8-dynamic"},      {"bfloat16", "bf16"},  {"float16", "fp16"},
      {"half", "fp16"},         {"modelopt_fp4", "nvfp4"}};
  const std::string l = to_lower(s);
  auto it = m.find(l);
  return it == m.end() ? s : it->second;
}

WeightFormat weight_format(const std::string& id, const std::string& path) {
  const std::string lower = to_lower(canonical_weight_format_id(id));
  constexpr std::string_view kAttn16 = "+attn16";
  if (lower.size() > kAttn16.size() && lower.compare(lower.size() - kAttn16.size(), kAttn16.size(), kAttn16) == 0) {
    WeightFormat f = weight_format(lower.substr(0, lower.size() - kAttn16.size()), path);
    if (f.experts_only) throw ConfigError(path, "'" + id + "': " + f.id + " already keeps attention 16-bit");
    f.id = lower;
    f.attention_16bit = true;
    f.description += " [attention projections 16-bit]";
    return f;
  }
  for (const auto& f : weight_formats()) {
    if (f.id == lower) return f;
  }
  // Group-size variants: "<base>-g32|-g64|-g128|-gch" of the Marlin-run group formats (Marlin supports group sizes
  // -1/32/64/128 only, Q§1 notes).
  const auto dash = lower.rfind("-g");
  if (dash != std::string::npos) {
    const std::string base = lower.substr(0, dash), group = lower.substr(dash + 2);
    const bool known_base = base == "awq-int4" || base == "gptq-int4" || base == "w4a16" || base == "int8";
    const int g = group == "32" ? 32 : group == "64" ? 64 : group == "128" ? 128 : group == "ch" ? 0 : -1;
    if (known_base && g >= 0) {
      if (base == "awq-int4" && g == 0) throw ConfigError(path, "AWQ has no per-channel variant, got '" + id + "'");
      WeightFormat f;
      for (const auto& b : weight_formats())
        if (b.id == base) f = b;
      f.id = lower;
      f.group_size = g;
      f.bits_per_weight = group_bits(base, g);
      f.description += g > 0 ? " [group " + std::to_string(g) + "]" : " [per-channel scales]";
      return f;
    }
  }
  throw ConfigError(path, unknown_name_message("quantization format", id, weight_format_ids()) +
                              " (group-size variants: awq-int4/gptq-int4/w4a16/int8 + -g32, -g64, -g128 or -gch)");
}

std::string canonical_kv_dtype_id(const std::string& s) {
  // vLLM's --kv-cache-dtype choices (vllm/config/cache.py CacheDType): fp8 = fp8_e4m3 on CUDA; fp8_e5m2 and
  // fp8_inc store one byte too; the torch names of the 16-bit types.
  static const std::pair<const char*, const char*> m[] = {{"fp8_e4m3", "fp8"}, {"fp8_e5m2", "fp8"},
                                                          {"fp8_inc", "fp8"},  {"bfloat16", "bf16"},
                                                          {"float16", "fp16"}, {"half", "fp16"}};
  const std::string l = to_lower(s);
  for (const auto& [vllm, ours] : m)
    if (l == vllm) return ours;
  return s;
}

DType parse_kv_dtype(const std::string& name, const std::string& path) {
  const std::string lower = to_lower(canonical_kv_dtype_id(name));
  if (lower == "auto") return DType::fp16;  // vLLM's "auto" = the model dtype
  for (DType d : {DType::fp16, DType::bf16, DType::fp8, DType::int8, DType::int4}) {
    if (lower == to_string(d)) return d;
  }
  throw ConfigError(path, unknown_name_message("KV-cache dtype", name, {"auto", "fp16", "bf16", "fp8", "int8", "int4"}) +
                              " (vLLM's fp8_e4m3, fp8_e5m2, fp8_inc, bfloat16, float16 are read too)");
}

WeightFormat format_for_gpu(const WeightFormat& format, const GpuSpec& gpu, const std::string& path) {
  if (gpu.tensor_peak(format.compute_dtype) > 0) return format;
  if (format.fallback_compute_dtype != format.compute_dtype && gpu.tensor_peak(format.fallback_compute_dtype) > 0) {
    // Q§4: FP8 on a GPU below compute capability 8.9 runs as FP8-Marlin weight-only (W8A16); q_c as Marlin
    // (kMarlinComputeEfficiency).
    WeightFormat w = format;
    w.description += " [" + gpu.id + " has no " + std::string(to_string(format.compute_dtype)) +
                     " tensor cores: runs weight-only on " + std::string(to_string(format.fallback_compute_dtype)) + "]";
    w.compute_dtype = format.fallback_compute_dtype;
    w.weight_only = true;
    // FP8-Marlin streams 8-bit weights like the INT8 Marlin path; it dequantises with bit masks, shifts and a
    // half2 multiply per pair (kFp8MarlinDequantOpsPerWeight), not INT8's prmt trick.
    w.dequant_bw_efficiency = std::min(w.dequant_bw_efficiency, 1.0);
    w.dequant_compute_efficiency = std::min(w.dequant_compute_efficiency, kMarlinComputeEfficiency);
    w.dequant_alu_ops_per_weight = std::max(w.dequant_alu_ops_per_weight, kFp8MarlinDequantOpsPerWeight);
    if (format.compute_dtype == DType::fp4) {
      // Pre-Blackwell FP4: vLLM's FP4 Marlin (W4A16), as the other 4-bit Marlin formats.
      w.description = format.description + " [" + gpu.id + " has no FP4 tensor cores: weight-only FP4 Marlin, "
                      "dequantised to 16 bits]";
      // Keeps the IST-DASLab kernel's 0.7: the measurement behind kMarlinComputeEfficiency is of dense W4A16 Marlin,
      // and the FP4 path mostly feeds the Marlin MoE kernel (gpt-oss on Hopper), whose measured rate on Hopper is a
      // multiplier of its own on the routed experts (perf/moe_kernels: kMarlinMoeHopperCompute, times
      // kFp4MarlinMoeCompute for the FP4 variant of that kernel).
      w.dequant_compute_efficiency = 0.7;
    }
    return w;
  }
  throw ConfigError(path, "'" + format.id + "' computes in " + std::string(to_string(format.compute_dtype)) +
                              ", which " + gpu.id + " lacks, and has no fallback it supports");
}

}  // namespace llmsim::spec
