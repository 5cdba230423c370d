// Building one run (the orchestrator's first step, simulator.cpp runs it): the workload driver, the replicas of each
// pool with their scheduler, KV and cost model, or the synthetic servers; the router and the metrics observers.
#include "llmsim/memory/engine_kv.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/perf/chat_render.hpp"
#include "llmsim/perf/inprocess_server.hpp"
#include "llmsim/perf/serving_path.hpp"
#include "llmsim/spec/v0_running_order.hpp"
#include "llmsim/spec/runtime_version.hpp"

#include "simulation.hpp"
#include "llmsim/spec/multi_step.hpp"
#include "warm_cache_fill.hpp"

namespace llmsim::engine::detail {

bool Simulation::build() {
  const auto& sc = rs_.scenario;
  // Disaggregated: the prefill pool takes the arrivals (its engine and hardware), the decode pool is added below.
  if (sc.disaggregation) disagg_ = std::make_unique<Disaggregation>(rs_);
  const spec::ResolvedScenario& front = disagg_ ? disagg_->prefill() : rs_;
  const auto& e = front.scenario.engine;
  e.validate("engine");
  sc.hardware.validate("hardware");
  const bool synthetic = e.synthetic_service.has_value();
  // (SGLang decodes in steps of their own, outside the prefill token budget.)
  if (!synthetic && e.policy != spec::SchedulerPolicy::static_batching && e.policy != spec::SchedulerPolicy::sglang &&
      e.max_num_batched_tokens < e.max_num_seqs)
    throw ConfigError("engine.max_num_batched_tokens",
                      "must be >= max_num_seqs (" + std::to_string(e.max_num_seqs) + ") so every running sequence can "
                      "decode in each step (as vLLM requires), got " + std::to_string(e.max_num_batched_tokens));
  if (!synthetic && (e.max_num_seqs < 1 || e.max_num_batched_tokens < 1))
    throw InternalError("engine knobs left at their 0 defaults: resolve the scenario (spec::resolve) first");
  if (opt_.max_queue < 0) throw ConfigError("max_queue", "must be >= 0, got " + std::to_string(opt_.max_queue));
  if (opt_.max_in_system < 1)
    throw ConfigError("max_in_system", "must be >= 1, got " + std::to_string(opt_.max_in_system));
  const auto& w = sc.workload;
  if (spec::offline_workload(w) && w.num_requests > opt_.max_in_system)
    throw ConfigError("workload.num_requests",
                      "an offline run holds every request in the system at once; at most " +
                          std::to_string(opt_.max_in_system) + " (the memory bound), got " + std::to_string(w.num_requests));
  if (std::isnan(opt_.time_series_window_s) || std::isinf(opt_.time_series_window_s))
    throw ConfigError("time_series_window_s", "must be a number of seconds (0 = automatic, < 0 = off), got " +
                                                  format_value(opt_.time_series_window_s));
  if (opt_.time_series_window_s >= 0) series_ = std::make_unique<metrics::TimeSeries>(opt_.time_series_window_s);

  serving_path_ = perf::serving_path(e, spec::offline_workload(w));
  driver_ = std::make_unique<WorkloadDriver>(rs_, e.block_size, !synthetic && e.prefix_caching());
  if (!front.prefix_caching_off.empty()) {
    result_.summary.warnings.push_back(front.prefix_caching_off);
    result_.summary.prefix_cache_note = front.prefix_caching_off;
  }
  collector_ = std::make_unique<metrics::Collector>(driver_->class_infos(), sc.slo, sc.metrics.percentiles);
  if (driver_->sessions()) {
    if (disagg_) throw ConfigError("workload.sessions", "sessions with disaggregation are not modelled yet: the decode pool "
                                                        "would need the turn's history blocks");
    if (synthetic) throw ConfigError("workload.sessions", "the synthetic service has no KV cache for a session's history");
    session_stats_ = std::make_unique<metrics::SessionStats>();
  }
  result_.summary.engine =
      synthetic ? "synthetic service (M/G/c queue)" : engine_label(e, front.scenario.hardware.parallel.pp);
  std::int64_t slots = 1, servers = sc.hardware.replicas;
  if (synthetic && sc.autoscaler)
    throw ConfigError("autoscaler", "cannot scale the synthetic service (engine.synthetic_service): it has no replicas to start");
  if (synthetic && (!sc.failures.empty() || sc.failures.spares > 0))
    throw ConfigError("failures", "the synthetic service (engine.synthetic_service) has no replicas to fail");
  if (synthetic) {
    synthetic_ = std::make_unique<SyntheticService>(*e.synthetic_service, sc.hardware.replicas,
                                                    rng_stream(w.seed, "service"));
  } else {
    if (!plan_pools()) return false;
    plan_ = pools_.front().plan;
    // The running requests one engine takes: max_num_seqs, or SGLang's Mamba-pool cap below it.
    const std::int64_t running = plan_.max_running_requests > 0
                                     ? std::min<std::int64_t>(e.max_num_seqs, plan_.max_running_requests)
                                     : e.max_num_seqs;
    // A profile fitted from serving runs may set the path's fixed part (HardwareProfile::api_server_s): the scenario's
    // profile (the front pool's) prices it, on the runtime it was fitted on.
    serving_path_ = perf::serving_path(e, spec::offline_workload(w), pools_.front().cost->profile());
    // An autoscaled fleet holds max_replicas replicas, min_replicas of them serving at t = 0, the rest off.
    const auto& as = sc.autoscaler;
    const auto& fs = sc.failures;
    serving_ = as ? as->max_replicas : front.scenario.hardware.replicas;
    if (!rs_.fleet.empty()) {
      serving_ = 0;
      for (const auto& m : rs_.fleet) serving_ += m.scenario.hardware.replicas;
    }
    const std::int32_t groups = serving_ + fs.spares;  // hot spares wait in standby
    for (std::size_t k = 0; k < fs.outages.size(); ++k)
      if (fs.outages[k].replica >= groups)
        throw ConfigError("failures.outages[" + std::to_string(k) + "][2]",
                          "replica must be < " + std::to_string(groups) + " (the fleet's replicas), got " +
                              std::to_string(fs.outages[k].replica));
    const std::int32_t decode_groups = disagg_ ? disagg_->decode().scenario.hardware.replicas : 0;
    outstanding_.assign(static_cast<std::size_t>(groups) * engines_per_group_ + decode_groups, 0);
    build_replicas(groups);
    // The earlier run's blocks, before the first event (warm_cache_fill.hpp), on the replicas serving at t = 0: an
    // autoscaler's min_replicas (one it starts later is a new server, cold; none at 0, scale to zero).
    const std::int32_t warm_groups = as ? std::min(as->min_replicas, serving_) : serving_;
    if (w.warm_cache && warm_groups > 0)
      warm_engines(*driver_, w.num_requests, replicas_, static_cast<std::size_t>(warm_groups) * engines_per_group_);
    router_ = std::make_unique<Router>(front.scenario.hardware.router, groups, engines_per_group_, outstanding_.data(),
                                       w.seed);
    set_router_speeds();
    std::int32_t billed = groups;
    if (disagg_) {  // the decode pool's replicas follow the prefill pool's (one engine each: no pipeline parallel)
      build_pool_replicas(disagg_->decode(), disagg_->decode_plan(), disagg_->decode_cost(), decode_groups, false);
      disagg_->set_replicas(groups, decode_groups);
      billed = serving_ = groups + decode_groups;
    }
    fleet_ = std::make_unique<Fleet>(billed, as ? as->min_replicas : serving_);
    for (std::int32_t g = serving_; g < groups; ++g) fleet_->set(g, GroupState::standby);
    if (as) {
      autoscaler_ = std::make_unique<Autoscaler>(*as, scale_up_delay_s(rs_),
                                                 static_cast<double>(running) * engines_per_group_);
    }
    if (!fs.empty()) failures_ = std::make_unique<FailureModel>(fs, groups, w.seed);
    // The chat endpoint's render barrier (perf/chat_render.hpp): one API server event loop per deployment replica.
    if (const double render_s = perf::chat_render_barrier_s(rs_); render_s > 0) {
      if (failures_ || fs.spares > 0)
        result_.summary.warnings.push_back("the chat endpoint's render barrier (vLLM " + *e.runtime_release +
                                           ") is not simulated with replica failures");
      else
        api_loops_.assign(static_cast<std::size_t>(groups), ApiRenderLoop(render_s));
    } else if (const perf::InprocessFront front =
                   perf::inprocess_front(e, spec::offline_workload(w), pools_.front().cost->profile());
               front.applies()) {
      // vLLM before 0.6.5: each request's handler runs on the server's event loop first (before 0.6 the engine's own;
      // perf/inprocess_server.hpp).
      if (failures_ || fs.spares > 0)
        result_.summary.warnings.push_back("the OpenAI server's request handling on its event loop (vLLM " +
                                           e.runtime_release.value_or("before 0.6") +
                                           ") is not simulated with replica failures");
      else
        api_loops_.assign(static_cast<std::size_t>(groups), ApiRenderLoop(front.fixed_s, front.per_prompt_token_s));
    }
    if (as || failures_ || fs.spares > 0) router_->set_ready(&fleet_->ready_mask(), &fleet_->ready_list());
    // One iteration_done event per busy engine, tracked: a decode run cut short moves it, a failure removes it.
    events_.track(EventKind::iteration_done, replicas_.size());
    // Decode runs: the replicas' boundaries must be invisible between events. Off where something watches every
    // step (iteration records, the time series' state samples), where another replica's state is read at its
    // steps (KV-aware routing, disaggregation's transfers) or where steps overlap (pipeline parallel).
    runs_ = opt_.decode_runs && !opt_.record_iterations && !series_ && !disagg_ && engines_per_group_ == 1 &&
            front.scenario.hardware.router != spec::RouterPolicy::least_kv;
    slots = running;
    servers = static_cast<std::int64_t>(replicas_.size());
  }
  // The client's clock: its last token reaches it the serving path after the engine produced it, so the engine must
  // be done by the client's deadline less that request's path (a request done at arrival + timeout - 1 ms is lost to
  // a client whose response arrives 3 ms after it gave up). The client moves on at its own deadline (cancel_request).
  if (w.timeout_s > 0) timeouts_ = std::make_unique<Timeouts>(w.timeout_s, serving_path_);
  const std::int64_t max_queue = opt_.max_queue > 0 ? opt_.max_queue : std::max<std::int64_t>(2000, 16 * slots * servers);
  monitor_ = std::make_unique<RunMonitor>(opt_.stop_when_unstable, max_queue, opt_.max_in_system);
  // Overload is judged for open loops — a trace replay is one too: its arrivals do not wait for the service (a
  // Mooncake replay served at half its offered rate grows its queue by a quarter of its rows over the second half).
  // Closed loops and offline batches pace themselves.
  bool open_loop = true;
  for (const auto& c : w.effective_classes()) {
    const auto& a = c.arrival;
    open_loop = open_loop && !std::holds_alternative<spec::ClosedLoop>(a) && !std::holds_alternative<spec::OfflineArrivals>(a);
  }
  const std::int64_t arrivals = driver_->replay_rows() > 0 ? std::min(w.num_requests, driver_->replay_rows()) : w.num_requests;
  // An unset warm-up scales with the requests the run issues: a 150-row trace under the default num_requests (2000)
  // leaves out 15 of them, not 100 (the one rule: spec::default_warmup_requests).
  warmup_ = w.warmup_requests;
  if (w.warmup_default && driver_->replay_rows() > 0) warmup_ = std::min(warmup_, spec::default_warmup_requests(arrivals));
  // A set warm-up is checked against num_requests by the spec; a trace replays only its rows, so a warm-up that
  // takes them all would leave no measured request (a run of zeros presented as a result): refused, as for
  // num_requests.
  if (driver_->replay_rows() > 0 && warmup_ >= arrivals)
    throw ConfigError("workload.warmup_requests", "must be < the " + std::to_string(arrivals) +
                                                      " requests the trace replays (its rows, at most num_requests), got " +
                                                      std::to_string(warmup_));
  // A replayed trace whose rows all arrive at one instant (`vllm bench serve --request-rate inf`) is a burst: a batch
  // sent at once, like an offline one. With no arrival rate there is nothing to fall behind — every request is in
  // the system from the start whatever the server's speed, so the growth check would call any burst of 200 or more
  // "unstable". It is judged as a batch is (not at all); its duration is the measure (RunMonitor).
  if (open_loop && driver_->replay_rows() > 0 && w.effective_classes().size() == 1 && arrivals > 0 &&
      driver_->trace().rows[static_cast<std::size_t>(arrivals - 1)].arrival_s == driver_->trace().rows.front().arrival_s)
    open_loop = false;
  if (open_loop && arrivals >= 200) monitor_->watch_growth(arrivals);
  else if (open_loop && arrivals > 0) monitor_->watch_short(arrivals);  // too few for the growth check (run_monitor.hpp)
  return true;
}

void Simulation::build_pool_replicas(const spec::ResolvedScenario& pool, const memory::MemoryPlan& plan,
                                     const perf::CostModel& cost, std::int32_t groups, bool prefill_only) {
  const auto& sc = pool.scenario;
  const auto& e = sc.engine;
  ReplicaConfig cfg;
  cfg.prefill_only = prefill_only;
  cfg.policy = e.policy;
  // SGLang's Mamba pool may cap the running requests below max_running_requests (memory/sglang_mamba_pool.hpp).
  cfg.max_num_seqs = plan.max_running_requests > 0 ? std::min<std::int64_t>(e.max_num_seqs, plan.max_running_requests)
                                                   : e.max_num_seqs;
  cfg.max_num_batched_tokens = e.max_num_batched_tokens;
  // Static batching re-runs a preempted request in a later batch, so it always recomputes.
  cfg.swap = e.preemption == spec::PreemptionMode::swap && e.policy != spec::SchedulerPolicy::static_batching;
  cfg.block_bytes = plan.kv_bytes_per_token_per_gpu * e.block_size;
  cfg.state_blocks = plan.linear_state_blocks_per_seq;  // vLLM V1: each running sequence's state from the pool
  cfg.prefix_caching = e.prefix_caching();
  if (plan.hybrid_prefix_block_tokens > e.block_size)
    cfg.prefix_granule_blocks = (plan.hybrid_prefix_block_tokens + e.block_size - 1) / e.block_size;
  cfg.hash_block_tokens = driver_->hash_block_tokens();
  if (pool.speculation) {  // a pool's engine patch may turn speculation on or off for that pool alone
    cfg.spec_tokens = pool.speculation->config.num_speculative_tokens;
    cfg.spec_expected_tokens = pool.speculation->expected_tokens;
  }
  cfg.first_token_after_next_step =
      perf::first_token_after_next_step(e, sc.hardware.parallel.pp, cfg.spec_tokens > 0);
  cfg.async_scheduling = cost.async_scheduling();  // perf::async_scheduling decided it for the pool's cost model
  // A V0 release before 0.5.4 keeps its running queue in arrival order (spec/runtime_version.hpp).
  if (e.runtime_release && (e.policy == spec::SchedulerPolicy::vllm_v0 || e.policy == spec::SchedulerPolicy::chunked)) {
    const auto release = spec::runtime_for_version(spec::parse_engine_version(*e.runtime_release));
    cfg.running_by_arrival = release.v0_running_by_arrival;
  }
  // SGLang with the radix cache off admits requests that ignore EOS by their exact future (schedule_sglang_eos.cpp).
  cfg.sglang_eos = spec::sglang_eos_admission(e, sc.workload);
  // vLLM V0's multi-step scheduling (spec/multi_step.hpp refuses the engines without it; engine/multi_step.cpp).
  const spec::MultiStep multi_step = spec::multi_step_for(e);
  cfg.scheduler_steps = multi_step.steps;
  cfg.window_streams_steps = multi_step.stream_each_step;
  if (multi_step.steps > 1) cfg.window_cost = std::make_shared<const perf::CostModel>(cost.without_cpu_overhead());
  // vLLM 0.5.4-0.5.5's chunked walk (spec/v0_running_order.hpp; engine/v0_walk.cpp): one token per step per decoder
  // and a synchronous output step, which the releases' chunked prefill has (no speculative or multi-step with it).
  cfg.prefills_ahead_of_decodes = e.policy == spec::SchedulerPolicy::chunked &&
                                  spec::v0_prefills_ahead_of_decodes(e.runtime_release) && cfg.spec_tokens == 0 &&
                                  !cfg.first_token_after_next_step && !cfg.async_scheduling && cfg.scheduler_steps == 1 && !prefill_only;
  // Under pipeline parallel each virtual engine schedules its own requests in 1/k of the KV and swap space.
  const std::int64_t reserved = e.policy == spec::SchedulerPolicy::vllm ? 1 : 0;
  const std::int64_t kv_blocks = plan.kv_capacity_blocks / engines_per_group_ - reserved;
  // Swap space is bounded by validation (<= 1e6 GiB); the block count saturates rather than overflow.
  const double host = cfg.block_bytes > 0 ? e.swap_space_gb * kGiB / cfg.block_bytes / engines_per_group_ : 0;
  const auto host_blocks = static_cast<std::int64_t>(std::min(host, 4e18));
  cfg.replica_block_bytes = cfg.block_bytes * sc.hardware.parallel.tp * sc.hardware.parallel.pp;
  cfg.host_tier_blocks = host_tier_blocks(e.kv_offload_gb, cfg.replica_block_bytes, engines_per_group_);
  // vLLM V1's sliding-window groups free the blocks that left the window (kv_window.cpp); a pool block is a page in
  // each of the plan's groups. V0 and SGLang keep every layer's blocks (their plans have no sliding groups, but
  // SGLang's Llama-4, whose pool the engine does not split).
  KvBlockManager kv(kv_blocks, e.block_size, e.watermark_or_default(), host_blocks);
  if (const memory::KvLayout charged = memory::engine_kv_layout(plan, e); charged.sliding_groups > 0) {
    cfg.window_pages = charged.sliding_groups;
    cfg.window_blocks = (charged.window + e.block_size - 1) / e.block_size + 1;
    kv.set_groups(plan.kv_cache_groups);
  }
  const auto first = static_cast<std::int32_t>(pipelines_.size());
  replicas_.reserve(replicas_.size() + static_cast<std::size_t>(groups * engines_per_group_));
  for (int r = first; r < first + groups; ++r) {
    pipelines_.emplace_back(spec::pp_stage_layers(pool.model.num_layers, sc.hardware.parallel));
    for (int v = 0; v < engines_per_group_; ++v) {
      LLMSIM_CHECK(replicas_.size() < outstanding_.size(), "more engines than outstanding-count slots");
      replicas_.emplace_back(r, v, cfg, kv,
                             cost, pool_, *collector_, &outstanding_[replicas_.size()]);
    }
  }
  start_pending_.assign(replicas_.size(), 0);
}

}  // namespace llmsim::engine::detail
