// The orchestrator of one run (simulator.cpp builds it and runs its event loop). Its handlers are split by
// concern: simulator.cpp (arrivals, iterations, completions, the loop, the summary) and simulation_fleet.cpp
// (the autoscaler's evaluations, replicas becoming ready, failures and re-queues), simulation_pools.cpp (the pools:
// one per heterogeneous-fleet member, each with its memory plan, cost model and replicas). Internal to the engine layer.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "llmsim/core/error.hpp"
#include "llmsim/core/rng.hpp"
#include "llmsim/engine/autoscaler.hpp"
#include "llmsim/engine/event_queue.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/metrics/collector.hpp"
#include "llmsim/metrics/session_stats.hpp"
#include "llmsim/metrics/time_series.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/serving_path.hpp"
#include "api_render_loop.hpp"
#include "autoscaler.hpp"
#include "disaggregation.hpp"
#include "failures.hpp"
#include "pipeline.hpp"
#include "replica.hpp"
#include "request_lifecycle.hpp"
#include "router.hpp"
#include "run_monitor.hpp"
#include "run_summary.hpp"
#include "synthetic_service.hpp"
#include "timeouts.hpp"
#include "workload_driver.hpp"

namespace llmsim::engine::detail {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

class Simulation {
 public:
  Simulation(const spec::ResolvedScenario& rs, const SimulationOptions& opt) : rs_(rs), opt_(opt) {}
  SimulationResult run();

 private:
  bool build();  ///< false when the model does not fit (result_.summary says why)
  /// `groups` replicas of `pool` (the scenario, a fleet member or a disaggregated pool) appended to replicas_.
  void build_pool_replicas(const spec::ResolvedScenario& pool, const memory::MemoryPlan& plan,
                           const perf::CostModel& cost, std::int32_t groups, bool prefill_only);
  /// One pool per fleet member (one for a homogeneous deployment, or a disaggregated deployment's prefill pool): its
  /// memory plan and cost model; false when one does not fit (result_.summary says which and why).
  bool plan_pools();
  /// Each fleet member's replicas with its own scenario and plan, for the summary's per-card utilisation.
  std::vector<RunFacts> fleet_facts(double end_s) const;
  void build_replicas(std::int32_t groups);
  void set_router_speeds();
  void schedule_next(std::int32_t source, double now_s, bool after_arrival);
  void on_arrival(std::int32_t source, double now_s);
  void on_iteration_done(std::int32_t replica, double now_s);
  void on_service_done(std::int32_t server, double now_s);
  void start_replica(std::int32_t r, double now_s);
  void start_service(std::int32_t server, std::int32_t seq, double now_s);
  void finish_request(std::int32_t seq, double now_s);
  /// A request of `source` ended (completed or not): a closed-loop user or a session sends its next one after its
  /// think time (a session's completed turn joins its history first).
  void source_moves_on(std::int32_t source, double now_s, bool completed);
  // The one exit path (request_lifecycle.cpp): request `seq` leaves the system (completed, failed or timed out, with
  // `produced` output tokens so far) — counted in the ledger, told to the collector, the fleet meter, the autoscaler's
  // metric and the time series, and recorded. The caller releases the slot and lets a closed-loop user move on.
  void retire(std::int32_t seq, Exit how, double now_s, std::int64_t produced);
  void record_request(const Seq& s, RequestOutcome outcome, double end_s, std::int64_t produced);
  void record_unfinished(double end_s);  ///< one record per request still in the system at the end
  /// The engine a new request goes to (router_, with session_affinity for session turns); -1 = none ready.
  std::int32_t route_turn(std::int32_t seq, bool session_start);
  void assign(std::int32_t seq, std::int32_t engine, double now_s);  ///< a routed request joins its engine
  /// The chat render barrier (api_render_loop.hpp): a routed request waits on its replica's API server loop first;
  /// it counts as outstanding at its engine (the router's view) from now on.
  void api_admit(std::int32_t seq, std::int32_t engine, double now_s);
  void on_api_handoff(std::int32_t group, double now_s);  ///< continuations due on group's loop join their engines
  void wake(std::int32_t engine, double now_s);  ///< an idle engine with work starts an iteration at now_s
  // Disaggregation (disaggregation.hpp): a prefilled request's KV leaves; it arrives at the decode pool.
  void on_prefilled(std::int32_t seq, std::int32_t prefill_replica, double now_s);
  /// Pull: the KV reads a decode replica's admission started, onto their prefill replicas' links.
  void start_pulls(Replica& rep, double now_s);
  void on_kv_arrived(std::int32_t seq, double now_s);
  // The fleet (autoscaler.hpp): evaluations, replicas becoming ready, the bill's counts.
  void on_autoscale(double now_s);
  void on_replica_ready(std::int32_t group, double now_s);
  void fleet_changed(double now_s);
  void dispatch_pending(double now_s);
  std::int64_t group_outstanding(std::int32_t group) const;
  // Failures (failures.hpp): a replica going down and coming back; its requests re-queued or failed.
  void schedule_fleet(double t, EventKind kind, std::int32_t target);
  bool work_left() const { return events_.size() > fleet_events_ || ledger_.in_system() > 0; }
  // Decode runs (decode_run.cpp): a replica's run brought up to now_s before its state is read (settle) or changed
  // (interrupt: the run ends with the step in flight, whose event is moved when it ends earlier).
  void settle(std::int32_t engine, double now_s);
  void interrupt(std::int32_t engine, double now_s);
  void settle_all(double now_s);
  void on_replica_down(std::int32_t target, double now_s);
  void on_replica_up(std::int32_t group, double now_s);
  void requeue_or_fail(std::int32_t seq, std::int64_t produced, double now_s);
  void stop_if_drained(std::int32_t group, double now_s);  ///< a draining replica with nothing left stops
  /// An off replica the autoscaler starts is a new server: its engines start with empty caches (GPU prefix cache
  /// and host tier), as after a failure.
  void start_empty(std::int32_t group, double now_s);
  // Client timeouts (timeouts.hpp / timeouts.cpp).
  void watch_timeout(std::int32_t seq, std::int64_t id, double now_s);
  bool on_timeout(double now_s);  ///< true when a request was cancelled (the run's last event can be one)
  bool cancel_request(std::int32_t seq, std::int64_t id, double now_s);
  std::int64_t waiting_total() const;
  void sample_state(double now_s);
  void event_loop();
  /// The lifecycle's invariants over every request in flight (kv_holdings.hpp): each engine's KV blocks in use are
  /// what its requests hold, its outstanding count is the unfinished requests routed to it, a free or done request
  /// holds nothing. InternalError otherwise. Called where LLMSIM_DEEP_CHECK is on.
  void check_holdings() const;
  void finish(double end_s);

