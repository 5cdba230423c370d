// Shapes of a speculative-decoding step (perf/speculative.hpp; docs/speculative-decoding.md).
#include "llmsim/perf/speculative.hpp"

#include "cost_model_ops.hpp"
#include "llmsim/core/error.hpp"

namespace llmsim::perf {

VerificationSums verification_sums(const BatchShape& b) {
  const double d = static_cast<double>(b.decode_seqs), q = static_cast<double>(b.spec_tokens + 1);
  const double context = static_cast<double>(b.decode_context);
  VerificationSums v;
  v.queries = d * q;
  v.attn_pairs = q * context + d * q * (q + 1) / 2.0;
  v.kv_tokens = context + d * q;
  v.lm_rows = static_cast<double>(b.prefill_last_chunks) + d * q;
  return v;
}

BatchShape proposer_first_pass(const BatchShape& b) {
  BatchShape f = b;
  const std::int64_t q = b.spec_tokens + 1;
  f.spec_tokens = 0;
  f.decode_seqs = 0;
  f.decode_context = 0;
  f.decode_max_context = 0;
  if (b.decode_seqs > 0) {
    f.prefill_seqs += b.decode_seqs;
    f.prefill_tokens += b.decode_seqs * q;
    f.prefill_attn_pairs += verification_sums(b).attn_pairs;
    f.prefill_kv_tokens += b.decode_context + b.decode_seqs * q;
    f.prefill_last_chunks += b.decode_seqs;  // one row each: the proposal after the last accepted token
  }
  return f;
}

BatchShape proposer_decode_step(const BatchShape& b) {
  BatchShape s;
  const std::int64_t k = b.spec_tokens;
  s.decode_seqs = b.decode_seqs + b.prefill_last_chunks;
  // Contexts after the first pass, advanced to the middle of the k − 1 steps (attention is linear in the context).
  // The batch's sums cannot tell finishing chunks from the others, so every chunk's context counts: an upper bound.
  s.decode_context = b.decode_context + b.decode_seqs * (k + 1) + b.prefill_kv_tokens + s.decode_seqs * (k - 1) / 2;
  return s;
}

std::shared_ptr<const CostModel> make_proposer(const CostModel& target, const spec::ResolvedSpeculation& sp,
                                               bool cuda_graphs) {
  if (!sp.proposer) return nullptr;
  spec::Quantization q = target.quant();
  if (!sp.proposer_shares_target_format) q.weights = spec::weight_format("fp16");
  try {
    return std::make_shared<const CostModel>(CostModel(*sp.proposer, q, target.gpu(), target.profile(),
                                                       spec::ParallelConfig{target.parallel().tp, 1}, cuda_graphs, 0,
                                                       target.runtime())
                                                 .without_cpu_overhead());
  } catch (const ConfigError& e) {
    throw ConfigError("engine.speculative", "the proposer '" + sp.proposer->id + "' cannot run at the target's tensor "
                                            "parallel " + std::to_string(target.parallel().tp) + ": " + e.what());
  }
}

void CostModel::Constants::verification_ops(const BatchShape& b, RawOps& ops, bool use_table) const {
  const VerificationSums v = verification_sums(b);
  const std::int64_t q = b.decode_seqs * (b.spec_tokens + 1);
  token_and_lm_ops(b.prefill_tokens + q, b.prefill_last_chunks + q, ops, use_table);
  batch_ops(b, ops);  // prefill chunks; the decode kernel over the decoders' KV; launches and CPU
  if (b.decode_seqs > 0) {
    const Raw r = attention(2.0 * heads * (full_qk_dim + full_v_dim) * v.attn_pairs,
                            full_prefill_bytes(v.queries, v.kv_tokens), mem_eff, full_layers);
    Raw& a = ops[kAttnDecode];
    if (r.time_s > a.time_s) a = r;
    else a.flops = r.flops;
  }
  finish_launch(b, ops);
}

}  // namespace llmsim::perf
