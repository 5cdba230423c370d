#pragma once
// The shapes of one speculative-decoding step (docs/speculative-decoding.md). A step with `spec_tokens` = k runs
//  1. the proposer: one pass over all of the step's new tokens (prefill chunks and each decoder's k + 1 positions,
//     one LM-head row per sequence), then k − 1 single-token steps of the decoding sequences — the structure of
//     vLLM V1's EagleProposer.propose (vllm/v1/spec_decode/eagle.py), used here for the draft model too;
//  2. the target's verification: every decoder scores its k + 1 tokens against its context (a prefill-like pass
//     whose every position is sampled: LM head and sampler over k + 1 rows), its weights read once for the batch.
// O(1) in the batch: the shapes are built from the batch's sums.
#include <cstdint>
#include <memory>

#include "llmsim/perf/batch_shape.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/speculative.hpp"

namespace llmsim::perf {

/// Sums of the verification chunks of a batch's decoders (k + 1 queries each after their contexts).
struct VerificationSums {
  double queries = 0;     ///< decode_seqs × (k + 1)
  double attn_pairs = 0;  ///< Σ (k + 1)·(c_i + (k + 2)/2): causal query-key pairs
  double kv_tokens = 0;   ///< Σ (c_i + k + 1): KV tokens the chunks attend to
  double lm_rows = 0;     ///< LM-head rows of the whole step: prompts that finish + decode_seqs × (k + 1)
};
VerificationSums verification_sums(const BatchShape& b);

/// The proposer's first pass: `b`'s prefill chunks plus each decoder's k + 1 positions as a chunk (one LM-head row
/// per sequence). A plain batch (spec_tokens 0).
BatchShape proposer_first_pass(const BatchShape& b);
/// One of the proposer's k − 1 later steps (the middle one, standing for all): every sequence that drafts this step
/// (decoders and prompts that finish) decodes one token at its context after the first pass plus (k − 1)/2.
BatchShape proposer_decode_step(const BatchShape& b);

/// The proposer's cost model beside `target` (same GPU, profile, runtime, CUDA-graph setting): the draft model,
/// EAGLE head or MTP module at the target's tensor parallel (vLLM's draft_tensor_parallel_size default), 16-bit
/// (EAGLE heads and draft checkpoints) or, for MTP, in the target's format; no per-step CPU time of its own.
/// nullptr for n-gram. ConfigError at engine.speculative when the proposer cannot be split that way.
std::shared_ptr<const CostModel> make_proposer(const CostModel& target, const spec::ResolvedSpeculation& speculation,
                                               bool cuda_graphs);

}  // namespace llmsim::perf
