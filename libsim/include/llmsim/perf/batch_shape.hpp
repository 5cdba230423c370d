#pragma once
// The composition of one engine iteration, as sums so the cost model is O(1) in the number of sequences.
#include <cstdint>

namespace llmsim::perf {

struct BatchShape {
  std::int64_t prefill_seqs = 0;      ///< prefill chunks in the batch
  std::int64_t prefill_tokens = 0;    ///< Σ chunk lengths
  double prefill_attn_pairs = 0;      ///< Σ chunk·(context_before + (chunk+1)/2): causal query-key pairs
  std::int64_t prefill_kv_tokens = 0; ///< Σ (context_before + chunk): KV tokens read/written by prefill attention
  std::int64_t prefill_last_chunks = 0; ///< chunks that finish their prompt (they run the LM head)
  std::int64_t decode_seqs = 0;       ///< sequences decoding one token
  std::int64_t decode_context = 0;    ///< Σ context lengths (tokens already in the KV cache) of those
  /// The longest of those contexts: a V0 decode step replays its CUDA graph only while every sequence fits the
  /// captured length (perf/engine_overhead.hpp, RuntimeTraits::max_graph_seq_len). 0 = not given, taken as short.
  std::int64_t decode_max_context = 0;
  /// Speculative decoding: tokens each decoding sequence proposes and the target verifies this step (k), so each
  /// scores k + 1 tokens (perf/speculative.hpp); 0 = plain decode.
  std::int64_t spec_tokens = 0;

  void add_prefill(std::int64_t chunk, std::int64_t context_before, bool last_chunk) {
    prefill_seqs += 1;
    prefill_tokens += chunk;
    prefill_attn_pairs += static_cast<double>(chunk) * (static_cast<double>(context_before) + (chunk + 1) / 2.0);
    prefill_kv_tokens += context_before + chunk;
    prefill_last_chunks += last_chunk ? 1 : 0;
  }
  void add_decode(std::int64_t context) {
    decode_seqs += 1;
    decode_context += context;
    if (context > decode_max_context) decode_max_context = context;
  }
  /// Tokens through the target's linears: prefill tokens + (k + 1) per decoding sequence.
  std::int64_t tokens() const noexcept { return prefill_tokens + decode_seqs * (1 + spec_tokens); }
  bool empty() const noexcept { return prefill_seqs == 0 && decode_seqs == 0; }
};

}  // namespace llmsim::perf
