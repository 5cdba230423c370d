// Disaggregated prefill/decode: transfer times over the link, the decode replica chosen, the pools' summaries.
// Mechanism and sources: docs/disaggregation.md.
#include "disaggregation.hpp"

#include <algorithm>
#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/memory/kv_layout.hpp"
#include "run_summary.hpp"

namespace llmsim::engine::detail {

namespace {

// The longest a request of the workload can be (prompt + output), capped at `limit`; unbounded lengths
// (lognormal, empirical) count as `limit`.
std::int64_t longest_request(const spec::Workload& w, std::int64_t limit) {
  auto max_len = [&](const spec::LengthDist& d) -> std::int64_t {
    if (auto* f = std::get_if<spec::FixedLength>(&d)) return f->value;
    if (auto* u = std::get_if<spec::UniformLength>(&d)) return u->max;
    if (auto* n = std::get_if<spec::NormalLength>(&d)) return n->max > 0 ? n->max : limit;
    return limit;
  };
  std::int64_t longest = 0;
  for (const auto& c : w.effective_classes())
    longest = std::max(longest, std::min(limit, max_len(c.input_tokens) + max_len(c.output_tokens)));
  return longest;
}

}  // namespace

Disaggregation::Disaggregation(const spec::ResolvedScenario& rs) : rs_(rs) {
  const auto& sc = rs.scenario;
  LLMSIM_CHECK(sc.disaggregation && rs.disagg_pools.size() == 2, "disaggregation without its resolved pools");
  for (const char* role : {"prefill", "decode"}) {
    const auto& pool = std::string(role) == "prefill" ? prefill() : decode();
    if (pool.scenario.hardware.parallel.pp > 1)
      throw ConfigError(std::string("disaggregation.") + role + ".pp",
                        "pipeline parallel inside a disaggregated pool is not modelled; use tp, got pp = " +
                            std::to_string(pool.scenario.hardware.parallel.pp));
    if (pool.scenario.engine.policy == spec::SchedulerPolicy::static_batching)
      throw ConfigError(std::string("disaggregation.") + role + ".engine.policy",
                        "static batching in a disaggregated pool is not modelled; use vllm, vllm-v0 or chunked");
    if (pool.scenario.engine.synthetic_service)
      throw ConfigError(std::string("disaggregation.") + role + ".engine.synthetic_service",
                        "the synthetic service has no prefill or decode phase to split");
  }
  // A prompt pool keys each engine block once, at the prefill pool's block size (the workload's keys); the decode
  // pool publishes the reply's blocks with the same keys, so its blocks must be the same size.
  if (sc.workload.prompt_pool &&
      decode().scenario.engine.block_size != prefill().scenario.engine.block_size)
    throw ConfigError("disaggregation.decode.engine.block_size",
                      "a prompt pool on disaggregated pools needs one block size in both (prefill has " +
                          std::to_string(prefill().scenario.engine.block_size) + "): not modelled, got " +
                          std::to_string(decode().scenario.engine.block_size));
  if (sc.autoscaler) throw ConfigError("autoscaler", "autoscaling disaggregated pools is not modelled");
  if (!sc.failures.empty() || sc.failures.spares > 0)
    throw ConfigError("failures", "replica failures in disaggregated pools are not modelled. To size spares, "
                                  "simulate each pool colocated with these failures (its gpu, tp and replicas under "
                                  "hardware), add the spares it needs to disaggregation.prefill.replicas "
                                  "and disaggregation.decode.replicas, and run without failures");
  // Client timeouts are modelled: a request that times out while its KV is on the link is let go when the transfer
  // ends (both replicas free its blocks); queued at a decode replica with its KV still on the prefill one, both free
  // theirs at once (timeouts.cpp).
  const auto& d = decode();
  decode_plan_ = memory::plan_memory(d);  // with a speculative proposer's memory when the pool runs one
  kv_bytes_per_element_ = d.quant.kv_bytes_per_element();
  if (decode_plan_.fits) decode_cost_ = std::make_unique<perf::CostModel>(perf::make_cost_model(d));
}

std::string Disaggregation::unfit(const memory::MemoryPlan& prefill_plan) const {
  if (!prefill_plan.fits) return "does not fit, because disaggregation.prefill: " + prefill_plan.reason;
  if (!decode_plan_.fits) return "does not fit, because disaggregation.decode: " + decode_plan_.reason;
  const std::int64_t reserved = decode().scenario.engine.policy == spec::SchedulerPolicy::vllm ? 1 : 0;
  const std::int64_t need = longest_request(rs_.scenario.workload, decode().max_model_len);
  const int bs = decode().scenario.engine.block_size;
  const std::int64_t room = (decode_plan_.kv_capacity_blocks - reserved) * bs;
  if (decode_plan_.longest_context_tokens < need || room < need)
    return "does not fit, because disaggregation.decode's KV cache holds " +
           std::to_string(std::min(decode_plan_.longest_context_tokens, room)) + " tokens per replica, less than one "
           "request of " + std::to_string(need) + " tokens (the workload's longest, at most max_model_len " +
           std::to_string(decode().max_model_len) + "): more GPUs (tp), a larger card, a smaller KV dtype or a "
           "lower engine.max_model_len in the decode pool";
  const std::int64_t p_reserved = prefill().scenario.engine.policy == spec::SchedulerPolicy::vllm ? 1 : 0;
  if (prefill_plan.kv_capacity_blocks - p_reserved < 1)
    return "does not fit, because disaggregation.prefill has no room for a single KV block";
  return "";
}

void Disaggregation::set_replicas(std::int32_t prefill_count, std::int32_t decode_count) {
  prefill_count_ = prefill_count;
  decode_count_ = decode_count;
  // One queue per prefill replica's link, or a single one when they share it.
  link_free_s_.assign(rs_.scenario.disaggregation->link.shared ? 1 : static_cast<std::size_t>(prefill_count), 0.0);
}

bool Disaggregation::never_fits(std::int64_t input, std::int64_t output, const std::vector<Replica>& replicas) const {
  const auto& p = replicas.front().kv();
  const auto& d = replicas[static_cast<std::size_t>(prefill_count_)].kv();
  return p.blocks_for(input) > p.capacity() - p.watermark_blocks() ||
         d.blocks_for(input + output) > d.capacity() - d.watermark_blocks();
}

bool Disaggregation::pulls() const noexcept {
  return rs_.scenario.disaggregation->transfer == spec::KvTransferMode::after_prefill;
}

std::int64_t Disaggregation::remote_tokens(const Seq& s) const {
  // vLLM's NixlConnector moves the prompt's whole blocks (get_num_new_matched_tokens: round_down(prompt, block_size));
  // the decode side computes the rest, and at least the prompt's last token, whose logits give the first token.
  const std::int64_t bs = decode().scenario.engine.block_size;
  return s.input / bs * bs;
}

std::int32_t Disaggregation::hand_over(std::int32_t seq, Seq& s, const HeldKv& held, const std::vector<Replica>& replicas,
                                       double now_s) {
  held_[seq] = held;
  const std::int32_t to = arrive(s, replicas, now_s);
  s.remote_tokens = std::min(remote_tokens(s), s.input - 1);
  // A prompt shorter than a block has no whole block to read, but the hand-over still costs the link's latency once
  // (the notification that frees the prefill side's blocks), as every transfer does.
  s.kv_pending = true;
  return to;
}

HeldKv Disaggregation::take_held(std::int32_t seq) {
  const auto it = held_.find(seq);
  LLMSIM_CHECK(it != held_.end(), "a KV read ended for a request whose prefill blocks are not held");
  const HeldKv held = it->second;
  held_.erase(it);
  return held;
}

double Disaggregation::transfer(Seq& s, std::int32_t prefill_replica, double now_s) {
  const auto& spec = *rs_.scenario.disaggregation;
  const std::int64_t tokens = remote_tokens(s);
  const double bytes = memory::kv_bytes_of_context(rs_.model, kv_bytes_per_element_, tokens);
  const double wire = bytes / spec.link.bytes_per_s();
  double& free_at = link_free_s_[link_free_s_.size() == 1 ? 0 : static_cast<std::size_t>(prefill_replica)];
  double end = 0;
  if (spec.transfer == spec::KvTransferMode::layerwise) {
    // Each layer's KV leaves as soon as that layer is computed: the stream starts with the prefill (or when the link
    // frees up) and cannot end before the last layer's share has crossed after the prefill ended.
    const double start = std::max(free_at, s.admitted_s);
    end = std::max(now_s + wire / std::max(1, rs_.model.num_layers), start + wire);
  } else {
    end = std::max(free_at, now_s) + wire;
  }
  free_at = end;
  const double arrive = end + spec.link.latency_s();
  s.remote_tokens = std::min(tokens, s.input - 1);
  if (s.measured) {
    transfer_ms_.add((arrive - now_s) * 1e3);
    bytes_sum_ += bytes;
    transfers_ += 1;
  }
  return arrive;
}

std::int32_t Disaggregation::arrive(Seq& s, const std::vector<Replica>& replicas, double now_s) {
  s.handoff_s = now_s;
  s.prefill_target = s.input;
  s.prefilled = 0;
  s.generated = 0;
  s.decode_admitted_s = -1;
  std::int32_t best = prefill_count_;
  for (std::int32_t r = prefill_count_ + 1; r < prefill_count_ + decode_count_; ++r)
    if (replicas[static_cast<std::size_t>(r)].outstanding() < replicas[static_cast<std::size_t>(best)].outstanding()) best = r;
  return best;
}

void Disaggregation::on_finished(const Seq& s) {
  if (s.measured && s.decode_admitted_s >= 0 && s.handoff_s >= 0) decode_wait_ms_.add((s.decode_admitted_s - s.handoff_s) * 1e3);
}

void Disaggregation::summarize(metrics::Summary& s, const memory::MemoryPlan& prefill_plan, const std::vector<Replica>& replicas,
                               const std::vector<double>& kv_at_window, double peak_kv_fraction, double end_s) const {
  const auto& spec = *rs_.scenario.disaggregation;
  metrics::DisaggregationSummary d;
  d.link = spec::to_string(spec.link.kind);
  d.link_gbps = spec.link.bandwidth_gbps;
  d.link_latency_us = spec.link.latency_s() * 1e6;
  d.transfer = spec::to_string(spec.transfer);
  d.transfer_ms = transfer_ms_.stats();
  d.decode_wait_ms = decode_wait_ms_.stats();
  if (transfers_ > 0) d.mean_transfer_mb = bytes_sum_ / transfers_ / 1e6;
  double slowest = -1;
  metrics::Saturation bounding;  // the saturation of the pool with the lowest rate (the pool that bounds the deployment)
  bool prefill_bounds = false;
  for (int k = 0; k < 2; ++k) {
    const bool pre = k == 0;
    const auto& pool = pre ? prefill() : decode();
    const std::size_t first = pre ? 0 : static_cast<std::size_t>(prefill_count_);
    const std::size_t last = pre ? static_cast<std::size_t>(prefill_count_) : replicas.size();
    const std::span<const Replica> slice(replicas.data() + first, last - first);
    const std::span<const double> at_window(kv_at_window.data() + std::min(first, kv_at_window.size()),
                                            kv_at_window.size() - std::min(first, kv_at_window.size()));
    metrics::Summary ps = s;  // the run's duration and throughput; the engine fields are the pool's
    fill_engine(ps, RunFacts{pool, pre ? prefill_plan : decode_plan_, slice, 1, at_window, peak_kv_fraction, end_s});
    metrics::PoolSummary out = pool_summary(pre ? "prefill" : "decode", pool, ps);
    // A prefill replica emits no output (the decode pool does): its rate is prompts per second.
    const auto& run = s.throughput;
    if (pre)
      out.saturation_requests_per_s = run.requests_per_s > 0 && run.input_tokens_per_s > 0
                                          ? ps.saturation.throughput.input_tokens_per_s / (run.input_tokens_per_s / run.requests_per_s)
                                          : 0;
    if (out.saturation_requests_per_s > 0 && (slowest < 0 || out.saturation_requests_per_s < slowest)) {
      slowest = out.saturation_requests_per_s;
      bounding = ps.saturation;
      prefill_bounds = pre;
    }
    if (!pre) {  // the decode pool's engine fields stand for the run's (TPOT, batch and KV use are made there)
      s.mfu = ps.mfu;
      s.mbu = ps.mbu;
      s.kv = ps.kv;
      s.batch = ps.batch;
      s.saturation = ps.saturation;
    }
    d.pools.push_back(out);
  }
  // The deployment saturates at its slower pool: its saturation is that pool's, one quantity wherever it is printed
  // (the run's saturation row, the UNSTABLE reason, the pool's saturates-at). A prefill pool that bounds it is quoted
  // whole: the time, iterations and batch of its waiting iterations, at its request rate, whose tokens are those
  // requests' mean prompt and output (a prefill replica emits no output of its own). Decode bounding keeps decode's.
  if (slowest > 0) {
    if (prefill_bounds) {
      const auto& run = s.throughput;
      s.saturation = bounding;
      auto& rate = s.saturation.throughput;
      rate.input_tokens_per_s = run.requests_per_s > 0 ? slowest * run.input_tokens_per_s / run.requests_per_s : 0;
      rate.output_tokens_per_s = run.requests_per_s > 0 ? slowest * run.output_tokens_per_s / run.requests_per_s : 0;
      rate.total_tokens_per_s = rate.input_tokens_per_s + rate.output_tokens_per_s;
    }
    s.saturation.throughput.requests_per_s = slowest;
  }
  double busy = 0, gpus = 0;
  for (const auto& p : d.pools) {
    busy += p.busy_fraction * static_cast<double>(p.gpus);
    gpus += static_cast<double>(p.gpus);
  }
  s.busy_fraction = gpus > 0 ? busy / gpus : 0;
  s.disaggregation = std::move(d);
}

}  // namespace llmsim::engine::detail
