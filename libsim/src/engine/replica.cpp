#include "replica.hpp"
#include "request_lifecycle.hpp"

#include <algorithm>
#include <functional>

#include "llmsim/core/error.hpp"

namespace llmsim::engine::detail {

Replica::Replica(std::int32_t index, std::int32_t virtual_engine, const ReplicaConfig& cfg, KvBlockManager kv, const perf::CostModel& cost,
                 SeqPool& pool, metrics::Collector& metrics, std::int64_t* outstanding)
    : index_(index), cfg_(cfg), kv_initial_(kv), kv_(std::move(kv)), host_(cfg.host_tier_blocks), cost_(&cost), pool_(&pool), metrics_(&metrics),
      phase_count_(static_cast<std::size_t>(kv_.block_size()), 0), spec_(cfg.spec_expected_tokens) {
  LLMSIM_CHECK(cfg_.spec_tokens == 0 || (cfg_.spec_expected_tokens >= 1 && cfg_.spec_expected_tokens <= cfg_.spec_tokens + 1.0),
               "speculative decoding's expected tokens per step outside [1, k + 1]");
  finish_heap_.reserve(static_cast<std::size_t>(cfg_.max_num_seqs) + 16);
  eager_ctx_ = cost.eager_decode_context();
  fresh_.reserve(64);
  itl_groups_.reserve(64);
  prefill_done_.reserve(static_cast<std::size_t>(cfg_.max_num_seqs) + 16);
  record_.replica = index_;
  record_.virtual_engine = virtual_engine;
  LLMSIM_CHECK(outstanding != nullptr, "a replica without its outstanding-count slot");
  outstanding_ = outstanding;
  *outstanding_ = 0;
  kv_used_.set(0.0, 0.0);
  moe_ = cost.routed_expert_share(1) > 0;
  if (windowed()) window_init();
}

void Replica::enqueue(std::int32_t i) {
  Seq& s = (*pool_)[i];
  // A routed request is still wanted (always on: one compare per routing; it caught a timed-out prefill handed to
  // the decode pool) and holds no KV here yet (a disaggregated one's blocks are still the prefill replica's).
  LLMSIM_CHECK(!s.timed_out, "a request routed after its client timed out");
  LLMSIM_DEEP_CHECK(s.own_blocks == 0 && s.prefix_blocks == 0 && !s.finished, "a request routed with blocks held or finished");
  s.replica = index_;
  enter_engine(s, *outstanding_);
  waiting_.push_back(i);
}

// ---- running list ----

void Replica::link_tail(std::int32_t i) {
  Seq& s = (*pool_)[i];
  s.prev = tail_;
  s.next = -1;
  if (tail_ >= 0) (*pool_)[tail_].next = i;
  else head_ = i;
  tail_ = i;
  count_joined_running();  // its linear-attention state too (admission checked it)
}

void Replica::unlink(std::int32_t i) {
  Seq& s = (*pool_)[i];
  if (s.prev >= 0) (*pool_)[s.prev].next = s.next;
  else head_ = s.next;
  if (s.next >= 0) (*pool_)[s.next].prev = s.prev;
  else tail_ = s.prev;
  s.prev = s.next = -1;
  --running_;
  if (cfg_.state_blocks > 0) kv_.release(cfg_.state_blocks);
}

// ---- decode set ----

std::int64_t Replica::phase_of(const Seq& s) const { return mod_block(s.k0 + 1 - s.ctx0); }

std::int64_t Replica::growth_of(std::int64_t phase, std::int64_t n) const {
  // Clock values step_+1 .. step_+n congruent to `phase` (mod block_size): n <= k + 1, a handful.
  std::int64_t c = 0;
  for (std::int64_t t = step_ + 1; t <= step_ + n; ++t) c += mod_block(t) == phase;
  return c;
}

void Replica::start_decoding(std::int32_t i, double /*now_s*/, bool fresh_group_member, bool silent_gap) {
  Seq& s = (*pool_)[i];
  transition(s, SeqState::decoding);
  s.k0 = step_;
  s.gen_base = s.generated;
  ++s.stamp;
  ++n_dec_;
  if (s.measured) ++n_dec_measured_;
  ctx_sum_ += s.ctx0;
  ++phase_count_[static_cast<std::size_t>(phase_of(s))];
  if (windowed()) window_join(s);
  if (eager_ctx_ > 0) {
    const SeqPool& pool = *pool_;
    longest_.push(s.ctx0 - s.k0, i, s.stamp, n_dec_, [&pool](std::int32_t seq, std::uint32_t stamp) {
      const Seq& q = pool[seq];
      return q.stamp == stamp && q.state == SeqState::decoding;
    });
  }
  const std::int64_t out = engine_output(s);
  finish_sum_ += s.k0 + out - s.gen_base;
  output_sum_ += out;
  if (cfg_.policy == spec::SchedulerPolicy::sglang && s.output - s.gen_base > spec::sglang::kClipMaxNewTokens) [[unlikely]]
    sg_.longs.push_back({i, s.stamp, s.k0 + s.output - s.gen_base});
  if (!s.finished) {
    finish_heap_.push_back(FinishEntry{s.k0 + out - s.gen_base, i, s.stamp});
    std::push_heap(finish_heap_.begin(), finish_heap_.end(), std::greater<>{});
  }
  s.fresh_group = -1;
  if (fresh_group_member) {
    if (fresh_.empty() || fresh_.back().time_s != s.last_token_s || fresh_.back().silent != silent_gap)
      fresh_.push_back(FreshGroup{s.last_token_s, 0, silent_gap});
    s.fresh_group = static_cast<std::int32_t>(fresh_.size() - 1);
    if (s.measured) {
      ++fresh_.back().measured;
      ++fresh_total_measured_;
    }
  }
}

void Replica::leave_decoding(std::int32_t i) {
  Seq& s = (*pool_)[i];
  LLMSIM_CHECK(s.state == SeqState::decoding, "leaving the decode set without being in it");
  if (windowed()) window_leave(s);
  ++s.stamp;
  --n_dec_;
  if (s.measured) --n_dec_measured_;
  ctx_sum_ -= tokens_now(s);
  --phase_count_[static_cast<std::size_t>(phase_of(s))];
  finish_sum_ -= s.k0 + engine_output(s) - s.gen_base;
  output_sum_ -= engine_output(s);
  const bool fresh = s.k0 == step_;  // has not decoded since it joined: its last token came from elsewhere
  if (fresh && s.fresh_group >= 0 && s.measured) {
    --fresh_[static_cast<std::size_t>(s.fresh_group)].measured;
    --fresh_total_measured_;
  }
  if (!fresh) s.last_token_s = last_decode_end_s_;
  s.fresh_group = -1;
  if (!s.finished) s.generated = s.gen_base + (step_ - s.k0);
}

// ---- blocks ----

void Replica::release_shared(Seq& s) {
  if (s.prefix_blocks > 0) {
    if (s.chain) {
      // Deepest block first, as vLLM frees a request's blocks in reverse order: the LRU list evicts them first,
      // so a prefix cut short keeps its first blocks (and a cached block's parent stays cached while it is).
      kv_.release_chain(chain_keys(s), s.prefix_blocks, s.chain_tip);
      s.chain_tip = -1;
    } else {
      kv_.release_prefix(s.prefix_key);
    }
  }
  s.prefix_blocks = 0;
}

void Replica::release_blocks(Seq& s) {
  std::int64_t own = s.state == SeqState::decoding ? decoding_own_blocks(s) : s.own_blocks;
  if (s.chain_blocks > 0 && s.finished && cfg_.prefix_caching) own = publish_reply(s, own);
  kv_.release(own);
  s.own_blocks = 0;
  release_shared(s);
}

bool Replica::try_admit(std::int32_t i, double now_s, std::int64_t first_chunk) {
  Seq& s = (*pool_)[i];
  std::int64_t pb = 0, own_hit = 0, shared_cost = 0, loaded = 0;
  // None cached without prefix caching or a transferred KV (cached_tokens' first tests, kept off the common path).
  const std::int64_t cached =
      cfg_.prefix_caching || s.remote_tokens > 0 ? cached_tokens(s, &pb, &own_hit, &shared_cost, &loaded) : 0;
  const std::int64_t chunk = std::min(first_chunk, s.prefill_target - cached);
  LLMSIM_CHECK(chunk >= 1, "admission without a token to compute");
  // Blocks held after admission: the prefix (shared), then own blocks for the cached and the chunk's tokens. A shared
  // prefix is referenced whole at admission (all its blocks allocated by the request that first computes it), so a
  // first chunk shorter than the prefix needs no own block yet: none, never a negative count.
  const std::int64_t own = std::max<std::int64_t>(0, kv_.blocks_for(cached + chunk) - pb);
  const std::int64_t held = s.own_blocks;  // a waiting request holds none, but a pulled KV's (replica_handoff.cpp)
  const std::int64_t cost = own + shared_cost - held + cfg_.state_blocks;  // V1 hybrid: its state's blocks too
  if (!kv_.can_admit(cost)) return false;
  const std::int64_t taken = kv_.reclaim(s.cache_handle, own_hit) + held;  // own blocks kept since a preemption
  s.cache_handle = -1;
  if (s.chain) {
    s.chain_tip = kv_.acquire_chain(chain_keys(s), pb);
  } else if (pb > 0) {
    kv_.acquire_prefix(s.prefix_key, pb);
  }
  kv_.allocate(own - taken);  // loaded host-tier blocks are own blocks: allocated here, filled by the copy
  if (host_.enabled() && s.chain && s.remote_tokens == 0) host_admitted(s, cached / kv_.block_size() - loaded, loaded, own_hit == 0);
  if (s.measured && cfg_.prefix_caching) {
    work_.prefix_query_tokens += static_cast<double>(s.prefill_target);
    work_.prefix_hit_tokens += static_cast<double>(cached - loaded * kv_.block_size());  // the GPU's hits
  }
  s.own_blocks = own;
  s.prefix_blocks = pb;
  s.prefilled = cached;
  transition(s, SeqState::prefill);
  if (s.admitted_s < 0) s.admitted_s = now_s;
  if (s.remote_tokens > 0 && s.decode_admitted_s < 0) s.decode_admitted_s = now_s;
  if (s.first_cached < 0) s.first_cached = static_cast<std::int32_t>(cached);
  link_running(i);
  return true;
}

bool Replica::grow_decoders(double now_s) {
  const std::int64_t n = next_step_tokens();
  std::int64_t need = 0;
  for (std::int64_t t = step_ + 1; t <= step_ + n; ++t) need += phase_count_[static_cast<std::size_t>(mod_block(t))];
  if (windowed()) return grow_windowed(now_s, n, need);
  bool preempted = false;
  while (need > kv_.free()) {
    need -= preempt_tail(now_s);
    preempted = true;
  }
  kv_.allocate(need);
  return preempted;
}

std::int64_t Replica::admit_chunked(double now_s, std::int64_t budget, bool whole_prompt, perf::BatchShape& shape) {
  while (budget > 0 && !waiting_.empty() && running_ < cfg_.max_num_seqs) {
    const std::int32_t i = waiting_.front();
    if (queued_at((*pool_)[i]) > plan_cutoff_s_) break;  // async scheduling: it came after this step was planned
    if ((*pool_)[i].kv_pending) [[unlikely]] {  // disaggregation: allocate and read the KV, compute nothing yet
      if (!start_pull(i, now_s)) break;
      waiting_.pop_front();
      continue;
    }
    if (!try_admit(i, now_s, whole_prompt ? (*pool_)[i].prefill_target : budget)) break;
    waiting_.pop_front();
    const Seq& s = (*pool_)[i];
    const std::int64_t chunk = std::min(s.prefill_target - s.prefilled, budget);
    add_prefill_chunk(i, chunk, shape);
    if (s.prefilled < s.prefill_target) chunked_partial_.push_back(i);
    budget -= chunk;
  }
  return budget;
}

void Replica::add_prefill_chunk(std::int32_t i, std::int64_t chunk, perf::BatchShape& shape) {
  Seq& s = (*pool_)[i];
  const bool last = s.prefilled + chunk == s.prefill_target;
  shape.add_prefill(chunk, s.prefilled, last);
  s.prefilled += chunk;
  if (s.chain) publish_blocks(s);
  if (last) prefill_done_.push_back(i);
}

void Replica::begin_decode_step(perf::BatchShape& shape) {
  // Every running decoder emits one token this step; the ITL groups of the previous step become "old".
  itl_old_measured_ = n_dec_measured_ - fresh_total_measured_;
  itl_groups_.swap(fresh_);
  fresh_.clear();
  fresh_total_measured_ = 0;
  decode_step_ = true;
  step_tokens_ = cfg_.spec_tokens > 0 ? spec_.advance() : 1;
  step_ += step_tokens_;
  shape.decode_seqs = n_dec_;
  shape.decode_context = ctx_sum_;
  shape.decode_max_context = longest_ctx_ = longest_context_now();
  shape.spec_tokens = cfg_.spec_tokens;
}

// ---- iteration lifecycle (its start: replica_step.cpp) ----

double Replica::step_time(const perf::BatchShape& shape, bool serial, double* proposer_s) {
  if (serial) return cost_->serial_time(shape, proposer_s);
  if (shape.spec_tokens > 0) return cost_->iteration_time(shape, proposer_s);
  if (shape.prefill_seqs == 0)
    return decode_steps(shape.decode_seqs, long_context(shape.decode_max_context)).time(shape.decode_context);
  return cost_->iteration_time(shape);
}

void Replica::finish_iteration(double now_s, std::vector<std::int32_t>& finished) {
  LLMSIM_CHECK(busy_, "iteration finished while none is in flight");
  busy_ = false;
  prev_step_start_s_ = record_.start_s;
  prev_step_end_s_ = now_s;
  const bool is_static = cfg_.policy == spec::SchedulerPolicy::static_batching;
  // vLLM V0's asynchronous output processor: the prompts completed by the previous iteration reach the caller now,
  // before the finishing ones below leave the decode set (a one-token request's first token is also its last, both
  // delivered by this iteration, the one that found its stop). The second token's gap starts now: when this
  // iteration decoded it, that gap is 0 and its group stays silent; after a prefill-only step (V0 schedules waiting
  // prompts first) the sequence has not decoded yet, and its group's gap runs from now to its first decode step.
  for (const PendingFirst& p : first_pending_) {
    Seq& s = (*pool_)[p.seq];
    if (s.stamp != p.stamp || s.state != SeqState::decoding) continue;
    s.first_token_s = now_s;
    if (!decode_step_ && s.fresh_group >= 0) {
      FreshGroup& g = fresh_[static_cast<std::size_t>(s.fresh_group)];
      g.time_s = now_s;
      g.silent = false;
    } else if (window_left_ > 0 && !cfg_.window_streams_steps && s.fresh_group >= 0) {
      // A multi-step window's first step delivered the first token; the window's other tokens come at its end, a
      // gap from now (its group, taken by the window's first step).
      FreshGroup& g = itl_groups_[static_cast<std::size_t>(s.fresh_group)];
      g.time_s = now_s;
      g.silent = false;
    }
  }
  first_pending_.clear();
  auto finish_decoder = [&](std::int32_t i) {
    Seq& s = (*pool_)[i];
    s.generated = s.output;
    s.last_token_s = now_s;
    finish_at_engine(s, *outstanding_);
    finished.push_back(i);
    if (is_static) {
      ++static_done_;
    } else {
      release_blocks(s);
      leave_decoding(i);
      unlink(i);
      transition(s, SeqState::done);
    }
  };
  if (decode_step_ && window_left_ > 0) {
    finish_window_step(now_s);  // multi-step: a window's step before its last (multi_step.cpp)
  } else if (decode_step_) {
    emit_token_gaps(now_s);
    // The steps this decode ended: its own, or a multi-step window's (whose requests leave together at its end).
    const std::int64_t span = cfg_.scheduler_steps > 1 ? step_ - window_start_step_ : step_tokens_;
    while (!finish_heap_.empty() && finish_heap_.front().step <= step_) {
      const FinishEntry e = finish_heap_.front();
      std::pop_heap(finish_heap_.begin(), finish_heap_.end(), std::greater<>{});
      finish_heap_.pop_back();
      Seq& s = (*pool_)[e.seq];
      if (s.stamp != e.stamp || s.state != SeqState::decoding) continue;  // left the decode set meanwhile
      LLMSIM_CHECK(e.step > step_ - span, "a sequence missed its finishing step");
      // A step never emits more than the sequence's remaining output; the token of V0's extra step is dropped.
      emitting_ -= step_ - e.step + output_tail();
      finish_decoder(e.seq);
    }
  } else if (output_tail() > 0) {
    // V0's asynchronous output processor finds a stop during whatever iteration follows the token: a prefill-only
    // step (V0 schedules waiting prompts first) delivers the last tokens of the decoders that only await it.
    while (!finish_heap_.empty() && finish_heap_.front().step <= step_ + output_tail()) {
      const FinishEntry e = finish_heap_.front();
      std::pop_heap(finish_heap_.begin(), finish_heap_.end(), std::greater<>{});
      finish_heap_.pop_back();
      Seq& s = (*pool_)[e.seq];
      if (s.stamp != e.stamp || s.state != SeqState::decoding) continue;
      // Its last token, computed by the last decode step, is delivered now: that gap (none for a one-token request
      // that has not decoded, whose first token is its last).
      if (s.measured && s.k0 < step_) metrics_->on_token_gap(now_s - last_decode_end_s_, 1.0, itl_);
      finish_decoder(e.seq);
    }
  }
  if (decode_step_ && cfg_.spec_tokens > 0) work_.spec_emitted += static_cast<double>(emitting_ - static_cast<std::int64_t>(prefill_done_.size()));
  if (spec_plan_seqs_ > 0) {  // the step's sequences, counted with its tokens (spec_plan_seqs_)
    work_.spec_steps += 1;
    work_.spec_seq_steps += spec_plan_seqs_;
    work_.proposer_s += spec_plan_proposer_s_;
    spec_plan_seqs_ = spec_plan_proposer_s_ = 0;
  }
  for (const std::int32_t i : prefill_done_) {
    Seq& s = (*pool_)[i];
    if (!chunked_partial_.empty()) {
      auto it = std::find(chunked_partial_.begin(), chunked_partial_.end(), i);
      if (it != chunked_partial_.end()) chunked_partial_.erase(it);
    }
    if (cfg_.prefill_only) {  // disaggregation: the KV leaves for the decode pool, its blocks held until it has
      leave_engine(s, SeqState::handoff, *outstanding_);
      unlink(i);
      finished.push_back(i);
      continue;
    }
    // The step that completes a prompt samples a token: the first one, or the next one after a recompute.
    const bool first = s.first_token_s < 0;
    if (first) s.first_token_s = now_s;
    else if (s.measured) metrics_->on_token_gap(now_s - s.last_token_s, 1.0, itl_);
    s.last_token_s = now_s;
    s.generated += 1;
    s.ctx0 = s.prefill_target;
    if (s.generated >= engine_output(s)) {
      finish_at_engine(s, *outstanding_);
      finished.push_back(i);
      if (is_static) {
        ++static_done_;
        start_decoding(i, now_s, false);  // padding: keeps its slot and grows with the batch
      } else {
        release_blocks(s);
        unlink(i);
        transition(s, SeqState::done);
      }
    } else {
      const bool delayed = first && cfg_.first_token_after_next_step;
      start_decoding(i, now_s, true, delayed);
      if (delayed) first_pending_.push_back({i, s.stamp});
    }
  }
  prefill_done_.clear();
  if (!skipped_.empty()) rejoin_skipped();  // V0 0.5.4-0.5.5: the decoders this step's walk skipped (v0_walk.cpp)
  if (is_static && running_ > 0 && static_done_ == running_) release_static_batch();
  kv_used_.set(now_s, static_cast<double>(kv_.held()));
  work_.output_tokens += static_cast<double>(emitting_);
  if (saturated_) {
    const double elapsed = now_s - record_.start_s;  // under pipeline parallel, includes waits at busy stages
    sat_.time_s += elapsed;
    sat_.iterations += 1;
    sat_.output_tokens += static_cast<double>(emitting_);
    sat_.prefill_tokens += static_cast<double>(record_.prefill_tokens);
    if (sat_prefill_share_ > 0) sat_.prefill_s += sat_prefill_share_ * elapsed;
    sat_.seq_time += static_cast<double>(record_.prefill_seqs + record_.decode_seqs) * elapsed;
  }
}

}  // namespace llmsim::engine::detail
