// Private to perf: the constants of one CostModel and the op formulas of one engine iteration (the roofline
// per op; docs/cost-model.md). Included by cost_model.cpp (the public API), cost_model_setup.cpp (the constants
// from the specs), model_families.cpp (sliding-window and MLA terms) and speculative.cpp (verification).
// The hot path's functions are defined here, in the class, so iteration_time inlines them. The op vocabulary
// and the records they write are cost_ops.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "llmsim/perf/collective.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/decode_attention.hpp"
#include "llmsim/perf/engine_overhead.hpp"
#include "llmsim/perf/gemm_tiles.hpp"
#include "llmsim/perf/overlap_launch_wait.hpp"
#include "cost_ops.hpp"
#include "gemm_path.hpp"
#include "llmsim/perf/prefill_scores.hpp"
#include "llmsim/perf/quant_kernels.hpp"
#include "llmsim/perf/quant_latency.hpp"
#include "token_table.hpp"

namespace llmsim::perf {

using namespace cost_detail;  // NOLINT: the op table's names read as in the formulas

struct CostModel::Constants {
  // Model shape on one GPU (TP shard); all layers run on the critical path (see docs: PP assumption).
  double layers = 0, hidden = 0, head_dim = 0, heads = 0, kv_heads = 0, inter = 0, vocab = 0;
  double qkv_params = 0, o_params = 0, mlp_params = 0;  // per layer per GPU (mlp: a dense layer's MLP)
  double experts = 0, experts_per_token = 0, router_params = 0;
  // Layer mix (docs/cost-model.md, "Model families"): dense-MLP and MoE layers; full and sliding-window attention.
  double dense_layers = 0, moe_layers = 0;
  double expert_params = 0, expert_inter = 0;  // one routed expert on this GPU
  // The same expert as the MoE kernel streams and computes it (perf/moe_kernels: vLLM's MXFP4 kernels pad it), and the
  // bytes per token of the top-k combine (moe_sum).
  double expert_run_params = 0, expert_run_inter = 0, expert_run_hidden = 0, moe_combine_bytes = 0;
  double shared_params = 0, shared_inter = 0;  // a MoE layer's shared experts on this GPU (DeepSeek, Qwen2-MoE)
  double full_layers = 0, sliding_layers = 0, window = 0;
  // Linear-attention layers (Qwen3-Next's gated DeltaNet, Nemotron-H's Mamba-2) on this GPU: their per-sequence
  // state (read and written every decode step; written per chunk of linear_chunk tokens in prefill) and FLOPs per
  // token of the recurrence and conv (decode) and of the chunked scan (prefill).
  double linear_layers = 0, linear_state_bytes = 0, linear_flops_per_token = 0;
  double linear_prefill_flops_per_token = 0, linear_chunk = 64;
  // DeepSeek-V3.2's indexer (DSA): FP8 key bytes per cached token and FLOPs per query-key pair it scores, per layer;
  // the FLOP/s its logits run at and the logit bytes per pair (perf/dsa_indexer.hpp, set in setup).
  double indexer_bytes_per_token = 0, indexer_flops_per_pair = 0, indexer_rate = 0, indexer_logit_bytes = 0;
  // vLLM's FLASHMLA_SPARSE (perf/sparse_mla.hpp; 0 elsewhere): FLOPs per query token and layer of the sparse kernel
  // (every topk slot, padded heads), its rate as a fraction of fp16_peak, the query and output bytes per token (padded
  // heads) and the latent bytes per KV token it gathers; the topk. Replaces the window pricing and the MHA prefill.
  double sparse_mla_flops_per_token = 0, sparse_mla_eff = 0, sparse_mla_qo_bytes = 0, sparse_mla_latent_bytes = 0;
  double sparse_mla_topk = 0;
  // MLA (DeepSeek): kv_b_proj's weights, run per decode token as the absorbed W_UK / W_UV and per prefill KV token as
  // the up-projection; the attention's query/key and value head dims as it runs.
  bool mla = false;
  double kv_b_params = 0, prefill_qk_dim = 0, prefill_v_dim = 0, kv_latent = 0;
  double kv_rope_dim = 0;  // MLA: the rope part of the latent (k_pe), shared by every head
  double rotary_norm_elems = 0;  // per token per layer: rotary on q and k (+ MLA's latent RMSNorms)
  double norm_act_elems = 0;     // per token per layer: the add+RMSNorms' reads and writes; 0 = two (8 × hidden)
  double allreduces_per_layer = 2;  // o_proj's and down_proj's; Nemotron-H's single-block layers: one
  double act_inter = 0;  // per token per layer: gated-activation width (routed + shared experts, averaged over layers)
  double act_quant_bytes = 0;  // W8A8: bytes per token per layer the activation quantisation adds (setup)
  double lm_params = 0;
  // GEMM paths: the format's (routed experts, and everything when the format quantizes all linears); the GEMMs other
  // than the routed experts (attention, dense and shared MLPs): the format's, or 16-bit for a format that quantizes the
  // routed experts only (gpt-oss's MXFP4 checkpoint); the attention projections (qkv, o, MLA's kv_b): the dense path,
  // or 16-bit where the format keeps them so; the 16-bit path (MoE router); the LM head's (16-bit but GGUF's bytes).
  GemmPath format_gemm, dense_gemm, attn_gemm, fp16_gemm, lm_gemm;
  // MLA's kv_b_proj: the attention path as the checkpoint's format streams it, without the block-FP8 linear's kernel
  // terms (vLLM absorbs it into bf16 W_UK / W_UV bmm's for decode).
  GemmPath kv_b_gemm;
  double qkv_kernels = 1;  // GEMM kernels of the qkv op: 1 fused qkv; MLA q_a, kv_a and q_b (or q_proj and kv_a)
  GemmPath moe_gemm;  // the routed experts: the format's path at the MoE kernel's rates (perf/moe_kernels)
  // The routed experts' GEMM time multiplier below `moe_small_m_tokens` tokens in an iteration (Triton matmul_ogs's
  // split-K in vLLM 0.12.x: perf/moe_kernels); 1 elsewhere.
  double moe_small_m_factor = 1, moe_small_m_tokens = 0;
  double kv_bytes_per_token_layer = 0;  // K+V of one token in one layer on this GPU, as prefill attention reads it
  double kv_cache_write_bytes = 0;      // what one new token writes into one layer's KV cache
  // The full-attention layers' own attention core (Gemma-4: global_head_dim per head, num_global_key_value_heads):
  // query/key and value head dims, KV bytes read and written per token and layer. The values above for every other
  // model (setup copies them), which then price both layer kinds alike.
  double full_qk_dim = 0, full_v_dim = 0, full_kv_bytes_per_token_layer = 0, full_kv_write_bytes = 0;
  // Hardware.
  double bw = 0, fp16_peak = 0;
  spec::DType gemm_dtype = spec::DType::fp16;
  LogCurve fp16_eff, gemm_bw, mem_vs_bytes;
  double mem_eff = 0.85, gemm_fixed_s = 0, p = 2, attn_prefill_eff = 0.6;
  double alu_rate = 0;                 ///< CUDA-core instructions/s (FP32 FMA rate)
  bool materialised_scores = false;    ///< prefill attention as GEMM -> softmax -> GEMM (perf/prefill_scores.hpp)
  /// vLLM's Triton unified kernel (perf/triton_unified_attention.hpp; 0 for every other prefill kernel): the L2 bytes it
  /// reads per causal query-key pair and layer, and the L2's read bandwidth, which bound its prefill beside the FLOPs.
  double prefill_l2_bytes_per_pair = 0, l2_bandwidth = 0;
  double l2_bytes = 0;
  double dequant_ops_per_weight = 0;   ///< CUDA-core instructions to dequantise one weight (weight-only formats)
  /// Issue-bound decode GEMV of the format (llama.cpp mul_mat_vec_q): thread-instructions per weight and per weight
  /// and activation column, for M <= gemv_max_rows, against the GPU's instruction issue rate.
  double gemv_ops = 0, gemv_ops_per_column = 0, gemv_max_rows = 0, issue_rate = 0;
  /// The pre-Marlin kernels' bytes-in-flight bound (perf/quant_latency.hpp): the SM generation, SMs and SM clock.
  SmResidency sm_residency;
  double sm_count = 0, sm_clock_hz = 0;
  DecodeAttentionModel attn_decode;          ///< the full-attention layers' decode kernel (their own shape)
  DecodeAttentionModel attn_decode_sliding;  ///< the sliding layers' (family_ops; the same shape but for Gemma-4)
  AllReduceModel allreduce;
  bool vocab_parallel = true;  ///< the runtime's TP shards embedding and LM head by vocabulary (RuntimeTraits)
  double sampler_bytes_per_logit = 8;  ///< the runtime's sampler passes over the logits (RuntimeTraits)
  EngineOverheadModel overhead;
  bool charge_cpu = true;  ///< false for a speculative proposer (its step's CPU time is the target's)
  /// vLLM V1's async scheduling (perf/async_scheduling.hpp): the host's per-step time runs while the GPU runs the
  /// step before, so the step takes max(GPU work, host time) instead of their sum (host_floor).
  bool cpu_overlaps = false;
  bool times_only = false;  ///< times_only_exact(), set with the table: step_time (cost_model.cpp) may take its table path
  /// times_only_when_graphed(), set with it: the table path is exact for the steps that replay a graph.
  bool times_only_graphed = false;
  int tp = 1, pp = 1;
  /// Layers of the largest pipeline stage (spec::pp_stage_layers, vLLM's split; layers / pp when pp divides them):
  /// a stage's host time and weights are its own layers'.
  double stage_layers = 0;
  double link_bw = 0, link_latency_s = 0;
  double kernels_per_layer = 0, kernels_per_iter = 0;
  double offload_bytes = 0, offload_s = 0, host_bw = 0;  // weights copied from host memory every iteration
  /// vLLM's LoRA kernels (perf/lora_kernels.hpp; CostModel::with_lora), over all layers: the adapters a step can use
  /// (min(workload.lora_adapters, max_loras); 0 without LoRA), the kernels' fixed time, one adapter's bytes, the
  /// bytes and FLOPs per token.
  double lora_adapters = 0, lora_fixed_s = 0, lora_adapter_bytes = 0, lora_token_bytes = 0, lora_token_flops = 0;
  /// table[n]: token-only op times for n tokens / n LM-head rows, n in [0, table.size()] (<= kTableTokens, the
  /// constructor's table_tokens), filled by the very functions evaluate() uses, so iteration_time's sum is
  /// bit-identical to the direct one; beyond it, computed per call. Rows are filled on first use (table_has).
  TokenTable table;

