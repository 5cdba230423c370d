#pragma once
// Decode attention over a paged KV cache, the way serving kernels run it (docs/cost-model.md, "Decode
// attention"): which backend the engine picks for this GPU and KV dtype, how many thread blocks (CTAs) it
// launches (KV heads × sequences × KV splits), how fast one running CTA can stream K/V, per-wave fixed
// costs, and the CUDA-core work of the kernels that convert low-precision KV or compute on CUDA cores.
// Evaluated from the batch sums (sequences, Σ context) in O(1).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/dtype.hpp"
#include "llmsim/spec/gpu_spec.hpp"

namespace llmsim::perf {

enum class DecodeAttentionBackend {
  flash_attn,       ///< FlashAttention-2-class paged decode with one CTA per SM (the non-persistent kernel Vidur timed on
                    ///< the H100; other runtimes' FA2-class kernels): query heads of a KV head packed, a fixed cost per
                    ///< wave of CTAs
  flash_attn3,      ///< FlashAttention-3 paged decode on Hopper (vLLM 0.7-0.8.4, V0 and V1): query heads of a KV head
                    ///< packed; persistent grid of one CTA per SM looping over the tiles, so the per-wave cost is paid
                    ///< once; two MMA warp groups (a 128-row query tile)
  flash_attn3_1wg,  ///< the same persistent FA3 decode as vLLM's fork runs it from 0.8.5 (vllm#16864): one MMA warp
                    ///< group (a 64-row query tile) for a 16-bit cache at head_dim 64/128, streaming at the HBM cap with
                    ///< one CTA per SM, a serial cost per tile overlapped with the next tile's stream (fa3_1wg below)
  flash_attn2_splitkv,  ///< FlashAttention-2's flash_fwd_splitkv_kernel as vLLM 0.4.3-0.5.x ran it on every GPU (and
                        ///< every later V0/V1 release below Hopper: the fork forces it for a paged cache): a
                        ///< non-persistent grid (KV heads x sequences x splits) with as many CTAs per SM as fit
  flash_attn_fp8,   ///< FlashAttention-3 with an fp8 KV cache: fp8 tensor-core math, no conversion (Hopper)
  flashinfer,       ///< FlashInfer batch decode, GQA packed, KV converted to fp16 in the kernel (V1, fp8 KV)
  paged_unpacked,   ///< vLLM's PagedAttention v1/v2: one CTA per query head, CUDA-core dot products (V0, fp8 KV)
  turbomind,        ///< LMDeploy TurboMind v0.1 decoder attention: up to 4 query heads of a KV head per CTA, CUDA cores
  flash_mla,        ///< FlashMLA (Hopper): MQA over the MLA latent, 64 query heads per CTA
  triton_mla,       ///< vLLM's Triton MLA decode (other GPUs; Hopper before FlashMLA): the packed kernel's parameters
};
std::string to_string(DecodeAttentionBackend b);

/// The decode-attention backend a runtime selects for this GPU and KV dtype (vLLM: vllm/platforms/cuda.py and the
/// attention selectors; the other runtimes: docs/cost-model.md "Runtimes"). `mla`: the model's attention is
/// multi-head latent attention (DeepSeek), which vLLM runs on its MLA backends. `fa3_one_mma_wg`: the release's FA3
/// build decodes with one MMA warp group (spec::QuantKernels::hopper_fa3_one_mma_wg; today's vLLM does): FA3 on a
/// 16-bit cache is then `flash_attn3_1wg` (DecodeAttentionModel falls back to `flash_attn3` for a shape the kernel
/// does not run with one warp group). `flash_mla`: the release has FlashMLA (spec::QuantKernels::hopper_flash_mla;
/// vLLM 0.7.1-0.7.3 do not): an MLA model then decodes with it on Hopper, else with Triton MLA.
DecodeAttentionBackend choose_decode_backend(const spec::GpuSpec& gpu, spec::DType kv_dtype, Runtime runtime,
                                             bool mla = false, bool fa3_one_mma_wg = true, bool flash_mla = true);

/// CUDA-core instructions to turn one stored KV element into fp16 for the attention math: 0 for fp16/bf16;
/// for 8-bit KV one `cvt.f16x2.e4m3x2` per pair plus the scale on GPUs with FP8 hardware (sm ≥ 89), else
/// cuda_fp8.hpp's bit-manipulation sequence (~12 integer ops). See docs/cost-model.md.
double kv_convert_ops_per_element(const spec::GpuSpec& gpu, spec::DType kv_dtype);

/// Per-GPU attention shape of one layer.
struct AttentionShape {
  double heads = 0;              ///< query heads on this GPU
  double kv_heads = 0;           ///< KV heads on this GPU (>= 1)
  double head_dim = 0;           ///< query/key head dimension
  double kv_bytes_per_element = 2;
  double v_head_dim = 0;         ///< value head dimension (0 = head_dim)
  double kv_elements = 0;        ///< K+V elements one token stores per KV head (0 = head_dim + v_head_dim; MLA: the
                                 ///< latent, whose first v_head_dim elements are also V)
  double v_dim() const noexcept { return v_head_dim > 0 ? v_head_dim : head_dim; }
  double kv_elements_per_head() const noexcept { return kv_elements > 0 ? kv_elements : head_dim + v_dim(); }
};

/// One layer's decode attention for a batch.
struct DecodeAttentionCost {
  double time_s = 0;
  double bytes = 0;   ///< K/V read + Q read + O write (DRAM)
  double flops = 0;   ///< 4 · context · head_dim · heads
  double ctas = 0;    ///< thread blocks launched
  double splits = 1;  ///< KV splits per (sequence, head) work item
  double waves = 0;   ///< ceil(ctas / SMs)
  double stream_s = 0;  ///< the streaming/CUDA-core part alone (time_s less the fixed and per-wave costs)
  bool alu_bound = false;  ///< CUDA-core work (conversion, CUDA-core math) exceeds the streaming time
};

/// The kernel model. Constructed once per cost model; time() allocates nothing.
class DecodeAttentionModel {
 public:
  DecodeAttentionModel() = default;
  /// `pnorm_p`: the smooth-roofline exponent used to combine streaming and CUDA-core time.
  DecodeAttentionModel(const spec::GpuSpec& gpu, const HardwareProfile& profile, const AttentionShape& shape,
                       spec::DType kv_dtype, DecodeAttentionBackend backend, double pnorm_p);

