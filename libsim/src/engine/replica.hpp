#pragma once
// One serving replica: KV block manager, running list, decode set and iteration lifecycle (replica.cpp; its start,
// replica_step.cpp; its configuration, replica_config.hpp), and
// the per-step batch formation of each policy (schedule_v1.cpp: vLLM V1; schedule_v0.cpp: vLLM V0, chunked,
// static; schedule_sglang.cpp: SGLang), with the bookkeeping that keeps every iteration O(1) in the batch size (private to the engine).
//
// Decode bookkeeping without touching every sequence each step: all decoding sequences of a replica decode
// in every decode iteration (max_num_batched_tokens >= max_num_seqs; vLLM 0.5.4-0.5.5's chunked walk takes the
// decoders it skips out of the set for that step, v0_walk.cpp), so a sequence that started decoding
// after decode step k0 with ctx0 tokens in its KV cache has ctx0 + (k − k0) tokens after step k. It needs a
// new block in step k iff (k − k0 − 1 + ctx0) % block_size == 0, i.e. iff k ≡ k0 + 1 − ctx0 (mod block_size):
// counting sequences per residue gives each step's block demand in O(1). Finishing steps are known in advance
// (a heap, O(log n) per request), Σ context grows by the number of decoders per step. Under speculative decoding
// every decoder emits the same n tokens in a step (engine/speculative.hpp), so k counts tokens, not steps: a step
// advances it by n, and the residues of the n positions it writes give the block demand.
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "llmsim/core/error.hpp"
#include "llmsim/engine/kv_block_manager.hpp"
#include "llmsim/engine/kv_host_tier.hpp"
#include "llmsim/engine/warm_cache.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/metrics/collector.hpp"
#include "llmsim/perf/batch_shape.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "longest_context.hpp"
#include "replica_config.hpp"
#include "seq.hpp"
#include "speculative.hpp"

namespace llmsim::engine::detail {

/// Accumulated over a replica's iterations, for MFU/MBU and the batch size reached.
struct WorkTotals {
  double busy_s = 0;
  double tokens = 0, prefill_tokens = 0, attn_pairs = 0, decode_context = 0, prefill_kv_tokens = 0;
  double output_tokens = 0;  ///< tokens emitted (as SaturationTotals::output_tokens), every request's
  double iterations = 0, swap_bytes = 0;
  /// MoE: Σ over iterations of the share of routed experts each ran (perf::CostModel::routed_expert_share), what MBU
  /// counts of the experts' weights; 0 for a dense model.
  double expert_share = 0;
  double seq_time = 0;        ///< Σ sequences in the iteration × its duration
  std::int64_t max_seqs = 0;  ///< most sequences in one iteration
  /// Speculative decoding: verification steps run, Σ decoders over them, tokens those decoders emitted (each
  /// stopping at its last), and seconds of the steps spent in the proposer.
  double spec_steps = 0, spec_seq_steps = 0, spec_emitted = 0, proposer_s = 0;
  /// Prefix caching, measured requests: prompt tokens looked up at each admission and found cached (vLLM's
  /// PrefixCacheStats queries and hits).
  double prefix_query_tokens = 0, prefix_hit_tokens = 0;
  /// Host KV tier, measured requests: prompt tokens loaded from it at admission instead of recomputed, and those it
  /// held but recomputed because recomputing was cheaper (kv_offload.cpp's rule). All requests: bytes copied
  /// device-to-host (write-through stores) and host-to-device (loads), over all the replica's GPUs.
  double host_hit_tokens = 0, host_recomputed_tokens = 0;
  double host_store_bytes = 0, host_load_bytes = 0;
};

/// Iterations that left requests waiting (the batch was at a limit: token budget, max_num_seqs or KV blocks):
/// the replica served at its saturation rate during them.
struct SaturationTotals {
  double time_s = 0, iterations = 0;
  double output_tokens = 0;   ///< tokens emitted (decodes and completed prefills; static padding excluded)
  double prefill_tokens = 0;  ///< prompt tokens computed (recomputation included: it is work done)
  /// The seconds of those iterations spent on prompts: in a step that also decodes, its time less the time the same
  /// decodes alone take (perf::CostModel), the rest of the step being the decodes'; all of a prefill-only step.
  double prefill_s = 0;
  double seq_time = 0;        ///< Σ sequences × duration
};

struct KvHoldings;  // kv_holdings.hpp

/// KV blocks a prefill replica holds for a handed-off request (own and shared prefix blocks).
struct HeldKv {
  std::int64_t own = 0, prefix = 0;
};

class Replica {
 public:
  /// `index` is the deployment replica; `virtual_engine` which of its pipeline's concurrent batches this is.
  /// `outstanding` is where it keeps its count of requests routed to it and not finished: a slot of the engine's
  /// compact array, which the router scans on every arrival without touching the replicas.
  Replica(std::int32_t index, std::int32_t virtual_engine, const ReplicaConfig& cfg, KvBlockManager kv, const perf::CostModel& cost,
          SeqPool& pool, metrics::Collector& metrics, std::int64_t* outstanding);