  double pnorm(double a, double b) const {
    if (p == 2.0) return std::sqrt(a * a + b * b);
    if (p >= 32.0) return std::max(a, b);
    const double m = std::max(a, b);
    if (m <= 0) return 0;
    return m * std::pow(std::pow(a / m, p) + std::pow(b / m, p), 1.0 / p);
  }

  /// One GEMM type per layer: M rows through `params` weights (in -> out features) in `kernels` kernels on path
  /// `g`, times `count` layers.
  Raw gemm(double m, double params, double in_dim, double out_dim, const GemmPath& g, double count,
           double kernels = 1, const GemmGrid& grid = {}) const {
    if (m <= 0) return {};
    if (g.kernel != QuantGemmKernel::native) [[unlikely]]
      return quant_gemm(m, params, in_dim, out_dim, g, count, kernels, grid);
    const double flops = 2.0 * m * params;
    const double bytes = params * g.bytes_per_param + m * (in_dim + out_dim) * kActBytes;
    const double tc = flops / (g.peak * g.eff.at(m) * g.q_c) * wave_penalty(m, grid);
    double tm = bytes / (bw * gemm_bw.at(m) * g.q_bw);
    const bool in_format = g.in_format;
    if (in_format && dequant_ops_per_weight > 0) {
      // Weight-only kernels (Marlin) dequantise every weight on CUDA cores once per 64-row block of M, overlapped
      // with the weight stream as well as two pipelines overlap (the smooth roofline).
      tm = pnorm(tm, params * dequant_ops_per_weight * std::ceil(m / 64.0) / alu_rate);
    }
    if (in_format && m <= gemv_max_rows) {
      // GEMV kernels that compute on CUDA cores (llama.cpp's mul_mat_vec_q) issue instructions per weight and per
      // weight and column; the issue slots, overlapped with the stream, bound them where the bandwidth is high.
      tm = pnorm(tm, params * (gemv_ops + gemv_ops_per_column * m) / issue_rate);
    }
    return roofline(kernels * (gemm_fixed_s + g.extra_fixed_s) + pnorm(tc, tm), tc, tm, flops, bytes, g.peak, count);
  }

