#pragma once
// Weight formats and KV-cache dtypes, with the bytes and compute paths the memory planner and cost model
// need. Figures come from ../shared/reference/quantization.md (cited per format in quantization.cpp).
#include <string>
#include <vector>

#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/dtype.hpp"

namespace llmsim::spec {

struct GpuSpec;
struct ModelSpec;

/// How a checkpoint's config.json says its weights are stored (its quantization_config), as an llmsim format.
struct CheckpointQuantization {
  std::string format;       ///< llmsim weight-format id ("awq-int4", "gptq-int4-g64", "fp8", ...); "" = 16-bit
  std::string method;       ///< quantization_config.quant_method as written ("awq", "compressed-tensors", ...)
  std::string description;  ///< what was read, for messages: "awq 4-bit, group 128"
  /// FP8 weights with block-wise scales (quantization_config.weight_block_size, DeepSeek-V3/R1's [128, 128]): vLLM runs
  /// their MoE experts through its block-scaled Triton fused-MoE kernel (perf/moe_kernels).
  bool block_scaled = false;
};

/// The checkpoint family a weight-only 4-bit format comes from, where engines ran a kernel of its own for it before
/// Marlin (perf/quant_kernels.hpp): AWQ's awq_gemm, GPTQ's exllama kernels. `other` = no such history.
enum class QuantMethod { other, awq, gptq };

/// How an FP8 W8A8 checkpoint scales its operands (vLLM's apply_fp8_linear branches on it).
enum class Fp8Scales {
  static_tensor,   ///< one weight scale and one calibrated activation scale per tensor ("fp8"; AutoFP8 / FP8 preset)
  dynamic_tensor,  ///< one weight scale per tensor, the activation scale computed per tensor at run time ("fp8-online")
  dynamic_token,   ///< per-output-channel weight scales, per-token activation scales at run time ("fp8-dynamic")
};

/// Which kernels an engine release runs for the quantised formats (and, with them, Hopper's attention kernel), as far
/// as they changed with the release (filled from the release by spec::runtime_for_version; the default is today's
/// vLLM). The GPU's part of the choice (Marlin needs compute capability 8.0, CUTLASS FP8 on sm89 a CUDA 12.4 build,
/// FA3 sm90) is made in perf/quant_kernels.hpp and perf/decode_attention.hpp.
struct QuantKernels {
  bool awq_marlin = true;          ///< AWQ checkpoints repacked for awq_marlin (vLLM 0.5.3+, vllm#6612); else awq_gemm
  bool awq_dequant_large_m = true; ///< pre-Marlin AWQ dequantises + fp16 GEMM at >= 256 tokens (vLLM 0.3.0+, vllm#2566)
  bool gptq_marlin = true;         ///< GPTQ checkpoints repacked for gptq_marlin (vLLM 0.4.2+, vllm#3922); else exllama
  /// FP8 W8A8 on sm89 (Ada) runs cutlass_scaled_mm: the release's PyPI wheel is built with CUDA >= 12.4 (vLLM 0.7.0+,
  /// vllm#12098); before it torch._scaled_mm, which takes per-tensor scales only (vllm#7777).
  bool ada_fp8_cutlass = true;
  /// MXFP4 experts on Hopper (sm90, no FP4 tensor cores) run triton_kernels' matmul_ogs: vLLM bundles triton_kernels
  /// from 0.12.0 (vllm#28788); before, get_mxfp4_backend fell back to FP4 Marlin (`not has_triton_kernels()`).
  bool mxfp4_hopper_triton = true;
  /// matmul_ogs splits K below ~32 tokens and writes fp32 partials (vLLM 0.12.x; vllm#30528 set split_k = 1 for
  /// sm90, first released in 0.13.0).
  bool mxfp4_triton_split_k = false;
  /// Per-tensor/token FP8 linears on Hopper cost ~10 us more per call than BF16 and stream at 0.92 of its rate at
  /// decode sizes in vLLM 0.14.0's linear layer, within ~2 us of BF16 in 0.19.0's (aiconfigurator's H100 tables;
  /// perf/hopper_fp8.hpp): releases before 0.15.0 take the 0.14.0 measurement (0.15-0.18 unmeasured, taken as 0.19).
  bool sm90_fp8_slow_small_m = false;
  /// Block-scaled FP8 experts (DeepSeek-V3/R1, Qwen3-FP8) in vLLM's Triton fused MoE at the rates vllm#24700 measured on
  /// an H100 (main of September 2025: 0.15 of the FP8 GEMM rate at large M) rather than aiconfigurator's vLLM 0.14.0 /
  /// 0.19.0 tables (0.36; perf/moe_kernels.hpp): releases before 0.14.0. Which release changed it is not established.
  bool block_fp8_moe_slow = false;
  /// vLLM's FlashAttention backend on Hopper (sm90) runs FlashAttention-3 (vllm#12093, "Flash Attention 3 Support",
  /// opened 2025-01-15, first released in 0.7.0); before, vllm-flash-attn's FA2 kernels on every card: decode with
  /// flash_attn_with_kvcache (FA2's split-KV kernel), prefill with flash_attn_varlen_func (FA2's forward).
  bool hopper_flash_attn3 = true;
  /// That FA3 decodes a 16-bit cache with one MMA warp group (a 64-row query tile) where a KV head's query rows fit 64
  /// (vllm#16864, merged 2025-04-24, the vLLM side of vllm-project/flash-attention#63; taken as first released in
  /// 0.8.5): it streams at the HBM cap with one CTA per SM (perf/decode_attention.hpp, fa3_1wg).
  bool hopper_fa3_one_mma_wg = true;
  /// MLA models (DeepSeek-V2/V3/R1) decode with FlashMLA on Hopper: DeepSeek published FlashMLA on 2025-02-24 and
  /// vllm#13747 ("[Kernel] FlashMLA integration", 8 x H200 DeepSeek-R1 A/B of 2025-02-25) brought it to the 0.7.4
  /// nightlies (dstack's 0.7.4.dev181 ran it with VLLM_ATTENTION_BACKEND=FLASHMLA), first released in 0.8.0. vLLM
  /// 0.7.1-0.7.3 (2025-02-01 to 02-20, before FlashMLA existed) decode MLA with their Triton MLA kernel on every card.
  bool hopper_flash_mla = true;
  bool operator==(const QuantKernels&) const = default;
};

struct WeightFormat {
  std::string id;                    ///< "fp16", "awq-int4", "gguf-q4_k_m", ...
  std::string description;
  double bits_per_weight = 16;       ///< stored bits per weight of quantized linears, metadata included
  int group_size = 0;                ///< quantization group (0 = per-tensor/channel or n/a)
  bool quantize_embeddings = false;  ///< embeddings stored in the format (else 16-bit)
  double lm_head_bits = 16;          ///< bits per weight of the LM head (GGUF: Q6_K = 6.5625)
  bool weight_only = false;          ///< true: dequantise to activation dtype and compute at its rate
  DType compute_dtype = DType::fp16; ///< tensor-core path of the GEMMs (fp8/int8 for W8A8 formats)
  DType fallback_compute_dtype = DType::fp16; ///< used when the GPU lacks compute_dtype (fp8 on A100 -> W8A16)
  double dequant_bw_efficiency = 1.0;    ///< q_bw: fraction of the fp16 kernel's bandwidth efficiency (decode)
  double dequant_compute_efficiency = 1.0; ///< q_c: fraction of the fp16 kernel's compute efficiency (prefill)
  /// Most FLOP/s its linear layers reach on any GPU (0 = no limit beyond q_c): llama.cpp's GGUF kernels
  /// plateau at about the same rate on every card larger than a 3090.
  double max_compute_flops = 0;
  /// CUDA-core instructions a weight-only kernel spends to dequantise one weight (Marlin: bit tricks + scale),
  /// overlapped with the weight stream; 0 = already inside dequant_bw_efficiency (bitsandbytes, GGUF).
  /// Where the GPU's FP32 rate is low against its bandwidth (A100) this, not the memory path, limits decode.
  double dequant_alu_ops_per_weight = 0;
  /// Decode GEMV kernels that compute on CUDA cores at small M (llama.cpp's mul_mat_vec_q): thread-instructions
  /// the kernel issues per weight (unpacking the weight and its scales) plus per weight and activation column (the
  /// dp4a dot products and their scaling), for M <= gemv_max_rows. The issue rate, not the weight stream, then
  /// limits where it is low against the bandwidth (perf/cost_model, docs/cost-model.md "GGUF decode GEMV").
  double gemv_ops_per_weight = 0;
  double gemv_ops_per_weight_column = 0;
  int gemv_max_rows = 0;  ///< largest M the GEMV kernel runs (0 = none); beyond it the format's GEMM path
  /// Only the routed experts of a MoE model are stored in the format; attention, dense and shared MLPs, the router
  /// and the embeddings stay 16-bit (gpt-oss's MXFP4 checkpoint: modules_to_not_convert). A dense model keeps all.
  bool experts_only = false;
  /// Attention projections stay 16-bit while the MLPs are in the format (ModelOpt checkpoints whose exclude_modules
  /// list self_attn, e.g. NVIDIA's DeepSeek NVFP4). Spelled "<format>+attn16".
  bool attention_16bit = false;
  /// AWQ or GPTQ checkpoints (their group-size variants too): the pre-Marlin kernels a release may run for them.
  QuantMethod method = QuantMethod::other;
  /// FP8 W8A8 only: how weights and activations are scaled (static_tensor for every other format).
  Fp8Scales fp8_scales = Fp8Scales::static_tensor;
};

struct Quantization {
  WeightFormat weights;
  DType kv_dtype = DType::fp16;
  /// The kernels the engine release runs for the format (engine.runtime "vllm==X"; today's vLLM when no release).
  QuantKernels kernels;
  double kv_bytes_per_element() const { return bytes_per_element(kv_dtype); }
};

/// The format with this id; ConfigError at `path` listing valid ids (and close matches) when unknown. Group-size
/// variants of the group-quantized formats are spelled "<id>-g32", "-g64", "-g128" or "-gch" (per channel):
/// awq-int4, gptq-int4, w4a16 and int8 (GPTQ 8-bit); Marlin runs no other group size. "<id>+attn16" keeps the
/// attention projections 16-bit (attention_16bit).
/// q_c of vLLM's Marlin-class weight-only kernels (gptq_marlin, awq_marlin, GPTQ-Int8, FP8/FP4 Marlin): their
/// compute-bound (large-M) rate as a fraction of the fp16 GEMM's, besides the dequantisation instructions priced per
/// 64-row block. From a public microbenchmark of the kernel vLLM runs (HandH1998/QQQ README, "W4A8 GEMM performance":
/// Marlin-g128 at 0.87 / 0.87 / 0.82 of PyTorch's fp16 GEMM at 256 / 512 / 1024 tokens, N = 8192, K = 21760, an
/// A100): the value with which llmsim's Marlin / fp16 GEMM time there is their mean 1.17 (tests/perf/test_quant_kernels
/// .cpp). It was 0.7, the IST-DASLab kernel's 141 TFLOP/s plateau on an A100 (vllm#2497), which vLLM has not run for
/// GPTQ/AWQ checkpoints since gptq_marlin (0.4.2) replaced it.
inline constexpr double kMarlinComputeEfficiency = 0.86;

/// CUDA-core instructions FP8-Marlin (vLLM's weight-only W8A16 path for FP8 checkpoints below compute capability 8.9)
/// spends to dequantise one FP8 E4M3 weight to 16 bits. vLLM's Marlin `dequant<..., kFE4M3fn>` (csrc/quantization/
/// gptq_marlin/dequant.h) turns an int32 of 4 weights into two half2/bfloat162 with `(q & 0x80008000) | ((q &
/// 0x7F007F00) >> s)` twice and a `q <<= 8` between (an AND, a shift and a LOP3 each: 7 integer instructions), then
/// one `__hmul2` per pair: the exponent-bias multiply, or the group scale with the bias folded into it (2). 9 per 4
/// weights = 2.25 [D], counted as the 4-bit path's are. It is not the INT8 path's trick (GPTQ-Int8: 2 `prmt` + 2
/// `__hsub2` per 4 weights, 1.0), which FP8-Marlin was priced at before; the 4-bit kernels' 2.25 also covers their
/// addressing, which this count leaves out, so it is a floor.
inline constexpr double kFp8MarlinDequantOpsPerWeight = 2.25;

/// vLLM's names for a format (its --quantization and --dtype values: awq, awq_marlin, gptq, gptq_marlin,
/// bitsandbytes, fbgemm_fp8, mxfp4, modelopt_fp4, bfloat16, float16, half) are accepted too
/// (canonical_weight_format_id).
WeightFormat weight_format(const std::string& id, const std::string& path = "quant.weights");
/// The llmsim format id a vLLM --quantization / --dtype value stands for ("awq" -> "awq-int4"); any other string is
/// returned unchanged. The one table every face (scenario, --set, compare --quants, memory --quant, Python) reads.
std::string canonical_weight_format_id(const std::string& s);
/// quant.weights' default: the checkpoint's own format (its quantization_config), else 16-bit.
inline constexpr const char* kAutoWeights = "auto";

/// The format a model runs in: `requested` ("auto" = the checkpoint's quantization_config, else fp16), else the
/// format named. A named format that differs from the checkpoint's is allowed (the user may plan a re-quantized
/// copy) and recorded in `notes`. ConfigError at `path` for an unknown format.
WeightFormat weight_format_for_model(const ModelSpec& model, const std::string& requested, const std::string& path,
                                     std::vector<std::string>& notes);

/// Reads NVIDIA ModelOpt's hf_quant_config.json (beside config.json in a checkpoint directory: {"producer":
/// {"name": "modelopt"}, "quantization": {"quant_algo": "FP8" | "NVFP4" | "W4A8_AWQ", ...}}) as vLLM's
/// ModelOptFp8Config / ModelOptNvFp4Config do. ConfigError naming the field for an algorithm llmsim does not model.
CheckpointQuantization modelopt_quantization(const JsonView& hf_quant_config, std::vector<std::string>& notes);

/// Reads a config.json's quantization_config (AWQ, GPTQ, FP8, compressed-tensors, bitsandbytes, MXFP4, ModelOpt) into the llmsim
/// format that stores and runs the weights the same way; assumptions go to `notes`. ConfigError naming the field
/// for a method, bit width, group size or scheme llmsim does not model.
CheckpointQuantization checkpoint_quantization(const JsonView& quantization_config, std::vector<std::string>& notes);

/// Every shipped format id, in catalogue order.
std::vector<std::string> weight_format_ids();
/// Every shipped format.
const std::vector<WeightFormat>& weight_formats();
/// The llmsim KV-cache dtype a vLLM --kv-cache-dtype value stands for ("fp8_e4m3" -> "fp8", "bfloat16" -> "bf16");
/// any other string is returned unchanged. The one table the scenario, --set, --vllm-args and --kv-dtype read.
std::string canonical_kv_dtype_id(const std::string& s);
/// KV-cache dtypes accepted: auto, fp16, bf16, fp8, int8, int4, and vLLM's names for them (canonical_kv_dtype_id).
DType parse_kv_dtype(const std::string& name, const std::string& path = "quant.kv_cache");
/// The format as it runs on `gpu`: unchanged when the GPU has its compute dtype, else switched to the
/// weight-only fallback (fp8 on an A100 -> W8A16). ConfigError at `path` when neither path exists.
WeightFormat format_for_gpu(const WeightFormat& format, const GpuSpec& gpu, const std::string& path = "quant.weights");

}  // namespace llmsim::spec
