// Decode attention as the serving kernels run it. Formulas and the source of every constant: docs/cost-model.md,
// "Decode attention".
#include "llmsim/perf/decode_attention.hpp"

#include "llmsim/perf/quant_latency.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace llmsim::perf {

namespace {

// FlashAttention-2's split-KV heuristic splits only while the grid fills less than 0.8 of the SMs, into at most
// 128 splits of at least one kBlockN (128 tokens for head_dim 128) each (flash_api.cpp num_splits_heuristic,
// flash_fwd_launch_template.h); FlashInfer's planner and FA3 likewise split to fill the SMs once.
constexpr double kSplitFillFraction = 0.8;
constexpr double kSplitMaxSplits = 128;
constexpr double kSplitMinTokens = 128;
// vLLM's PagedAttention v2 partitions the context into 512-token pieces and is used instead of v1 when the
// context exceeds 8192 tokens or when there are few sequences × heads (<= 512) and more than one partition
// (csrc/attention/paged_attention_v1/v2, vllm/attention/ops/paged_attn.py).
constexpr double kPagedPartitionTokens = 512;
constexpr double kPagedV1MaxContext = 8192;
constexpr double kPagedV1MinItems = 512;
// CUDA-core instructions PagedAttention spends per (cached token × query head) at head_dim d: 13.6·d [D] from
// vllm-project/vllm#2744 (A100-40GB PCIe, 64 query / 8 KV heads, context 1024, bf16): with the streaming and
// per-wave terms of this model it reproduces v2's 29.6 us at batch 1 and 71.4 us at batch 4 within 8%.
constexpr double kPagedOpsPerTokenHeadPerDim = 13.6;
// Resident CTAs per SM: FlashAttention's and FlashInfer's decode CTAs occupy an SM each (Vidur's timings jump at
// every multiple of the SM count: 108 on the A100, 132 on the H100); PagedAttention's 128-thread CTAs with little
// shared memory fit several [D]; 4 reproduces vllm#2744's batch-4 v2 time (71.4 us).
constexpr double kPagedCtasPerSm = 4;
// Query heads one packed decode CTA holds (see the flash_attn case below).
constexpr double kMaxPackedHeads = 64;
// FlashMLA's per-CTA streaming rate: its README reports "up to 3000 GB/s in memory-bound configuration" on an H800
// SXM5 (132 SMs, one CTA per SM from its tile scheduler) -> 3000 GB/s / 132 = 22.7 GB/s per CTA [D], against the
// 13 GB/s of FlashAttention's paged decode CTAs on Hopper (docs/cost-model.md, "Decode attention").
constexpr double kFlashMlaCtaBandwidth = 3000e9 / 132;

// LMDeploy TurboMind v0.1 decoder_multihead_attention (src/turbomind/kernels/decoder_multihead_attention, dispatch in
// decoder_multihead_attention.cu, split rule in LlamaDecoderSelfAttentionLayer.cc): grid (heads / HeadPerCta,
// batch, split_k) of 4-warp CTAs, HeadPerCta = 4, 2 or 1 query heads sharing their KV head's tiles (the largest that
// divides the GQA group); split_k = min(ceil(kMaxSplitK = 16 / batch), ceil(context / kSliceLen = 1024)), with a
// reduce kernel when > 1. sm80+: 5 stages of 32-key × 128-dim fp16 tiles (40 KiB) + a kSliceLen fp32 score row per
// head + Q/O/reductions in static shared memory.
constexpr double kTmMaxSplitK = 16;
constexpr double kTmSliceLen = 1024;
constexpr double kTmTileBytes = 5.0 * 32 * 128 * 2;
constexpr double kTmPerHeadBytes = 1024 * 4.0 + 128 * (2.0 + 4.0) + 64;
constexpr double kTmReservedPerCta = 1024;  // the runtime's 1 KiB per block (sm80+)
// CUDA-core instructions per (cached token × query head): the q·k and p·v FMAs in fp32 (2·d), the fp16 → fp32
// conversion of the token's K and V row (2·d elements in f16x2 pairs: d instructions, shared by the CTA's heads), and
// the 8-lane shuffle reduction of each score plus the online softmax (~50) [D, from the kernel's thread map].
constexpr double kTmReductionOps = 50;


bool is_8bit_float(spec::DType d) { return d == spec::DType::fp8; }

}  // namespace