  /// A routed request joins the waiting queue.
  void enqueue(std::int32_t seq);
  /// Builds the next iteration at `now_s`; returns false when there is nothing to run. On true,
  /// duration_s() is the iteration's length and record() describes it.
  bool start_iteration(double now_s);
  /// Ends the iteration in flight at `now_s`; appends sequences that emitted their last token to `finished`
  /// (they are out of the replica unless static batching keeps them as padding).
  void finish_iteration(double now_s, std::vector<std::int32_t>& finished);

  bool busy() const noexcept { return busy_; }
  double duration_s() const noexcept { return duration_s_; }
  const IterationRecord& record() const noexcept { return record_; }
  /// Sequences that emit a real token in the iteration in flight (decodes and completed prefills).
  std::int64_t tokens_emitted() const noexcept { return emitting_; }
  /// Decode steps a sequence stays after its last token (1 under V0's asynchronous output processor, else 0): the
  /// KV a request can need is input + output + output_tail() tokens.
  std::int64_t output_tail() const noexcept { return cfg_.first_token_after_next_step ? 1 : 0; }
  /// Requests routed here and not finished (waiting, running, swapped).
  std::int64_t outstanding() const noexcept { return *outstanding_; }
  std::int64_t waiting() const noexcept { return static_cast<std::int64_t>(waiting_.size()); }
  const KvBlockManager& kv() const noexcept { return kv_; }
  /// Before t = 0: one request of an earlier run leaves its blocks `keys` (the first `prompt_blocks` its prompt's)
  /// cached (engine::warm_request), and in the host tier what its lookup touched and its write-through stored
  /// (kv_offload.cpp).
  void warm(const std::uint64_t* keys, std::int64_t n, std::int64_t prompt_blocks);
  const KvHostTier& host_tier() const noexcept { return host_; }
  const ReplicaConfig& config() const noexcept { return cfg_; }
  std::int64_t preemptions() const noexcept { return preemptions_; }
  const WorkTotals& work() const noexcept { return work_; }
  const SaturationTotals& saturation() const noexcept { return sat_; }
  /// Sequences in the running list (prefilling, decoding, static padding).
  std::int64_t running() const noexcept { return running_; }
  /// Blocks the running list's linear-attention states hold (ReplicaConfig::state_blocks each).
  std::int64_t state_blocks_held() const noexcept { return running_ * cfg_.state_blocks; }
  /// ∫ KV blocks used dt since the start of the run.
  const metrics::TimeIntegral& kv_integral() const noexcept { return kv_used_; }
  /// The moments of the inter-token gaps this replica's steps measured (the bins are the collector's).
  const metrics::LatencyMoments& token_gaps() const noexcept { return itl_.moments; }
  // ---- decode runs (decode_run.cpp) ----
  /// After start_iteration began a decode-only step with nothing waiting, swapped, partially prefilled or cancelled:
  /// plans the steps that follow it until the first in which a sequence finishes, the first whose KV growth does not
  /// fit the free blocks, or DecodeRun::kMax steps. Returns the end of the run's last step (when the replica's
  /// iteration_done event is due); the end of the step in flight when no run is possible.
  double plan_run(double now_s);
  bool in_run() const noexcept { return run_.steps > 1; }
  /// The run's steps that ended by `now_s`: each finished and its successor started, as the engine does at every
  /// iteration boundary (the same state, the same sums in the same order). Returns the steps started.
  std::int32_t catch_up(double now_s);
  /// Ends the run with the step in flight (after catch_up, before anyone else touches the replica); true when that
  /// step ends before the run's planned end (the caller moves the iteration_done event to in_flight_end_s()).
  bool cut_run();
  double in_flight_end_s() const noexcept { return record_.start_s + duration_s_; }
  // ---- disaggregation (replica_handoff.cpp; docs/disaggregation.md) ----
  /// Frees the KV blocks of a request handed off at the end of its prefill (prefill_only), once its transfer ended.
  void release_handoff(std::int32_t seq, double now_s);
  /// Pull: the prefill replica's hold on a handed-off request's blocks, taken out of the Seq (which the decode
  /// replica uses from now on) and released later by release_held().
  HeldKv detach_handoff(std::int32_t seq);
  void release_held(std::int32_t seq, const HeldKv& held, double now_s);
  /// Pull, decode side: requests whose KV read began in the last start_iteration (blocks allocated; the caller
  /// starts the transfers and clears the list), and the read of `seq` ended: it queues first, blocks held.
  std::vector<std::int32_t>& pulls() noexcept { return pulls_; }
  void kv_received(std::int32_t seq);
  /// Pull: the read of `seq` ended after its client timed out: its blocks here are freed and it leaves this replica.
  void drop_received(std::int32_t seq, double now_s);

