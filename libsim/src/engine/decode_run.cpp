// Decode runs: between an admission and a completion a replica's batch does not change — the same decoders each
// emit one token per step, the context grows by one token per decoder, and the step in which the next sequence
// finishes is known (the finish heap). Those steps are simulated without an event each: when a decode-only step
// starts with nothing else to do, the replica plans the steps after it (their times from perf::DecodeSteps, their
// KV growth from the phase counts) and the engine schedules one iteration_done event at the end of the last. A
// replica whose run is under way is brought up to date before anything reads or changes it (catch_up, cut_run:
// an arrival routed to it, a timeout, a failure, the run's end), so every boundary happens as the event-per-step
// engine would have run it: the same state, the same sums in the same order, the same bits. docs/engine.md.
#include "llmsim/core/error.hpp"
#include "replica.hpp"

namespace llmsim::engine::detail {

double Replica::plan_run(double now_s) {
  run_.steps = run_.at = 0;
  const double first_end = now_s + duration_s_;
  // A run needs a step that decodes every decoder and schedules nothing else whenever nothing waits (V1's unified
  // step; SGLang's decode step, whose retraction is the growth that does not fit) and a batch that only a
  // completion can change: nothing waiting, swapped, mid-prefill or cancelled. Speculative steps vary in length and
  // a prefill-only replica never decodes: both keep an event per step, as does a step that delivers first tokens
  // (ReplicaConfig::first_token_after_next_step).
  const bool unified = cfg_.policy == spec::SchedulerPolicy::vllm || cfg_.policy == spec::SchedulerPolicy::sglang;
  if (!decode_step_ || !unified || cfg_.spec_tokens > 0 || cfg_.prefill_only ||
      n_dec_ == 0 || !prefill_done_.empty() || !chunked_partial_.empty() || !waiting_.empty() || !swapped_.empty() ||
      !cancels_.empty() || swap_bytes_ > 0 || preempted_this_step_ || !fresh_.empty() || !first_pending_.empty())
    return first_end;
  // The first live or stale finish entry: a stale one ends the run early (safe), the boundary then pops it.
  const std::int64_t next_finish = finish_heap_.empty() ? std::numeric_limits<std::int64_t>::max() : finish_heap_.front().step;
  if (next_finish <= step_) return first_end;  // a sequence finishes in the step in flight
  // vLLM V0's graph length: the run's steps share the step in flight's graph or eager pricing; the step in which
  // the longest context (growing a token per step) first reaches the length is an event-driven boundary.
  const bool eager = long_context(longest_ctx_);
  const std::int64_t cross = eager_ctx_ > 0 && !eager ? eager_ctx_ - longest_ctx_ : std::numeric_limits<std::int64_t>::max();
  const perf::DecodeSteps& steps = decode_steps(n_dec_, eager);
  run_.end_s[0] = first_end;
  run_.duration_s[0] = duration_s_;
  std::int64_t free = kv_.free();
  std::int64_t freed_sum = 0, grown_sum = 0;  // windowed(): the run's credited pages and blocks so far
  std::int32_t k = 1;
  // Step k starts when step k − 1 ends; step_ is the token clock of step 0 (begin_decode_step advanced it). First
  // how many steps the run holds, then their times at once, then their ends.
  for (; k < DecodeRun::kMax; ++k) {
    if (next_finish <= step_ + k - 1) break;  // a sequence finishes in step k − 1: its boundary is an event
    if (k >= cross) break;  // step k's longest context (longest_ctx_ + k) reaches the graphs' length
    // grow_decoders at step k's start: the decoders whose next position opens a block (clock step_ + k).
    const std::int64_t need = phase_count_[static_cast<std::size_t>(mod_block(step_ + k))];
    if (windowed()) {  // kv_window.cpp: the pages past-window decoders free first; a decoder passing its window
      // base in step k is an event-driven boundary (window_commit moves it).
      const auto ring = static_cast<std::int64_t>(window_ring_.size());
      if (window_ring_[static_cast<std::size_t>((step_ + k) % ring)] > 0) break;
      const std::int64_t freed = window_past_[static_cast<std::size_t>(mod_block(step_ + k))] * cfg_.window_pages;
      if (need > kv_.free_with_credit(freed_sum + freed) - grown_sum) break;
      freed_sum += freed;
      grown_sum += need;
      run_.freed[k] = freed;
      run_.need[k] = need;
      continue;
    }
    if (need > free) break;  // it would preempt: an event-driven boundary
    free -= need;
    run_.need[k] = need;
  }
  steps.times(ctx_sum_ + n_dec_, n_dec_, k - 1, run_.duration_s + 1);
  for (std::int32_t j = 1; j < k; ++j) {
    const double d = run_.duration_s[j];
    LLMSIM_CHECK(d > 0, "the cost model returned a non-positive iteration time");
    run_.end_s[j] = run_.end_s[j - 1] + d;  // the engine's now_s + duration_s(), boundary after boundary
  }
  run_.steps = k;
  run_.at = 1;
  return run_.end_s[k - 1];
}

void Replica::commit_run_step(std::int64_t& grown, std::int64_t& freed) {
  const std::int32_t k = run_.at++;
  const double now_s = run_.end_s[k - 1];
  // finish_iteration of a decode-only step in which no sequence finishes (plan_run saw to that): the gaps, and the
  // context grown by a token per decoder. (It also sets the KV integral's value at now_s; the start below sets it
  // again at the same instant, which adds used × 0: the one set below gives the same bits.)
  emit_token_gaps(now_s);
  // start_iteration at now_s: schedule_v1 grows the decoders (it fits: planned) and begins the decode step
  // (begin_decode_step with one token per step: the previous step's groups are old, none are fresh); nothing else is
  // scheduled. Then count_iteration's decode-only case (x + 0.0 terms skipped). test_decode_runs.cpp checks the
  // whole against the event-per-step path, bit for bit. Its blocks are added to `grown`, which catch_up allocates
  // once for all the steps it commits.
  grown += run_.need[k];
  freed += run_.freed[k];
  itl_old_measured_ = n_dec_measured_;  // fresh_ is empty inside a run (nothing joins the decode set)
  step_ += 1;
  // As if each step had allocated its own (and credited the pages its sliding groups freed: KvBlockManager::held;
  // without sliding groups no credit, and no division per step).
  std::int64_t used_blocks = kv_.used() + grown;
  if (windowed()) used_blocks -= (kv_.window_credit() + freed) / kv_.groups();
  const double used = static_cast<double>(used_blocks);
  kv_used_.set(now_s, used);
  emitting_ = n_dec_;
  const double d = run_.duration_s[k];
  duration_s_ = d;
  const auto n = static_cast<double>(n_dec_);
  work_.busy_s += d;
  work_.tokens += n;
  work_.output_tokens += n;  // finish_iteration's emitted tokens: every decoder's, none finishes
  work_.decode_context += static_cast<double>(ctx_sum_ + n_dec_);
  work_.iterations += 1;
  if (moe_) work_.expert_share += cost_->routed_expert_share(n);
  work_.seq_time += n * d;
  record_.start_s = now_s;
  record_.duration_s = d;
  record_.kv_blocks_used = used_blocks;
}

std::int32_t Replica::catch_up(double now_s) {
  // The steps' KV growth is allocated once at the end: nothing in between looks at the cache, and evicting for n1
  // blocks then n2 takes the same blocks, in the same LRU order, as evicting for n1 + n2 (the blocks fit: planned).
  std::int32_t started = 0;
  std::int64_t grown = 0, freed = 0;
  while (run_.at < run_.steps && run_.end_s[run_.at - 1] <= now_s) {
    commit_run_step(grown, freed);
    ++started;
  }
  if (freed > 0) kv_.add_window_credit(freed);  // before the growth, as grow_decoders does
  kv_.allocate(grown);
  return started;
}

bool Replica::cut_run() {
  const bool earlier = run_.at < run_.steps;
  run_.steps = run_.at = 0;
  return earlier;
}

}  // namespace llmsim::engine::detail
