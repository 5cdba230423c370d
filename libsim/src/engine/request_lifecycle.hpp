#pragma once
// The request lifecycle (DESIGN.md "The request lifecycle"; private to the engine): the one place that says which
// moves a request may make and that counts where every request ended.
//
//   free ─arrive→ waiting ─admit→ prefill ─prompt done→ decoding ─last token→ done ─release→ free
//                   │  ↑             │  │                  │  │
//                   │  └─preempt─────┘  └─prefill_only→ handoff ─KV moved→ waiting (decode pool) / receiving
//                   │  └─preempt (recompute)──────────────┘  └─preempt (swap)→ swapped ─swap in→ decoding
//                   └─ cancel (timeout), evict (failure) → done   (from any held state)
//                      evict (failure) with a retry left → waiting (from any held state: retry(), a new attempt)
//
// Two parts:
//  * `transition(seq, to)`: every change of Seq::state goes through it and is checked against the table above
//    (always on: one table load per admission, completion or preemption — never per token, decode runs do not
//    change states). A move the table lacks is an InternalError naming both states, so a mechanism that handles a
//    request in a state it did not expect fails where it happens instead of corrupting the KV accounting later.
//  * `RequestLedger`: the exits — completed, failed (a replica failure under on_failure "fail", or its retries spent),
//    timed out (the client's timeout), rejected (never entered) — counted for measured and warm-up requests apart,
//    with the conservation law arrivals = rejected + completed + failed + timed out + in the system, checked at the
//    end of every run (always) and at every exit (LLMSIM_DEEP_CHECK: debug and sanitizer builds).
// The Simulation's one exit path, Simulation::retire (request_lifecycle.cpp), applies an exit to the observers (the
// collector, the fleet meter, the autoscaler's metric, the time series, the request records).
#include <array>
#include <cstdint>
#include <string>

#include "llmsim/core/error.hpp"
#include "replica.hpp"

// Invariant checks too costly for Release's hot loop (or redundant with the end-of-run check): on in debug builds and
// in the sanitizer tree (LLMSIM_SANITIZE defines LLMSIM_DEEP_CHECKS), compiled out otherwise.
#if !defined(NDEBUG) || defined(LLMSIM_DEEP_CHECKS)
#define LLMSIM_DEEP_CHECK(cond, msg) LLMSIM_CHECK(cond, msg)
#define LLMSIM_DEEP_CHECKS_ON 1
#else
#define LLMSIM_DEEP_CHECK(cond, msg) \
  do {                               \
  } while (0)
#endif