std::string to_string(DecodeAttentionBackend b) {
  switch (b) {
    case DecodeAttentionBackend::flash_attn: return "flash-attn";
    case DecodeAttentionBackend::flash_attn3: return "flash-attn3";
    case DecodeAttentionBackend::flash_attn3_1wg: return "flash-attn3-1wg";
    case DecodeAttentionBackend::flash_attn2_splitkv: return "flash-attn2-splitkv";
    case DecodeAttentionBackend::flash_attn_fp8: return "flash-attn3-fp8";
    case DecodeAttentionBackend::flashinfer: return "flashinfer";
    case DecodeAttentionBackend::paged_unpacked: return "paged-attention";
    case DecodeAttentionBackend::turbomind: return "turbomind";
    case DecodeAttentionBackend::flash_mla: return "flash-mla";
    case DecodeAttentionBackend::triton_mla: return "triton-mla";
  }
  return "flash-attn";
}

DecodeAttentionBackend choose_decode_backend(const spec::GpuSpec& gpu, spec::DType kv_dtype, Runtime runtime,
                                             bool mla, bool fa3_one_mma_wg, bool flash_mla) {
  // MLA models: vLLM defaults to FlashMLA where it is supported (Hopper; it forces block size 64), else its Triton
  // MLA kernel (vllm/platforms/cuda.py, "we default to FlashMLA backend"); releases before FlashMLA existed (0.7.1-
  // 0.7.3, spec/runtime_version.cpp) run Triton MLA on Hopper too. Other runtimes' MLA kernels are priced the same way.
  if (mla) return hopper_class(gpu_family(gpu)) && flash_mla ? DecodeAttentionBackend::flash_mla
                                                             : DecodeAttentionBackend::triton_mla;
  switch (runtime) {
    case Runtime::vllm_v0_paged:
      // vLLM before 0.4.3 decoded with its own PagedAttention v1/v2 kernels whatever the KV dtype (flash-attn
      // decoding re-landed in vllm#4907, 2024-05-19; spec/runtime_version.cpp).
      return DecodeAttentionBackend::paged_unpacked;
    case Runtime::sglang:
      // SGLang's default attention backend is FlashInfer (GQA packed; converts a quantized KV cache in the kernel).
      return DecodeAttentionBackend::flashinfer;
    case Runtime::lmdeploy_turbomind: return DecodeAttentionBackend::turbomind;
    default: break;
  }
  if (spec::bytes_per_element(kv_dtype) >= 2) {
    // vLLM 0.4.3-0.5.x decoded with vllm-flash-attn 2.5's flash_attn_with_kvcache (FA2's split-KV kernel) on every
    // GPU; later releases moved to FA3 on Hopper (vllm#12093: persistent, one CTA per SM; first released in 0.7.0)
    // and keep FA2 elsewhere. 0.6.x V0 still decoded with FA2's split-KV kernel on Hopper, but is priced with FA3's
    // parameters here: see cost_model_setup.cpp (vllm#8092's 0.6.x H100 runs read 11-13 % fast with FA2's price).
    if (runtime == Runtime::vllm_v0_sync) return DecodeAttentionBackend::flash_attn2_splitkv;
    const bool vllm_fa = runtime == Runtime::vllm_v1 || runtime == Runtime::vllm_v0;
    // Later releases kept that kernel below Hopper: the fork's FA2 API forces the split-KV kernel whenever the cache
    // is paged (vllm-project/flash-attention csrc/flash_attn/flash_api.cpp: mha_varlen_fwd, which V1 and V0's prefill
    // path call, ends in run_mha_fwd(params, stream, /*force_split_kernel=*/paged_KV) after packing a KV head's query
    // heads (seqlenq_ngroups_swapped) and set_params_splitkv; mha_fwd_kvcache, V0's decode call, runs the same kernel).
    // Checked against vLLM 0.14.0's attention layer timed on an A100 SXM (aiconfigurator; docs/cost-model.md).
    const GpuFamily fam = gpu_family(gpu);
    if (vllm_fa && (fam == GpuFamily::ampere_hbm || fam == GpuFamily::gddr))
      return DecodeAttentionBackend::flash_attn2_splitkv;
    // From vllm#16864 (0.8.5) the fork's FA3 decodes a 16-bit cache with one MMA warp group (fa3_1wg).
    if (!vllm_fa || fam != GpuFamily::hopper_hbm) return DecodeAttentionBackend::flash_attn;
    return fa3_one_mma_wg ? DecodeAttentionBackend::flash_attn3_1wg : DecodeAttentionBackend::flash_attn3;
  }
  // Quantized KV: FlashAttention-2 has no low-precision KV path. vLLM V0 then falls back to xFormers + its own
  // PagedAttention kernels ("Cannot use FlashAttention-2 backend for FP8 KV cache"); V1 runs FA3 in FP8 on
  // Hopper and FlashInfer (which converts in the kernel) elsewhere (vllm/platforms/cuda.py).
  if (runtime == Runtime::vllm_v0 || runtime == Runtime::vllm_v0_sync) return DecodeAttentionBackend::paged_unpacked;
  // Blackwell HBM: FlashInfer's trtllm-gen kernels read an FP8 cache into FP8 tensor cores as FA3 does (vllm#23647).
  if (is_8bit_float(kv_dtype) && hopper_class(gpu_family(gpu))) return DecodeAttentionBackend::flash_attn_fp8;
  return DecodeAttentionBackend::flashinfer;
}

