// The per-op roofline of one engine iteration: the public API. Formulas and the source of every constant are in
// docs/cost-model.md; the op formulas in cost_model_ops.hpp, the constants' setup in cost_model_setup.cpp. The hot
// path (iteration_time) is O(1) in the batch and allocation-free.
#include "llmsim/perf/cost_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "cost_model_ops.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/async_scheduling.hpp"
#include "llmsim/perf/lora_kernels.hpp"
#include "llmsim/perf/served_step_host.hpp"
#include "llmsim/perf/speculative.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::perf {

std::string to_string(Bound b) {
  switch (b) {
    case Bound::compute: return "compute";
    case Bound::memory: return "memory";
    case Bound::communication: return "communication";
    case Bound::overhead: return "overhead";
  }
  return "memory";
}

void validate(const BatchShape& b) {
  Problems p;
  auto nonneg = [&](const char* f, double v) {
    if (!(v >= 0) || !std::isfinite(v)) p.add(std::string("batch.") + f, "must be >= 0, got " + format_given(v));
  };
  nonneg("prefill_seqs", static_cast<double>(b.prefill_seqs));
  nonneg("prefill_tokens", static_cast<double>(b.prefill_tokens));
  nonneg("prefill_attn_pairs", b.prefill_attn_pairs);
  nonneg("prefill_kv_tokens", static_cast<double>(b.prefill_kv_tokens));
  nonneg("prefill_last_chunks", static_cast<double>(b.prefill_last_chunks));
  nonneg("decode_seqs", static_cast<double>(b.decode_seqs));
  nonneg("decode_context", static_cast<double>(b.decode_context));
  nonneg("spec_tokens", static_cast<double>(b.spec_tokens));
  nonneg("decode_max_context", static_cast<double>(b.decode_max_context));
  if (b.decode_max_context > b.decode_context)
    p.add("batch.decode_max_context", "must be <= decode_context (" + format_value(double(b.decode_context)) +
                                          "), got " + format_given(double(b.decode_max_context)));
  if (b.prefill_tokens > 0 && b.prefill_seqs == 0)
    p.add("batch.prefill_seqs", "must be > 0 when prefill_tokens is " + format_value(double(b.prefill_tokens)));
  if (b.prefill_seqs > b.prefill_tokens)
    p.add("batch.prefill_tokens", "must be >= prefill_seqs (" + format_value(double(b.prefill_seqs)) + "), got " +
                                      format_value(double(b.prefill_tokens)));
  if (b.prefill_last_chunks > b.prefill_seqs)
    p.add("batch.prefill_last_chunks", "must be <= prefill_seqs (" + format_value(double(b.prefill_seqs)) +
                                           "), got " + format_given(double(b.prefill_last_chunks)));
  if (b.prefill_kv_tokens < b.prefill_tokens)
    p.add("batch.prefill_kv_tokens", "must be >= prefill_tokens (" + format_value(double(b.prefill_tokens)) +
                                         "), got " + format_given(double(b.prefill_kv_tokens)));
  p.throw_if_any();
}

spec::DType CostModel::gemm_dtype() const noexcept { return c_->gemm_dtype; }

DecodeAttentionBackend CostModel::decode_attention_backend() const noexcept { return c_->attn_decode.backend(); }

double CostModel::weight_bytes_per_gpu() const noexcept {
  return c_->weights_per_gpu();
}

double CostModel::routed_expert_share(double tokens) const noexcept {
  if (!(c_->experts > 1) || !(tokens > 0)) return 0;
  return experts_touched(c_->experts, c_->experts_per_token, tokens) / c_->experts;
}