  /// A failure at `now_s` (engine/failures.hpp): every request the replica holds leaves it — running ones in
  /// admission order, then waiting, then swapped — appended to `out`, with the output tokens each had produced in
  /// `produced`; static-batching padding (already reported) goes back to the pool. The replica restarts empty, its
  /// KV pool fresh, keeping its accumulated totals; an iteration in flight is lost (the caller ignores its
  /// completion event). The sequences keep their old per-replica state: the caller resets or releases them.
  void evict_all(double now_s, std::vector<std::int32_t>& out, std::vector<std::int64_t>& produced);
  /// The client's timeout cancels request `seq`, held here (the caller set Seq::timed_out and counted it). Waiting
  /// or swapped, it leaves at once (swapped: its host blocks freed); running, it leaves at the next iteration
  /// boundary — out of the batch, its KV blocks freed — as vLLM applies an abort between engine steps (at once
  /// when no iteration is in flight). A request that leaves goes back to the pool; under static batching a running
  /// one becomes padding until its batch ends. Returns the output tokens it had produced (wasted work).
  std::int64_t cancel(std::int32_t seq);

  // ---- the lifecycle's KV invariant (kv_holdings.hpp) ----
  /// Adds what request `s`, held here, holds of this replica's KV (and whether it counts in outstanding()) to `out`.
  void add_holding(const Seq& s, KvHoldings& out) const;
  /// Adds `own` private blocks and `s`'s first `prefix` shared blocks (a handed-off request's, held here) to `out`.
  void add_holding(const Seq& s, std::int64_t own, std::int64_t prefix, KvHoldings& out) const;