  /// A dense gated MLP's two kernels: gate_up (N = 2I, 2/3 of the FLOPs) and down (N = h).
  GemmGrid mlp_grid() const { return {2 * inter, hidden, 2.0 / 3.0}; }

  /// The compute time's factor for the kernels' partly empty last waves (perf/gemm_tiles.hpp): the FLOP-weighted mean
  /// of 1/f over the grid's kernels; 1 for a GEMM without a grid (MoE experts, router).
  double wave_penalty(double m, const GemmGrid& grid) const {
    if (grid.n1 <= 0) return 1.0;
    const double p1 = gemm_wave_penalty(m, grid.n1, sm_count);
    if (grid.n2 <= 0) return p1;
    return grid.w1 * p1 + (1.0 - grid.w1) * gemm_wave_penalty(m, grid.n2, sm_count);
  }

  /// The pre-Marlin and unfused-FP8 kernels (perf/quant_kernels.hpp): out of line, priced in quant_gemm.cpp.
  /// `grid`: the cuBLAS GEMMs they run (torch._scaled_mm, the fp16 matmul after a dequantisation pass) take its wave
  /// term; the AWQ/GPTQ kernels' own grids differ and take none.
  [[gnu::noinline]] Raw quant_gemm(double m, double params, double in_dim, double out_dim, const GemmPath& g,
                                   double count, double kernels, const GemmGrid& grid) const;