// The one rule for a step's time, behind iteration_time and serial_time: which path prices it — the table (token-only
// ops looked up, times only) or the ops computed directly (speculative verification, a batch past the table, ops the
// table cannot stand for) — and how the host's time enters. Synchronous, or Serial without async scheduling: the ops
// as the model holds them, the step max(their sum, host_floor). Serial under async scheduling (a step launched by an
// idle engine): the host's time in line as the cpu op and no floor — the values and order of the synchronous model,
// so its bits. Summed in op order on every path, as breakdown() does, so all give the same bits.
template <bool Serial>
[[gnu::always_inline]] inline double CostModel::step_time(const BatchShape& batch, double* proposer_s) const {
  if (maybe_invalid(batch)) validate(batch);  // throws the ConfigError naming the field
  if (proposer_s) *proposer_s = 0;
  if (batch.empty()) return 0;
  const Constants& c = *c_;
  const bool in_line = Serial && c.cpu_overlaps;
  const double host = c.host_floor(static_cast<double>(batch.prefill_seqs + batch.decode_seqs));
  const std::int64_t tokens = batch.prefill_tokens + batch.decode_seqs;
  // lm rows <= tokens (a last chunk is a prefill chunk of >= 1 token), so both rows are in the table.
  const std::int64_t lm_rows = batch.prefill_last_chunks + batch.decode_seqs;
  if (batch.spec_tokens == 0 && c.table_has(tokens, lm_rows) && c.table_path(tokens, batch.prefill_seqs == 0, batch.decode_max_context)) [[likely]] {
    TimesOnly out;
    c.table_ops_into(tokens, lm_rows, out);
    c.batch_ops_into(batch, out);
    if (in_line) out.time(kCpu) = host;
    double t = 0;
    for (const double x : out.t) t += x;
    return in_line ? t : std::max(t, host);
  }
  // The direct path, out of line so that the table path above stays the short body the engine's steps inline.
  auto direct = [&]() __attribute__((noinline)) -> double {
    RawOps ops{};
    if (batch.spec_tokens > 0) {
      c.verification_ops(batch, ops, true);
      const double proposer = proposer_time(batch);
      ops[kProposer].time_s = proposer;
      if (proposer_s) *proposer_s = proposer;
    } else if (tokens > c.table.size()) {
      c.evaluate(batch, ops);
    } else {
      c.batch_ops(batch, ops);
      c.token_and_lm_ops(tokens, lm_rows, ops, true);
      c.finish_launch(batch, ops);
    }
    if (in_line) ops[kCpu].time_s = host;
    double t = 0;
    for (const auto& o : ops) t += o.time_s;
    // Overlapped, the host's loop runs its CPU work after an eager step's forward enqueue (overlap_host; a step on
    // the table path above replays a graph or has no eager host time, so its host is host_floor's alone).
    return in_line ? t : std::max(t, c.overlap_host(batch));
  };
  return direct();
}

double CostModel::iteration_time(const BatchShape& batch, double* proposer_s) const {
  return step_time<false>(batch, proposer_s);
}

double CostModel::proposer_time(const BatchShape& b) const {
  if (!proposer_ || b.spec_tokens == 0) return 0;
  const double first = proposer_->iteration_time(proposer_first_pass(b));
  const double later = b.spec_tokens > 1 ? proposer_->iteration_time(proposer_decode_step(b)) : 0.0;
  return first + static_cast<double>(b.spec_tokens - 1) * later;
}

CostModel CostModel::with_async_scheduling(bool on) const {
  CostModel m = *this;
  auto c = std::make_shared<Constants>(*c_);
  c->cpu_overlaps = on;
  c->set_table_flags();
  m.c_ = std::move(c);
  return m;
}

bool CostModel::async_scheduling() const noexcept { return c_->cpu_overlaps; }

double CostModel::serial_time(const BatchShape& batch, double* proposer_s) const {
  return step_time<true>(batch, proposer_s);
}

CostModel CostModel::without_cpu_overhead() const {
  CostModel m = *this;
  auto c = std::make_shared<Constants>(*c_);
  c->charge_cpu = false;
  m.c_ = std::move(c);
  return m;
}

CostModel CostModel::with_max_graph_batch(int n) const {
  if (n < 1) throw ConfigError("engine.cuda_graph_max_bs", "must be >= 1, got " + std::to_string(n));
  CostModel m = *this;
  auto c = std::make_shared<Constants>(*c_);
  c->overhead = c->overhead.with_max_graph_batch(n);
  m.c_ = std::move(c);
  return m;
}

CostModel CostModel::with_host_per_seq_s(double extra_s) const {
  if (!(extra_s >= 0) || !std::isfinite(extra_s))
    throw ConfigError("runtime.served_step_per_seq_s", "must be a finite number >= 0, got " + format_given(extra_s));
  CostModel m = *this;
  auto c = std::make_shared<Constants>(*c_);
  c->overhead = c->overhead.with_extra_per_seq_s(extra_s);
  m.c_ = std::move(c);
  return m;
}