  /// One layer for `seqs` sequences holding `context` cached tokens in total (each also attends to its new
  /// token). 0 for seqs <= 0.
  DecodeAttentionCost per_layer(double seqs, double context) const;

  DecodeAttentionBackend backend() const noexcept { return backend_; }

  /// The terms that depend on the sequence count and the KV split alone (not on the context).
  struct SeqTerms {
    double splits = 1, ctas = 0, waves = 0, qo_bytes = 0, split_bytes = 0;
    double stream_bw = 0;  ///< bytes/s the running CTAs can stream
    double alu_rate = 0;   ///< CUDA-core instructions/s of the SMs that hold a CTA
    double fixed_s = 0;    ///< fixed and per-wave seconds
    double tiles_s = 0;    ///< serial per-tile work of the busiest CTA, overlapped with the stream (flash_attn3_1wg)
  };
  /// A whole number of sequences whose terms do not depend on the context (the table per_layer reads), or nullptr:
  /// then time_s(terms, seqs, context) is per_layer(seqs, context).time_s for any context, inline.
  const SeqTerms* context_free_terms(double seqs) const noexcept {
    if (!(seqs > 0) || seqs > kSeqTableMax) return nullptr;
    const auto n = static_cast<std::int64_t>(seqs);
    const auto k = static_cast<std::size_t>(n - static_cast<std::int64_t>(seq_table_first_));
    if (static_cast<double>(n) == seqs && n >= static_cast<std::int64_t>(seq_table_first_) && k < seq_table_.size())
      return &seq_table_[k];
    return nullptr;
  }
  double time_s(const SeqTerms& t, double seqs, double context) const { return with_terms(seqs, context + seqs, t).time_s; }
  /// The KV split per_layer(seqs, context) runs with, and its terms (for a caller that caches them by split).
  double split_for(double seqs, double context) const { return splits_for(seqs, (context + seqs) / seqs); }
  SeqTerms terms_for_split(double seqs, double splits) const { return seq_terms(seqs, splits); }
  /// Whether split_for(seqs, c) is split_for(seqs, context) for every c >= context: each backend's split grows with
  /// the context up to a cap that does not depend on it, and stays there once it reaches it.
  bool split_settled(double seqs, double context) const;

