// Client timeouts (workload.timeout_s; the Simulation's cancel_request is with the other exits in request_lifecycle.cpp):
// a request not finished timeout_s after its arrival is given up by its
// client. At that instant it counts as timed out — it leaves the system's count, never enters goodput or the
// tokens the cost is divided by, its output so far is wasted work, and a closed-loop user moves on — and the engine
// lets go of it wherever it is:
//  * the router's pending queue (no replica ready) or a replica's waiting / swapped queue: removed at once (a
//    swapped request's host blocks freed);
//  * the running batch: removed at the next iteration boundary, its KV blocks freed. That is vLLM's abort: the
//    API server's disconnect handler calls AsyncLLM.abort (vllm/v1/engine/async_llm.py), which drops the request
//    from the output processor at once and sends the abort to the engine core, whose busy loop handles its input
//    queue between steps (EngineCore.abort_requests -> Scheduler.finish_requests with FINISHED_ABORTED, in
//    vllm/v1/engine/core.py and vllm/v1/core/sched/scheduler.py): the step in flight completes, then the request
//    leaves the running list and its blocks are freed. A request whose last token comes in that step is still
//    timed out for its client;
//  * static batching keeps a cancelled running request as padding until its batch ends, as it does a finished one;
//  * the synthetic M/G/c service (no engine to abort into) finishes a request already in service and discards it.
// Cost when off: none (no Timeouts object, no events). When on: one FIFO entry per request and one timer event
// at a time (timeouts.hpp).
#include "request_lifecycle.hpp"
#include "simulation.hpp"

namespace llmsim::engine::detail {

// ---- the replica's side ----

std::int64_t Replica::cancel(std::int32_t i) {
  Seq& s = (*pool_)[i];
  LLMSIM_CHECK(s.timed_out && !s.finished, "cancelling a request that did not time out or already finished");
  std::int64_t produced = s.generated;
  switch (s.state) {
    case SeqState::waiting:
      // Waiting requests hold no blocks, but a pulled KV's (disaggregation: read, queued first to be admitted).
      LLMSIM_CHECK(s.prefix_blocks == 0 && (s.own_blocks == 0 || s.remote_tokens > 0), "a waiting request holds KV blocks");
      LLMSIM_CHECK(waiting_.erase(i), "a timed-out waiting request is not in its replica's queue");
      kv_.release(s.own_blocks);
      s.own_blocks = 0;
      break;
    case SeqState::swapped:
      LLMSIM_CHECK(swapped_.erase(i), "a timed-out swapped request is not in its replica's swap queue");
      kv_.drop_swapped(s.own_blocks);
      s.own_blocks = 0;
      break;
    case SeqState::prefill:
    case SeqState::decoding:
      if (s.state == SeqState::decoding) produced = s.gen_base + (step_ - s.k0);
      cancels_.emplace_back(i, s.id);
      // No step in flight: the boundary is now (inside a multi-step window, its end: the batch is fixed until then).
      if (!busy_ && window_left_ == 0) apply_cancels();
      return produced;
    default:
      throw InternalError("cancelling a request that is not held by a replica");
  }
  leave_engine(s, SeqState::done, *outstanding_);
  pool_->release(i);
  return produced;
}

void Replica::apply_cancels() {
  const bool is_static = cfg_.policy == spec::SchedulerPolicy::static_batching;
  for (const auto& [i, id] : cancels_) {
    Seq& s = (*pool_)[i];
    // Gone meanwhile: it emitted its last token in the step that was in flight (and left, or is padding), and its
    // slot may hold another request by now.
    if (s.id != id || !s.timed_out || s.finished || (s.state != SeqState::prefill && s.state != SeqState::decoding)) continue;
    if (is_static) {  // padding until the batch ends, holding its slot and growing with the batch
      LLMSIM_CHECK(s.state == SeqState::decoding, "static batching: a running request outside the decode set");
      const std::int64_t tokens = tokens_now(s);
      leave_decoding(i);
      s.ctx0 = tokens;
      finish_at_engine(s, *outstanding_);
      ++static_done_;
      start_decoding(i, last_decode_end_s_, false);
      continue;
    }
    release_blocks(s);  // before leaving the decode set: its block count follows from the decode state
    if (s.state == SeqState::decoding) {
      leave_decoding(i);
    } else {
      auto it = std::find(chunked_partial_.begin(), chunked_partial_.end(), i);
      if (it != chunked_partial_.end()) chunked_partial_.erase(it);
    }
    unlink(i);
    leave_engine(s, SeqState::done, *outstanding_);
    pool_->release(i);
  }
  cancels_.clear();
}

// ---- the simulation's side ----

void Simulation::watch_timeout(std::int32_t i, std::int64_t id, double now_s) {
  if (const auto deadline = timeouts_->watch(i, id, now_s, pool_[i].input)) schedule_fleet(*deadline, EventKind::timeout, 0);
}

bool Simulation::on_timeout(double now_s) {
  bool cancelled = false;
  const auto next = timeouts_->expire(now_s, [&](std::int32_t i, std::int64_t id) { cancelled |= cancel_request(i, id, now_s); });
  // Nothing in the system: every entry left belongs to a finished request; the next arrival re-arms the timer.
  if (ledger_.in_system() == 0) timeouts_->clear();
  else if (next) schedule_fleet(*next, EventKind::timeout, 0);
  return cancelled;
}

}  // namespace llmsim::engine::detail