CostModel CostModel::with_lora(int slots, int rank, int adapters) const {
  if (slots < 1) throw ConfigError("engine.max_loras", "must be >= 1, got " + std::to_string(slots));
  if (rank < 1) throw ConfigError("engine.max_lora_rank", "must be >= 1, got " + std::to_string(rank));
  if (adapters < 1 || adapters > slots)
    throw ConfigError("workload.lora_adapters", "must be in 1..max_loras (" + std::to_string(slots) + "), got " +
                                                    std::to_string(adapters));
  CostModel m = *this;
  auto c = std::make_shared<Constants>(*c_);
  // vLLM V0 launches the kernels per packed slice, V1 once per linear (perf/lora_kernels.hpp).
  const LoraStepTerms t = lora_step_terms(model_, parallel_.tp, rank, runtime_ != Runtime::vllm_v1);
  c->lora_adapters = adapters;
  c->lora_fixed_s = t.kernels * kLoraKernelFixedS;
  c->lora_adapter_bytes = t.adapter_bytes;
  c->lora_token_bytes = t.bytes_per_token;
  c->lora_token_flops = t.flops_per_token;
  // Their launches count with the layer's other kernels (an eager step's host time; engine_overhead.hpp).
  c->kernels_per_layer += t.launches / c->layers;
  m.c_ = std::move(c);
  return m;
}

double CostModel::iteration_time(const BatchShape& batch) const { return step_time<false>(batch, nullptr); }

std::int64_t CostModel::eager_decode_context() const noexcept { return c_->overhead.eager_decode_context(); }

DecodeSteps CostModel::decode_steps(std::int64_t decode_seqs, bool long_context) const {
  LLMSIM_CHECK(decode_seqs >= 1, "decode steps without a sequence");
  DecodeSteps d;
  d.model_ = this;
  d.seqs_ = decode_seqs;
  d.seqs_d_ = static_cast<double>(decode_seqs);
  const Constants& c = *c_;
  // A sequence at or past the graphs' length (V0's max_seq_len_to_capture): every step is priced as iteration_time
  // prices a batch whose longest context is that length, as any longer one (the rule is a threshold).
  d.max_context_ = long_context ? c.overhead.eager_decode_context() : 0;
  // The table path of iteration_time (tokens = LM-head rows = decode_seqs), where every op but decode attention is
  // fixed.
  if (!c.table_has(decode_seqs, decode_seqs)) return d;
  // A long batch of a runtime whose eager Python forward runs ahead of the GPU (V0): the direct path's ops are the
  // table's (no family terms), only its launch term waits for their sum, so the steps keep the table too, with the
  // launch term recomputed per step from that sum (time_with).
  const bool eager_host = d.max_context_ > 0 && c.times_only_when_graphed() &&
                          c.overhead.traits().eager_host_per_layer_s > 0 &&
                          !c.overhead.replays_graph(decode_seqs, true, d.max_context_);
  if (!eager_host && !c.table_path(decode_seqs, true, d.max_context_)) return d;
  static_assert(kNumOps - kAttnDecode - 1 == DecodeSteps::kAfter);
  static_assert(kLaunch + 1 == kCpu && kCpu + 1 == kProposer && kProposer + 1 == kNumOps);
  BatchShape b;
  b.decode_seqs = decode_seqs;
  b.decode_context = std::max(decode_seqs, d.max_context_);  // any valid context: its attention term is replaced in time()
  b.decode_max_context = d.max_context_;
  TimesOnly out;
  c.table_ops_into(decode_seqs, decode_seqs, out);
  c.batch_ops_into(b, out);
  double t = 0;
  for (int i = 0; i < kAttnDecode; ++i) t += out.t[static_cast<std::size_t>(i)];
  d.before_ = t;
  // The ops after decode attention that sum_after adds: all of them, or for an eager step those before the launch
  // (the launch term, the CPU op and the proposer's 0 follow in time_with).
  const int end = eager_host ? static_cast<int>(kLaunch) : static_cast<int>(kNumOps);
  for (int i = kAttnDecode + 1; i < end; ++i) d.n_after_ += out.t[static_cast<std::size_t>(i)] != 0;
  for (int i = kAttnDecode + 1, j = DecodeSteps::kAfter - d.n_after_; i < end; ++i)  // right-aligned (sum_after)
    if (out.t[static_cast<std::size_t>(i)] != 0) d.after_[j++] = out.t[static_cast<std::size_t>(i)];
  if (eager_host) {
    d.eager_host_ = true;
    d.launches_ = c.launch(b, std::numeric_limits<double>::infinity());  // the launches' own price
    d.host_s_ = c.launch(b, 0.0);  // the host's enqueue time (or the launches' price, when that is the larger)
    d.cpu_ = out.t[kCpu];
  }
  if (const auto* terms = c.attn_decode.context_free_terms(d.seqs_d_)) {  // the split never follows the context
    d.settled_terms_ = *terms;
    d.settled_from_ = 0;
  } else if (c.attn_decode.split_settled(d.seqs_d_, 0.0)) {  // at its cap from the first token (the rule's cap of 1)
    d.settled_terms_ = c.attn_decode.terms_for_split(d.seqs_d_, c.attn_decode.split_for(d.seqs_d_, 0.0));
    d.settled_from_ = 0;
  }
  d.attn_ = &c.attn_decode;
  d.attn_layers_ = c.full_layers;
  d.host_floor_ = c.host_floor(d.seqs_d_);
  return d;
}