  /// An op's totals over `count` layers from one layer's time `t`, its compute and memory times and its work: bound
  /// by the larger, its fraction of that peak (`peak` FLOP/s or the bandwidth).
  Raw roofline(double t, double tc, double tm, double flops, double bytes, double peak, double count) const {
    Raw r;
    r.time_s = t * count;
    r.flops = flops * count;
    r.bytes = bytes * count;
    r.bound = tc > tm ? Bound::compute : Bound::memory;
    r.peak_fraction = tc > tm ? flops / t / peak : bytes / t / bw;
    return r;
  }

  /// A streaming element-wise kernel moving `bytes` per layer, times `count`.
  Raw stream(double bytes, double flops, double count) const {
    Raw r;
    if (bytes <= 0) return r;
    const double t = bytes / (bw * mem_eff * mem_vs_bytes.at(bytes));
    r.time_s = t * count;
    r.bytes = bytes * count;
    r.flops = flops * count;
    r.bound = Bound::memory;
    r.peak_fraction = bytes / t / bw;
    return r;
  }

  /// Attention: FLOPs on the fp16 tensor path at the FlashAttention efficiency, bytes at `bw_eff`, times `count`
  /// layers.
  Raw attention(double flops, double bytes, double bw_eff, double count) const {
    if (bytes <= 0 || count <= 0) return {};
    const double tc = flops / (fp16_peak * attn_prefill_eff);
    const double tm = bytes / (bw * bw_eff);
    return roofline(pnorm(tc, tm), tc, tm, flops, bytes, fp16_peak, count);
  }

  /// vLLM's FLASHMLA_SPARSE kernel (perf/sparse_mla.hpp) for `tokens` query tokens gathering `latents` KV latents, over
  /// every layer: its FLOPs at its own rate; the latents, padded queries and outputs, and each token's own latent
  /// written to the cache at the memory rate.
  Raw sparse_mla(double tokens, double latents) const {
    if (tokens <= 0) return {};
    const double flops = tokens * sparse_mla_flops_per_token;
    const double bytes = tokens * (sparse_mla_qo_bytes + sparse_mla_latent_bytes) + latents * sparse_mla_latent_bytes;
    const double tc = flops / (fp16_peak * sparse_mla_eff), tm = bytes / (bw * mem_eff);
    return roofline(pnorm(tc, tm), tc, tm, flops, bytes, fp16_peak, layers);
  }

  /// attention() for a prefill over `pairs` query-key pairs: on the Triton unified kernel (prefill_l2_bytes_per_pair
  /// > 0) its K/V tile reads from the L2 (pairs × bytes per pair at l2_bandwidth) bound it with the DRAM stream.
  Raw prefill_core(double flops, double bytes, double pairs, double count) const {
    if (!(prefill_l2_bytes_per_pair > 0)) return attention(flops, bytes, mem_eff, count);
    if (bytes <= 0 || count <= 0) return {};
    const double tc = flops / (fp16_peak * attn_prefill_eff);
    const double tm = std::max(bytes / (bw * mem_eff), pairs * prefill_l2_bytes_per_pair / l2_bandwidth);
    return roofline(pnorm(tc, tm), tc, tm, flops, bytes, fp16_peak, count);
  }

  /// Σ_{j=1..chunk} min(before + j, window): causal query-key pairs of one chunk after `before` cached tokens when
  /// each query sees at most `window` keys.
  static double windowed_pairs(double before, double chunk, double window) {
    if (before + chunk <= window) return chunk * (before + (chunk + 1) / 2);
    if (before >= window) return chunk * window;
    const double k = window - before;  // queries still inside the window
    return k * before + k * (k + 1) / 2 + (chunk - k) * window;
  }

  static void add(Raw& into, const Raw& r) {
    into.time_s += r.time_s;
    into.flops += r.flops;
    into.bytes += r.bytes;
  }