namespace llmsim::engine::detail {

const char* state_name(SeqState s) noexcept;

/// Whether a request may move from `from` to `to` (the diagram above).
constexpr bool legal_transition(SeqState from, SeqState to) noexcept {
  using S = SeqState;
  constexpr auto bit = [](S s) { return 1u << static_cast<unsigned>(s); };
  // Row: the states a request in `from` may move to.
  constexpr std::array<unsigned, 8> to_mask = {
      /* free      */ bit(S::waiting),
      /* waiting   */ bit(S::waiting) | bit(S::prefill) | bit(S::receiving) | bit(S::done),
      /* prefill   */ bit(S::decoding) | bit(S::waiting) | bit(S::handoff) | bit(S::done),
      /* decoding  */ bit(S::decoding) | bit(S::waiting) | bit(S::swapped) | bit(S::done),
      /* swapped   */ bit(S::decoding) | bit(S::done),
      /* done      */ bit(S::free),
      /* handoff   */ bit(S::waiting) | bit(S::done),
      /* receiving */ bit(S::waiting) | bit(S::done),
  };
  return (to_mask[static_cast<std::size_t>(from)] & bit(to)) != 0;
}

[[noreturn, gnu::cold]] void illegal_transition(SeqState from, SeqState to);

/// Moves `s` to state `to`; InternalError when the lifecycle has no such move.
inline void transition(Seq& s, SeqState to) {
  if (!legal_transition(s.state, to)) [[unlikely]]
    illegal_transition(s.state, to);
  s.state = to;
}

// ---- an engine's count of its requests (Replica::outstanding, which the router reads) and Seq::finished ----
// A request counts at the engine it was routed to from its enqueue until it leaves that engine's care: its last token
// (finished; static batching keeps it as padding, no longer counted), its client's cancel (timed out), its prompt
// handed off to the decode pool, or the engine's failure. These three moves are the only edits of the count and of
// Seq::finished, so a mechanism cannot let go of a request and forget the count (or count it twice).

/// Routed to an engine: it waits there and counts.
inline void enter_engine(Seq& s, std::int64_t& outstanding) {
  transition(s, SeqState::waiting);
  ++outstanding;
}

/// Its last token (or, static batching, a cancelled member kept as padding): finished, no longer counted. The state
/// stays: the caller moves it to done, or keeps it in the batch as padding.
inline void finish_at_engine(Seq& s, std::int64_t& outstanding) {
  LLMSIM_DEEP_CHECK(!s.finished && outstanding > 0, "a request finished twice, or at an engine that did not count it");
  s.finished = true;
  --outstanding;
}

/// Leaves its engine unfinished, moving to `to`: cancelled (done), handed off (handoff), a dropped KV read (waiting:
/// the caller ends it).
inline void leave_engine(Seq& s, SeqState to, std::int64_t& outstanding) {
  LLMSIM_DEEP_CHECK(!s.finished && outstanding > 0, "a request left an engine that did not count it");
  --outstanding;
  transition(s, to);
}

/// The engine failed (Replica::evict_all): a request it held leaves it and is no longer counted there; the failure's
/// handler (Simulation::requeue_or_fail) moves it on — a retry, or an exit. Padding (finished) was not counted.
inline void evicted_from_engine([[maybe_unused]] const Seq& s, std::int64_t& outstanding) {
  LLMSIM_DEEP_CHECK(!s.finished && outstanding > 0, "an evicted request was not counted at its engine");
  --outstanding;
}

/// The retry move: a replica failure evicted a request that was held (waiting, in prefill, decoding, swapped, handed
/// off or receiving) and its client retries it — not one that is free or done (an exit already counted it).
constexpr bool legal_retry(SeqState from) noexcept { return from != SeqState::free && from != SeqState::done; }

/// Retries `s` (legal_retry, else InternalError naming the state): the same request from scratch
/// (Seq::retry_attempt), back to waiting. Beside transition() and SeqPool::release (done → free, checked there),
/// the only move of Seq::state (a failure's retry was an unchecked assignment before).
inline void retry(Seq& s) {
  if (!legal_retry(s.state)) [[unlikely]]
    illegal_transition(s.state, SeqState::waiting);
  s = s.retry_attempt();
  s.state = SeqState::waiting;
}

/// How a request left the system (RequestRecord::outcome has the same values).
enum class Exit : std::uint8_t { completed, failed, timed_out };

class RequestLedger {
 public:
  struct Counts {
    std::int64_t arrived = 0;    ///< requests issued (rejected ones included)
    std::int64_t rejected = 0;   ///< never entered: longer than the KV cache or than max_model_len (too_long reject)
    std::int64_t completed = 0, failed = 0, timed_out = 0;
    std::int64_t requeued = 0;   ///< retries after a failure (a request may retry more than once; not an exit)
    std::int64_t in_system = 0;  ///< entered and not left
    bool conserved() const noexcept { return arrived == rejected + completed + failed + timed_out + in_system; }
  };

  void arrive(bool measured) noexcept {
    auto& c = of(measured);
    ++c.arrived;
    ++c.in_system;
    ++in_system_;
  }
  void reject(bool measured) noexcept {
    auto& c = of(measured);
    ++c.arrived;
    ++c.rejected;
  }
  void requeue(bool measured) noexcept { ++of(measured).requeued; }
  void leave(bool measured, Exit e) {
    auto& c = of(measured);
    LLMSIM_CHECK(c.in_system > 0, "a request left the system twice (or without entering it)");
    --c.in_system;
    --in_system_;
    (e == Exit::completed ? c.completed : e == Exit::failed ? c.failed : c.timed_out) += 1;
    LLMSIM_DEEP_CHECK(c.conserved(), "requests not conserved at an exit");
  }

  const Counts& measured() const noexcept { return measured_; }
  const Counts& warmup() const noexcept { return warmup_; }
  /// Requests in the system, measured and warm-up.
  std::int64_t in_system() const noexcept { return in_system_; }
  /// End of run: every request is accounted for (InternalError naming the counts otherwise).
  void check_conserved() const;

 private:
  Counts& of(bool measured) noexcept { return measured ? measured_ : warmup_; }
  Counts measured_, warmup_;
  std::int64_t in_system_ = 0;
};

}  // namespace llmsim::engine::detail
