// Batch formation of SGLang's scheduler (policy "sglang"; private to the engine). Read from SGLang's
// python/sglang/srt/managers/scheduler.py (get_next_batch_to_run, get_new_batch_prefill, update_running_batch) and
// schedule_policy.py (PrefillAdder), 0.3.x-0.5.x, as summarised in ../shared/reference/serving-engines.md §5 and
// docs/engine.md "SGLang":
//  * a step is a prefill batch whenever one can be formed — decodes stall for it (mixing decodes into prefill batches,
//    --enable-mixed-chunk, is off by default) — else a decode step of every running request;
//  * a prefill batch takes the chunked request carried over first, then the waiting queue in order (FCFS), within
//    chunked_prefill_size (max_num_batched_tokens) and max_prefill_tokens input tokens; a prompt that does not fit
//    the chunk budget left is cut to it and becomes the one chunked request;
//  * admission reserves memory for future output: a request needs prompt_not_cached + min(max_new_tokens, 4096)
//    below free + evictable − Σ_running min(remaining output, 4096) × new_token_ratio − what this batch already
//    took (at full size). A failure marks the running batch full: no prefill until it shrinks;
//  * new_token_ratio decays linearly per decode step from 0.7 to 0.098 over 600 steps, is reset to 0.7 when the
//    engine is idle, and after a retraction to (tokens decoded + 20 × batch) / Σ max_new_tokens (at most 1);
//  * before a decode step that does not fit the free KV, requests are retracted (recomputed later) until every
//    remaining one has 20 tokens of room: SGLang takes the fewest output tokens first; llmsim the newest admitted,
//    which is the same request unless outputs differ in length. The retracted re-enter the waiting queue at its
//    back (scheduler.py update_running_batch: `self.waiting_queue.extend(retracted_reqs)` in 0.3.x-0.4.x, the same
//    through `_extend_requests_to_queue` later), so under a standing queue they wait for all of it;
//  * with the radix cache off and requests that ignore EOS (workload.ignore_eos), admission is add_one_req_ignore_eos:
//    a walk over the running requests' exact future tokens (schedule_sglang_eos.cpp, spec/sglang_admission.hpp);
//  * the overlap scheduler (0.3.6+, perf/sglang_overlap.hpp) forms a batch while the step before it runs: only
//    requests queued when that step started are admitted (plan_cutoff_s_, as vLLM V1's async scheduling).
// A request's max_new_tokens is its output length (benchmarks set it so, with ignore_eos). The decode set's
// remaining output is kept as a sum over its finishing steps (replica.hpp), so the reservation is O(1) in the batch
// size except for decoders with more than 4096 tokens left, which are listed (rare; dropped once below the clip).
#include <algorithm>

#include "llmsim/core/error.hpp"
#include "replica.hpp"

