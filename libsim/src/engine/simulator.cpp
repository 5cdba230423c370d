#include "llmsim/engine/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include <boost/random/exponential_distribution.hpp>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/core/rng.hpp"
#include "llmsim/engine/event_queue.hpp"
#include "llmsim/engine/workload_source.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/metrics/collector.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "pipeline.hpp"
#include "replica.hpp"

namespace llmsim::engine {

namespace {

using detail::Pipeline;
using detail::Replica;
using detail::ReplicaConfig;
using detail::Seq;
using detail::SeqPool;
using detail::SeqState;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

/// Where a request comes from: an open-loop process, one closed-loop user, or a trace.
struct Source {
  enum class Kind { open, user, trace } kind = Kind::open;
  std::int32_t tenant = 0;
  std::unique_ptr<ArrivalSampler> sampler;  // open
  RandomEngine rng;                         // open: inter-arrival draws
  double think_s = 0;                       // user
  std::shared_ptr<const std::vector<TraceRow>> rows;  // trace
  std::size_t next_row = 0;
  double time_scale = 1;
};

/// Per tenant class: its length samplers, random streams and prefix groups.
struct TenantState {
  std::unique_ptr<LengthSampler> input, output;
  RandomEngine input_rng, output_rng, prefix_rng;
  std::int32_t prefix_first = -1, prefix_groups = 0;
};

class Simulation {
 public:
  Simulation(const spec::ResolvedScenario& rs, const SimulationOptions& opt) : rs_(rs), opt_(opt) {}
  SimulationResult run();

 private:
  void check_engine() const;
  void build_workload();
  void build_replicas();
  void schedule_next(std::int32_t source, double now_s);
  void on_arrival(std::int32_t source, double now_s);
  void on_iteration_done(std::int32_t replica, double now_s);
  void on_service_done(std::int32_t server, double now_s);
  void start_replica(std::int32_t r, double now_s);
  void finish_request(std::int32_t seq, double now_s);
  void start_service(std::int32_t server, std::int32_t seq, double now_s);
  std::int32_t route() const;
  std::int64_t group_outstanding(std::int32_t g) const;
  double group_kv_fraction(std::int32_t g) const;
  std::int64_t waiting_total() const;
  void fill_utilization(metrics::Summary& s, double end_s) const;

  const spec::ResolvedScenario& rs_;
  SimulationOptions opt_;
  std::string wpath_ = "workload";
  std::vector<spec::TenantClass> classes_;
  std::vector<Source> sources_;
  std::vector<TenantState> tenants_;
  std::unique_ptr<metrics::Collector> collector_;
  std::unique_ptr<perf::CostModel> cost_;
  memory::MemoryPlan plan_;
  SeqPool pool_;
  // One Replica per virtual engine: deployment replica g owns replicas_[g·k, (g+1)·k), k = engines_per_group_,
  // and its pipeline stages pipelines_[g].
  std::vector<Replica> replicas_;
  std::int32_t engines_per_group_ = 1;
  int pipeline_stages_ = 1;
  std::vector<char> start_pending_;  ///< per replica: a replica_start event is queued
  std::vector<Pipeline> pipelines_;
  EventQueue events_;
  std::vector<std::int32_t> finished_;
  SimulationResult result_;

  bool synthetic_ = false;
  RandomEngine service_rng_;
  detail::IndexRing central_queue_;
  std::vector<std::int32_t> server_seq_;  ///< synthetic: request in service per server, -1 = idle
  double service_busy_s_ = 0;