 private:
  // Running list (admission order; the tail is the preemption victim).
  void link_tail(std::int32_t i);
  void unlink(std::int32_t i);
  /// One more in the running list, however it was linked: each running sequence holds its linear-attention state
  /// (ReplicaConfig::state_blocks, vLLM V1 hybrids), taken here and given back by unlink.
  void count_joined_running() {
    ++running_;
    if (cfg_.state_blocks > 0) kv_.allocate(cfg_.state_blocks);
  }
  // Decode set membership.
  void start_decoding(std::int32_t i, double now_s, bool fresh_group_member, bool silent_gap = false);
  void leave_decoding(std::int32_t i);
  std::int64_t phase_of(const Seq& s) const;
  /// x mod block_size in [0, block_size), also for negative x (KvBlockManager::block_offset).
  std::int64_t mod_block(std::int64_t x) const { return kv_.block_offset(x); }
  std::int64_t tokens_now(const Seq& s) const { return s.ctx0 + (step_ - s.k0); }
  /// The tokens the engine decodes for `s`: its output, and under V0's asynchronous output processor one more
  /// (ReplicaConfig::first_token_after_next_step), the step in which its stop is found and its last token delivered.
  std::int64_t engine_output(const Seq& s) const { return s.output + output_tail(); }
  /// Tokens every decoder emits in the next decode step: 1, or under speculative decoding the expected count
  /// spread over steps deterministically (engine/speculative.hpp).
  /// Under multi-step scheduling, while a decode window is being scheduled, the window's n tokens (its lookahead slots).
  std::int64_t next_step_tokens() const noexcept { return cfg_.spec_tokens > 0 ? spec_.next() : 1 + lookahead_; }
  /// Blocks a decoder of phase `phase` needs when the token clock advances by `n` from step_.
  std::int64_t growth_of(std::int64_t phase, std::int64_t n) const;
  /// A decoder's own blocks: those its tokens fill, and inside a multi-step window the lookahead slots the window
  /// allocated ahead of them (multi_step.cpp).
  std::int64_t decoding_own_blocks(const Seq& s) const {
    if (s.walk_skip) [[unlikely]] return s.own_blocks;  // a decoder V0 0.5.4-0.5.5's walk skipped (v0_walk.cpp)
    return kv_.blocks_for(tokens_now(s) + window_reserved()) - s.prefix_blocks;
  }
  // Admission of a waiting request with `first_chunk` tokens to compute now (whole prompt for V0 policies):
  // cache hits (shared prefix, own blocks kept since a preemption) are taken, blocks for the cached tokens plus
  // the chunk allocated, leaving the watermark free. False (nothing changed) when they do not fit.
  /// Pull: allocates blocks for the remote KV of waiting request `seq` and starts its read; false when they do not fit.
  bool start_pull(std::int32_t seq, double now_s);
  bool try_admit(std::int32_t i, double now_s, std::int64_t first_chunk);
  /// Joins the running list: at the tail, or under ReplicaConfig::running_by_arrival a request preempted before at
  /// its arrival's place (running_order.cpp).
  void link_running(std::int32_t i);
  /// Tokens of `s`'s prefill target already in the cache (whole blocks, never the last token): what an
  /// admission would skip.
  /// `shared_cost`: blocks taking the shared part would newly take from the free pool.
  /// `host_blocks` (may be null): of the cached blocks, those loaded from the host tier (own blocks to allocate).
  std::int64_t cached_tokens(const Seq& s, std::int64_t* prefix_blocks, std::int64_t* own_blocks,
                             std::int64_t* shared_cost, std::int64_t* host_blocks = nullptr) const;
  // Host KV tier (kv_offload.cpp): the run of `s`'s blocks from `first` (before `limit`) that the tier holds, when
  // loading them is cheaper than recomputing them, else 0; an admission's load of `loaded_blocks` from block `first`
  // (or, `consulted` with none loaded, the run it recomputed) and its touch of the prompt's stored blocks; the
  // write-through store of a block just published.
  std::int64_t host_hit(const Seq& s, std::int64_t first, std::int64_t limit) const;
  void host_admitted(const Seq& s, std::int64_t first, std::int64_t loaded_blocks, bool consulted);
  void host_store(std::uint64_t key) {
    if (host_.enabled() && host_.store(key)) work_.host_store_bytes += cfg_.replica_block_bytes;
  }
  // Block-hash traces and sessions (replica_prefix.cpp): the cache key of `s`'s block k; the length of the run of
  // cached blocks from the first (counting in `evictable` those unreferenced); publishing the prompt's newly computed
  // full blocks.
  std::uint64_t block_key(const Seq& s, std::int64_t k) const;
  KvBlockManager::ChainKeys chain_keys(const Seq& s) const;  ///< the same keys, as the cache walks them
  std::int64_t hashed_hit(const Seq& s, std::int64_t max_blocks, std::int64_t* evictable) const;
  void publish_blocks(Seq& s);
  /// A finished session turn's full reply blocks become cached blocks (keys from its chain); returns `own` less them.
  std::int64_t publish_reply(Seq& s, std::int64_t own);
  /// Publishes `s`'s blocks from its cached count up to `full` (while `own` blocks remain and the key is not cached
  /// by another); returns `own` less those published.
  std::int64_t publish_through(Seq& s, std::int64_t full, std::int64_t own);
  void release_shared(Seq& s);  ///< drops the references to the shared prefix or the cached hashed blocks
  // Preempts the running tail; returns its growth demand this step (0/1) so the caller can lower its need. A
  // recompute victim re-enters the waiting queue at its front (vLLM: `waiting.extendleft`, V1 `prepend_request`),
  // or at its back with `to_back` (SGLang's retraction: `waiting_queue.extend(retracted_reqs)`).
  std::int64_t preempt_tail(double now_s, bool to_back = false);
  // vLLM 0.5.4-0.5.5's chunked walk (v0_walk.cpp; ReplicaConfig::prefills_ahead_of_decodes). Before the decode step
  // (after the decoders' growth): reads the head block, and when the budget ends before the last decoders, takes
  // them out of the decode set for this step (their growth block freed) and moves the list's unserved tail to its
  // head. Then the partial prompts' chunks in walk order (returns the budget left), the list's order after
  // admission (`admitted_after`: the tail before it), and the skipped decoders' return at the step's end.
  void v0_walk_cut(bool preempted);
  std::int64_t v0_walk_prefills(std::int64_t budget, perf::BatchShape& shape);
  void v0_walk_order(std::int32_t admitted_after);
  void rejoin_skipped();
  void move_after(std::int32_t i, std::int32_t anchor);  ///< within the running list (-1: to its head)
  void release_blocks(Seq& s);
  // Policies (schedule_v0.cpp, schedule_v1.cpp).
  void schedule_v1(double now_s, perf::BatchShape& shape);
  void schedule_vllm_v0(double now_s, perf::BatchShape& shape);
  void schedule_chunked(double now_s, perf::BatchShape& shape);
  void schedule_static(double now_s, perf::BatchShape& shape);
  void schedule_sglang(double now_s, perf::BatchShape& shape);  // schedule_sglang.cpp
  /// SGLang: tokens reserved for the decoders' future output, Σ min(remaining, clip) × new_token_ratio (O(1) but
  /// for decoders with more than the clip left, rare).
  double sglang_reserved_tokens();
  /// SGLang's new_token_ratio now: its value at the last reset, decayed by the decode steps since.
  double sglang_ratio() const;
  /// SGLang's retraction before a decode step (retract_decode): true when requests were retracted.
  bool sglang_retract(double now_s);
  /// SGLang's ignore_eos admission (schedule_sglang_eos.cpp): whether `cand`, computing `extend` tokens, passes
  /// add_one_req_ignore_eos's early exit and walk, with `cur_rem` tokens free less this batch's inputs and `rem_total`
  /// less the ratio reservations too. Its first call of a batch (sg_.eos_built false) lists the running requests.
  bool sglang_eos_admits(const Seq& cand, std::int64_t extend, double cur_rem, double rem_total);
  void begin_decode_step(perf::BatchShape& shape);  ///< adds every running decoder to this step
  // Multi-step scheduling (multi_step.cpp): a V0 decode step just scheduled opens a window of scheduler_steps steps;
  // its later steps run without the scheduler; a step of it ends (finishing requests only at its last).
  void open_window();
  void continue_window(double now_s);
  bool in_window() const noexcept { return window_left_ > 0; }
  void finish_window_step(double now_s);
  /// Token positions each decoder has allocated beyond its tokens: the open window's lookahead slots not yet used.
  std::int64_t window_reserved() const noexcept { return window_end_step_ > step_ ? window_end_step_ - step_ : 0; }
  const perf::DecodeSteps& window_decode_steps(std::int64_t n, bool long_context) {
    return cached_steps(window_steps_, *cfg_.window_cost, n, long_context);
  }
  bool grow_decoders(double now_s);  ///< allocates this step's growth, preempting as needed
  // Sliding-window groups (kv_window.cpp, which says how; ReplicaConfig::window_pages > 0).
  bool windowed() const noexcept { return cfg_.window_pages > 0; }
  std::int64_t window_clock(const Seq& s) const noexcept;      ///< the clock of its first block past window_base
  std::int64_t window_credit_of(const Seq& s) const noexcept;  ///< the pages its sliding groups freed
  void window_init();
  void window_join(Seq& s);          ///< start_decoding: its credit, and where it is counted
  void window_leave(const Seq& s);   ///< leave_decoding: the credit back, and out of the counts
  std::int64_t window_freed(std::int64_t n) const;  ///< pages freed at clocks step_ + 1 .. step_ + n
  bool grow_windowed(double now_s, std::int64_t n, std::int64_t need);  ///< grow_decoders with the window credit
  void swap_in(double now_s);
  void add_prefill_chunk(std::int32_t i, std::int64_t chunk, perf::BatchShape& shape);
  /// Admits waiting requests from the head while budget and max_num_seqs allow, each with a chunk of the budget
  /// (a prompt left unfinished continues next step); V1 allocates the chunk's blocks, V0 the whole prompt's
  /// (`whole_prompt`). Stops at the first that does not fit. Returns the budget left.
  std::int64_t admit_chunked(double now_s, std::int64_t budget, bool whole_prompt, perf::BatchShape& shape);
  void release_static_batch();
  void apply_cancels();  ///< at the iteration boundary: running requests whose client timed out leave
  /// start_iteration's accounting of the iteration just formed (`shape`, duration_s_ set): totals and record.
  void count_iteration(const perf::BatchShape& shape, double now_s);
  /// The cost model's time for `shape` on the path this replica prices it (serial: planned from idle under async
  /// scheduling); `proposer_s` as CostModel::iteration_time's (nullptr: not wanted).
  double step_time(const perf::BatchShape& shape, bool serial, double* proposer_s);
  /// finish_iteration's inter-token gaps of a decode step ending at `now_s`: every decoder emitted one token, the
  /// gaps grouped by when each got its previous token. Inline: a decode run commits a step without a call.
  void emit_token_gaps(double now_s) {
    if (itl_old_measured_ > 0)
      metrics_->on_token_gap(now_s - last_decode_end_s_, static_cast<double>(itl_old_measured_), itl_);
    for (const auto& g : itl_groups_)
      if (g.measured > 0 && !g.silent) metrics_->on_token_gap(now_s - g.time_s, static_cast<double>(g.measured), itl_);
    itl_groups_.clear();
    last_decode_end_s_ = now_s;
    ctx_sum_ += n_dec_ * step_tokens_;
  }
  /// A decode run's next boundary (decode_run.cpp); adds its KV growth to `grown` (catch_up allocates it).
  void commit_run_step(std::int64_t& grown, std::int64_t& freed);