void DecodeSteps::times(std::int64_t first, std::int64_t stride, int n, double* __restrict out) const {
  int k = 0;
  if (attn_ && first >= 0 && stride >= 0) {  // the contexts only grow: once past settled_from_ they stay past it
    for (; k < n && first + k * stride < settled_from_; ++k) out[k] = time(first + k * stride);  // may settle it
    for (; k < n; ++k) out[k] = time_with(settled_terms_, static_cast<double>(first + k * stride));
    return;
  }
  for (; k < n; ++k) out[k] = time(first + k * stride);
}

double DecodeSteps::slow_time(std::int64_t decode_context) const {
  BatchShape b;
  b.decode_seqs = seqs_;
  b.decode_context = decode_context;
  b.decode_max_context = max_context_;
  return model_->iteration_time(b);
}

StepCost CostModel::breakdown(const BatchShape& batch) const {
  validate(batch);
  StepCost s;
  s.tokens = batch.tokens();
  if (batch.empty()) return s;
  RawOps ops{};
  c_->evaluate(batch, ops);
  if (batch.spec_tokens > 0 && proposer_) {
    const StepCost first = proposer_->breakdown(proposer_first_pass(batch));
    const StepCost later = batch.spec_tokens > 1 ? proposer_->breakdown(proposer_decode_step(batch)) : StepCost{};
    const double n = static_cast<double>(batch.spec_tokens - 1);
    Raw& r = ops[kProposer];
    r.time_s = proposer_time(batch);
    r.flops = first.flops + n * later.flops;
    r.bytes = first.bytes + n * later.bytes;
    r.bound = first.bound;
    r.peak_fraction = r.time_s > 0 ? r.bytes / r.time_s / gpu_.memory_bandwidth : 0;
  }
  if (const double host = c_->overlap_host(batch); host > 0) {
    // Async scheduling: the host's time shows only where it outlasts the GPU's work (iteration_time's max).
    double gpu = 0;
    for (int i = 0; i < kNumOps; ++i) gpu += ops[i].time_s;
    ops[kCpu].time_s = std::max(0.0, host - gpu);
  }
  std::array<double, 4> by_bound{};
  for (int i = 0; i < kNumOps; ++i) {
    const Raw& r = ops[i];
    s.time_s += r.time_s;
    s.flops += r.flops;
    s.bytes += r.bytes;
    by_bound[static_cast<int>(r.bound)] += r.time_s;
    if (r.time_s > 0) s.ops.push_back(OpCost{kOpNames[i], r.time_s, r.flops, r.bytes, r.bound, r.peak_fraction});
  }
  s.bound = static_cast<Bound>(std::max_element(by_bound.begin(), by_bound.end()) - by_bound.begin());
  return s;
}

double CostModel::host_transfer_time(double bytes) const {
  if (!(bytes >= 0) || !std::isfinite(bytes))
    throw ConfigError("bytes", "host transfer size must be >= 0, got " + format_given(bytes));
  if (bytes == 0) return 0;
  return profile_.link_latency_s + bytes / host_bandwidth();
}

double CostModel::host_bandwidth() const {
  return profile_.host_bandwidth > 0 ? profile_.host_bandwidth : 0.85 * gpu_.pcie_bandwidth();
}

Runtime engine_generation(spec::SchedulerPolicy policy) {
  // "vllm-v0" names V0; every other policy runs on the default engine, vLLM V1 (whose unified scheduler is the
  // chunked one; static batches in vLLM's benchmark_latency also run on it).
  spec::EngineConfig e;
  e.policy = policy;
  return runtime_of(e);
}

