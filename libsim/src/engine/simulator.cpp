// The orchestrator of one run: simulation_build.cpp builds the workload driver, the replicas (or the synthetic
// servers), the router and the metrics observers; this file runs the event loop. Mechanisms live in their own files:
// workload_driver (sources, lengths), router, replica + schedule_v0/v1 (batch formation, KV), synthetic_service,
// run_monitor (overload and bounds), run_summary (what the replicas measured, in the summary).
#include "llmsim/engine/simulator.hpp"

#include "simulation.hpp"

namespace llmsim::engine {

namespace detail {

std::int64_t Simulation::waiting_total() const {
  if (synthetic_) return synthetic_->waiting();
  // Requests that arrived while no replica was ready (an outage, a fleet scaled to zero, all starting) wait too: a
  // short run sent during an outage is as overloaded as one queued at a replica (RunMonitor::check_short).
  auto w = static_cast<std::int64_t>(pending_.size());
  for (const auto& r : replicas_) w += r.waiting();
  return w;
}

void Simulation::sample_state(double now_s) {
  if (!series_) return;
  if (synthetic_) {
    series_->on_state(now_s, static_cast<double>(synthetic_->waiting()), static_cast<double>(synthetic_->busy_servers()), 0);
    return;
  }
  std::int64_t waiting = 0, running = 0, used = 0, cap = 0;
  for (const auto& r : replicas_) {
    waiting += r.waiting();
    running += r.running();
    used += r.kv().held();
    cap += r.kv().capacity();
  }
  series_->on_state(now_s, static_cast<double>(waiting), static_cast<double>(running),
                    static_cast<double>(used) / static_cast<double>(cap));
}

void Simulation::schedule_next(std::int32_t si, double now_s, bool after_arrival) {
  if (issued_ >= rs_.scenario.workload.num_requests || monitor_->stop()) return;
  const auto t = after_arrival || driver_->is_user(si) ? driver_->next_time(si, now_s) : driver_->first_time(si);
  if (!t) return;
  const double horizon = rs_.scenario.workload.horizon_s;
  if (horizon > 0 && *t > horizon) return;
  events_.schedule(std::max(*t, now_s), EventKind::arrival, si);
}

void Simulation::on_arrival(std::int32_t si, double now_s) {
  const auto& w = rs_.scenario.workload;
  if (issued_ >= w.num_requests) return;  // a closed-loop user's turn after the last request was issued
  const DrawnRequest d = driver_->draw(si);
  const std::int32_t src = d.source >= 0 ? d.source : si;  // a session's turn belongs to its session's source
  const std::int64_t id = issued_++;
  const bool measured = id >= warmup_;
  if (measured && d.session_start) driver_->session_measured(src);
  if (measured) {
    if (first_measured_s_ < 0) {
      first_measured_s_ = now_s;
      if (runs_) settle_all(now_s);  // the KV integrals at the window's start
      collector_->mark_window_start(now_s);
      for (const auto& r : replicas_) kv_integral_at_window_.push_back(r.kv_integral().integral(now_s));
    }
    ++measured_arrivals_;
    last_measured_s_ = now_s;
    collector_->mark_steady_end(now_s);  // the last call (the last measured arrival) ends the steady state
  }
  if (series_) series_->on_arrival(now_s);
  meter_.on_arrival(now_s);
  clipped_ += d.clipped;
  // A request whose whole sequence could never fit in an empty KV cache would preempt itself forever.
  bool reject = d.too_long;
  if (!reject && disagg_) {
    reject = disagg_->never_fits(d.input, d.output, replicas_);
  } else {
    // In a fleet, a request must fit every member's cache (the router does not look at lengths).
    for (std::size_t k = 0; !reject && !synthetic_ && k < pools_.size(); ++k) {
      const auto& rep = replicas_[static_cast<std::size_t>(pools_[k].first_engine)];
      const auto& kv = rep.kv();
      reject = kv.blocks_for(d.input + d.output + rep.output_tail()) > kv.capacity() - kv.watermark_blocks();
    }
  }
  if (reject) {
    ledger_.reject(measured);
    meter_.on_rejected(now_s);
    if (measured && session_stats_) session_stats_->on_turn_lost(d.turn);
    if (driver_->is_user(src)) source_moves_on(src, now_s, false);  // a user or session: after its think time
    if (src != si || !driver_->is_user(si)) schedule_next(si, now_s, true);  // an open source: its next arrival
    monitor_->after_arrival(issued_, w.num_requests, ledger_.in_system(), monitor_->needs_waiting(issued_) ? waiting_total() : 0);
    return;
  }

  const std::int32_t i = pool_.acquire();
  Seq& s = pool_[i];
  s.id = id;
  s.tenant = d.tenant;
  s.source = src;
  s.arrival_s = now_s;
  s.turn = d.turn;
  if (d.chain_blocks > 0) {  // a session turn's hashes: copied into the slot's own buffer (the driver's is reused)
    auto& buf = pool_.chain_buffer(i);
    buf.assign(d.chain, d.chain + d.chain_blocks);
    s.chain = buf.data();
    s.chain_blocks = d.chain_blocks;
  }
  s.input = d.input;
  s.output = d.output;
  s.prefill_target = d.input;
  s.prefix_key = d.prefix_key;
  s.prefix_len = d.prefix_len;
  if (d.chain_blocks == 0) s.chain = d.chain;  // a trace's (the driver keeps it); a session turn's was copied above
  s.measured = measured;
  transition(s, SeqState::waiting);
  ledger_.arrive(measured);
  if (measured) collector_->on_in_system_change(now_s, +1, s.tenant);
  if (autoscaler_) autoscaler_->on_in_system(now_s, ledger_.in_system());
  if (timeouts_) watch_timeout(i, id, now_s);

  if (synthetic_) {
    const std::int32_t server = synthetic_->free_server();
    if (server >= 0) start_service(server, i, now_s);
    else synthetic_->queue().push_back(i);
  } else {
    const std::int32_t r = route_turn(i, d.session_start);
    if (r < 0) pending_.push_back(i);  // no replica ready (scaled to zero, all starting): wait for one
    else if (!api_loops_.empty()) api_admit(i, r, now_s);  // the chat render barrier: its API server's loop first
    else assign(i, r, now_s);
  }
  monitor_->after_arrival(issued_, w.num_requests, ledger_.in_system(), monitor_->needs_waiting(issued_) ? waiting_total() : 0);
  if (!driver_->is_user(si)) schedule_next(si, now_s, true);
}

std::int32_t Simulation::route_turn(std::int32_t i, bool session_start) {
  const std::int32_t source = pool_[i].source;
  if (rs_.scenario.hardware.router != spec::RouterPolicy::session_affinity || source < driver_->sources())
    return router_->route(replicas_);
  // session_affinity: the session's home replica (router.hpp says when a turn leaves it); the home follows the turn.
  const auto slot = static_cast<std::size_t>(source - driver_->sources());
  if (session_home_.size() <= slot) session_home_.resize(slot + 1, -1);
  if (session_start) session_home_[slot] = -1;
  const std::int32_t r = router_->route_sticky(replicas_, session_home_[slot], rs_.scenario.engine.max_num_seqs);
  if (r >= 0) session_home_[slot] = r / engines_per_group_;
  return r;
}

void Simulation::api_admit(std::int32_t i, std::int32_t r, double now_s) {
  const std::int32_t g = r / engines_per_group_;
  ++outstanding_[static_cast<std::size_t>(r)];  // routed: the router counts it while it renders (assign takes it over)
  events_.schedule(api_loops_[static_cast<std::size_t>(g)].arrive(i, r, now_s, pool_[i].input), EventKind::api_handoff, g);
}

void Simulation::on_api_handoff(std::int32_t g, double now_s) {
  api_due_.clear();
  api_loops_[static_cast<std::size_t>(g)].due(now_s, api_due_);
  for (const auto& [i, r] : api_due_) {
    --outstanding_[static_cast<std::size_t>(r)];
    assign(i, r, now_s);
  }
}

void Simulation::assign(std::int32_t i, std::int32_t r, double now_s) {
  if (runs_) interrupt(r, now_s);
  pool_[i].engine = r;
  replicas_[static_cast<std::size_t>(r)].enqueue(i);
  wake(r, now_s);
}

void Simulation::wake(std::int32_t r, double now_s) {
  const auto ri = static_cast<std::size_t>(r);
  if (!replicas_[ri].busy() && !start_pending_[ri]) {
    start_pending_[ri] = 1;
    events_.schedule(now_s, EventKind::replica_start, r);
  }
}

void Simulation::on_prefilled(std::int32_t i, std::int32_t r, double now_s) {
  Seq& s = pool_[i];
  if (s.timed_out) {  // its client gave up during this prefill step: no transfer, the prefill replica lets go now
    replicas_[static_cast<std::size_t>(r)].release_handoff(i, now_s);
    transition(s, SeqState::done);
    pool_.release(i);
    return;
  }
  s.kv_source = r;
  if (!disagg_->pulls()) {  // layer-wise: the KV streamed as the prefill ran; the decode side takes it on arrival
    events_.schedule(disagg_->transfer(s, r, now_s), EventKind::kv_transfer_done, i);
    return;
  }
  // Pull: the request queues at a decode replica now; its admission there starts the read (start_pulls).
  Replica& from = replicas_[static_cast<std::size_t>(r)];
  assign(i, disagg_->hand_over(i, s, from.detach_handoff(i), replicas_, now_s), now_s);
}

void Simulation::start_pulls(Replica& rep, double now_s) {
  for (const std::int32_t i : rep.pulls())
    events_.schedule(disagg_->transfer(pool_[i], pool_[i].kv_source, now_s), EventKind::kv_transfer_done, i);
  rep.pulls().clear();
}

void Simulation::on_kv_arrived(std::int32_t i, double now_s) {
  const std::int32_t from = pool_[i].kv_source;
  Replica& source = replicas_[static_cast<std::size_t>(from)];
  if (pool_[i].timed_out) {  // its client gave up while the KV was on the link (counted then): both sides let go
    if (disagg_->pulls()) {
      source.release_held(i, disagg_->take_held(i), now_s);
      replicas_[static_cast<std::size_t>(pool_[i].engine)].drop_received(i, now_s);
      wake(pool_[i].engine, now_s);
    } else {
      source.release_handoff(i, now_s);
    }
    transition(pool_[i], SeqState::done);
    pool_.release(i);
    if (source.waiting() > 0) wake(from, now_s);
    return;
  }
  if (disagg_->pulls()) {
    source.release_held(i, disagg_->take_held(i), now_s);  // the prefill replica frees the KV now
    replicas_[static_cast<std::size_t>(pool_[i].engine)].kv_received(i);
    wake(pool_[i].engine, now_s);
  } else {
    source.release_handoff(i, now_s);  // the prefill replica frees the KV now
    assign(i, disagg_->arrive(pool_[i], replicas_, now_s), now_s);
  }
  if (source.waiting() > 0) wake(from, now_s);  // freed blocks may admit more
}

void Simulation::start_replica(std::int32_t r, double now_s) {
  Replica& rep = replicas_[static_cast<std::size_t>(r)];
  if (rep.busy()) return;
  const bool started = rep.start_iteration(now_s);
  if (disagg_ && !rep.pulls().empty()) start_pulls(rep, now_s);
  if (series_) sample_state(now_s);
  if (!started) {
    if (timeouts_ && autoscaler_) stop_if_drained(r / engines_per_group_, now_s);  // its last requests timed out
    return;
  }
  ++iterations_;
  Pipeline::Pass pass{now_s, now_s + rep.duration_s()};
  if (runs_) pass.exit_s = rep.plan_run(now_s);  // the run's last step's end (the step's own when there is no run)
  if (pipelines_.size() == replicas_.size()) {  // no pipeline parallel: one engine per deployment replica
    peak_kv_fraction_ = std::max(peak_kv_fraction_, rep.kv().used_fraction());
  } else {  // kept off the common path: a division and a loop over the stages
    const std::int32_t g = r / engines_per_group_;
    peak_kv_fraction_ = std::max(peak_kv_fraction_, router_->group_kv_fraction(replicas_, g));
    pass = pipelines_[static_cast<std::size_t>(g)].pass(now_s, rep.duration_s());
  }
  if (opt_.record_iterations) {
    result_.iterations.push_back(rep.record());
    result_.iterations.back().start_s = pass.entry_s;
    result_.iterations.back().duration_s = pass.exit_s - pass.entry_s;
  }
  events_.schedule(pass.exit_s, EventKind::iteration_done, r);
}

void Simulation::finish_request(std::int32_t i, double now_s) {
  Seq& s = pool_[i];
  if (s.timed_out) {  // its client gave up before this last token (counted then): the slot is all that is left
    if (s.state == SeqState::done) pool_.release(i);  // static-batching padding is released by its replica
    return;
  }
  retire(i, Exit::completed, now_s, s.output);
  if (autoscaler_) stop_if_drained(s.replica, now_s);
  const std::int32_t source = s.source;
  // The client has the last token only after the serving path (perf/serving_path.hpp): its next turn starts then.
  const double seen_s = now_s + serving_path_.latency_s(s.input);
  if (s.state == SeqState::done) pool_.release(i);  // static-batching padding is released by its replica
  if (driver_->is_user(source)) source_moves_on(source, seen_s, true);
}

void Simulation::source_moves_on(std::int32_t source, double now_s, bool completed) {
  driver_->turn_ended(source, completed);
  schedule_next(source, now_s, true);
}

void Simulation::settle(std::int32_t r, double now_s) {
  Replica& rep = replicas_[static_cast<std::size_t>(r)];
  if (!rep.in_run()) return;
  iterations_ += rep.catch_up(now_s);
  peak_kv_fraction_ = std::max(peak_kv_fraction_, rep.kv().used_fraction());  // a run only grows the KV
}

void Simulation::interrupt(std::int32_t r, double now_s) {
  if (!replicas_[static_cast<std::size_t>(r)].in_run()) return;
  settle(r, now_s);
  Replica& rep = replicas_[static_cast<std::size_t>(r)];
  if (rep.cut_run())  // the step in flight now ends the run: its event moves there
    LLMSIM_CHECK(events_.reschedule(r, rep.in_flight_end_s()), "a replica in a decode run without its event");
}

void Simulation::settle_all(double now_s) {
  for (std::size_t r = 0; r < replicas_.size(); ++r) settle(static_cast<std::int32_t>(r), now_s);
}

void Simulation::on_iteration_done(std::int32_t r, double now_s) {
  finished_.clear();
  Replica& rep = replicas_[static_cast<std::size_t>(r)];
  if (rep.in_run()) {  // the run's last step ends now: its earlier boundaries first
    settle(r, now_s);
    rep.cut_run();
  }
  rep.finish_iteration(now_s, finished_);
  if (series_) series_->on_tokens(now_s, static_cast<double>(rep.tokens_emitted()));
  for (const auto i : finished_) {
    if (pool_[i].state == SeqState::handoff) on_prefilled(i, r, now_s);  // disaggregation: the KV leaves
    else finish_request(i, now_s);
  }
  start_replica(r, now_s);
}

void Simulation::start_service(std::int32_t server, std::int32_t i, double now_s) {
  const double d = synthetic_->start(server, i);
  Seq& s = pool_[i];
  s.admitted_s = now_s;
  s.replica = server;
  ++iterations_;
  if (opt_.record_iterations) {
    IterationRecord rec;
    rec.start_s = now_s;
    rec.duration_s = d;
    rec.replica = server;
    rec.prefill_tokens = static_cast<std::int32_t>(s.input);
    rec.prefill_seqs = 1;
    rec.waiting = static_cast<std::int32_t>(synthetic_->waiting());
    result_.iterations.push_back(rec);
  }
  events_.schedule(now_s + d, EventKind::iteration_done, server);
  sample_state(now_s);
}

void Simulation::on_service_done(std::int32_t server, double now_s) {
  const std::int32_t i = synthetic_->finish(server);
  Seq& s = pool_[i];
  transition(s, SeqState::done);
  if (s.timed_out) {  // served to the end for a client that had gone (the synthetic server has no abort)
    pool_.release(i);
  } else {
    s.first_token_s = now_s;  // the whole response is one iteration: TTFT = E2E = wait + service
    finish_request(i, now_s);
  }
  if (!synthetic_->queue().empty()) {
    const std::int32_t next = synthetic_->queue().front();
    synthetic_->queue().pop_front();
    start_service(server, next, now_s);
  } else {
    sample_state(now_s);
  }
}

void Simulation::event_loop() {
  const double horizon = rs_.scenario.workload.horizon_s;
  double end_s = 0;
  std::uint32_t until_cancel_check = 0;
  while (!events_.empty() && !monitor_->stop()) {
    if (opt_.cancel && ++until_cancel_check == 4096) {
      until_cancel_check = 0;
      if (opt_.cancel->load(std::memory_order_relaxed)) throw Cancelled("simulation cancelled");
    }
    const double next = events_.peek_time();
    if (horizon > 0 && next > horizon) {
      end_s = horizon;
      if (ledger_.in_system() > 0)
        monitor_->end_early("stopped at workload.horizon_s = " + format_value(horizon) + " s with " +
                            std::to_string(ledger_.in_system()) + " requests unfinished");
      break;
    }
    if (!(next <= spec::kMaxSimulatedSeconds)) {
      monitor_->end_early("stopped at the clock's precise range (1e9 s of simulated time) with " +
                          std::to_string(ledger_.in_system()) + " requests unfinished");
      break;
    }
    const Event e = events_.pop();
    ++result_.events;
    // The run ends with its last request: fleet events (evaluations) do not extend it.
    if (e.kind <= EventKind::replica_start) end_s = e.time_s;
    else --fleet_events_;
    if (e.kind == EventKind::iteration_done && !synthetic_) {  // most events: tested first
      on_iteration_done(e.target, e.time_s);
    } else if (e.kind == EventKind::replica_down) {
      on_replica_down(e.target, e.time_s);
    } else if (e.kind == EventKind::replica_up) {
      on_replica_up(e.target, e.time_s);
    } else if (e.kind == EventKind::autoscale) {
      on_autoscale(e.time_s);
    } else if (e.kind == EventKind::replica_ready) {
      on_replica_ready(e.target, e.time_s);
    } else if (e.kind == EventKind::timeout) {
      if (on_timeout(e.time_s)) end_s = e.time_s;  // a cancelled request ends there; a stale timer does not count
    } else if (e.kind == EventKind::arrival) {
      on_arrival(e.target, e.time_s);
    } else if (e.kind == EventKind::kv_transfer_done) {
      on_kv_arrived(e.target, e.time_s);
    } else if (e.kind == EventKind::api_handoff) {
      on_api_handoff(e.target, e.time_s);
    } else if (e.kind == EventKind::replica_start) {
      start_pending_[static_cast<std::size_t>(e.target)] = 0;
      start_replica(e.target, e.time_s);
    } else {  // iteration_done of a synthetic server
      on_service_done(e.target, e.time_s);
    }
#ifdef LLMSIM_DEEP_CHECKS_ON
    // The lifecycle's invariants over every request in flight (O(requests) each): the first events, then every 64th.
    if (result_.events < 256 || result_.events % 64 == 0) check_holdings();
#endif
  }
  if (!monitor_->stop() && events_.empty() && ledger_.in_system() > 0)
    throw InternalError("simulation stalled with " + std::to_string(ledger_.in_system()) + " requests unfinished");
  if (runs_) settle_all(end_s);  // a run cut off by the horizon or an early stop: its steps until the end
#ifdef LLMSIM_DEEP_CHECKS_ON
  check_holdings();
#endif
  if (monitor_->complete()) {  // where every request is: nowhere — no engine holds one, or a KV block for one
    LLMSIM_CHECK(ledger_.in_system() == 0 && pending_.empty(), "a complete run with requests in the system");
    for (const auto& loop : api_loops_) LLMSIM_CHECK(loop.empty(), "a complete run left a request on an API server's loop");
    for (const auto& r : replicas_)
      LLMSIM_CHECK(r.outstanding() == 0 && r.running() == 0 && r.waiting() == 0 && r.kv().used() == 0,
                   "a complete run left a request or its KV blocks on an engine");
  }
  finish(end_s);
}

SimulationResult Simulation::run() {
  if (!build()) return std::move(result_);
  if (opt_.record_requests)
    result_.requests.reserve(static_cast<std::size_t>(std::min<std::int64_t>(rs_.scenario.workload.num_requests, 1 << 24)));
  events_.reserve(static_cast<std::size_t>(driver_->sources()) + replicas_.size() + 16);
  events_.side(EventKind::arrival);  // a single source's next arrival (the common case) skips the heap
  if (fleet_) fleet_changed(0);
  else meter_.on_fleet(0, rs_.scenario.hardware.replicas, rs_.scenario.hardware.replicas);  // synthetic servers
  if (autoscaler_) schedule_fleet(autoscaler_->interval_s(), EventKind::autoscale, 0);
  if (failures_) {
    const auto& fs = rs_.scenario.failures;
    for (std::size_t k = 0; k < fs.outages.size(); ++k)
      schedule_fleet(fs.outages[k].start_s, EventKind::replica_down, -1 - static_cast<std::int32_t>(k));
    if (failures_->random())
      for (std::int32_t g = 0; g < fleet_->size(); ++g)
        schedule_fleet(failures_->time_to_failure(g), EventKind::replica_down, g);
  }
  for (std::int32_t i = 0; i < driver_->sources(); ++i) {
    // Closed-loop users send their first request at their client's start (t = 0 unless the loop names offsets),
    // offline runs at t = 0; other sources draw theirs.
    if (driver_->is_user(i)) events_.schedule(driver_->first_time(i).value_or(0.0), EventKind::arrival, i);
    else schedule_next(i, 0.0, false);
  }
  event_loop();
  return std::move(result_);
}

}  // namespace detail

SimulationResult simulate(const spec::ResolvedScenario& scenario, const SimulationOptions& options) {
  // vLLM's --max-model-len auto (the planner's default): run the context that fits, and say so in the result.
  spec::ResolvedScenario fitted = scenario;
  memory::fit_context(fitted);
  detail::Simulation sim(fitted, options);
  SimulationResult result = sim.run();
  result.summary.max_model_len = fitted.max_model_len;
  result.summary.max_model_len_note = result.summary.fits ? memory::context_note(fitted) : std::string();
  return result;
}

}  // namespace llmsim::engine