  std::int32_t index_;
  ReplicaConfig cfg_;
  KvBlockManager kv_initial_;  ///< the empty pool, restored after a failure (declared before kv_: copied first)
  KvBlockManager kv_;
  KvHostTier host_;  ///< the second tier (empty when off); lost with the replica on a failure, as host memory is
  const perf::CostModel* cost_;
  SeqPool* pool_;
  metrics::Collector* metrics_;

  IndexRing waiting_, swapped_;
  std::int32_t head_ = -1, tail_ = -1;
  std::int64_t running_ = 0;       ///< sequences in the running list (prefilling, decoding, padding)
  std::int64_t* outstanding_;      ///< the caller's slot (outstanding())
  std::int64_t static_done_ = 0;   ///< static batching: finished sequences still padding the batch

  // Decode set.
  /// The decode token clock: tokens every decoder has emitted in the decode steps started so far (one per step;
  /// under speculative decoding the step's count, the same for all decoders).
  std::int64_t step_ = 0;
  std::int64_t step_tokens_ = 1;   ///< tokens per decoder in the decode step in flight
  std::int64_t n_dec_ = 0, n_dec_measured_ = 0, ctx_sum_ = 0;
  std::vector<std::int64_t> phase_count_;
  std::vector<std::int64_t> window_past_, window_ring_;  ///< windowed(): kv_window.cpp
  /// vLLM V0's graph length (perf::CostModel::eager_decode_context; 0 = none, longest_ not kept): a decode step whose
  /// longest context reaches it runs eagerly. longest_ctx_: the decode step in flight's longest context.
  std::int64_t eager_ctx_ = 0, longest_ctx_ = 0;
  LongestContext longest_;
  /// The longest cached context among the decoders at the token clock before the decode step just begun (step_ less
  /// its tokens), which is what that step reads; 0 when the replica keeps no longest_ or nobody decodes.
  std::int64_t longest_context_now() {
    if (eager_ctx_ == 0 || n_dec_ == 0) return 0;
    const SeqPool& pool = *pool_;
    const auto live = [&pool](std::int32_t seq, std::uint32_t stamp) {
      const Seq& q = pool[seq];
      return q.stamp == stamp && q.state == SeqState::decoding;
    };
    return longest_.max_origin(live) + step_ - step_tokens_;
  }
  /// Whether a decode step whose longest context is `longest` runs without its CUDA graph.
  bool long_context(std::int64_t longest) const noexcept { return eager_ctx_ > 0 && longest >= eager_ctx_; }
  /// Σ over decoders of their finishing step (k0 + output − gen_base) and of their output: the remaining output of
  /// the decode set is finish_sum_ − n_dec_ × step_ (SGLang's admission reservation), kept in O(1).
  std::int64_t finish_sum_ = 0, output_sum_ = 0;
  /// SGLang (schedule_sglang.cpp): new_token_ratio at the token clock ratio_step_; the running batch marked full by
  /// a reservation failure (no prefill until it shrinks below full_running_); decoders with more output left than
  /// the reservation clip (their finishing step; stale entries dropped lazily).
  struct SglangState {
    double ratio = 0.7;
    std::int64_t ratio_step = 0;
    bool full = false;
    std::int64_t full_running = 0;
    struct Long { std::int32_t seq; std::uint32_t stamp; std::int64_t finish; };
    std::vector<Long> longs;
    /// The ignore_eos walk's (tokens left, tokens held) of the batch being formed, in SGLang's order (its
    /// req_states: listed and sorted at the batch's first candidate, each later one inserted); scratch.
    std::vector<std::pair<std::int64_t, std::int64_t>> eos_states;
    bool eos_built = false;
  } sg_;
  SpeculativeTokens spec_;         ///< tokens per decode step under speculative decoding
  struct FinishEntry {
    std::int64_t step;
    std::int32_t seq;
    std::uint32_t stamp;
    bool operator>(const FinishEntry& o) const { return step != o.step ? step > o.step : seq > o.seq; }
  };
  std::vector<FinishEntry> finish_heap_;
  // Decoders whose last token was not produced by the previous decode iteration, grouped by that time. A silent
  // group's gap is not an inter-token gap the caller sees: under V0's asynchronous output processor a prompt's first
  // token is delivered by the step that computes its second, so its second token's gap starts then, one step later
  // (every later token is delivered one step late too, the last by the extra step of engine_output()).
  struct FreshGroup { double time_s; std::int64_t measured; bool silent; };
  std::vector<FreshGroup> fresh_;
  std::int64_t fresh_total_measured_ = 0;
  double last_decode_end_s_ = 0;