namespace llmsim::engine::detail {

namespace sg = spec::sglang;

double Replica::sglang_ratio() const {
  const double min_ratio = sg::kInitNewTokenRatio * sg::kMinNewTokenRatioFactor;
  const double decay = (sg::kInitNewTokenRatio - min_ratio) / sg::kNewTokenRatioDecaySteps;
  return std::max(min_ratio, sg_.ratio - decay * static_cast<double>(step_ - sg_.ratio_step));
}

double Replica::sglang_reserved_tokens() {
  std::int64_t remaining = finish_sum_ - n_dec_ * step_;  // Σ (output − generated) over the decode set
  auto& longs = sg_.longs;
  for (std::size_t k = 0; k < longs.size();) {
    const Seq& s = (*pool_)[longs[k].seq];
    const std::int64_t left = longs[k].finish - step_;
    if (s.state != SeqState::decoding || s.stamp != longs[k].stamp || left <= sg::kClipMaxNewTokens) {
      longs[k] = longs.back();  // left the decode set, or below the clip for good
      longs.pop_back();
      continue;
    }
    remaining -= left - sg::kClipMaxNewTokens;
    ++k;
  }
  return static_cast<double>(remaining) * sglang_ratio();
}

bool Replica::sglang_retract(double now_s) {
  const std::int64_t n = next_step_tokens();
  std::int64_t need = 0;
  for (std::int64_t t = step_ + 1; t <= step_ + n; ++t) need += phase_count_[static_cast<std::size_t>(mod_block(t))];
  if (need <= kv_.free()) {
    kv_.allocate(need);
    return false;
  }
  const std::int64_t bs = kv_.block_size();
  // Retract until the step fits and every remaining decoder has kRetractDecodeSteps tokens of room.
  // The retracted go to the back of the waiting queue (the header's update_running_batch).
  while (n_dec_ > 0 && (need > kv_.free() || kv_.free() * bs < n_dec_ * sg::kRetractDecodeSteps))
    need -= preempt_tail(now_s, /*to_back=*/true);
  if (n_dec_ > 0) {
    const std::int64_t decoded = output_sum_ - (finish_sum_ - n_dec_ * step_);
    sg_.ratio = std::min(1.0, static_cast<double>(decoded + sg::kRetractDecodeSteps * n_dec_) /
                                  static_cast<double>(std::max<std::int64_t>(1, output_sum_)));
    sg_.ratio_step = step_;
  }
  kv_.allocate(need);
  return true;
}

void Replica::schedule_sglang(double now_s, perf::BatchShape& shape) {
  const std::int64_t bs = kv_.block_size();
  if (running_ == 0) {  // idle: SGLang resets the ratio (self_check_during_idle) and the batch is not full
    sg_.ratio = sg::kInitNewTokenRatio;
    sg_.ratio_step = step_;
    sg_.full = false;
  }
  if (sg_.full && running_ < sg_.full_running) sg_.full = false;  // the running batch shrank

  // ---- a prefill batch, if one can be formed ----
  std::int64_t rem_chunk = cfg_.max_num_batched_tokens;  // chunked_prefill_size
  std::int64_t rem_input = sg::kMaxPrefillTokens;
  bool any = false;
  // Reservations are taken against the free KV before this batch allocates (SGLang's adder counts them itself).
  const double free_tokens = static_cast<double>(kv_.free() * bs);
  double offset = 0;  // tokens this batch reserved, then the decoders' future output
  double inputs = 0;  // tokens this batch computes (cur_rem_token_offset): the ignore_eos walk's free pool is less them
  sg_.eos_built = false;  // the ignore_eos walk lists the running requests afresh for each batch (a new PrefillAdder)
  const bool eos_walk = cfg_.sglang_eos.walk != spec::SglangEosWalk::none;
  // The chunked request continues first with its next chunk (LLMSIM: it was admitted with its whole reservation).
  if (!chunked_partial_.empty()) {
    const std::int32_t i = chunked_partial_.front();
    Seq& s = (*pool_)[i];
    const std::int64_t chunk = std::min(s.prefill_target - s.prefilled, rem_chunk);
    const std::int64_t need = std::max<std::int64_t>(0, kv_.blocks_for(s.prefilled + chunk) - s.prefix_blocks - s.own_blocks);
    if (need <= kv_.free()) {
      kv_.allocate(need);
      s.own_blocks += need;
      add_prefill_chunk(i, chunk, shape);
      rem_chunk -= chunk;
      rem_input -= chunk;
      inputs += static_cast<double>(chunk);
      any = true;
      const bool last = s.prefilled == s.prefill_target;
      offset += static_cast<double>(chunk + (last ? std::min(s.output, sg::kClipMaxNewTokens) : 0));
    } else if (n_dec_ == 0) {
      // Nothing decodes to free memory (the reservation makes this rare): the request starts over later.
      while (running_ > 0) preempt_tail(now_s);
      return;
    } else {
      rem_chunk = 0;  // the decoders run; the chunk waits for their memory
    }
  }
  const bool may_admit = !sg_.full && rem_chunk > 0 && rem_input > 0;
  if (may_admit && !waiting_.empty()) {
    offset += sglang_reserved_tokens();
    while (!waiting_.empty()) {
      if (running_ >= cfg_.max_num_seqs) {
        sg_.full = true;
        break;
      }
      const std::int32_t i = waiting_.front();
      Seq& s = (*pool_)[i];
      // The overlap scheduler formed this batch when the step before it started (perf/sglang_overlap.hpp).
      if (queued_at(s) > plan_cutoff_s_) break;
      if (s.kv_pending) [[unlikely]] {  // disaggregation: allocate and read the KV, compute nothing yet
        if (!start_pull(i, now_s)) break;
        waiting_.pop_front();
        continue;
      }
      std::int64_t pb = 0, own_hit = 0, shared_cost = 0;
      const std::int64_t cached =
          cfg_.prefix_caching || s.remote_tokens > 0 ? cached_tokens(s, &pb, &own_hit, &shared_cost) : 0;
      const std::int64_t extend = s.prefill_target - cached;
      const std::int64_t max_new = std::min(s.output, sg::kClipMaxNewTokens);
      // NO_TOKEN. (llmsim: an idle engine skips the test, so a request whose prompt + clipped output exceeds the
      // whole pool still runs — SGLang would leave it waiting forever.)
      if (eos_walk) {
        // add_one_req_ignore_eos (schedule_sglang_eos.cpp): the exact walk instead of the ratio's estimate, and no
        // input-budget test before admission (budget_state after it ends the batch).
        if (running_ > 0 && !sglang_eos_admits(s, extend, free_tokens - inputs, free_tokens - offset)) {
          sg_.full = true;
          break;
        }
      } else {
        if (running_ > 0 && static_cast<double>(extend + max_new) >= free_tokens - offset) {
          sg_.full = true;
          break;
        }
        if (extend > rem_input && any) break;  // the input budget is spent (the first request may exceed it)
      }
      const bool whole = extend <= rem_chunk;
      const std::int64_t chunk = whole ? extend : rem_chunk;
      if (!try_admit(i, now_s, chunk)) break;  // its first chunk's blocks do not fit (evictable cache counted)
      waiting_.pop_front();
      add_prefill_chunk(i, chunk, shape);
      if (!whole) chunked_partial_.push_back(i);
      any = true;
      offset += static_cast<double>(chunk + (whole ? max_new : 0));
      inputs += static_cast<double>(chunk);
      rem_chunk -= chunk;
      rem_input -= chunk;
      if (free_tokens - offset <= 0) {  // budget_state NO_TOKEN
        sg_.full = true;
        break;
      }
      if (rem_chunk <= 0 || rem_input <= 0) break;
    }
    if (sg_.full) sg_.full_running = running_;
  }
  if (any) return;  // decodes stall for the prefill batch

  // ---- else a decode step of every running request ----
  if (n_dec_ == 0) return;
  sglang_retract(now_s);
  if (n_dec_ == 0) return;
  begin_decode_step(shape);
}

}  // namespace llmsim::engine::detail
