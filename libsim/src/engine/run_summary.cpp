#include "run_summary.hpp"

#include <algorithm>

#include "llmsim/core/number.hpp"
#include "llmsim/perf/async_scheduling.hpp"
#include "simulation.hpp"

namespace llmsim::engine::detail {

std::string engine_label(const spec::EngineConfig& e, int pp) {
  std::string label = spec::engine_name(e.policy);
  spec::EngineConfig own = e;
  own.runtime.reset();
  const bool other_runtime = e.runtime && *e.runtime != own.resolved_runtime();
  if (e.runtime_release)
    label += " on " + *e.runtime_release +
             (other_runtime ? " (runtime " + spec::to_string(e.resolved_runtime()) + ")" : std::string());
  else if (other_runtime)
    label += " on runtime " + spec::to_string(*e.runtime);
  // SGLang's overlap scheduler shares the mechanism (perf/sglang_overlap.hpp) under its own name.
  if (perf::async_scheduling(e, pp, e.speculative))
    label += e.policy == spec::SchedulerPolicy::sglang ? ", overlap scheduler" : ", async scheduling";
  return label;
}

namespace {

/// One deployment's (or fleet member's) work against what its GPUs could have done while busy.
struct Utilization {
  double flops = 0, flop_capacity = 0;  ///< model FLOPs; busy GPU-seconds × tensor peak
  double bytes = 0, byte_capacity = 0;  ///< bytes moved; busy GPU-seconds × memory bandwidth
  double pass_s = 0, stage_s = 0;       ///< Σ pass time; pipeline stages × replicas × run time
};

Utilization utilization(const RunFacts& f) {
  const auto& sc = f.rs.scenario;
  const auto& m = f.rs.model;
  // Model FLOPs: 2 per active parameter per token, plus attention (QKᵀ and PV, 2 FLOPs per MAC) over the
  // query-key pairs; bytes: weights once per iteration plus KV reads of decode and prefill attention.
  double busy = 0, tokens = 0, pairs = 0, kv_tokens = 0, iters = 0, pass_s = 0, expert_share = 0;
  for (const auto& r : f.replicas) {
    const auto& w = r.work();
    busy += w.busy_s / f.engines_per_group;  // a replica's k concurrent batches share its GPUs
    tokens += w.tokens;
    pairs += w.attn_pairs + w.decode_context;
    kv_tokens += w.decode_context + w.prefill_kv_tokens;
    iters += w.iterations;
    expert_share += w.expert_share;
    pass_s += w.busy_s;
  }
  const double gpus = static_cast<double>(sc.hardware.parallel.gpus());
  double peak = f.rs.gpu.tensor_peak(f.rs.quant.weights.compute_dtype);
  if (!(peak > 0)) peak = f.rs.gpu.tensor_peak(f.rs.quant.weights.fallback_compute_dtype);
  Utilization u;
  u.flops = 2.0 * static_cast<double>(m.active_param_count()) * tokens +
            4.0 * m.num_layers * static_cast<double>(m.num_heads) * m.head_dim * pairs;
  // The weights a pass streams (not the tables it gathers rows from, nor unused towers: memory::streamed_weight_bytes),
  // of a MoE model's routed experts only the share each iteration ran (as the cost model prices their GEMMs).
  const auto streamed = memory::streamed_weight_bytes(m, f.rs.quant.weights);
  u.bytes = (streamed.bytes - streamed.routed_experts) * iters + streamed.routed_experts * expert_share +
            f.plan.kv_bytes_per_token * kv_tokens;
  if (peak > 0) u.flop_capacity = busy * gpus * peak;
  if (f.rs.gpu.memory_bandwidth > 0) u.byte_capacity = busy * gpus * f.rs.gpu.memory_bandwidth;
  // Per GPU: an iteration's pass spends latency/pp on each pipeline stage (pipeline.hpp), and TP ranks run together,
  // so a GPU is busy for Σ pass time / (pp × replicas) of the run (owned hardware prices its energy at this).
  u.pass_s = pass_s;
  u.stage_s = static_cast<double>(sc.hardware.parallel.pp) * sc.hardware.replicas * f.end_s;
  return u;
}

void apply(metrics::Summary& sum, const Utilization& u) {
  if (u.flop_capacity > 0) sum.mfu = u.flops / u.flop_capacity;
  if (u.byte_capacity > 0) sum.mbu = u.bytes / u.byte_capacity;
  if (u.stage_s > 0) sum.busy_fraction = std::min(1.0, u.pass_s / u.stage_s);
}

void fill_kv(metrics::Summary& sum, const RunFacts& f) {
  double cap = 0, used_integral = 0;
  for (std::size_t r = 0; r < f.replicas.size(); ++r) {
    cap += static_cast<double>(f.replicas[r].kv().capacity());
    const double at_start = r < f.kv_integral_at_window.size() ? f.kv_integral_at_window[r] : 0.0;
    used_integral += f.replicas[r].kv_integral().integral(f.end_s) - at_start;
  }
  sum.kv.capacity_tokens = f.plan.kv_capacity_tokens;
  for (const auto& r : f.replicas) {
    sum.kv.prefix_cache_query_tokens += r.work().prefix_query_tokens;
    sum.kv.prefix_cache_hit_tokens += r.work().prefix_hit_tokens;
    if (r.host_tier().enabled()) {
      constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
      sum.kv.host_tier = true;
      sum.kv.host_capacity_gb += static_cast<double>(r.host_tier().capacity()) * r.config().replica_block_bytes / kGiB;
      sum.kv.host_cache_hit_tokens += r.work().host_hit_tokens;
      sum.kv.host_recomputed_tokens += r.work().host_recomputed_tokens;
      sum.kv.host_stored_gb += r.work().host_store_bytes / kGiB;
      sum.kv.host_loaded_gb += r.work().host_load_bytes / kGiB;
    }
  }
  sum.kv.peak_used_fraction = f.peak_kv_fraction;
  if (sum.duration_s > 0 && cap > 0) sum.kv.mean_used_fraction = used_integral / (cap * sum.duration_s);
}

// Share of the engines' busy time that must have been saturated for the saturation rate to be reported.
constexpr double kMinSaturatedShare = 0.05;

}  // namespace

double saturated_request_rate(const SaturationTotals& t, double prompt_computed, double emitted,
                              const metrics::Throughput& run) {
  // A saturated server's service rate is the work it completes per busy second, counted in requests: 1 / the
  // seconds one request's work takes at the saturated steps' pace. A request's work is its output's decode steps
  // and its prompt's prefill, so those seconds are (mean output) × (decode seconds per output token emitted) +
  // (prompt tokens computed per request) × (prefill seconds per prompt token computed), each pace from the
  // saturated steps alone (SaturationTotals::prefill_s splits their time) and each length from the whole run:
  // prompt tokens computed per request = the run's computed per emitted token × mean output (prefix-cache hits
  // computed nothing, recomputation after preemption twice). Over a long saturated stretch the steps' prompt and
  // output mix is the run's, and this is output tokens/s / mean output; in a short one whose steps admit a backlog's
  // prompts ahead of their outputs (the 4090's KV-bound transient, docs/engine.md) it counts the prompts' work too
  // instead of reading the rate from the output side alone (2.34 req/s under an achieved 2.96).
  if (!(run.requests_per_s > 0) || !(run.output_tokens_per_s > 0) || !(t.output_tokens > 0) || !(t.time_s > 0)) return 0;
  const double mean_output = run.output_tokens_per_s / run.requests_per_s;
  const double prefill_s = std::clamp(t.prefill_s, 0.0, t.time_s);
  double per_request_s = (t.time_s - prefill_s) / t.output_tokens * mean_output;
  if (prefill_s > 0 && t.prefill_tokens > 0 && emitted > 0)
    per_request_s += prefill_s / t.prefill_tokens * (prompt_computed / emitted * mean_output);
  return per_request_s > 0 ? 1.0 / per_request_s : 0.0;
}

namespace {

void fill_batch_and_saturation(metrics::Summary& sum, const RunFacts& f) {
  // Each engine (a replica, or one of a pipeline's batches in flight) serves its iterations back to back, so
  // its rate while saturated is what it emitted then over the time those iterations took; the deployment's is
  // that rate times the engines that served, as if all were saturated at once (an autoscaler's replicas never
  // started, spares never called, serve nothing and add nothing).
  double busy = 0, seq_time = 0, prompt_computed = 0, emitted = 0;
  SaturationTotals t;
  std::int64_t served = 0;
  for (const auto& r : f.replicas) {
    busy += r.work().busy_s;
    if (r.work().busy_s > 0) ++served;
    seq_time += r.work().seq_time;
    prompt_computed += r.work().prefill_tokens;
    emitted += r.work().output_tokens;
    sum.batch.max_seqs = std::max(sum.batch.max_seqs, r.work().max_seqs);
    const auto& s = r.saturation();
    t.time_s += s.time_s;
    t.iterations += s.iterations;
    t.output_tokens += s.output_tokens;
    t.prefill_tokens += s.prefill_tokens;
    t.prefill_s += s.prefill_s;
    t.seq_time += s.seq_time;
  }
  if (busy > 0) sum.batch.mean_seqs = seq_time / busy;
  // A few saturated steps at light load (two prompts meeting in one token budget) say nothing of the rate at full
  // load: saturation is measured only when it held for a share of the busy time (else reported as not reached).
  if (t.time_s <= 0 || t.time_s < kMinSaturatedShare * busy) return;
  auto& sat = sum.saturation;
  sat.time_s = t.time_s;
  sat.iterations = static_cast<std::int64_t>(t.iterations);
  if (busy > 0) sat.busy_fraction = std::min(1.0, t.time_s / busy);
  const double engines = static_cast<double>(served);
  sat.throughput.output_tokens_per_s = t.output_tokens / t.time_s * engines;
  sat.throughput.input_tokens_per_s = t.prefill_tokens / t.time_s * engines;
  sat.throughput.total_tokens_per_s = sat.throughput.input_tokens_per_s + sat.throughput.output_tokens_per_s;
  sat.mean_batch = t.seq_time / t.time_s;
  sat.throughput.requests_per_s = saturated_request_rate(t, prompt_computed, emitted, sum.throughput) * engines;
}

void fill_speculative(metrics::Summary& sum, const RunFacts& f) {
  if (!f.rs.speculation) return;
  const auto& rsp = *f.rs.speculation;
  auto& sp = sum.speculative;
  sp.enabled = true;
  sp.method = spec::to_string(rsp.config.method);
  sp.num_speculative_tokens = rsp.config.num_speculative_tokens;
  sp.acceptance_rate = rsp.acceptance_rate;
  double seq_steps = 0, emitted = 0, proposer = 0, busy = 0;
  for (const auto& r : f.replicas) {
    const auto& w = r.work();
    sp.steps += w.spec_steps;
    seq_steps += w.spec_seq_steps;
    emitted += w.spec_emitted;
    proposer += w.proposer_s;
    busy += w.busy_s;
  }
  if (seq_steps > 0) {
    sp.mean_tokens_per_step = emitted / seq_steps;
    sp.mean_accepted_tokens = sp.mean_tokens_per_step - 1;
  }
  if (busy > 0) sp.proposer_time_fraction = proposer / busy;
}

}  // namespace

void fill_engine(metrics::Summary& summary, const RunFacts& facts) {
  apply(summary, utilization(facts));
  fill_speculative(summary, facts);
  fill_kv(summary, facts);
  fill_batch_and_saturation(summary, facts);
}

metrics::PoolSummary pool_summary(std::string role, const spec::ResolvedScenario& rs, const metrics::Summary& measured) {
  metrics::PoolSummary p;
  p.role = std::move(role);
  p.gpu = rs.gpu.id;
  p.replicas = rs.scenario.hardware.replicas;
  p.gpus = rs.scenario.hardware.gpus_total();
  p.price_per_gpu_hour = rs.price_per_gpu_hour;
  p.busy_fraction = std::max(0.0, measured.busy_fraction);
  p.mfu = measured.mfu;
  p.mbu = measured.mbu;
  p.kv_mean_used_fraction = measured.kv.mean_used_fraction;
  p.kv_capacity_tokens = measured.kv.capacity_tokens;
  p.saturation_requests_per_s = measured.saturation.throughput.requests_per_s;
  return p;
}

void fill_fleet(metrics::Summary& summary, std::span<const RunFacts> members) {
  Utilization total;
  summary.fleet_pools.clear();
  for (const auto& f : members) {
    const Utilization u = utilization(f);
    total.flops += u.flops;
    total.flop_capacity += u.flop_capacity;
    total.bytes += u.bytes;
    total.byte_capacity += u.byte_capacity;
    // Busy GPU-seconds over GPU-seconds: a member's stage time counts its tp GPUs.
    const double tp = f.rs.scenario.hardware.parallel.tp;
    total.pass_s += u.pass_s * tp;
    total.stage_s += u.stage_s * tp;
    // The member alone: its engine fields measured on its own replicas, against its own card (as a disaggregated
    // pool's are). A request must fit every member's cache (the router does not look at lengths): the fleet's KV
    // room is the smallest member's.
    metrics::Summary ms = summary;
    fill_engine(ms, f);
    summary.fleet_pools.push_back(pool_summary("fleet", f.rs, ms));
    summary.kv.capacity_tokens = std::min(summary.kv.capacity_tokens, ms.kv.capacity_tokens);
  }
  apply(summary, total);
}

// The Simulation's end (moved here from simulator.cpp, which keeps the event handlers): what it measured, into the
// summary.
void Simulation::finish(double end_s) {
  const double start = first_measured_s_ >= 0 ? first_measured_s_ : end_s;
  for (const auto& r : replicas_) collector_->merge_token_gaps(r.token_gaps());  // in replica order
  ledger_.check_conserved();  // every request accounted for: rejected, completed, failed, timed out or still in
  if (timeouts_) {
    const auto& lost = ledger_.measured();
    monitor_->check_timeouts(lost.timed_out, lost.arrived - lost.rejected, timeouts_->timeout_s());
  }
  // The client's run ends when the last token has come through the serving path (vLLM's benchmark duration); the
  // fleet is held (and billed) until then.
  const double client_end = std::max(end_s, last_seen_s_);
  metrics::Summary s = collector_->summarize(start, client_end);
  s.fits = true;
  s.engine = result_.summary.engine;
  const auto& m = ledger_.measured();
  s.rejected_requests = m.rejected;
  s.clipped_requests = clipped_;
  s.iterations = iterations_;
  s.offered.arrivals = measured_arrivals_;
  s.offered.window_s = first_measured_s_ >= 0 ? last_measured_s_ - first_measured_s_ : 0;
  if (s.offered.window_s > 0) s.offered.requests_per_s = static_cast<double>(measured_arrivals_) / s.offered.window_s;
  if (!synthetic_) {
    for (const auto& r : replicas_) {
      s.preemptions += r.preemptions();
      result_.kv_blocks_in_use_at_end += r.kv().held();
    }
    if (disagg_) {
      disagg_->summarize(s, plan_, replicas_, kv_integral_at_window_, peak_kv_fraction_, end_s);
    } else {
      RunFacts facts{rs_, plan_, replicas_, engines_per_group_, kv_integral_at_window_, peak_kv_fraction_, end_s};
      fill_engine(s, facts);
      if (!rs_.fleet.empty()) fill_fleet(s, fleet_facts(end_s));
    }
    double busy = 0;
    for (const auto& r : replicas_) busy += r.work().busy_s;
    s.fleet = meter_.summarize(client_end, busy / engines_per_group_);
  } else {
    s.fleet = meter_.summarize(client_end, 0);
  }
  // A time-varying load (a daily profile) ends its arrivals before num_requests, so the growth check was never judged:
  // overload is then a window of the hour table in which the fleet fell behind (RunMonitor::check_windows).
  if (monitor_->complete() && monitor_->growth_armed() && !monitor_->growth_judged()) monitor_->check_windows(s.fleet.hours);
  // A short open loop (fewer than 200 arrivals): its waiting queue at the last arrival and its completion rate.
  monitor_->check_short(s.offered.requests_per_s, s.throughput.requests_per_s);
  s.unstable = monitor_->unstable();
  s.complete = monitor_->complete();
  s.reason = monitor_->unstable_reason();
  if (!s.complete) s.reason += (s.reason.empty() ? "" : "; ") + monitor_->incomplete_reason();
  if (s.unstable) s.slo_met = false;
  s.fleet.autoscaled = autoscaler_ != nullptr;
  s.fleet.failures = replica_failures_;
  // Measured requests only: warm-up ones are simulated but left out of every statistic (their counts: s.warmup).
  s.failed_requests = m.failed;
  s.timed_out_requests = m.timed_out;
  s.requeued_requests = m.requeued;
  const auto& wu = ledger_.warmup();
  s.warmup = metrics::WarmupCounts{wu.arrived, wu.rejected, wu.completed, wu.failed, wu.timed_out, wu.in_system};
  s.wasted_output_tokens = wasted_tokens_;
  if (autoscaler_) {
    s.fleet.scale_ups = autoscaler_->scale_ups();
    s.fleet.scale_downs = autoscaler_->scale_downs();
    s.fleet.scale_up_delay_s = autoscaler_->scale_up_delay_s();
  }
  if (s.unstable && !monitor_->windows_flagged() && s.saturation.time_s > 0 && s.offered.window_s > 0) {
    // A daily profile's mean rate over the run is not the load the fleet faced (a fleet overloaded at the peak can
    // show a mean below its saturation, which reads as stable): quote its busiest hour (of at least 10 minutes).
    double offered = s.offered.requests_per_s;
    const char* what = " — offered ";
    if (!rs_.scenario.workload.daily_profile.empty()) {
      double busiest = 0;
      for (const auto& h : s.fleet.hours)
        if (h.end_s - h.start_s >= 600) busiest = std::max(busiest, static_cast<double>(h.arrivals) / (h.end_s - h.start_s));
      if (busiest > 0) {
        offered = busiest;
        what = " — the busiest hour offered ";
      }
    }
    // Rates are estimates: three significant digits, more only where the two would read alike.
    const auto [offered_text, saturation_text] = format_distinct(offered, s.saturation.throughput.requests_per_s);
    s.reason += what + offered_text + " req/s against a saturation throughput of " + saturation_text + " req/s";
  }
  if (const SessionDriver* sd = driver_->sessions()) {
    metrics::SessionSummary ss;
    // All of them measured sessions (the first turn measured), so started = finished + in_progress exactly.
    ss.started = sd->measured_started();
    ss.finished = sd->measured_finished();
    ss.in_progress = sd->measured_active() + sd->measured_cut();
    ss.peak_active = sd->peak_active();
    ss.dropped_turns = sd->dropped_turns();
    if (s.offered.window_s > 0) {
      ss.sessions_per_s = static_cast<double>(ss.started) / s.offered.window_s;
      ss.requests_per_s = s.offered.requests_per_s;
    }
    if (ss.started > 0) ss.turns_per_session = static_cast<double>(sd->measured_turns()) / static_cast<double>(ss.started);
    ss.prefix_hit_rate = session_stats_->first_admission_hit_rate();
    ss.by_turn = session_stats_->by_turn();
    s.sessions = std::move(ss);
  }
  // What the build warned (Simulation::build: a path not simulated, prefix caching a release turned off) comes first.
  s.warnings.insert(s.warnings.begin(), result_.summary.warnings.begin(), result_.summary.warnings.end());
  s.prefix_cache_note = result_.summary.prefix_cache_note;
  result_.summary = std::move(s);
  if (opt_.record_requests) record_unfinished(end_s);
  if (series_) result_.time_series = series_->windows(end_s);
}

}  // namespace llmsim::engine::detail
