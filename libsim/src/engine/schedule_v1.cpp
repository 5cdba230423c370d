// Batch formation of vLLM V1's unified scheduler (policy "vllm"; private to the engine). Read from
// vllm/v1/core/sched/scheduler.py and vllm/v1/core/kv_cache_manager.py (0.11 line), as summarised in
// ../shared/reference/serving-engines.md §2:
//  * one token budget (max_num_batched_tokens) per step, no prefill or decode phases: running requests first,
//    in admission order, each taking the tokens it still needs (1 for a decode, the rest of the prompt for a
//    partial prefill) capped by the budget left; then, only if nobody was preempted in this step, waiting
//    requests from the head of the queue while fewer than max_num_seqs run and budget is left;
//  * KV blocks are allocated per chunk (cached tokens + the tokens scheduled now), never the whole prompt up
//    front, with no watermark; a waiting request whose blocks do not fit stops admission (head of line);
//  * when a running request cannot get its blocks, the last running request is preempted by recompute (its
//    blocks freed but kept in the prefix cache) and put back at the front of the queue; a request that has to
//    preempt itself ends the walk.
// With the default long_prefill_token_threshold = 0 a new request is left partially prefilled only when it took
// the rest of the budget, so at most one partial prefill exists and it is the tail of the running list: every
// decoder decodes in every step (max_num_batched_tokens >= max_num_seqs), which keeps the step O(1).
#include <algorithm>

#include "llmsim/core/error.hpp"
#include "replica.hpp"

namespace llmsim::engine::detail {

void Replica::schedule_v1(double now_s, perf::BatchShape& shape) {
  // Decoders first: growth blocks for this step, preempting from the tail (the partial prefill goes first).
  bool preempted = n_dec_ > 0 ? grow_decoders(now_s) : false;
  if (n_dec_ > 0) begin_decode_step(shape);
  std::int64_t budget = cfg_.max_num_batched_tokens - shape.tokens();  // a decoder takes 1 + k tokens

  // Then the partial prefill at the tail continues with the next chunk, allocating its blocks.
  for (std::size_t k = 0; k < chunked_partial_.size() && budget > 0;) {
    const std::int32_t i = chunked_partial_[k];
    Seq& s = (*pool_)[i];
    const std::int64_t chunk = std::min(s.prefill_target - s.prefilled, budget);
    // A chunk still inside a shared prefix (referenced whole at admission) needs no new block.
    const std::int64_t need = std::max<std::int64_t>(0, kv_.blocks_for(s.prefilled + chunk) - s.prefix_blocks - s.own_blocks);
    bool self_preempted = false;
    while (need > kv_.free()) {
      LLMSIM_CHECK(tail_ >= 0 && (*pool_)[tail_].state != SeqState::decoding,
                   "V1: a decoder behind a partial prefill (the running list lost its order)");
      self_preempted = tail_ == i;
      preempt_tail(now_s);  // erases the victim from chunked_partial_
      preempted = true;
      if (self_preempted) break;
    }
    if (self_preempted) break;  // vLLM: a request that preempts itself ends the running walk
    kv_.allocate(need);
    s.own_blocks += need;
    add_prefill_chunk(i, chunk, shape);
    budget -= chunk;
    ++k;
  }
  if (preempted) return;  // no admissions in a step that preempted

  // Waiting requests, FCFS; each allocates the blocks of its cached tokens and its first chunk.
  admit_chunked(now_s, budget, /*whole_prompt=*/false, shape);
}

}  // namespace llmsim::engine::detail