  /// Ops that depend only on the iteration's token count: the linears, norms and collectives.
  void token_ops(double tokens, RawOps& ops) const {
    const double q_width = heads * head_dim;  // query (and attention output) features on this GPU
    // MLA: the replicated q_a/kv_a projection and q_b (or q_proj) produce q and the latent; o_proj reads v_head_dim
    // per head. Other models: fused q/k/v, o_proj reading the query width.
    const double qkv_out = mla ? q_width + kv_latent : q_width + 2 * kv_heads * head_dim;
    const double o_in = mla ? heads * prefill_v_dim : q_width;
    ops[kQkv] = gemm(tokens, qkv_params, hidden, qkv_out, attn_gemm, layers, qkv_kernels, {qkv_out});
    ops[kOProj] = gemm(tokens, o_params, o_in, hidden, attn_gemm, layers, 1, {hidden});
    if (experts > 1) {
      const double touched = experts_touched(experts, experts_per_token, tokens);
      const double m_per_expert = touched > 0 ? tokens * experts_per_token / touched : 0;
      Raw e = gemm(m_per_expert, expert_run_params, expert_run_hidden + expert_run_inter,
                   2 * expert_run_inter + expert_run_hidden, moe_gemm, moe_layers * touched, 2);
      // One fused-MoE kernel pair per layer, not one per expert: keep one pair of fixed costs per layer.
      e.time_s -= 2 * gemm_fixed_s * moe_layers * std::max(0.0, touched - 1);
      if (tokens < moe_small_m_tokens) e.time_s *= moe_small_m_factor;
      // moe_sum: each token's k expert outputs read back and summed (perf/moe_kernels).
      add(e, stream(tokens * moe_combine_bytes, 0, moe_layers));
      add(e, gemm(tokens, router_params, hidden, experts, fp16_gemm, moe_layers));
      // Shared experts run every token, as a dense MLP beside the routed ones; dense layers (DeepSeek's first three,
      // Qwen's mlp_only_layers) run their own MLP.
      if (shared_params > 0)
        add(e, gemm(tokens, shared_params, hidden + shared_inter, 2 * shared_inter + hidden, dense_gemm, moe_layers,
                    2, {2 * shared_inter, hidden, 2.0 / 3.0}));
      if (dense_layers > 0)
        add(e, gemm(tokens, mlp_params, hidden + inter, 2 * inter + hidden, dense_gemm, dense_layers, 2, mlp_grid()));
      // The fraction of peak over the whole op (the per-expert GEMM's own fraction counted one expert's bytes
      // against its time, and not the router, shared experts or dense layers added here).
      if (e.time_s > 0)
        e.peak_fraction = e.bound == Bound::compute ? e.flops / e.time_s / format_gemm.peak : e.bytes / e.time_s / bw;
      ops[kMlp] = e;
    } else {
      // gate_up and down are two kernels with the same M: one roofline over both, two fixed costs.
      ops[kMlp] = gemm(tokens, mlp_params, hidden + inter, 2 * inter + hidden, dense_gemm, dense_layers, 2, mlp_grid());
    }

    // Per token per layer: two fused add+RMSNorms (read 2h, write 2h each), rotary on q and k (read+write),
    // the gated activation (read 2I, write I); W8A8: each GEMM input read in 16 bits and written in 8 (its own kernel).
    const double act_elems = (norm_act_elems > 0 ? norm_act_elems : 8 * hidden) + rotary_norm_elems + 3 * act_inter;
    ops[kNorms] = stream(tokens * (act_elems * kActBytes + act_quant_bytes), tokens * act_elems, layers);
    ops[kNorms].time_s += stream(tokens * 6 * hidden * kActBytes, 0, 1).time_s;  // embedding gather + final norm

    if (tp > 1) {
      // Two all-reduces per layer (o_proj's and down_proj's RowParallelLinear; a MoE layer's one after the experts
      // and shared experts are summed), algorithm by message size, and one more of the same size for the embedding:
      // VocabParallelEmbedding looks up its vocabulary shard and all-reduces the result (zeros for other shards' ids).
      Raw& r = ops[kAllReduce];
      const double msg = tokens * hidden * kActBytes;
      const double count = allreduces_per_layer * layers + (vocab_parallel && tokens > 0 ? 1 : 0);
      r.time_s = count * allreduce.time_s(msg);
      r.bytes = count * allreduce.link_bytes(msg);
      r.bound = Bound::communication;
      r.peak_fraction = r.time_s > 0 ? r.bytes / r.time_s / allreduce.bus_bandwidth() : 0;
    }
    if (pp > 1) {
      Raw& r = ops[kPpTransfer];
      const double msg = 2 * tokens * hidden * kActBytes;  // hidden state + residual
      r.time_s = (pp - 1) * (msg / link_bw + link_latency_s);
      r.bytes = (pp - 1) * msg;
      r.bound = Bound::communication;
      r.peak_fraction = r.time_s > 0 ? r.bytes / r.time_s / link_bw : 0;
    }
  }

  /// The LM head and sampling over `lm_rows` rows (prompts that finish plus decoding sequences).
  void lm_ops(double lm_rows, RawOps& ops) const {
    ops[kLmHead] = gemm(lm_rows, lm_params, hidden, vocab / tp, lm_gemm, 1, 1, {vocab / tp});
    // TP > 1: each GPU's logits cover its vocabulary shard; LogitsProcessor gathers them in 16 bits before the
    // sampler (V1 and SGLang: all-gather, every rank samples; V0: gather to the driver) — an NCCL collective, not
    // the custom all-reduce. Charged to the LM head, whose output it is (its rows index the op table).
    if (tp > 1 && vocab_parallel) ops[kLmHead].time_s += allreduce.all_gather_time_s(lm_rows * vocab * kActBytes);
    // The sampler's passes over the fp32 logits: 8 bytes per logit (written and read once), V0's 42 (v0_sampler.hpp).
    ops[kSampling] = stream(lm_rows * vocab * sampler_bytes_per_logit, lm_rows * vocab * 4.0, 1);
  }