double kv_convert_ops_per_element(const spec::GpuSpec& gpu, spec::DType kv_dtype) {
  switch (kv_dtype) {
    case spec::DType::fp16:
    case spec::DType::bf16:
    case spec::DType::fp32: return 0;
    // sm >= 89: cvt.rn.f16x2.e4m3x2 converts a pair (0.5/element) and one hmul2 applies the scale (0.5/element).
    // Below: cuda_fp8.hpp's __nv_cvt_fp8_to_halfraw for __CUDA_ARCH__ < 890 extracts sign, exponent and
    // mantissa, re-biases, tests NaN and zero/denormal and reassembles — about 12 integer operations.
    case spec::DType::fp8: return gpu.fp8_flops > 0 ? 1.0 : 12.0;
    case spec::DType::int8: return 2.0;  // I2F + scale
    case spec::DType::int4:
    case spec::DType::fp4: return 3.0;  // unpack + convert + scale (no FP4 KV cache is offered; for completeness)
  }
  return 0;
}

double fa2_splitkv_ctas_per_sm(const spec::GpuSpec& gpu, double head_dim) {
  // FA2 instantiates head dims in steps of 32 (32, 64, 96, 128, 160, 192, 224, 256).
  const double d = std::max(32.0, std::ceil(head_dim / 32.0) * 32.0);
  const double block_n = d <= 64 ? 256.0 : (d <= 128 ? 128.0 : 64.0);
  KernelFootprint k;
  k.name = "flash_fwd_splitkv_kernel";
  k.threads = fa2_splitkv::kThreads;
  k.regs = fa2_splitkv::kRegsPerThread;
  k.smem_bytes = (fa2_splitkv::kBlockM * d + 2.0 * block_n * d) * 2.0;  // fp16 Q tile + K and V tiles
  return resident_ctas(k, sm_residency(gpu));
}

