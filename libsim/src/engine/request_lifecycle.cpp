// The request lifecycle's checks and the Simulation's exits (request_lifecycle.hpp): retire, the one path every exit takes,
// the records, and the exits of failures (requeue or fail) and timeouts (cancel). A completion is finish_request
// (simulator.cpp, kept beside the iteration handler that calls it for every request).
#include "request_lifecycle.hpp"

#include <algorithm>

#include "simulation.hpp"

namespace llmsim::engine {

const char* outcome_name(RequestOutcome o) noexcept {
  switch (o) {
    case RequestOutcome::completed: return "completed";
    case RequestOutcome::failed: return "failed";
    case RequestOutcome::timed_out: return "timed_out";
    case RequestOutcome::unfinished: return "unfinished";
  }
  return "?";
}

}  // namespace llmsim::engine

namespace llmsim::engine::detail {

const char* state_name(SeqState s) noexcept {
  switch (s) {
    case SeqState::free: return "free";
    case SeqState::waiting: return "waiting";
    case SeqState::prefill: return "prefill";
    case SeqState::decoding: return "decoding";
    case SeqState::swapped: return "swapped";
    case SeqState::done: return "done";
    case SeqState::handoff: return "handoff";
    case SeqState::receiving: return "receiving";
  }
  return "?";
}

void illegal_transition(SeqState from, SeqState to) {
  throw InternalError(std::string("request lifecycle: no move from ") + state_name(from) + " to " + state_name(to));
}

void RequestLedger::check_conserved() const {
  for (const Counts* c : {&measured_, &warmup_}) {
    if (c->conserved()) continue;
    throw InternalError(std::string("requests not conserved (") + (c == &measured_ ? "measured" : "warm-up") +
                        "): arrived " + std::to_string(c->arrived) + " != rejected " + std::to_string(c->rejected) +
                        " + completed " + std::to_string(c->completed) + " + failed " + std::to_string(c->failed) +
                        " + timed out " + std::to_string(c->timed_out) + " + in the system " +
                        std::to_string(c->in_system));
  }
}

// ---- the Simulation's side: one exit path for every way a request leaves ----

void Simulation::retire(std::int32_t i, Exit how, double now_s, std::int64_t produced) {
  const Seq& s = pool_[i];
  ledger_.leave(s.measured, how);
  // What the client sees: the engine's first and last tokens after the serving path (perf/serving_path.hpp).
  const double path_s = serving_path_.latency_s(s.input);
  const double first_seen_s = s.first_token_s + path_s, done_seen_s = now_s + path_s;
  if (how == Exit::completed) {
    metrics::FinishedRequest f;
    f.tenant = s.tenant;
    f.arrival_s = s.arrival_s;
    f.admitted_s = s.admitted_s;
    f.first_token_s = first_seen_s;
    f.finish_s = done_seen_s;
    f.delivery_s = path_s;
    last_seen_s_ = std::max(last_seen_s_, done_seen_s);
    f.input_tokens = s.input;
    f.output_tokens = s.output;
    f.measured = s.measured;
    meter_.on_finish(now_s, collector_->on_request_finished(f));
    if (disagg_) disagg_->on_finished(s);
    if (s.measured) collector_->on_in_system_change(now_s, -1, s.tenant);
  } else {
    // Lost: never completed, never in goodput or the tokens the cost is divided by; its tokens were wasted work.
    collector_->on_request_lost(now_s, s.tenant, s.measured);
    if (how == Exit::failed) meter_.on_failed(now_s);
    else meter_.on_timed_out(now_s);
    wasted_tokens_ += static_cast<double>(produced);
  }
  if (session_stats_ && s.measured && s.turn >= 0) {
    if (how == Exit::completed)
      session_stats_->on_turn_completed(s.turn, (first_seen_s - s.arrival_s) * 1e3, s.input, s.first_cached);
    else
      session_stats_->on_turn_lost(s.turn);
  }
  if (autoscaler_) autoscaler_->on_in_system(now_s, ledger_.in_system());
  if (series_ && how == Exit::completed)
    series_->on_finish(now_s, (first_seen_s - s.arrival_s) * 1e3, (done_seen_s - s.arrival_s) * 1e3);
  if (opt_.record_requests) record_request(s, how == Exit::completed   ? RequestOutcome::completed
                                              : how == Exit::failed    ? RequestOutcome::failed
                                                                       : RequestOutcome::timed_out,
                                           how == Exit::completed ? done_seen_s : now_s, produced);
}

void Simulation::record_request(const Seq& s, RequestOutcome outcome, double end_s, std::int64_t produced) {
  RequestRecord rec;
  rec.id = s.id;
  rec.tenant = s.tenant;
  rec.replica = s.replica;
  rec.arrival_s = s.arrival_s;
  rec.admitted_s = s.admitted_s;
  rec.first_token_s = s.first_token_s < 0 ? s.first_token_s : s.first_token_s + serving_path_.latency_s(s.input);
  rec.finish_s = end_s;
  rec.input_tokens = static_cast<std::int32_t>(s.input);
  // A completed request's drawn length; a lost or unfinished one's tokens produced by the end.
  rec.output_tokens = static_cast<std::int32_t>(outcome == RequestOutcome::completed ? s.output : produced);
  rec.preemptions = s.preemptions;
  rec.retries = s.retries;
  rec.warmup = !s.measured;
  rec.outcome = outcome;
  result_.requests.push_back(rec);
}

void Simulation::record_unfinished(double end_s) {
  // Requests still in the system when the run ended (a horizon, a bound, an overload stop): one row each, so the
  // records hold every request that entered. A slot that left already (done, or static padding / a timed-out request
  // waiting for its replica's boundary) was recorded at its exit. In request order (ids), after the exits.
  const std::size_t first = result_.requests.size();
  for (std::size_t k = 0; k < pool_.capacity(); ++k) {
    const Seq& s = pool_[static_cast<std::int32_t>(k)];
    if (s.state == SeqState::free || s.state == SeqState::done || s.finished || s.timed_out) continue;
    record_request(s, RequestOutcome::unfinished, end_s, s.generated);  // generated: by its last step boundary
  }
  std::sort(result_.requests.begin() + static_cast<std::ptrdiff_t>(first), result_.requests.end(),
            [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
}

// ---- the exits other than completion (a completion is Simulation::finish_request, on the hot path in simulator.cpp) ----

// A replica failure evicted request `i` (engine/failures.hpp): a retry while its client has retries left, else lost.
void Simulation::requeue_or_fail(std::int32_t i, std::int64_t produced, double now_s) {
  Seq& s = pool_[i];
  if (s.timed_out) {  // its client had given up (counted then); the failure only frees its slot
    transition(s, SeqState::done);
    pool_.release(i);
    return;
  }
  // A retry while the client has retries left; then the request fails (the progress argument under failures faster
  // than its service time: each eviction consumes a retry, so every request ends).
  if (rs_.scenario.failures.on_failure == spec::OnFailure::requeue && s.retries < rs_.scenario.failures.max_retries) {
    retry(s);  // from scratch elsewhere (a client's retry): a new stream, a new first token
    ledger_.requeue(s.measured);
    const std::int32_t r = router_->route(replicas_);
    if (r < 0) pending_.push_back(i);
    else assign(i, r, now_s);
    return;
  }
  // Lost: never completed, never in goodput or the tokens the cost is divided by; its tokens were wasted work.
  retire(i, Exit::failed, now_s, produced);
  const std::int32_t source = s.source;
  transition(s, SeqState::done);
  pool_.release(i);
  if (driver_->is_user(source)) source_moves_on(source, now_s, false);  // a closed-loop user or session moves on
}

// The client's timeout (timeouts.hpp): request `i` leaves wherever it is (the engine lets go of it at its boundary).
bool Simulation::cancel_request(std::int32_t i, std::int64_t id, double now_s) {
  Seq& s = pool_[i];
  // Finished before its deadline (the slot is free or holds a later request), or already static padding.
  if (s.state == SeqState::free || s.state == SeqState::done || s.id != id || s.finished || s.timed_out) return false;
  s.timed_out = true;
  const std::int32_t source = s.source, group = s.replica, engine = s.engine;
  const double path_s = serving_path_.latency_s(s.input);  // the engine's deadline was the client's less this
  std::int64_t produced = 0;
  bool release = false;  // the slot is free to go now (else its holder releases it)
  std::int32_t api_group = -1;  // the replica whose API server loop it left (the chat render barrier)
  if (synthetic_) {
    release = synthetic_->queue().erase(i);  // else in service: on_service_done discards it
  } else if (s.engine < 0) {
    // Still on its API server's loop (the chat render barrier), or waiting for a ready replica.
    std::int32_t rendering = -1;
    for (std::size_t g = 0; rendering < 0 && g < api_loops_.size(); ++g) rendering = api_loops_[g].erase(i);
    if (rendering >= 0) {
      --outstanding_[static_cast<std::size_t>(rendering)];
      api_group = rendering / engines_per_group_;
    }
    else LLMSIM_CHECK(pending_.erase(i), "a timed-out request is neither routed nor pending");
    release = true;
  } else if (s.state == SeqState::handoff || s.state == SeqState::receiving) {
    // Disaggregation, its KV on the link: the transfer's end lets go of it (on_kv_arrived frees both sides' blocks).
  } else {
    if (runs_) interrupt(s.engine, now_s);  // its tokens so far; it leaves at the boundary of the step in flight
    if (s.kv_pending) {  // pull, queued at a decode replica: the prefill replica still holds its KV
      replicas_[static_cast<std::size_t>(s.kv_source)].release_held(i, disagg_->take_held(i), now_s);
      wake(s.kv_source, now_s);  // freed blocks may admit more
    }
    produced = replicas_[static_cast<std::size_t>(s.engine)].cancel(i);  // releases the slot when it leaves at once
  }
  retire(i, Exit::timed_out, now_s, produced);
  if (release) {
    transition(s, SeqState::done);
    pool_.release(i);
  }
  if (engine >= 0 && !synthetic_) stop_if_drained(group, now_s);
  if (api_group >= 0) stop_if_drained(api_group, now_s);
  // A closed-loop user or session moves on when its client gave up: the engine's deadline plus the request's serving
  // path (timeouts.hpp shortens the engine's by it).
  if (driver_->is_user(source)) source_moves_on(source, now_s + path_s, false);
  return true;
}

}  // namespace llmsim::engine::detail
