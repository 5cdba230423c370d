#pragma once
// A request inside the engine (Seq: passive state, laid out for the decode steps' cache lines), the slab that holds
// them (SeqPool) and the ring of indices the waiting queues use (IndexRing); private to the engine. The replica that
// edits them is replica.hpp.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "llmsim/core/error.hpp"

namespace llmsim::engine::detail {

/// handoff: a prefill-only replica computed the prompt; its KV blocks stay held until the transfer to a decode pool
/// ends. receiving: a decode replica allocated blocks for the prompt's KV and is reading it (disaggregation.hpp).
enum class SeqState : std::uint8_t { free, waiting, prefill, decoding, swapped, done, handoff, receiving };

/// A request inside the engine (slab entry). Tokens are int64 to keep sums exact.
struct alignas(64) Seq {
  // Laid out by use: the first cache line holds what every decode step's boundaries touch (the finish heap's check,
  // joining and leaving the decode set, the running list), the second what admission and release touch, the rest
  // what arrival and completion read once. 256 bytes, aligned, so a sequence's hot fields are one line.
  std::uint32_t stamp = 0;          ///< bumped when leaving the decode set (lazy heap deletion)
  SeqState state = SeqState::free;
  bool measured = false;
  bool finished = false;            ///< all tokens emitted (static batching keeps it as padding)
  bool timed_out = false;           ///< cancelled by the client's timeout (counted; leaving the engine)
  std::int32_t prev = -1, next = -1;  ///< running list (admission order)
  std::int64_t k0 = 0, ctx0 = 0, gen_base = 0;  ///< decode origin (see replica.hpp's file comment)
  std::int64_t output = 0;
  std::int64_t generated = 0;       ///< tokens emitted (valid while not decoding)
  std::int32_t fresh_group = -1;    ///< index into the replica's fresh-decoder groups, -1 = decoded before
  std::int32_t replica = -1;

  double last_token_s = 0;
  std::int64_t own_blocks = 0;      ///< blocks held while waiting for/in prefill or swapped
  std::int64_t prefix_blocks = 0;   ///< shared prefix blocks referenced (prefix caching)
  /// Block-hash traces: chained hashes of the prompt's hash blocks (DrawnRequest::chain); its first
  /// prefix_blocks blocks are then held as cached blocks keyed by them. Session turns (chain_blocks > 0): the
  /// blocks' cache keys themselves, one per engine block. nullptr otherwise.
  const std::uint64_t* chain = nullptr;
  std::int64_t prefill_target = 0;  ///< tokens to have in the KV cache when the prefill ends
  std::int64_t prefilled = 0;       ///< of those, computed (or found cached) so far
  std::int64_t input = 0;
  std::int64_t cache_handle = -1;   ///< own blocks kept in the KV cache since a preemption (prefix caching)

  std::int64_t id = 0;
  std::int32_t tenant = 0, source = -1;
  double arrival_s = 0, admitted_s = -1, first_token_s = -1;
  std::uint64_t prefix_key = 0;     ///< the shared prefix drawn (tenant class, group)
  std::int64_t prefix_len = 0;      ///< its length in whole blocks (0 = none)
  std::int64_t cached_after = 0;    ///< block-hash traces: the block at which the cache_handle entry starts
  /// Disaggregation: prompt tokens whose KV arrived from the prefill pool (a decode replica admits them as computed,
  /// vLLM's KV connector "external" tokens); the time it arrived and the time a decode replica admitted it.
  std::int64_t remote_tokens = 0;
  double handoff_s = -1, decode_admitted_s = -1;
  std::int32_t kv_source = -1;      ///< disaggregation: the prefill replica holding its KV until the transfer ends
  std::int32_t preemptions = 0;
  std::int32_t retries = 0;         ///< times started again after a failure evicted it (failures.max_retries)
  std::int32_t engine = -1;         ///< the engine (Simulation::replicas_ index) holding it, -1 = not routed
  /// Disaggregation, pull: queued at a decode replica whose KV is still on the prefill replica; admission
  /// allocates blocks for it and starts the read (Replica::start_pull) instead of computing.
  bool kv_pending = false;
  /// vLLM 0.5.4-0.5.5's chunked walk (v0_walk.cpp): in the head block of the running list that leads the next walk
  /// (skipped by the last step or admitted by it); a decoder skipping the step in flight (out of the decode set).
  bool walk_lead = false;
  bool walk_skip = false;
  // Sessions (session_driver.hpp): the turn's index in its session (-1 = not a session turn), the blocks its chain
  // covers (prompt + reply: a finished turn publishes its reply's full blocks too, for the next turn to hit), and
  // the prompt tokens its first admission found cached (-1 = not admitted yet).
  std::int32_t turn = -1;
  std::int32_t chain_blocks = 0;
  std::int32_t first_cached = -1;
  std::int32_t chain_tip = -1;  ///< the KV cache's segment holding its last referenced hashed block (a hint)
  /// Sliding-window groups (Replica::window_join): set when it starts decoding, the blocks it keeps in every group —
  /// its shared prefix and the sliding window's — before its own blocks free sliding pages.
  std::int32_t window_base = 0;