double turbomind_ctas_per_sm(const spec::GpuSpec& gpu, double heads_per_cta) {
  double smem_per_sm = 0;
  switch (gpu_family(gpu)) {
    case GpuFamily::ampere_hbm: smem_per_sm = 164.0 * 1024; break;
    case GpuFamily::hopper_hbm:
    case GpuFamily::blackwell_hbm: smem_per_sm = 228.0 * 1024; break;  // SM100: 228 KB too (Blackwell Tuning Guide)
    case GpuFamily::gddr: smem_per_sm = 100.0 * 1024; break;
  }
  const double per_cta = kTmTileBytes + heads_per_cta * kTmPerHeadBytes + kTmReservedPerCta;
  return std::clamp(std::floor(smem_per_sm / per_cta), 1.0, 16.0);  // 16 = 2048 threads / 128
}

DecodeAttentionModel::DecodeAttentionModel(const spec::GpuSpec& gpu, const HardwareProfile& profile,
                                           const AttentionShape& shape, spec::DType kv_dtype,
                                           DecodeAttentionBackend backend, double pnorm_p)
    : backend_(backend), shape_(shape), p_(pnorm_p) {
  // Resolve the defaults once, so per_layer reads plain fields.
  shape_.v_head_dim = shape.v_dim();
  shape_.kv_elements = shape.kv_elements_per_head();
  sms_ = std::max(1, gpu.sm_count);
  slots_ = backend == DecodeAttentionBackend::paged_unpacked ? kPagedCtasPerSm * sms_ : sms_;
  if (backend == DecodeAttentionBackend::flash_attn2_splitkv) slots_ = fa2_splitkv_ctas_per_sm(gpu, shape.head_dim) * sms_;
  bw_cap_ = gpu.memory_bandwidth * profile.attn_decode_bw_efficiency;
  cta_bw_ = profile.attn_decode_cta_bandwidth;
  cta_s_ = profile.attn_decode_cta_s;
  fixed_s_ = profile.attn_decode_fixed_s;
  alu_rate_ = gpu.fp32_flops / 2.0;  // one FMA (2 FLOPs) per lane per instruction
  kv_bytes_per_token_ = shape_.kv_elements_per_head() * shape_.kv_bytes_per_element;
  const double group = shape_.heads / std::max(1.0, shape_.kv_heads);
  // FA3's one-warp-group decode runs only where the fork's heuristic picks it (fa3_1wg): head_dim 64 or 128 (FA3
  // rounds d to its instances 64, 96, 128, 192, 256; the one-warp-group tile exists for 64 and 128) and a KV head's
  // query rows within 64. Other shapes run the two-warp-group kernel.
  if (backend_ == DecodeAttentionBackend::flash_attn3_1wg) {
    const double d = shape_.head_dim;
    const bool one_wg_dim = (d <= 64 || (d > 96 && d <= 128)) && shape_.v_dim() == d;
    if (!one_wg_dim || group > fa3_1wg::kMaxPackedRows) backend_ = DecodeAttentionBackend::flash_attn3;
  }
  switch (backend_) {
    case DecodeAttentionBackend::flash_attn:
    case DecodeAttentionBackend::flash_attn3:
    case DecodeAttentionBackend::triton_mla:
      // The packed query heads of a KV head share a CTA up to 64 (FlashAttention's kBlockM rows; FA3's PackGQA tile
      // in vLLM's fork is 64 rows at decode, vllm-project/flash-attention#63).
      ctas_per_seq_ = shape_.kv_heads * std::max(1.0, std::ceil(group / kMaxPackedHeads));
      persistent_ = backend_ == DecodeAttentionBackend::flash_attn3;
      break;
    case DecodeAttentionBackend::flash_attn3_1wg:
      // One 64-row tile per KV head (group <= 64), the same persistent grid, its own per-CTA rate and per-tile work.
      ctas_per_seq_ = shape_.kv_heads;
      persistent_ = true;
      cta_bw_ = profile.attn_decode_cta_bandwidth * fa3_1wg::kCtaBandwidthRatio;
      tile_s_ = fa3_1wg::kTileS;
      break;
    case DecodeAttentionBackend::flash_attn2_splitkv:
      // FA2 packs a KV head's query heads into the rows of one M block at decode (mha_fwd_kvcache's
      // seqlenq_ngroups_swapped) and splits only while the grid fills < 0.8 of 2 CTAs per SM.
      ctas_per_seq_ = shape_.kv_heads * std::max(1.0, std::ceil(group / fa2_splitkv::kBlockM));
      split_slots_ = fa2_splitkv::kSplitCtasPerSm * sms_;
      break;
    case DecodeAttentionBackend::flash_mla:
      // FlashMLA tiles 64 query heads per CTA (128 heads on one GPU: two CTAs per sequence) and streams faster per CTA.
      ctas_per_seq_ = shape_.kv_heads * std::max(1.0, std::ceil(group / kMaxPackedHeads));
      cta_bw_ = kFlashMlaCtaBandwidth;
      convert_ops_ = kv_convert_ops_per_element(gpu, kv_dtype);
      break;
    case DecodeAttentionBackend::flash_attn_fp8:
      ctas_per_seq_ = shape_.kv_heads;  // fp8 K/V feed FP8 tensor cores directly: nothing to convert
      // FA3's FP8 path on Hopper runs the same persistent launch as its bf16 one (Blackwell's FP8 decode is
      // FlashInfer's trtllm-gen kernel: kept as it was).
      persistent_ = gpu_family(gpu) == GpuFamily::hopper_hbm;
      break;
    case DecodeAttentionBackend::flashinfer:
      ctas_per_seq_ = shape_.kv_heads;
      convert_ops_ = kv_convert_ops_per_element(gpu, kv_dtype);
      break;
    case DecodeAttentionBackend::paged_unpacked:
      ctas_per_seq_ = shape_.heads;  // one CTA per query head: each of the `group` heads reads and converts K/V
      readers_per_element_ = group;
      convert_ops_ = kv_convert_ops_per_element(gpu, kv_dtype);
      cuda_core_ops_per_token_head_ = kPagedOpsPerTokenHeadPerDim * shape_.head_dim;
      break;
    case DecodeAttentionBackend::turbomind: {
      const double hpc = std::fmod(group, 4.0) == 0 ? 4.0 : (std::fmod(group, 2.0) == 0 ? 2.0 : 1.0);
      ctas_per_seq_ = shape_.heads / hpc;
      readers_per_element_ = group / hpc;  // CTAs that read (and convert) each K/V element
      slots_ = turbomind_ctas_per_sm(gpu, hpc) * sms_;
      convert_ops_ = kv_convert_ops_per_element(gpu, kv_dtype);
      cuda_core_ops_per_token_head_ = 2.0 * shape_.head_dim + shape_.head_dim / hpc + kTmReductionOps;
      break;
    }
  }
  if (backend_ != DecodeAttentionBackend::flash_attn2_splitkv) split_slots_ = slots_;
  alu_work_ = convert_ops_ != 0 || cuda_core_ops_per_token_head_ != 0;
  fill_seq_table();
}