  /// The terms of sliding-window layers and of MLA (docs/cost-model.md, "Model families") added to `ops`.
  [[gnu::noinline]] void family_ops(const BatchShape& b, RawOps& ops) const;

  /// Prefill attention bytes of `pt` query tokens over `kv` KV tokens: queries and outputs, the KV read, and writing
  /// the chunk's K,V (MLA: its latent).
  double prefill_bytes(double pt, double kv) const {
    return pt * heads * (prefill_qk_dim + prefill_v_dim) * kActBytes + kv * kv_bytes_per_token_layer +
           pt * kv_cache_write_bytes;
  }
  /// The same for a full-attention layer at its own shape (full_qk_dim, full_kv_bytes_per_token_layer).
  double full_prefill_bytes(double pt, double kv) const {
    return pt * heads * (full_qk_dim + full_v_dim) * kActBytes + kv * full_kv_bytes_per_token_layer +
           pt * full_kv_write_bytes;
  }

  /// Prefill attention of the batch's chunks (as one op over the full-attention layers).
  Raw prefill_attention(const BatchShape& b) const {
    // Per query-key pair: QK^T over the query/key head dim and PV over the value head dim (MLA prefill runs full
    // heads of nope+rope and v_head_dim on the up-projected K/V; vLLM's compute-friendly path).
    const double pt = static_cast<double>(b.prefill_tokens);
    const double bytes = full_prefill_bytes(pt, static_cast<double>(b.prefill_kv_tokens));
    Raw r = prefill_core(2.0 * heads * (full_qk_dim + full_v_dim) * b.prefill_attn_pairs, bytes, b.prefill_attn_pairs,
                         full_layers);
    if (materialised_scores) {
      // The unified KV view: every query token scores every KV cell of the batch (masked ones too); the two
      // batched GEMMs then run at the attention rate and the score traffic is serialized between them.
      const double scores = heads * pt * static_cast<double>(b.prefill_kv_tokens);
      const double tc = 2.0 * scores * (full_qk_dim + full_v_dim) / (fp16_peak * attn_prefill_eff);
      const double sb = materialised_score_bytes(scores, l2_bytes);
      r.time_s = (tc + bytes / (bw * mem_eff) + sb / (bw * mem_eff)) * full_layers;
      r.flops = 2.0 * scores * (full_qk_dim + full_v_dim) * full_layers;
      r.bytes = (bytes + sb) * full_layers;
      r.bound = Bound::memory;
      r.peak_fraction = r.bytes / r.time_s / bw;
    }
    return r;
  }

  /// The paged decode kernel over the batch's decoders: backend, CTAs, per-CTA streaming, waves, conversion
  /// (decode_attention.hpp), over the full-attention layers.
  Raw decode_attention(const BatchShape& b) const {
    const DecodeAttentionCost a =
        attn_decode.per_layer(static_cast<double>(b.decode_seqs), static_cast<double>(b.decode_context));
    Raw r;
    r.time_s = a.time_s * full_layers;
    r.flops = a.flops * full_layers;
    r.bytes = a.bytes * full_layers;
    // CUDA-core bound (software fp8 conversion, PagedAttention's dot products): judged against the FP32 rate.
    r.bound = a.alu_bound ? Bound::compute : Bound::memory;
    r.peak_fraction = a.alu_bound ? a.flops / a.time_s / (2.0 * alu_rate) : a.bytes / a.time_s / bw;
    return r;
  }

  /// Ops that depend on the batch's composition: attention, kernel launches, CPU overhead.
  void batch_ops(const BatchShape& b, RawOps& ops) const {
    AllFields out{ops};
    batch_ops_into(b, out);
  }

  /// batch_ops' one wiring of ops to formulas, into `out`: AllFields (every field, for breakdown() and the
  /// direct path) or TimesOnly (iteration_time's fast path: the times alone, so the FLOPs, bytes and fractions
  /// it would discard are never computed).
  template <class Out>
  [[gnu::always_inline]] void batch_ops_into(const BatchShape& b, Out& out) const {
    const double seqs = static_cast<double>(b.prefill_seqs + b.decode_seqs);
    if (lora_adapters > 0) [[unlikely]] out.set(kLora, lora(b, seqs));
    if (b.prefill_tokens > 0) out.set(kAttnPrefill, prefill_attention(b));
    if (b.decode_seqs > 0) out.set(kAttnDecode, decode_attention(b));
    // Sliding-window layers and MLA's kv_b_proj: kept out of line so the common path stays as short as it was.
    if constexpr (Out::kAllFields) {
      if (sliding_layers > 0 || mla || linear_layers > 0) [[unlikely]] family_ops(b, out.ops);
    }

    // Kernel launches: which kernels replay from CUDA graphs depends on the runtime (engine_overhead.hpp); a runtime
    // whose host runs ahead is charged after the GPU's work is summed (finish_launch).
    out.set_time(kLaunch, launch(b, 0.0), Bound::overhead);
    out.set_time(kCpu, charge_cpu && !cpu_overlaps ? overhead.cpu_s(seqs) : 0.0, Bound::overhead);
    if (offload_s > 0) {
      Raw r;
      r.time_s = offload_s;
      r.bytes = offload_bytes;
      r.bound = Bound::communication;
      r.peak_fraction = offload_bytes / offload_s / host_bw;
      out.set(kOffload, r);
    }
  }

