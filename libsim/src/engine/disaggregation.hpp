#pragma once
// Disaggregated prefill/decode (private to the engine; docs/disaggregation.md). The simulation's replicas are the
// prefill pool's [0, P) — prefill-only (ReplicaConfig::prefill_only), routed as `hardware.router` says — then the
// decode pool's [P, P + D). A request is prefilled on a prefill replica, which keeps its KV blocks until the KV has
// crossed that replica's link (one transfer at a time, FIFO). After the prefill (pull, vLLM's NixlConnector) the
// request queues at a decode replica (least outstanding) at once; when the decode scheduler admits it, it allocates
// blocks for the KV and the read starts; when it ends, the prefill replica frees its blocks and the request heads
// the decode queue with the transferred tokens counted as computed. Layer-wise (push) the KV streams as the prefill
// runs and the request queues at the decode replica when it has arrived. The decode replica computes the rest of
// the prompt (at least the last token, as vLLM's KV connector does) and emits the first token, then decodes. This
// class decides transfer times and the decode replica, and measures both queues; Simulation applies its decisions.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/metrics/latency_histogram.hpp"
#include "llmsim/metrics/summary.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/scenario.hpp"
#include "replica.hpp"

namespace llmsim::engine::detail {

class Disaggregation {
 public:
  /// `rs` has scenario.disaggregation and its resolved pools (rs.disagg_pools). ConfigError for what is not modelled
  /// with disaggregation (pipeline parallel inside a pool, an autoscaler, failures, the synthetic service).
  explicit Disaggregation(const spec::ResolvedScenario& rs);

  const spec::ResolvedScenario& prefill() const noexcept { return rs_.disagg_pools[0]; }
  const spec::ResolvedScenario& decode() const noexcept { return rs_.disagg_pools[1]; }
  const memory::MemoryPlan& decode_plan() const noexcept { return decode_plan_; }
  const perf::CostModel& decode_cost() const noexcept { return *decode_cost_; }
  /// Why the deployment cannot run ("" when it can), given the prefill pool's plan: a pool whose weights do not fit,
  /// or a decode pool whose KV cache cannot hold one request of the workload's longest length (up to max_model_len).
  std::string unfit(const memory::MemoryPlan& prefill_plan) const;

  /// The replicas are built: prefill [0, prefill_count), decode [prefill_count, end).
  void set_replicas(std::int32_t prefill_count, std::int32_t decode_count);
  std::int32_t prefill_count() const noexcept { return prefill_count_; }
  /// A request that could never run: its prompt exceeds a prefill replica's KV, or its whole sequence a decode's.
  bool never_fits(std::int64_t input, std::int64_t output, const std::vector<Replica>& replicas) const;

  /// True when the decode side pulls the KV after admitting the request (after_prefill); false when the prefill
  /// side pushes it as it computes (layerwise).
  bool pulls() const noexcept;
  /// Pull: `s` finished its prefill at `now_s`, its KV held as `held` on its prefill replica: readies it for the
  /// decode pool with its KV pending (s.remote_tokens, s.kv_pending) and returns the decode replica that takes it.
  std::int32_t hand_over(std::int32_t seq, Seq& s, const HeldKv& held, const std::vector<Replica>& replicas, double now_s);
  /// Pull: the prefill replica's hold on `seq`'s blocks, once its read ended (forgotten here).
  HeldKv take_held(std::int32_t seq);
  /// Pull: the prefill replica's hold on `seq`'s blocks (nullptr when none), and how many requests' it holds (the
  /// lifecycle's KV check, kv_holdings.hpp).
  const HeldKv* find_held(std::int32_t seq) const {
    const auto it = held_.find(seq);
    return it == held_.end() ? nullptr : &it->second;
  }
  std::size_t held_count() const noexcept { return held_.size(); }
  /// The KV of `s` (prefilled on `prefill_replica`) crosses that replica's link from `now_s` (push: the prefill's
  /// end; pull: the decode admission): returns when it has arrived (sets s.remote_tokens).
  double transfer(Seq& s, std::int32_t prefill_replica, double now_s);
  /// `s`'s KV arrived at `now_s`: readies it for the decode pool and returns the decode replica that takes it.
  std::int32_t arrive(Seq& s, const std::vector<Replica>& replicas, double now_s);
  /// A request finished (measured ones feed the decode admission wait).
  void on_finished(const Seq& s);

  /// The summary's engine fields (MFU/MBU, KV, batch: the decode pool's; saturation: the slower pool's) and
  /// summary.disaggregation. `kv_at_window` per replica as Simulation keeps it.
  void summarize(metrics::Summary& s, const memory::MemoryPlan& prefill_plan, const std::vector<Replica>& replicas,
                 const std::vector<double>& kv_at_window, double peak_kv_fraction, double end_s) const;

 private:
  std::int64_t remote_tokens(const Seq& s) const;  ///< prompt tokens whose KV crosses the link (whole blocks)

  const spec::ResolvedScenario& rs_;
  memory::MemoryPlan decode_plan_;
  std::unique_ptr<perf::CostModel> decode_cost_;
  double kv_bytes_per_element_ = 0;
  std::int32_t prefill_count_ = 0, decode_count_ = 0;
  std::vector<double> link_free_s_;  ///< per prefill replica: when its link finishes the transfers queued on it
  std::unordered_map<std::int32_t, HeldKv> held_;  ///< pull: prefill blocks of requests whose KV is not read yet
  metrics::LatencyHistogram transfer_ms_, decode_wait_ms_;
  double bytes_sum_ = 0, transfers_ = 0;
};

}  // namespace llmsim::engine::detail