double DecodeAttentionModel::splits_for(double seqs, double mean_ctx) const {
  // KV splits: fill the GPU once when the (sequence × head) grid is small.
  const double items = seqs * ctas_per_seq_;
  double splits = 1;
  if (backend_ == DecodeAttentionBackend::paged_unpacked) {
    const double partitions = std::ceil(mean_ctx / kPagedPartitionTokens);
    const bool v2 = mean_ctx > kPagedV1MaxContext || (partitions > 1 && items <= kPagedV1MinItems);
    splits = v2 ? partitions : 1;
  } else if (backend_ == DecodeAttentionBackend::turbomind) {
    splits = std::min(std::max(1.0, std::ceil(kTmMaxSplitK / seqs)), std::ceil(mean_ctx / kTmSliceLen));
  } else if (items < kSplitFillFraction * split_slots_) {
    const double by_tokens = std::max(1.0, std::ceil(mean_ctx / kSplitMinTokens));
    splits = std::clamp(std::floor(split_slots_ / items), 1.0, std::min(kSplitMaxSplits, by_tokens));
  }
  return splits;
}

bool DecodeAttentionModel::split_settled(double seqs, double context) const {
  const double splits = split_for(seqs, context);
  const double items = seqs * ctas_per_seq_;
  if (backend_ == DecodeAttentionBackend::paged_unpacked) return false;  // V2's partitions follow the context
  if (backend_ == DecodeAttentionBackend::turbomind) return splits == std::max(1.0, std::ceil(kTmMaxSplitK / seqs));
  if (!(items < kSplitFillFraction * split_slots_)) return true;  // 1 whatever the context
  return splits == std::min(std::max(std::floor(split_slots_ / items), 1.0), kSplitMaxSplits);
}