  // Async scheduling (ReplicaConfig::async_scheduling): the last iteration's start and end, and the latest queue
  // time a request may have to be admitted into the iteration being formed (its plan was made when the one before
  // it started; see start_iteration).
  double prev_step_start_s_ = -1, prev_step_end_s_ = -1;
  double plan_cutoff_s_ = 0;
  /// When `s` joined this replica's queue: its handoff for a disaggregated decode, else its arrival (a request
  /// retried after a failure counts from its arrival).
  static double queued_at(const Seq& s) noexcept { return s.handoff_s >= 0 ? s.handoff_s : s.arrival_s; }

  // The iteration in flight.
  bool busy_ = false;
  bool moe_ = false;              ///< routed experts: count each iteration's share of them (WorkTotals::expert_share)
  bool decode_step_ = false;
  bool preempted_this_step_ = false;
  bool saturated_ = false;        ///< requests were left waiting when this iteration was formed
  double sat_prefill_share_ = 0;  ///< of a saturated iteration's time, its prompts' (SaturationTotals::prefill_s)
  std::int64_t emitting_ = 0;     ///< sequences emitting a real token in this iteration
  /// A speculative decode step in flight: its sequences and proposer time, added to work_ when it completes, as its
  /// tokens are (a step planned and never completed — the run cut at its horizon — counted steps without tokens:
  /// mean_accepted_tokens -0.14).
  double spec_plan_seqs_ = 0, spec_plan_proposer_s_ = 0;
  double duration_s_ = 0;
  double swap_bytes_ = 0;
  double load_bytes_ = 0;  ///< this step's host-tier loads, per GPU (copied before the step computes)
  std::vector<std::int32_t> prefill_done_;  ///< sequences whose prompt completes with this iteration
  /// first_token_after_next_step: sequences whose first token the iteration in flight delivers (their stamp then).
  struct PendingFirst { std::int32_t seq; std::uint32_t stamp; };
  std::vector<PendingFirst> first_pending_;
  std::vector<std::int32_t> chunked_partial_;  ///< chunked policy: partially prefilled, admission order
  std::vector<std::int32_t> victims_;          ///< chunked policy: this step's recompute victims, set aside (scratch)
  /// V0 0.5.4-0.5.5 walk (v0_walk.cpp): decoders skipping the step in flight (slot, stamp after leaving); partial
  /// prompts served this step and those left unserved (scratch); the last entry of the head block moved this step.
  std::vector<std::pair<std::int32_t, std::uint32_t>> skipped_;
  std::vector<std::int32_t> walk_served_, walk_left_;
  std::int32_t walk_anchor_ = -1;
  std::vector<std::int32_t> pulls_;        ///< pull reads started by the last start_iteration
  /// Running requests timed out during the iteration in flight: (slot, request id), the id telling a slot reused
  /// meanwhile apart from the request that was cancelled.
  std::vector<std::pair<std::int32_t, std::int64_t>> cancels_;
  std::vector<FreshGroup> itl_groups_;     ///< snapshot of fresh_ for this decode iteration
  std::int64_t itl_old_measured_ = 0;
  IterationRecord record_;