  /// The same request started again from scratch (a client's retry after its replica failed): its identity and
  /// what it asked for, with no engine progress — a new stream, a new first token. A block-hash trace's prompt
  /// keeps its hashes, so the retry can hit the cache; `stamp` moves on so stale heap entries stay stale. The state
  /// is the evicted one's: the lifecycle's retry() moves it to waiting (request_lifecycle.hpp).
  Seq retry_attempt() const {
    Seq again;
    again.id = id;
    again.tenant = tenant;
    again.source = source;
    again.arrival_s = arrival_s;
    again.input = input;
    again.output = output;
    again.prefill_target = input;
    again.prefix_key = prefix_key;
    again.prefix_len = prefix_len;
    again.chain = chain;
    again.turn = turn;
    again.chain_blocks = chain_blocks;
    again.first_cached = first_cached;
    again.measured = measured;
    again.preemptions = preemptions;
    again.retries = retries + 1;
    again.stamp = stamp + 1;
    again.state = state;  // the lifecycle's retry() moves it to waiting
    return again;
  }
};
static_assert(sizeof(Seq) == 256, "Seq: 4 cache lines, the first the decode steps' (see its layout comment)");

/// Slab of sequences with a free list: memory follows the number in flight, not the run length.
///
/// A slot is reused by later requests while references to its earlier occupant may remain: a replica's finish heap
/// keeps entries lazily (a request that left the decode set, was cancelled or finished early), and with several
/// engines another replica's heap may still hold one when the slot is reused elsewhere. Those references carry the
/// occupant's `stamp`, so a reused slot continues the stamp (never back to 0): an old entry can never match its new
/// occupant. (Restarting it at 0 let a stale entry "finish" a request on a replica that did not hold it — the
/// crashes of timeouts on two replicas, the static policy and pipeline parallel.)
class SeqPool {
 public:
  std::int32_t acquire() {
    if (!free_.empty()) {
      const auto i = free_.back();
      free_.pop_back();
      Seq& s = seqs_[static_cast<std::size_t>(i)];
      const std::uint32_t stamp = s.stamp + 1;
      s = Seq{};
      s.stamp = stamp;
      return i;
    }
    seqs_.emplace_back();
    return static_cast<std::int32_t>(seqs_.size() - 1);
  }
  /// The lifecycle's last move (done → free): a request still held somewhere is never released.
  void release(std::int32_t i) {
    LLMSIM_CHECK(seqs_[static_cast<std::size_t>(i)].state == SeqState::done, "releasing the slot of a request not done");
    seqs_[static_cast<std::size_t>(i)].state = SeqState::free;
    free_.push_back(i);
  }
  Seq& operator[](std::int32_t i) { return seqs_[static_cast<std::size_t>(i)]; }
  const Seq& operator[](std::int32_t i) const { return seqs_[static_cast<std::size_t>(i)]; }
  std::size_t capacity() const noexcept { return seqs_.size(); }
  /// Slot i's own block-hash buffer (session turns: Seq::chain points into it). It lives as long as the slot, so a
  /// request that leaves at a later step boundary (a cancelled one) still reads its own hashes; its capacity is
  /// kept for the slot's next occupant (memory follows the requests in flight).
  std::vector<std::uint64_t>& chain_buffer(std::int32_t i) {
    if (chains_.size() <= static_cast<std::size_t>(i)) chains_.resize(static_cast<std::size_t>(i) + 1);
    return chains_[static_cast<std::size_t>(i)];
  }

 private:
  std::vector<Seq> seqs_;
  std::vector<std::int32_t> free_;
  std::vector<std::vector<std::uint64_t>> chains_;
};

/// Growable ring buffer of indices: deque semantics without per-element allocation.
class IndexRing {
 public:
  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
  std::int32_t front() const { return buf_[head_]; }
  void push_back(std::int32_t v) {
    grow_if_full();
    buf_[(head_ + size_) & (buf_.size() - 1)] = v;
    ++size_;
  }
  void push_front(std::int32_t v) {
    grow_if_full();
    head_ = (head_ + buf_.size() - 1) & (buf_.size() - 1);
    buf_[head_] = v;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
  }
  /// Removes `v` (false when absent), searching from the front: O(its position). Timeouts hit the oldest
  /// requests, which FCFS queues keep near the front.
  bool erase(std::int32_t v) {
    const std::size_t mask = buf_.size() - 1;
    for (std::size_t k = 0; k < size_; ++k) {
      if (buf_[(head_ + k) & mask] != v) continue;
      for (; k > 0; --k) buf_[(head_ + k) & mask] = buf_[(head_ + k - 1) & mask];  // close the gap from the front
      pop_front();
      return true;
    }
    return false;
  }

 private:
  void grow_if_full() {
    if (size_ < buf_.size()) return;
    std::vector<std::int32_t> nb(buf_.empty() ? 64 : buf_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) nb[i] = buf_[(head_ + i) & (buf_.size() - 1)];
    buf_.swap(nb);
    head_ = 0;
  }
  std::vector<std::int32_t> buf_;
  std::size_t head_ = 0, size_ = 0;
};

}  // namespace llmsim::engine::detail