  std::int64_t issued_ = 0, in_system_all_ = 0, rejected_ = 0, clipped_ = 0, iterations_ = 0;
  std::int64_t max_queue_ = 0;
  mutable std::int32_t rr_next_ = 0;
  bool window_open_ = false;
  double window_start_s_ = 0;
  std::vector<double> kv_integral_at_window_;
  bool unstable_ = false;
  std::string unstable_reason_;
  // Queue-growth check over the second half of the open-loop arrivals.
  std::int64_t half_mark_ = -1, in_system_at_half_ = 0;
  double peak_kv_fraction_ = 0;
};

void Simulation::check_engine() const {
  const auto& e = rs_.scenario.engine;
  e.validate("engine");
  rs_.scenario.hardware.validate("hardware");
  if (e.policy != spec::SchedulerPolicy::static_batching && e.max_num_batched_tokens < e.max_num_seqs && !synthetic_)
    throw ConfigError("engine.max_num_batched_tokens",
                      "must be >= max_num_seqs (" + std::to_string(e.max_num_seqs) + ") so every running sequence can "
                      "decode in each step (as vLLM requires), got " + std::to_string(e.max_num_batched_tokens));
  const auto& w = rs_.scenario.workload;
  if (w.num_requests < 1) throw ConfigError("workload.num_requests", "must be >= 1, got " + std::to_string(w.num_requests));
  if (w.warmup_requests < 0)
    throw ConfigError("workload.warmup_requests", "must be >= 0, got " + std::to_string(w.warmup_requests));
  if (!(w.horizon_s >= 0) || !std::isfinite(w.horizon_s))
    throw ConfigError("workload.horizon_s", "must be >= 0 (0 = no limit), got " + format_value(w.horizon_s));
  if (opt_.max_queue < 0) throw ConfigError("max_queue", "must be >= 0, got " + std::to_string(opt_.max_queue));
}

void Simulation::build_workload() {
  const auto& w = rs_.scenario.workload;
  classes_ = w.effective_classes();
  const bool multi = !w.classes.empty();
  const std::uint64_t seed = w.seed;
  const std::int64_t max_len = rs_.max_model_len > 0 ? rs_.max_model_len : 0;
  std::vector<metrics::ClassInfo> infos;
  std::int32_t prefix_next = 0;
  for (std::size_t c = 0; c < classes_.size(); ++c) {
    const auto& tc = classes_[c];
    const std::string cpath = multi ? "workload.classes[" + std::to_string(c) + "]" : "workload";
    const auto ci = static_cast<std::uint64_t>(c);
    TenantState ts;
    ts.input = std::make_unique<LengthSampler>(tc.input_tokens, cpath + ".input_tokens", max_len);
    ts.output = std::make_unique<LengthSampler>(tc.output_tokens, cpath + ".output_tokens", max_len);
    ts.input_rng = rng_stream(seed, "input_tokens", ci);
    ts.output_rng = rng_stream(seed, "output_tokens", ci);
    ts.prefix_rng = rng_stream(seed, "prefix", ci);
    if (tc.prefix_groups < 0) throw ConfigError(cpath + ".prefix_groups", "must be >= 0, got " + std::to_string(tc.prefix_groups));
    if (tc.prefix_tokens < 0) throw ConfigError(cpath + ".prefix_tokens", "must be >= 0, got " + std::to_string(tc.prefix_tokens));
    if (tc.prefix_groups > 0 && tc.prefix_tokens > 0) {
      ts.prefix_first = prefix_next;
      ts.prefix_groups = tc.prefix_groups;
      prefix_next += tc.prefix_groups;
    }
    tenants_.push_back(std::move(ts));
    infos.push_back(metrics::ClassInfo{tc.name, tc.slo ? *tc.slo : rs_.scenario.slo});

    const std::string apath = cpath + ".arrival";
    if (const auto* cl = std::get_if<spec::ClosedLoop>(&tc.arrival)) {
      if (cl->concurrency < 1) throw ConfigError(apath + ".concurrency", "must be >= 1, got " + std::to_string(cl->concurrency));
      if (!(cl->think_time_s >= 0) || !std::isfinite(cl->think_time_s))
        throw ConfigError(apath + ".think_time_s", "must be >= 0, got " + format_value(cl->think_time_s));
      for (int u = 0; u < cl->concurrency; ++u) {
        Source s;
        s.kind = Source::Kind::user;
        s.tenant = static_cast<std::int32_t>(c);
        s.think_s = cl->think_time_s;
        sources_.push_back(std::move(s));
      }
    } else if (const auto* tr = std::get_if<spec::TraceReplay>(&tc.arrival)) {
      if (!(tr->time_scale > 0) || !std::isfinite(tr->time_scale))
        throw ConfigError(apath + ".time_scale", "must be > 0, got " + format_value(tr->time_scale));
      if (tr->path.empty() && tr->requests.empty())
        throw ConfigError(apath + ".path", "missing: the trace CSV file to replay");
      Source s;
      s.kind = Source::Kind::trace;
      s.tenant = static_cast<std::int32_t>(c);
      s.rows = std::make_shared<const std::vector<TraceRow>>(tr->requests.empty() ? read_trace(tr->path, apath + ".path")
                                                                                  : trace_rows(tr->requests));
      s.time_scale = tr->time_scale;
      sources_.push_back(std::move(s));
    } else {
      Source s;
      s.kind = Source::Kind::open;
      s.tenant = static_cast<std::int32_t>(c);
      s.sampler = std::make_unique<ArrivalSampler>(tc.arrival, apath);
      s.rng = rng_stream(seed, "arrivals", ci);
      sources_.push_back(std::move(s));
    }
  }
  collector_ = std::make_unique<metrics::Collector>(std::move(infos), rs_.scenario.slo);
}

void Simulation::build_replicas() {
  const auto& sc = rs_.scenario;
  const auto& e = sc.engine;
  ReplicaConfig cfg;
  cfg.policy = e.policy;
  cfg.max_num_seqs = e.max_num_seqs;
  cfg.max_num_batched_tokens = e.max_num_batched_tokens;
  // Static batching re-runs a preempted request in a later batch, so it always recomputes.
  cfg.swap = e.preemption == spec::PreemptionMode::swap && e.policy != spec::SchedulerPolicy::static_batching;
  cfg.block_bytes = plan_.kv_bytes_per_token_per_gpu * e.block_size;
  cfg.prefix_caching = e.enable_prefix_caching;
  // Under pipeline parallel each virtual engine schedules its own requests in 1/k of the KV and swap space.
  const int pp = sc.hardware.parallel.pp;
  pipeline_stages_ = pp;
  const std::int64_t kv_blocks = plan_.kv_capacity_blocks / engines_per_group_;
  const std::int64_t host_blocks =
      cfg.block_bytes > 0 ? static_cast<std::int64_t>(e.swap_space_gb * kGiB / cfg.block_bytes) / engines_per_group_ : 0;
  std::vector<std::int64_t> prefix_blocks;
  for (std::size_t c = 0; c < classes_.size(); ++c)
    for (int g = 0; g < tenants_[c].prefix_groups; ++g) prefix_blocks.push_back(classes_[c].prefix_tokens / e.block_size);
  replicas_.reserve(static_cast<std::size_t>(sc.hardware.replicas * engines_per_group_));
  for (int r = 0; r < sc.hardware.replicas; ++r) {
    pipelines_.emplace_back(pp);
    for (int v = 0; v < engines_per_group_; ++v)
      replicas_.emplace_back(r, v, cfg, KvBlockManager(kv_blocks, e.block_size, e.watermark, host_blocks, prefix_blocks),
                             *cost_, pool_, *collector_);
  }
  start_pending_.assign(replicas_.size(), 0);
}

std::int64_t Simulation::waiting_total() const {
  if (synthetic_) return static_cast<std::int64_t>(central_queue_.size());
  std::int64_t w = 0;
  for (const auto& r : replicas_) w += r.waiting();
  return w;
}

std::int64_t Simulation::group_outstanding(std::int32_t g) const {
  std::int64_t n = 0;
  for (std::int32_t v = 0; v < engines_per_group_; ++v) n += replicas_[static_cast<std::size_t>(g * engines_per_group_ + v)].outstanding();
  return n;
}

double Simulation::group_kv_fraction(std::int32_t g) const {
  std::int64_t used = 0, cap = 0;
  for (std::int32_t v = 0; v < engines_per_group_; ++v) {
    const auto& kv = replicas_[static_cast<std::size_t>(g * engines_per_group_ + v)].kv();
    used += kv.used();
    cap += kv.capacity();
  }
  return static_cast<double>(used) / static_cast<double>(cap);
}

std::int32_t Simulation::route() const {
  // The router picks a deployment replica; inside it, the virtual engine with the fewest unfinished requests
  // takes the request (as vLLM v0 does).
  const auto n = static_cast<std::int32_t>(pipelines_.size());
  std::int32_t g = 0;
  if (n > 1) {
    switch (rs_.scenario.hardware.router) {
      case spec::RouterPolicy::round_robin:
        g = rr_next_;
        rr_next_ = (rr_next_ + 1) % n;
        break;
      case spec::RouterPolicy::least_outstanding:
        for (std::int32_t r = 1; r < n; ++r)
          if (group_outstanding(r) < group_outstanding(g)) g = r;
        break;
      case spec::RouterPolicy::least_kv:
        for (std::int32_t r = 1; r < n; ++r) {
          const double a = group_kv_fraction(r), b = group_kv_fraction(g);
          if (a < b || (a == b && group_outstanding(r) < group_outstanding(g))) g = r;
        }
        break;
    }
  }
  std::int32_t best = g * engines_per_group_;
  for (std::int32_t v = 1; v < engines_per_group_; ++v) {
    const std::int32_t e = g * engines_per_group_ + v;
    if (replicas_[static_cast<std::size_t>(e)].outstanding() < replicas_[static_cast<std::size_t>(best)].outstanding()) best = e;
  }
  return best;
}

void Simulation::schedule_next(std::int32_t si, double now_s) {
  const auto& w = rs_.scenario.workload;
  if (issued_ >= w.num_requests || unstable_) return;
  Source& s = sources_[static_cast<std::size_t>(si)];
  double t = now_s;
  switch (s.kind) {
    case Source::Kind::open: t = s.sampler->next(now_s, s.rng); break;
    case Source::Kind::user: t = now_s + s.think_s; break;
    case Source::Kind::trace:
      if (s.next_row >= s.rows->size()) return;
      t = (*s.rows)[s.next_row].arrival_s / s.time_scale;
      break;
  }
  if (w.horizon_s > 0 && t > w.horizon_s) return;
  events_.schedule(std::max(t, now_s), EventKind::arrival, si);
}

void Simulation::on_arrival(std::int32_t si, double now_s) {
  const auto& w = rs_.scenario.workload;
  if (issued_ >= w.num_requests) return;  // a closed-loop user's turn after the last request was issued
  Source& src = sources_[static_cast<std::size_t>(si)];
  TenantState& ts = tenants_[static_cast<std::size_t>(src.tenant)];
  std::int64_t input = 0, output = 0;
  if (src.kind == Source::Kind::trace) {
    const auto& row = (*src.rows)[src.next_row++];
    input = row.input_tokens;
    output = row.output_tokens;
  } else {
    input = ts.input->sample(ts.input_rng);
    output = ts.output->sample(ts.output_rng);
  }
  std::int32_t prefix_group = -1;
  if (ts.prefix_groups > 0)
    prefix_group = ts.prefix_first +
                   static_cast<std::int32_t>(boost::random::uniform_int_distribution<int>(0, ts.prefix_groups - 1)(ts.prefix_rng));
  const std::int64_t id = issued_++;
  const bool measured = id >= w.warmup_requests;
  if (measured && !window_open_) {
    window_open_ = true;
    window_start_s_ = now_s;
    for (const auto& r : replicas_) kv_integral_at_window_.push_back(r.kv_integral().integral(now_s));
  }
  if (half_mark_ >= 0 && issued_ == half_mark_) in_system_at_half_ = in_system_all_;

  // Lengths beyond the model's context are clipped (or rejected) and counted.
  bool reject = false;
  const std::int64_t max_len = rs_.max_model_len;
  if (max_len > 0 && input + output > max_len) {
    if (w.too_long == spec::TooLongPolicy::reject) {
      reject = true;
    } else {
      input = std::min(input, max_len - 1);
      output = std::min(output, max_len - input);
      ++clipped_;
    }
  }
  // A request whose whole sequence could never fit in an empty KV cache would preempt itself forever.
  if (!reject && !synthetic_) {
    const auto& kv = replicas_.front().kv();
    if (kv.blocks_for(input + output) > kv.capacity() - kv.watermark_blocks()) reject = true;
  }
  if (reject) {
    ++rejected_;
    schedule_next(si, now_s);  // a closed-loop user moves on to its next request
    return;
  }

  const std::int32_t i = pool_.acquire();
  Seq& s = pool_[i];
  s.id = id;
  s.tenant = src.tenant;
  s.source = si;
  s.arrival_s = now_s;
  s.input = input;
  s.output = output;
  s.prefill_target = input;
  s.prefix_group = prefix_group;
  s.measured = measured;
  s.state = SeqState::waiting;
  ++in_system_all_;
  if (measured) collector_->on_in_system_change(now_s, +1);

  if (synthetic_) {
    std::int32_t server = -1;
    for (std::size_t k = 0; k < server_seq_.size(); ++k)
      if (server_seq_[k] < 0) {
        server = static_cast<std::int32_t>(k);
        break;
      }
    if (server >= 0) start_service(server, i, now_s);
    else central_queue_.push_back(i);
  } else {
    const std::int32_t r = route();
    replicas_[static_cast<std::size_t>(r)].enqueue(i);
    const auto ri = static_cast<std::size_t>(r);
    if (!replicas_[ri].busy() && !start_pending_[ri]) {
      start_pending_[ri] = 1;
      events_.schedule(now_s, EventKind::replica_start, r);
    }
  }
  if (waiting_total() > max_queue_) {
    unstable_ = true;
    unstable_reason_ = "unstable: the waiting queue grew beyond " + std::to_string(max_queue_) +
                       " requests (arrivals faster than service)";
    return;
  }
  if (src.kind != Source::Kind::user) schedule_next(si, now_s);
  if (issued_ == w.num_requests && half_mark_ >= 0) {
    // Open loop: the number in system should not keep growing over the second half of the arrivals.
    const double arrivals = static_cast<double>(issued_ - half_mark_);
    const double growth = static_cast<double>(in_system_all_ - in_system_at_half_);
    if (arrivals >= 100 && growth > 0.05 * arrivals && growth > 3 * std::sqrt(arrivals) + 8) {
      unstable_ = true;
      unstable_reason_ = "unstable: requests in the system grew by " + std::to_string(static_cast<std::int64_t>(growth)) +
                         " over the last " + std::to_string(static_cast<std::int64_t>(arrivals)) +
                         " arrivals (arrivals faster than service)";
    }
  }
}

void Simulation::start_replica(std::int32_t r, double now_s) {
  Replica& rep = replicas_[static_cast<std::size_t>(r)];
  if (rep.busy()) return;
  if (!rep.start_iteration(now_s)) return;
  ++iterations_;
  Pipeline::Pass pass{now_s, now_s + rep.duration_s()};
  if (pipeline_stages_ == 1) {
    peak_kv_fraction_ = std::max(peak_kv_fraction_, rep.kv().used_fraction());
  } else {  // kept off the common path: a division and a loop over the stages
    const std::int32_t g = r / engines_per_group_;
    peak_kv_fraction_ = std::max(peak_kv_fraction_, group_kv_fraction(g));
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
  --in_system_all_;
  if (s.measured) {
    metrics::FinishedRequest f;
    f.tenant = s.tenant;
    f.arrival_s = s.arrival_s;
    f.admitted_s = s.admitted_s;
    f.first_token_s = s.first_token_s;
    f.finish_s = now_s;
    f.input_tokens = s.input;
    f.output_tokens = s.output;
    collector_->on_request_finished(f);
    collector_->on_in_system_change(now_s, -1);
  }
  if (opt_.record_requests) {
    RequestRecord rec;
    rec.id = s.id;
    rec.tenant = s.tenant;
    rec.replica = s.replica;
    rec.arrival_s = s.arrival_s;
    rec.admitted_s = s.admitted_s;
    rec.first_token_s = s.first_token_s;
    rec.finish_s = now_s;
    rec.input_tokens = static_cast<std::int32_t>(s.input);
    rec.output_tokens = static_cast<std::int32_t>(s.output);
    rec.preemptions = s.preemptions;
    rec.warmup = !s.measured;
    result_.requests.push_back(rec);
  }
  const std::int32_t source = s.source;
  if (s.state == SeqState::done) pool_.release(i);  // static-batching padding is released by its replica
  if (sources_[static_cast<std::size_t>(source)].kind == Source::Kind::user) schedule_next(source, now_s);
}

void Simulation::on_iteration_done(std::int32_t r, double now_s) {
  finished_.clear();
  replicas_[static_cast<std::size_t>(r)].finish_iteration(now_s, finished_);
  for (const auto i : finished_) finish_request(i, now_s);
  start_replica(r, now_s);
}

void Simulation::start_service(std::int32_t server, std::int32_t i, double now_s) {
  const auto& ss = *rs_.scenario.engine.synthetic_service;
  double d = ss.mean_s;
  switch (ss.kind) {
    case spec::SyntheticService::Kind::fixed: break;
    case spec::SyntheticService::Kind::exponential:
      d = boost::random::exponential_distribution<double>(1.0 / ss.mean_s)(service_rng_);
      break;
    case spec::SyntheticService::Kind::lognormal: {
      const double s2 = std::log1p(ss.cv * ss.cv);
      d = boost::random::lognormal_distribution<double>(std::log(ss.mean_s) - s2 / 2, std::sqrt(s2))(service_rng_);
      break;
    }
  }
  d = std::max(d, 1e-12);  // a zero-length service would tie with its own start
  Seq& s = pool_[i];
  s.admitted_s = now_s;
  s.replica = server;
  server_seq_[static_cast<std::size_t>(server)] = i;
  service_busy_s_ += d;
  ++iterations_;
  if (opt_.record_iterations) {
    IterationRecord rec;
    rec.start_s = now_s;
    rec.duration_s = d;
    rec.replica = server;
    rec.prefill_tokens = static_cast<std::int32_t>(s.input);
    rec.prefill_seqs = 1;
    rec.waiting = static_cast<std::int32_t>(central_queue_.size());
    result_.iterations.push_back(rec);
  }
  events_.schedule(now_s + d, EventKind::iteration_done, server);
}

void Simulation::on_service_done(std::int32_t server, double now_s) {
  const std::int32_t i = server_seq_[static_cast<std::size_t>(server)];
  server_seq_[static_cast<std::size_t>(server)] = -1;
  Seq& s = pool_[i];
  // The whole response is one iteration: TTFT = E2E = wait + service.
  s.first_token_s = now_s;
  s.state = SeqState::done;
  finish_request(i, now_s);
  if (!central_queue_.empty()) {
    const std::int32_t next = central_queue_.front();
    central_queue_.pop_front();
    start_service(server, next, now_s);
  }
}

void Simulation::fill_utilization(metrics::Summary& sum, double end_s) const {
  if (synthetic_ || replicas_.empty()) return;
  const auto& sc = rs_.scenario;
  const auto& m = rs_.model;
  // Model FLOPs: 2 per active parameter per token, plus attention (QKᵀ and PV, 2 FLOPs per MAC) over the
  // query-key pairs; bytes: weights once per iteration plus KV reads of decode and prefill attention.
  double busy = 0, tokens = 0, pairs = 0, kv_tokens = 0, iters = 0;
  for (const auto& r : replicas_) {
    const auto& w = r.work();
    busy += w.busy_s / engines_per_group_;  // a replica's k concurrent batches share its GPUs
    tokens += w.tokens;
    pairs += w.attn_pairs + w.decode_context;
    kv_tokens += w.decode_context + w.prefill_kv_tokens;
    iters += w.iterations;
  }
  const double gpus = static_cast<double>(sc.hardware.parallel.gpus());
  double peak = rs_.gpu.tensor_peak(rs_.quant.weights.compute_dtype);
  if (!(peak > 0)) peak = rs_.gpu.tensor_peak(rs_.quant.weights.fallback_compute_dtype);
  const double flops = 2.0 * static_cast<double>(m.active_param_count()) * tokens +
                       4.0 * m.num_layers * static_cast<double>(m.num_heads) * m.head_dim * pairs;
  const double bytes = static_cast<double>(memory::weight_bytes(m, rs_.quant.weights)) * iters +
                       plan_.kv_bytes_per_token * kv_tokens;
  if (busy > 0 && peak > 0) sum.mfu = flops / (busy * gpus * peak);
  if (busy > 0 && rs_.gpu.memory_bandwidth > 0) sum.mbu = bytes / (busy * gpus * rs_.gpu.memory_bandwidth);
  // Per GPU: an iteration's pass spends latency/pp on each pipeline stage (pipeline.hpp), and TP ranks run together.
  double pass_s = 0;
  for (const auto& r : replicas_) pass_s += r.work().busy_s;
  if (end_s > 0) sum.busy_fraction = std::min(1.0, pass_s / (sc.hardware.parallel.pp * sc.hardware.replicas * end_s));

  double cap = 0, used_integral = 0;
  for (std::size_t r = 0; r < replicas_.size(); ++r) {
    cap += static_cast<double>(replicas_[r].kv().capacity());
    const double at_start = r < kv_integral_at_window_.size() ? kv_integral_at_window_[r] : 0.0;
    used_integral += replicas_[r].kv_integral().integral(end_s) - at_start;
  }
  sum.kv.capacity_tokens = plan_.kv_capacity_tokens;
  sum.kv.peak_used_fraction = peak_kv_fraction_;
  if (sum.duration_s > 0 && cap > 0) sum.kv.mean_used_fraction = used_integral / (cap * sum.duration_s);
}

SimulationResult Simulation::run() {
  const auto& sc = rs_.scenario;
  synthetic_ = sc.engine.synthetic_service.has_value();
  check_engine();
  build_workload();
  if (!synthetic_) {
    plan_ = memory::plan_memory(rs_.model, rs_.quant, rs_.gpu, sc.hardware.parallel, sc.engine, rs_.max_model_len);
    const int pp = sc.hardware.parallel.pp;
    engines_per_group_ = sc.engine.max_concurrent_batches == 0 ? pp : std::min(sc.engine.max_concurrent_batches, pp);
    if (!plan_.fits || plan_.kv_capacity_blocks < engines_per_group_) {
      result_.summary.fits = false;
      result_.summary.reason = !plan_.reason.empty() ? plan_.reason
                               : engines_per_group_ == 1 ? "no room for a single KV block"
                                                         : "no room for a KV block in each of the " +
                                                               std::to_string(engines_per_group_) + " concurrent batches";
      result_.summary.slo_met = false;
      return std::move(result_);
    }
    cost_ = std::make_unique<perf::CostModel>(perf::make_cost_model(rs_));
    build_replicas();
  } else {
    service_rng_ = rng_stream(sc.workload.seed, "service");
    server_seq_.assign(static_cast<std::size_t>(sc.hardware.replicas), -1);
  }
  const std::int64_t slots = synthetic_ ? 1 : sc.engine.max_num_seqs;
  const auto servers = synthetic_ ? static_cast<std::int64_t>(sc.hardware.replicas) : static_cast<std::int64_t>(replicas_.size());
  max_queue_ = opt_.max_queue > 0 ? opt_.max_queue : std::max<std::int64_t>(2000, 16 * slots * servers);
  bool open_loop = true;
  for (const auto& s : sources_) open_loop = open_loop && s.kind == Source::Kind::open;
  if (open_loop && sc.workload.num_requests >= 200) half_mark_ = sc.workload.num_requests / 2;
  if (opt_.record_requests) result_.requests.reserve(static_cast<std::size_t>(std::min<std::int64_t>(sc.workload.num_requests, 1 << 24)));
  events_.reserve(sources_.size() + replicas_.size() + server_seq_.size() + 16);

  for (std::size_t i = 0; i < sources_.size(); ++i) {
    // Closed-loop users all send their first request at t = 0; other sources draw their first arrival.
    if (sources_[i].kind == Source::Kind::user) events_.schedule(0.0, EventKind::arrival, static_cast<std::int32_t>(i));
    else schedule_next(static_cast<std::int32_t>(i), 0.0);
  }
  double end_s = 0;
  const double horizon = sc.workload.horizon_s;
  std::uint32_t until_cancel_check = 0;
  while (!events_.empty() && !unstable_) {
    if (opt_.cancel && ++until_cancel_check == 4096) {
      until_cancel_check = 0;
      if (opt_.cancel->load(std::memory_order_relaxed)) throw Cancelled("simulation cancelled");
    }
    if (horizon > 0 && events_.peek().time_s > horizon) {
      end_s = horizon;
      break;
    }
    const Event e = events_.pop();
    end_s = e.time_s;
    if (e.kind == EventKind::arrival) {
      on_arrival(e.target, e.time_s);
    } else if (e.kind == EventKind::replica_start) {
      start_pending_[static_cast<std::size_t>(e.target)] = 0;
      start_replica(e.target, e.time_s);
    } else if (synthetic_) {
      on_service_done(e.target, e.time_s);
    } else {
      on_iteration_done(e.target, e.time_s);
    }
  }
  if (!unstable_ && events_.empty() && in_system_all_ > 0)
    throw InternalError("simulation stalled with " + std::to_string(in_system_all_) + " requests unfinished");

  metrics::Summary s = collector_->summarize(window_open_ ? window_start_s_ : end_s, end_s);
  s.fits = true;
  s.unstable = unstable_;
  s.reason = unstable_reason_;
  if (unstable_) s.slo_met = false;
  s.rejected_requests = rejected_;
  s.clipped_requests = clipped_;
  s.iterations = iterations_;
  for (const auto& r : replicas_) {
    s.preemptions += r.preemptions();
    result_.kv_blocks_in_use_at_end += r.kv().used();
  }
  fill_utilization(s, end_s);
  result_.summary = std::move(s);
  return std::move(result_);
}

}  // namespace

SimulationResult simulate(const spec::ResolvedScenario& scenario, const SimulationOptions& options) {
  Simulation sim(scenario, options);
  return sim.run();
}

}  // namespace llmsim::engine