 private:
  double splits_for(double seqs, double mean_ctx) const;
  SeqTerms seq_terms(double seqs, double splits) const;
  /// One layer from the context-free terms (inline: the engine's decode steps need the time alone, and the compiler
  /// drops the rest).
  DecodeAttentionCost with_terms(double seqs, double tokens, const SeqTerms& t) const {
    DecodeAttentionCost c;
    c.ctas = t.ctas;
    c.splits = t.splits;
    c.waves = t.waves;
    // Bytes: K and V of every cached token once per KV head (re-reads of the query heads of an unpacked kernel hit
    // L2), the query and output, the split's partials (+ writing the new token's K and V, which vLLM does in its own
    // cache kernel just before).
    const double kv_bytes = (tokens + seqs) * shape_.kv_heads * kv_bytes_per_token_;
    c.bytes = kv_bytes + t.qo_bytes + t.split_bytes;
    c.flops = 2.0 * tokens * shape_.heads * (shape_.head_dim + shape_.v_head_dim);
    double t_stream = c.bytes / t.stream_bw;
    // A persistent CTA's serial work per tile (Q load, softmax state, output write) hides under the stream of the next
    // tile's K/V until the tiles get short (flash_attn3_1wg; 0 for the other backends).
    if (t.tiles_s > 0) t_stream = pnorm(t_stream, t.tiles_s, p_);
    // CUDA-core work: converting low-precision K/V (per reading CTA) and, for the unpacked kernel, the dot
    // products themselves. A packed kernel on an fp16/bf16 cache has none (both rates 0, so ops = 0 exactly): the
    // engine plans every decode step through here, and the skipped products and division change no bit.
    double t_alu = 0.0;
    if (alu_work_) {
      const double elements = tokens * shape_.kv_heads * shape_.kv_elements * readers_per_element_;
      const double ops = elements * convert_ops_ + tokens * shape_.heads * cuda_core_ops_per_token_head_;
      t_alu = ops > 0 ? ops / t.alu_rate : 0.0;
    }
    c.alu_bound = t_alu > t_stream;
    c.stream_s = pnorm(t_stream, t_alu, p_);
    c.time_s = t.fixed_s + c.stream_s;
    return c;
  }
  static double pnorm(double a, double b, double p) {
    if (a <= 0) return b;
    if (b <= 0) return a;
    if (p == 2.0) return std::sqrt(a * a + b * b);
    if (p >= 32.0) return std::max(a, b);
    const double m = std::max(a, b);
    return m * std::pow(std::pow(a / m, p) + std::pow(b / m, p), 1.0 / p);
  }
  void fill_seq_table();
  /// seq_terms(n, 1) for n = seq_table_first_, ... up to kSeqTableMax sequences, where the split is 1 whatever the
  /// context: the engine's per-step call then skips the split rule, the waves' ceil and three divisions.
  static constexpr double kSeqTableMax = 1024;
  std::vector<SeqTerms> seq_table_;
  double seq_table_first_ = 0;