  const spec::ResolvedScenario& rs_;
  SimulationOptions opt_;
  std::unique_ptr<WorkloadDriver> driver_;
  std::unique_ptr<metrics::Collector> collector_;
  std::unique_ptr<metrics::TimeSeries> series_;
  /// Replicas of one card type and layout: the deployment itself, or one member of a heterogeneous fleet
  /// (hardware.fleet), each with its own memory plan and cost model (its replicas hold references to it).
  struct Pool {
    const spec::ResolvedScenario* rs = nullptr;
    memory::MemoryPlan plan;
    std::unique_ptr<perf::CostModel> cost;
    std::int32_t first_engine = 0;  ///< index of its first Replica in replicas_
  };
  std::vector<Pool> pools_;
  std::unique_ptr<Router> router_;
  std::unique_ptr<SyntheticService> synthetic_;
  std::unique_ptr<RunMonitor> monitor_;
  std::unique_ptr<Fleet> fleet_;             ///< deployment replicas' states (not for the synthetic service)
  std::unique_ptr<Autoscaler> autoscaler_;   ///< when the scenario has an autoscaler
  Autoscaler::Actions actions_;
  metrics::FleetMeter meter_;
  IndexRing pending_;                        ///< requests that arrived while no replica was ready
  /// Per deployment replica, its API server's loop under the chat render barrier (perf/chat_render.hpp); empty
  /// where the barrier is not priced.
  std::vector<ApiRenderLoop> api_loops_;
  std::vector<std::pair<std::int32_t, std::int32_t>> api_due_;  ///< on_api_handoff's scratch
  std::unique_ptr<FailureModel> failures_;
  std::unique_ptr<Disaggregation> disagg_;   ///< with scenario.disaggregation
  std::unique_ptr<Timeouts> timeouts_;       ///< when workload.timeout_s > 0
  bool runs_ = false;                        ///< decode runs (decode_run.cpp) on for this run
  std::vector<std::int32_t> evicted_;
  std::vector<std::int64_t> produced_;
  std::size_t fleet_events_ = 0;             ///< queued fleet events (autoscale .. replica_up) and timeout timers
  std::int32_t serving_ = 0;                 ///< replicas meant to serve (a fixed fleet without its spares)
  std::int64_t replica_failures_ = 0;
  RequestLedger ledger_;                     ///< every request's exit, measured and warm-up apart
  double wasted_tokens_ = 0;
  /// The serving path between the engine and the client (perf/serving_path.hpp): every token of a request reaches the
  /// client serving_path_.latency_s(its prompt) after the engine produced it; a closed-loop client sends its next
  /// request that much later.
  perf::ServingPath serving_path_;
  double last_seen_s_ = 0;  ///< when the client had the last completed request's last token (the run's end for it)
  memory::MemoryPlan plan_;
  SeqPool pool_;
  // One Replica per virtual engine: deployment replica g owns replicas_[g·k, (g+1)·k), k = engines_per_group_,
  // and its pipeline stages pipelines_[g].
  std::vector<Replica> replicas_;
  /// Per engine: requests routed to it and not finished (each Replica keeps its count here; the router scans it).
  /// Sized once, before the replicas are built, so the slots never move.
  std::vector<std::int64_t> outstanding_;
  std::int32_t engines_per_group_ = 1;
  std::vector<char> start_pending_;  ///< per replica: a replica_start event is queued
  std::vector<Pipeline> pipelines_;
  EventQueue events_;
  std::vector<std::int32_t> finished_;
  SimulationResult result_;

  std::int64_t issued_ = 0, clipped_ = 0, iterations_ = 0;
  /// The first requests left out of the statistics: workload.warmup_requests, or where it was left unset and a trace
  /// replays fewer rows than num_requests, default_warmup_requests of the rows replayed (build()).
  std::int64_t warmup_ = 0;
  std::int64_t measured_arrivals_ = 0;
  std::unique_ptr<metrics::SessionStats> session_stats_;  ///< workload.sessions: per-turn statistics
  std::vector<std::int32_t> session_home_;  ///< session_affinity: per session slot, its replica (-1 = none yet)
  double first_measured_s_ = -1, last_measured_s_ = 0;
  std::vector<double> kv_integral_at_window_;
  double peak_kv_fraction_ = 0;
};

}  // namespace llmsim::engine::detail