  std::int64_t preemptions_ = 0;
  WorkTotals work_;
  SaturationTotals sat_;
  metrics::TimeIntegral kv_used_;
  metrics::LatencyHistogram::Source itl_;  ///< its inter-token gaps' moments and last bin

  /// A decode run (decode_run.cpp; docs/engine.md): consecutive decode-only steps of the same decoders, known in
  /// advance, simulated without an event per step. Step 0 is the one start_iteration began; step k > 0 starts when
  /// step k − 1 ends, allocating need[k] blocks.
  struct DecodeRun {
    static constexpr std::int32_t kMax = 16;
    std::int32_t steps = 0;  ///< planned (0 or 1: no run)
    std::int32_t at = 0;     ///< started
    double end_s[kMax] = {}, duration_s[kMax] = {};
    std::int64_t need[kMax] = {};
    std::int64_t freed[kMax] = {};  ///< pages the sliding groups free at step k (windowed())
  };
  DecodeRun run_;
  // Multi-step window (multi_step.cpp): steps still to run after the one in flight, the token clock before its first
  // step and the one up to which its lookahead slots are allocated; step times of its later steps by decoder count.
  std::int32_t window_left_ = 0;
  std::int64_t window_start_step_ = 0, window_end_step_ = 0;
  std::int64_t lookahead_ = 0;  ///< set while a window's decode step is scheduled: its n − 1 lookahead slots
  perf::DecodeSteps window_steps_[8];
  /// Step times by decoder count, direct-mapped on the count's low bits: an admission and a completion move the count
  /// by one and back, so the few counts a replica's batch moves between stay cached.
  perf::DecodeSteps decode_steps_[8];
  /// The step times of `n` decoders (n >= 1): a decode-only step's time is DecodeSteps::time, bit for bit
  /// iteration_time's (test_hot_path), without the op table walk.
  /// `long_context`: a decoder holds at least eager_ctx_ tokens (long_context(); never true when eager_ctx_ is 0).
  const perf::DecodeSteps& decode_steps(std::int64_t n, bool long_context) {
    return cached_steps(decode_steps_, *cost_, n, long_context);
  }
  /// The one cache rule of both tables above (a window's steps are priced by the cost model without CPU time).
  static const perf::DecodeSteps& cached_steps(perf::DecodeSteps (&cache)[8], const perf::CostModel& cost,
                                               std::int64_t n, bool long_context) {
    perf::DecodeSteps& steps = cache[n & 7];
    if (steps.seqs() != n || steps.long_context() != long_context) steps = cost.decode_steps(n, long_context);
    return steps;
  }
};

}  // namespace llmsim::engine::detail