  DecodeAttentionBackend backend_ = DecodeAttentionBackend::flash_attn;
  AttentionShape shape_;
  double split_slots_ = 1;  ///< the CTA count the split-KV rule tries to fill (FA2: 2 x SMs, hard-coded)
  double sms_ = 1, slots_ = 1, bw_cap_ = 0, cta_bw_ = 0, cta_s_ = 0, fixed_s_ = 0, p_ = 2;
  double tile_s_ = 0;             ///< serial seconds per tile of a persistent CTA (flash_attn3_1wg; else 0)
  double convert_ops_ = 0;        ///< per K/V element, per CTA that reads it
  double alu_rate_ = 0;           ///< CUDA-core instructions/s of the whole GPU (FP32 FMA rate)
  double kv_bytes_per_token_ = 0; ///< K+V of one token for one KV head
  double ctas_per_seq_ = 0;       ///< work items per sequence before splitting (KV heads, or query heads)
  double readers_per_element_ = 1;  ///< CTAs that read (and convert) each K/V element: 1 packed, GQA ratio unpacked
  double cuda_core_ops_per_token_head_ = 0;  ///< CUDA-core kernels: instructions per (token × query head)
  bool alu_work_ = true;  ///< convert_ops_ or cuda_core_ops_per_token_head_ non-zero (with_terms)
  /// A persistent grid (FA3 on Hopper, in bf16/fp16 and in FP8): SMs CTAs loop over the (KV head x sequence x split)
  /// tiles, the producer warp group loading the next tile while the consumers finish this one, so the prologue and
  /// epilogue a wave of a non-persistent grid pays each time are paid once (`waves` = 1).
  bool persistent_ = false;
};

namespace fa2_splitkv {
// FlashAttention-2's split-KV decode kernel (Dao-AILab/flash-attention csrc/flash_attn, as vendored by
// vllm-flash-attn 2.5.x for vLLM 0.4.3-0.5.x): grid (m_blocks, b, h_k) [x splits] of 4-warp CTAs
// (flash_fwd_launch_template.h run_flash_splitkv_fwd), kBlockM = 64, shared memory Q + K + V tiles in fp16
// (kernel_traits.h kSmemSize). Its split heuristic counts 2 CTAs per SM "to hard-code the fact that we're using 128
// threads per block" (flash_api.cpp set_params_splitkv: num_splits_heuristic(..., num_sm * 2, ...)).
inline constexpr double kThreads = 128;
inline constexpr double kBlockM = 64;
inline constexpr double kSplitCtasPerSm = 2;
// Registers per thread: not read off a ptxas run here; FA2's forward kernels are register-heavy (its launch bounds
// allow up to 255), and at 255 a 128-thread CTA takes half of the 64 K register file: 2 per SM, which is what the
// split heuristic above assumes. Shared memory, not registers, then decides on the 100 KiB parts.
inline constexpr double kRegsPerThread = 255;
// FlashAttention-2's forward on Hopper, the prefill kernel of vLLM before 0.7 there (flash_attn_varlen_func; FA3 from
// vllm#12093): 327.9 TF of the H100 SXM's 989 (hdim 128, s = 8192) = 33 % (../shared/reference/gpus-and-efficiency.md
// B4, S16; the FA3 paper's "FA2 reached only 35 % on H100"). The Hopper prior of attn_prefill_efficiency (0.5) lies
// between FA2 and FA3, so a release on FA2 is capped at FA2's share.
inline constexpr double kHopperPrefillEfficiency = 327.9 / 989.0;
}  // namespace fa2_splitkv

namespace fa3_1wg {
// FlashAttention-3's decode as vLLM's fork runs it from vllm#16864 (merged 2025-04-24, vllm-project/flash-attention#63
// "Use single mma warp group for decode batches"; taken as first released in 0.8.5): when a KV head's packed query
// rows fit 64 (seqlen_q x group <= 64), a 16-bit cache at head_dim 64 or 128 runs a 64-row query tile on one MMA warp
// group instead of 128 rows on two (hopper/tile_size.h tile_size_fwd_sm90(..., use_one_mma_wg), Use_one_mma_wg in
// hopper/flash_fwd_launch_template.h), still on the persistent grid of one CTA per SM. Its price, from vLLM's own
// attention layer timed under CUDA graphs on an H100 SXM (ai-dynamo/aiconfigurator systems/data/h100_sxm/attention/
// vllm/0.14.0/generation_attention_perf.parquet, collector/vllm/collect_attn.py @5ef50c9b9: FlashAttentionImpl.forward
// on a paged bf16 cache, block 64, 1-2048 sequences x 2-131072 tokens, 1-64 query / 1-8 KV heads of 128) [D]:
// * per-CTA stream: one KV head at 131,072 tokens runs vLLM's 32 splits for CUDA graphs
//   (VLLM_FLASH_ATTN_MAX_NUM_SPLITS_FOR_CUDA_GRAPH), 32 CTAs, at 0.77 TB/s: 24 GB/s per CTA, so the 132 CTAs of an
//   H100 reach the 0.93 x 3.35 TB/s cap (3.0-3.17 TB/s measured from 512 tiles at >= 2048 tokens; 0.19.0's table the
//   same) where FA#1572's upstream two-warp-group build read 1.8 TB/s at 512 tiles (13 GB/s per CTA, the Hopper
//   profile's attn_decode_cta_bandwidth). The kernel is priced as that profile rate times 24 / 13, so a fitted
//   profile's per-CTA rate moves both FA3 tiles alike (the same issue's H20 run with the two tiles: 23.7 / 13.8 GB/s
//   per CTA, a ratio of 1.72);
// * per-tile work: with >= 1056 tiles of <= 16 tokens (8+ tiles per SM, the stream < 10 % of the time) the time beyond
//   one call's fixed costs and the bytes at the cap is 3.16 us per tile per SM (median of 344 rows; 3.06 in the 0.19.0
//   table, 3.28 in 0.24.0's FA3 rows), taken as 3.2 us.
inline constexpr double kCtaBandwidthRatio = 24e9 / 13e9;  ///< over the profile's (two-warp-group) per-CTA rate
inline constexpr double kTileS = 3.2e-6;
inline constexpr double kMaxPackedRows = 64;  ///< the one-warp-group tile's rows (kBlockM = 64)
}  // namespace fa3_1wg

/// Resident CTAs per SM of FlashAttention-2's flash_fwd_splitkv_kernel at `head_dim` (rounded up to FA2's instances):
/// 128 threads, shared memory for a 64-row Q tile and one K and one V tile of kBlockN rows (256 / 128 / 64 rows for
/// head_dim <= 64 / <= 128 / larger; flash_fwd_launch_template.h run_mha_fwd_splitkv_dispatch, kernel_traits.h
/// kSmemSize), under the SM's residency limits (perf/quant_latency.hpp): 2 on sm_80 and sm_90 at head_dim 128, 1 on
/// the 100 KiB sm_86 / sm_89 parts.
double fa2_splitkv_ctas_per_sm(const spec::GpuSpec& gpu, double head_dim);

/// Resident CTAs per SM of TurboMind v0.1's decoder attention kernel for `heads_per_cta` query heads per CTA:
/// shared memory per SM (CUDA C Programming Guide: 164 KiB sm80, 100 KiB sm86/sm89, 228 KiB sm90) over the
/// kernel's 5-stage K/V tile pipeline and score buffer (decoder_multihead_attention_template.h).
double turbomind_ctas_per_sm(const spec::GpuSpec& gpu, double heads_per_cta);

}  // namespace llmsim::perf