DecodeAttentionModel::SeqTerms DecodeAttentionModel::seq_terms(double seqs, double splits) const {
  SeqTerms t;
  const double items = seqs * ctas_per_seq_;
  t.splits = splits;
  t.ctas = items * splits;
  // A persistent grid runs one "wave" of SMs CTAs whatever the tile count (hopper/flash_fwd_kernel_sm90.h:
  // MinBlocksPerMultiprocessor = 1, grid = the SM count from the tile scheduler).
  t.waves = persistent_ ? 1.0 : std::ceil(t.ctas / slots_);
  // The query and the output of every query head in fp16, and the fp32 partial outputs of a split.
  t.qo_bytes = seqs * shape_.heads * (shape_.head_dim + shape_.v_head_dim) * 2.0;
  const double heads_per_cta = shape_.heads / std::max(1.0, ctas_per_seq_);
  t.split_bytes = splits > 1 ? t.ctas * heads_per_cta * shape_.v_head_dim * 4.0 * 2.0 : 0.0;
  // Streaming: each running CTA keeps a bounded number of bytes in flight (Little's law), so until enough CTAs
  // run the kernel cannot reach the DRAM limit. Only the fixed per-wave cost is quantized by waves: CTAs of a
  // real batch differ in length and the block scheduler overlaps waves (an equal-work wave model of the stream
  // doubles the error against Vidur's kernel timings, docs/cost-model.md).
  const double running = std::min(t.ctas, slots_);
  t.stream_bw = std::min(bw_cap_, running * cta_bw_);
  // CUDA-core work: only the SMs that hold a CTA contribute.
  t.alu_rate = alu_rate_ * std::min(1.0, running / sms_);
  t.fixed_s = fixed_s_ * (splits > 1 ? 2.0 : 1.0) + t.waves * cta_s_;
  // The busiest persistent CTA's tiles, each with its serial work (only flash_attn3_1wg prices it).
  t.tiles_s = tile_s_ > 0 ? std::ceil(t.ctas / sms_) * tile_s_ : 0.0;
  return t;
}

void DecodeAttentionModel::fill_seq_table() {
  // Batches of n sequences whose KV split does not depend on the context (the packed kernels once the grid fills
  // the GPU: splits_for gives 1 whatever the context) read their terms from the table; the same function fills it.
  seq_table_.clear();
  if (backend_ == DecodeAttentionBackend::paged_unpacked || backend_ == DecodeAttentionBackend::turbomind) return;
  for (double n = 1; n <= kSeqTableMax; ++n) {
    if (n * ctas_per_seq_ < kSplitFillFraction * split_slots_) continue;  // splits by context below this size
    if (seq_table_.empty()) seq_table_first_ = n;
    seq_table_.push_back(seq_terms(n, 1.0));
  }
}

DecodeAttentionCost DecodeAttentionModel::per_layer(double seqs, double context) const {
  DecodeAttentionCost c;
  if (!(seqs > 0)) return c;
  const double tokens = context + seqs;  // every sequence also attends to its new token
  // A whole number of sequences in the table: its precomputed terms.
  if (const SeqTerms* t = context_free_terms(seqs)) return with_terms(seqs, tokens, *t);
  return with_terms(seqs, tokens, seq_terms(seqs, splits_for(seqs, tokens / seqs)));
}

}  // namespace llmsim::perf