  /// vLLM's LoRA shrink and expand kernels of a step (perf/lora_kernels.hpp): each adapter the step uses read once
  /// (as many as its sequences, at most lora_adapters: requests spread over the adapters), and every token the
  /// linears run (a speculative step's verified ones too) through the shrink's input, fp32 buffer and the expand's
  /// output; against their FLOPs at the 16-bit tensor rate (the smooth roofline), plus each kernel's fixed time.
  Raw lora(const BatchShape& b, double seqs) const {
    const double tokens = static_cast<double>(b.prefill_tokens + b.decode_seqs * (b.spec_tokens + 1));
    Raw r;
    r.bytes = std::min(lora_adapters, seqs) * lora_adapter_bytes + tokens * lora_token_bytes;
    r.flops = tokens * lora_token_flops;
    const double tm = r.bytes / (bw * mem_eff), tc = r.flops / (fp16_peak * fp16_eff.at(tokens));
    r.time_s = lora_fixed_s + pnorm(tc, tm);
    r.bound = tc > tm ? Bound::compute : Bound::memory;
    r.peak_fraction = tc > tm ? r.flops / r.time_s / fp16_peak : r.bytes / r.time_s / bw;
    return r;
  }

  /// The least time of a step of `seqs` sequences when the host's time overlaps the GPU's (cpu_overlaps): the
  /// host's own; 0 otherwise. The step is max(the summed ops, this).
  double host_floor(double seqs) const { return cpu_overlaps && charge_cpu ? overhead.cpu_s(seqs) : 0.0; }
  /// The same for batch `b`, the loop's CPU work after the step's eager forward enqueue when it replays no graph
  /// (perf/overlap_launch_wait.hpp): the overlap loop processes the previous batch's result only once this step's
  /// forward is enqueued. host_floor where the step replays a graph or the runtime's eager host time is not priced.
  double overlap_host(const BatchShape& b) const {
    const double cpu = host_floor(static_cast<double>(b.prefill_seqs + b.decode_seqs));
    if (!(cpu_overlaps && charge_cpu)) return cpu;
    return overlap_loop_host_s(cpu, overhead.eager_enqueue_s(b.prefill_tokens + b.decode_seqs, b.prefill_seqs == 0,
                                                             stage_layers, b.decode_max_context));
  }

  /// TimesOnly may stand for RawOps: batches without family terms (sliding windows, MLA), whose launch term does not
  /// wait for the GPU's work (finish_launch).
  bool times_only_exact() const noexcept {
    return !(sliding_layers > 0 || mla || linear_layers > 0) && !overhead.launch_depends_on_gpu();
  }
  /// The same for a step that replays a graph, when only an eager forward's host time (eager_host_per_layer_s, which
  /// a graphed step never pays) makes the launch term wait for the GPU's work: SGLang's decode steps up to its graph
  /// limit keep the table path.
  bool times_only_when_graphed() const noexcept {
    return !(sliding_layers > 0 || mla || linear_layers > 0) && !overhead.traits().host_runs_ahead;
  }
  void set_table_flags() noexcept {
    times_only = times_only_exact();
    times_only_graphed = times_only_when_graphed();
  }
  /// Whether step_time may price a step of `tokens` tokens (decode-only when `decode_only`) from the table.
  [[gnu::always_inline]] bool table_path(std::int64_t tokens, bool decode_only, std::int64_t longest_context) const {
    return times_only || (times_only_graphed && overhead.replays_graph(tokens, decode_only, longest_context));
  }

  /// Launch time of batch `b` whose other kernels keep the GPU busy for `gpu_busy_s`.
  double launch(const BatchShape& b, double gpu_busy_s) const {
    const double attn_kernels = (b.prefill_seqs > 0 ? 1 : 0) + (b.decode_seqs > 0 ? 1 : 0);
    const double kernels = layers * (kernels_per_layer + attn_kernels) + kernels_per_iter;
    return overhead.launch_s(kernels, layers * attn_kernels, b.prefill_tokens + b.decode_seqs, b.prefill_seqs == 0,
                             gpu_busy_s, stage_layers, b.decode_max_context);
  }