namespace {

// What the serving engine adds to a cost model built from the hardware and the runtime, in make_cost_model only
// (every simulation, `llmsim step` and Python's llmsim.step() reach it through analysis::step_of_scenario): the
// OpenAI server's host work per step (vLLM V0's MQLLMEngine, served_step_host.hpp; none for an offline run), applied
// before the proposer is set (its passes pay it too), and async scheduling / SGLang's overlap scheduler where the
// engine runs it (async_scheduling.hpp: a step costs max(GPU, host)), applied after.
CostModel with_served_host(CostModel cm, const spec::EngineConfig& engine, bool offline) {
  // Host work the OpenAI server's path adds to every engine step (vLLM V0's MQLLMEngine): perf/served_step_host.hpp.
  // A profile fitted from a pre-0.6 vLLM's served runs may set the in-process server's part of it.
  if (const double served = served_step_host_per_seq_s(engine, offline, cm.profile()); served > 0)
    return cm.with_host_per_seq_s(served);
  return cm;
}

CostModel with_engine_async(CostModel cm, const spec::EngineConfig& engine, int pp,
                            const std::optional<spec::SpeculativeConfig>& speculative) {
  if (async_scheduling(engine, pp, speculative)) return cm.with_async_scheduling();
  return cm;
}

}  // namespace

CostModel make_cost_model(const spec::ResolvedScenario& rs) {
  const auto& hw = rs.scenario.hardware;
  HardwareProfile profile = default_profile(rs.gpu);
  if (!hw.gpu_profile.empty()) {
    profile = load_profile(hw.gpu_profile, profile);
    const std::string parent = rs.gpu.id.substr(0, rs.gpu.id.find(':'));
    if (profile.gpu_id != rs.gpu.id && profile.gpu_id != parent)
      throw ConfigError("hardware.gpu_profile", (is_inline_json(hw.gpu_profile) ? std::string("the inline profile")
                                                                                : "profile '" + hw.gpu_profile + "'") +
                                                    " describes GPU '" + profile.gpu_id +
                                                    "' but the scenario's GPU is '" + rs.gpu.id + "'");
  }
  // The table of token counts up to the most tokens a step of this engine holds (its token budget, or its batch of
  // sequences when larger; 0: not resolved, the whole table): a step beyond it, if any, is priced directly with the
  // same values, and a simulation pays for the rows it can use only (a run fit builds thousands of these).
  const auto& e = rs.scenario.engine;
  const std::int64_t step_tokens = e.max_num_batched_tokens > 0 && e.max_num_seqs > 0
                                       ? std::max<std::int64_t>(e.max_num_batched_tokens, e.max_num_seqs)
                                       : CostModel::kMaxTableTokens;
  CostModel target(rs.model, rs.quant, rs.gpu, std::move(profile), hw.parallel, e.cuda_graphs,
                   e.cpu_offload_gb * 1024.0 * 1024.0 * 1024.0, runtime_of(e),
                   std::min(step_tokens, CostModel::kMaxTableTokens));
  // SGLang's decode CUDA-graph limit for the release, card and TP (spec::sglang_cuda_graph_max_bs, filled in by
  // spec::resolve): decode batches above it run eagerly.
  if (e.cuda_graph_max_bs && target.runtime() == Runtime::sglang) target = target.with_max_graph_batch(*e.cuda_graph_max_bs);
  target = with_served_host(std::move(target), rs.scenario.engine, spec::offline_workload(rs.scenario.workload));
  // vLLM's LoRA kernels, when the engine has LoRA slots: the adapters the requests use (default one).
  if (e.enable_lora) target = target.with_lora(e.max_loras, e.max_lora_rank, rs.scenario.workload.lora_adapters.value_or(1));
  if (rs.speculation) target.set_proposer(make_proposer(target, *rs.speculation, rs.scenario.engine.cuda_graphs));
  return with_engine_async(std::move(target), rs.scenario.engine, hw.parallel.pp, rs.scenario.engine.speculative);
}

Json to_json(const StepCost& s) {
  Json ops = Json::array();
  for (const auto& o : s.ops)
    ops.push_back(Json{{"name", o.name},
                       {"time_ms", o.time_s * 1e3},
                       {"flops", o.flops},
                       {"bytes", o.bytes},
                       {"bound", to_string(o.bound)},
                       {"peak_fraction", o.peak_fraction}});
  return Json{{"time_ms", s.time_s * 1e3},
              {"bound", to_string(s.bound)},
              {"flops", s.flops},
              {"bytes", s.bytes},
              {"tokens", s.tokens},
              {"tokens_per_s", s.time_s > 0 ? static_cast<double>(s.tokens) / s.time_s : 0.0},
              {"ops", ops}};
}

}  // namespace llmsim::perf
