// The terms of sliding-window layers, of MLA (DeepSeek) and of linear attention (Qwen3-Next) in one iteration (docs/cost-model.md, "Model
// families"): kept out of line so the common path stays short.
#include "cost_model_ops.hpp"

namespace llmsim::perf {

void CostModel::Constants::family_ops(const BatchShape& b, RawOps& ops) const {
  const double decode = static_cast<double>(b.decode_seqs);
  // Adds `r` to an attention op and re-judges its bound over the sum.
  const auto fold = [&](Raw& into, const Raw& r) {
    if (into.time_s > 0) {
      add(into, r);
      into.bound = into.bytes / bw > into.flops / fp16_peak ? Bound::memory : Bound::compute;
      into.peak_fraction = into.bound == Bound::memory ? into.bytes / into.time_s / bw : into.flops / into.time_s / fp16_peak;
    } else {
      into = r;
    }
  };
  if (indexer_flops_per_pair > 0) {
    // DSA's lightning indexer scores every cached token for every query (perf/dsa_indexer.hpp: DeepGEMM's FP8
    // MQA-logits kernels under vLLM, the fp16 attention rate elsewhere), reads its key cache and writes the FP32
    // logits its top-k reads; the sparse MLA then attends to the top-k.
    const auto indexer = [&](double pairs, double keys) {
      const double flops = indexer_flops_per_pair * pairs;
      const double bytes = keys * indexer_bytes_per_token + pairs * indexer_logit_bytes;
      const double tc = flops / indexer_rate, tm = bytes / (bw * mem_eff);
      return roofline(pnorm(tc, tm), tc, tm, flops, bytes, fp16_peak, layers);
    };
    if (b.prefill_tokens > 0)
      fold(ops[kAttnPrefill], indexer(b.prefill_attn_pairs, static_cast<double>(b.prefill_kv_tokens)));
    if (b.decode_seqs > 0) {
      const double context = static_cast<double>(b.decode_context);
      fold(ops[kAttnDecode], indexer(context, context));
    }
  }
  if (b.prefill_tokens > 0) {
    const double pt = static_cast<double>(b.prefill_tokens), kv_tokens = static_cast<double>(b.prefill_kv_tokens);
    if (sliding_layers > 0) {
      // A sliding layer's query at position p sees min(p, window) keys. The batch carries sums only, so the chunks
      // are taken as alike (n chunks of T/n tokens after (K − T)/n cached ones): exact for one chunk or equal
      // chunks, an estimate otherwise.
      const double n = static_cast<double>(b.prefill_seqs), chunk = pt / n, before = (kv_tokens - pt) / n;
      const double pairs = n * windowed_pairs(before, chunk, window);
      const double kv = n * (std::min(before, window) + chunk);
      const Raw r = prefill_core(2.0 * heads * (prefill_qk_dim + prefill_v_dim) * pairs, prefill_bytes(pt, kv), pairs,
                                 sliding_layers);
      if (ops[kAttnPrefill].time_s > 0) add(ops[kAttnPrefill], r);
      else ops[kAttnPrefill] = r;  // every layer slides (Mistral v0.1): its bound and peak fraction
    }
    if (sparse_mla_flops_per_token > 0) {
      // vLLM's FLASHMLA_SPARSE (perf/sparse_mla.hpp): the prefill tokens run the absorbed path as decode tokens do
      // (q_nope x W_UK into the latent, the output x W_UV: kv_b_proj's weights once, 2 FLOPs per weight per token)
      // and the sparse kernel over every topk slot; it gathers each KV token's latent from the paged cache (read once
      // per chunk: its queries share their context), reads the padded queries and writes the padded outputs.
      add(ops[kKvB], gemm(pt, kv_b_params, heads * prefill_qk_dim, heads * prefill_v_dim, kv_b_gemm, layers, 2));
      fold(ops[kAttnPrefill], sparse_mla(pt, kv_tokens));
    } else if (mla) {
      // kv_b_proj up-projects the latent of every KV token the chunks attend to (vLLM computes the cached context's
      // K/V chunk by chunk in _compute_prefill_context): the latent without k_pe in, k_nope and v per head out.
      const double nope = prefill_qk_dim - kv_rope_dim, context = kv_tokens - pt;
      add(ops[kKvB], gemm(kv_tokens, kv_b_params, kv_latent - kv_rope_dim, heads * (nope + prefill_v_dim), kv_b_gemm,
                          layers));
      // The copies around it, separate kernels (vLLM's MLACommonImpl since vllm#12639; docs/cost-model.md, "MLA
      // prefill over a cached context"): K is assembled per head for every KV token (torch.cat of k_nope with k_pe
      // broadcast to every head: k_nope and the shared k_pe read, nope + rope per head written); the cached context
      // is first gathered from the paged cache into a workspace (ops.gather_cache: the latent read from the cache and
      // written in bf16); and a chunk with context merges the context pass's output and LSE with its own pass's
      // (merge_attn_states: two partial outputs and fp32 LSEs read, one written). The batch carries sums only: when
      // any context is cached, every chunk is taken to merge (an upper bound for mixed batches).
      add(ops[kKvB], stream(kv_tokens * (heads * (nope + prefill_qk_dim) + kv_rope_dim) * kActBytes, 0, layers));
      if (context > 0) {
        add(ops[kKvB], stream(context * (kv_cache_write_bytes + kv_latent * kActBytes), 0, layers));
        fold(ops[kAttnPrefill], stream(3 * pt * heads * (prefill_v_dim * kActBytes + 4.0), 0, layers));
      }
    }
  }
  if (b.decode_seqs > 0) {
    if (sliding_layers > 0) {
      // Sliding layers read at most the window per sequence: Σ min(c_i, W) <= min(Σ c_i, n·W), an upper bound
      // from the sums the batch carries (exact when every context is inside the window, or all beyond it).
      const double context = static_cast<double>(b.decode_context);
      const DecodeAttentionCost s = attn_decode_sliding.per_layer(decode, std::min(context, decode * window));
      Raw& r = ops[kAttnDecode];
      r.time_s += s.time_s * sliding_layers;
      r.flops += s.flops * sliding_layers;
      r.bytes += s.bytes * sliding_layers;
      const bool alu_bound = (full_layers > 0 && r.bound == Bound::compute) || s.alu_bound;
      r.bound = alu_bound ? Bound::compute : Bound::memory;
      r.peak_fraction = alu_bound ? r.flops / r.time_s / (2.0 * alu_rate) : r.bytes / r.time_s / bw;
    }
    if (sparse_mla_flops_per_token > 0) {
      // The sparse kernel per decode query (speculative verification: k + 1 a sequence): every topk slot computed;
      // the latents of min(context, topk) slots read (Σ min(c_i, topk) <= min(Σ c_i, n·topk), from the sums the batch
      // carries).
      const double context = static_cast<double>(b.decode_context);
      fold(ops[kAttnDecode], sparse_mla(decode * static_cast<double>(b.spec_tokens + 1),
                                        std::min(context, decode * sparse_mla_topk)));
    }
    if (mla) {
      // Absorbed decode (vLLM's data-movement-friendly path): q_nope × W_UK into the latent, attention over the
      // latent, then × W_UV: kv_b_proj's weights once per iteration, 2 FLOPs per weight per decode token.
      add(ops[kKvB], gemm(decode, kv_b_params, heads * prefill_qk_dim, heads * prefill_v_dim, kv_b_gemm, layers, 2));
    }
  }
  if (linear_layers > 0) {
    // Gated DeltaNet (vLLM's FLA kernels) and Mamba-2 (its SSD kernels): prefill runs the chunked scan (64-token
    // chunks for DeltaNet, chunk_size for Mamba-2: intra-chunk products plus a state per chunk, which it writes and
    // reads back), reading each sequence's state once and
    // writing it back; decode runs the recurrence, reading and writing every sequence's state once per layer. The
    // weights are in qkv_proj / o_proj (averaged over the layer types); this is the core.
    if (b.prefill_tokens > 0) {
      const double pt = static_cast<double>(b.prefill_tokens), n = static_cast<double>(b.prefill_seqs);
      fold(ops[kAttnPrefill], attention(pt * linear_prefill_flops_per_token,
                                        (2 * n + 2 * pt / linear_chunk) * linear_state_bytes, mem_eff, linear_layers));
    }
    if (b.decode_seqs > 0)
      fold(ops[kAttnDecode], attention(decode * linear_flops_per_token, 2 * decode * linear_state_bytes, mem_eff,
                                       linear_layers));
  }
  if (ops[kKvB].time_s > 0) {
    Raw& r = ops[kKvB];
    const double tc = r.flops / format_gemm.peak, tm = r.bytes / bw;
    r.bound = tc > tm ? Bound::compute : Bound::memory;
    r.peak_fraction = (tc > tm ? tc : tm) / r.time_s;
  }
}

}  // namespace llmsim::perf