  /// For a runtime whose host runs ahead of the GPU, the launch term depends on the GPU's work (all ops but the
  /// launches and the CPU's serialized time): recomputed once the other ops are known.
  void finish_launch(const BatchShape& b, RawOps& ops) const {
    if (!overhead.launch_depends_on_gpu()) return;
    double busy = 0;
    for (int i = 0; i < kNumOps; ++i)
      if (i != kLaunch && i != kCpu) busy += ops[i].time_s;
    ops[kLaunch].time_s = launch(b, busy);
  }

  double weights_per_gpu() const {
    const double stage = stage_layers;
    // The most loaded stage holds as many MoE layers as there are (as the memory plan assumes).
    const double moe = std::min(stage, moe_layers);
    const double mlp = experts > 1 ? moe * (experts * expert_params + shared_params) +
                                         std::min(stage - moe, dense_layers) * mlp_params
                                   : stage * mlp_params * (dense_layers / layers);  // Nemotron-H: its MLP layers' share
    const double routed = experts > 1 ? moe * experts * expert_params : 0.0;
    return routed * format_gemm.bytes_per_param + (mlp - routed) * dense_gemm.bytes_per_param +
           stage * (qkv_params + o_params + kv_b_params) * attn_gemm.bytes_per_param +
           lm_params * lm_gemm.bytes_per_param;
  }

  void evaluate(const BatchShape& b, RawOps& ops) const {
    if (b.spec_tokens > 0) [[unlikely]] {
      verification_ops(b, ops, false);
      return;
    }
    token_ops(static_cast<double>(b.prefill_tokens + b.decode_seqs), ops);
    lm_ops(static_cast<double>(b.prefill_last_chunks + b.decode_seqs), ops);
    batch_ops(b, ops);
    finish_launch(b, ops);
  }

  /// Token-only ops for `tokens` and `lm_rows` from the table when both fit it (bit-identical to computing them).
  void token_and_lm_ops(std::int64_t tokens, std::int64_t lm_rows, RawOps& ops, bool use_table) const {
    if (!use_table || !table_has(tokens, lm_rows)) {
      token_ops(static_cast<double>(tokens), ops);
      lm_ops(static_cast<double>(lm_rows), ops);
      return;
    }
    AllFields out{ops};
    table_ops_into(tokens, lm_rows, out);
  }

  /// The table's token-only op times into `out` (table_has(tokens, lm_rows) true); their bounds stay unset, as
  /// iteration_time never reads them.
  template <class Out>
  [[gnu::always_inline]] void table_ops_into(std::int64_t tokens, std::int64_t lm_rows, Out& out) const {
    const TokenRow& rt = table[static_cast<std::size_t>(tokens)];
    const TokenRow& rl = table[static_cast<std::size_t>(lm_rows)];
    out.time(kQkv) = rt.qkv;
    out.time(kOProj) = rt.o_proj;
    out.time(kMlp) = rt.mlp;
    out.time(kNorms) = rt.norms;
    out.time(kAllReduce) = rt.allreduce;
    out.time(kPpTransfer) = rt.pp;
    out.time(kLmHead) = rl.lm_head;
    out.time(kSampling) = rl.sampling;
  }

  /// The target's side of a speculative step (perf/speculative.hpp): the linears over prefill tokens + d·(k + 1),
  /// LM head and sampler over every verified position, and the decoders' attention over k + 1 queries each: at
  /// least the decode kernel's streaming of their KV (the same KV is read) and at least the prefill roofline of
  /// the (k + 1)-token chunks (their FLOPs grow k + 1 times: where large batches turn verification compute-bound).
  void verification_ops(const BatchShape& b, RawOps& ops, bool use_table) const;

  /// Whether rows n and m of the table are set, setting a missing one first when it is within the table (the hot
  /// path's check: two loads and compares once the rows are there).
  [[gnu::always_inline]] bool table_has(std::int64_t n, std::int64_t m) const { return table_row(n) && table_row(m); }
  [[gnu::always_inline]] bool table_row(std::int64_t n) const {
    return n <= table.size() && (table.has(n) || fill_table(n));
  }
  /// Sets table row n (n <= table.size()) under the table's lock, unless another thread did; true.
  [[gnu::noinline]] bool fill_table(std::int64_t n) const {
    std::lock_guard<std::mutex> g(table.lock());
    if (table.has(n)) return true;
    RawOps ops{};
    token_ops(static_cast<double>(n), ops);
    lm_ops(static_cast<double>(n), ops);
    table.set(n, TokenRow{ops[kQkv].time_s, ops[kOProj].time_s, ops[kMlp].time_s, ops[kNorms].time_s,
                          ops[kAllReduce].time_s, ops[kPpTransfer].time_s, ops[kLmHead].time_s, ops[kSampling].time_s});
    table.publish(n);
    return true;
  }
};

}  // namespace llmsim::perf
