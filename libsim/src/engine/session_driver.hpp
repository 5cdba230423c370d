#pragma once
// Sessions (spec/sessions.hpp), private to the engine: the closed loop inside each conversation. A session starts
// when the workload's arrival source fires; its turn k is drawn when it arrives (lengths, the truncated history,
// the prompt's block hashes), and its next turn is released think-time after turn k ends (completed, timed out,
// failed or rejected). State is per active session only (its kept history, its last turn's token pieces and block
// hashes, which the next turn extends rather than re-hashes), in slots reused through a free list: memory is
// O(active sessions), never O(sessions in the run).
//
// History reuse rides the block-hash prefix cache (KvBlockManager's hashed blocks, vLLM V1's chained block
// hashes): each block's content id names the pieces of the system prompt / user messages / replies it holds, its
// key chains the ids of every block before it. Turn k + 1's prompt starts with turn k's prompt + reply, so their
// blocks share keys and hit while the cache keeps them; a system prompt shared by several sessions shares its
// blocks; dropping an old turn (truncation) shifts every later block, so the rest of the history misses — as it
// does in vLLM.
#include <cstdint>
#include <optional>
#include <vector>

#include "llmsim/core/rng.hpp"
#include "llmsim/engine/workload_source.hpp"
#include "llmsim/spec/sessions.hpp"
#include "llmsim/spec/workload.hpp"

namespace llmsim::engine::detail {

/// One turn as drawn (WorkloadDriver copies it into its DrawnRequest).
struct SessionTurnDraw {
  std::int64_t input = 0, output = 0;
  std::int32_t turn = 0;            ///< 0-based turn index in its session
  std::int64_t dropped_turns = 0;   ///< history turns the truncation rule dropped
  bool clipped = false, too_long = false;
  /// The cache keys of the turn's full blocks of prompt + reply (one per block; block k's names every token up to
  /// its end, as vLLM's parent-chained hash_block_tokens does): what the replica looks blocks up by. Null when prefix
  /// caching is off or the turn is rejected. Valid until the session's next draw.
  const std::vector<std::uint64_t>* keys = nullptr;
};

class SessionDriver {
 public:
  /// `block_size` > 0: the hashing granularity; `max_model_len` <= 0: no limit. ConfigError (naming the field under
  /// workload.sessions) for a bad spec.
  SessionDriver(const spec::SessionSpec& spec, std::uint64_t seed, std::int64_t max_model_len, spec::TooLongPolicy too_long,
                int block_size, bool prefix_caching);

  /// A new session: draws its turn count and system prompt; returns its slot.
  std::int32_t start();
  /// Draws the next turn of session `slot` (its lengths, the history it sends, its block hashes).
  SessionTurnDraw draw_turn(std::int32_t slot);
  /// The turn in flight of `slot` ended: a completed one joins the history, others add nothing.
  void turn_ended(std::int32_t slot, bool completed);
  /// When session `slot`'s next turn arrives after its previous one ended at `now_s` (its think time later), or
  /// nullopt when it has had all its turns (the slot is freed).
  std::optional<double> next_turn_time(std::int32_t slot, double now_s);

  /// Ends session `slot` before its last turn (the run stops issuing its turns); frees the slot.
  void end(std::int32_t slot);
  /// Session `slot`'s first turn was measured (not warm-up): the session counts in the measured_* figures. Once,
  /// right after start() drew its first turn.
  void mark_measured(std::int32_t slot);

  std::int64_t started() const noexcept { return started_; }
  std::int64_t finished() const noexcept { return finished_; }  ///< sessions that had all their turns
  // The measured sessions (mark_measured): started = finished + active + cut, whatever the warm-up count, so a
  // summary never counts a warm-up session as finished beside measured ones started (issue 29).
  std::int64_t measured_started() const noexcept { return measured_started_; }
  std::int64_t measured_finished() const noexcept { return measured_finished_; }
  std::int64_t measured_active() const noexcept { return measured_active_; }
  /// measured sessions ended before their last turn (end(): their next turn lay past the clock's range)
  std::int64_t measured_cut() const noexcept { return measured_cut_; }
  std::int64_t measured_turns() const noexcept { return measured_turns_; }  ///< turns drawn by measured sessions
  std::int64_t active() const noexcept { return static_cast<std::int64_t>(sessions_.size() - free_.size()); }
  std::int64_t peak_active() const noexcept { return peak_active_; }
  std::int64_t dropped_turns() const noexcept { return dropped_turns_; }  ///< truncation, over the run
  int block_size() const noexcept { return block_size_; }
  /// Session slots allocated (at most peak_active(): slots are reused) and the bytes their state holds (kept
  /// history, token pieces, block hashes): bounded by the active sessions, not by the sessions of the run.
  std::size_t slots() const noexcept { return sessions_.size(); }
  std::size_t state_bytes() const noexcept;
  /// Tests: hash every turn's blocks from the first, reusing nothing (neither the last turn's hashes nor a shared
  /// system prompt's): the reference the incremental hashing must equal. Before the first start().
  void reference_hashing(bool on) noexcept { reference_ = on; }

 private:
  struct Kept {
    std::int64_t user = 0, output = 0, turn = 0;
  };
  struct Piece {
    std::uint64_t key;
    std::int64_t len;
    std::uint64_t before = 0;  ///< the hash of the pieces before it (their keys and lengths): set by hash_blocks
    bool operator==(const Piece& o) const { return key == o.key && len == o.len; }
  };
  struct Session {
    std::uint64_t uid = 0, system_key = 0;
    std::int64_t system_len = 0, turns = 0, next_turn = 0;
    std::int64_t user = 0, output = 0;  ///< the turn in flight's message and reply lengths
    std::vector<spec::SessionTurn> history;  ///< completed turns (lengths, for the truncation rule)
    std::vector<std::uint64_t> history_key;  ///< their pieces' content keys: message, reply, message, ...
    std::uint64_t user_key = 0, output_key = 0;  ///< the turn in flight's pieces' content keys (prefix caching)
    // The last hashed turn's token stream (pieces, cut at its prompt's end, then its reply) and its blocks' keys:
    // the next turn re-hashes only from the first block their streams do not share.
    std::vector<Piece> stream;
    std::vector<std::uint64_t> keys;
    // How that stream was built: no piece cut (a clipped prompt cuts), the history turns dropped, the history's
    // length then, and its tokens (prompt + reply).
    bool stream_whole = false;
    std::size_t stream_drop = 0, stream_turns = 0;
    std::int64_t stream_tokens = 0;
    bool active = false, measured = false;
  };
  /// `whole`: no piece of the prompt was cut (not clipped).
  void hash_blocks(Session& s, std::size_t drop, std::int64_t input, std::int64_t output, bool whole);
  /// Sets pieces[i].before for i >= from (pieces[0].before is 0, the empty stream's).
  static void set_before(std::vector<Piece>& pieces, std::size_t from);
  void extend_hashes(const std::vector<Piece>& pieces, std::int64_t kept, std::int64_t blocks,
                     std::vector<std::uint64_t>& keys) const;
  /// A shared system prompt as last drawn: its index, length and full blocks' keys.
  struct SystemPrompt {
    bool used = false;
    std::uint64_t group = 0;
    std::int64_t len = 0;
    std::vector<std::uint64_t> keys;
  };

  spec::SessionSpec spec_;
  std::uint64_t seed_;
  std::int64_t max_len_;
  spec::TooLongPolicy too_long_;
  int block_size_;
  bool prefix_caching_;
  bool reference_ = false;
  LengthSampler turns_, system_, user_, output_, think_;
  RandomEngine turns_rng_, pick_rng_, user_rng_, output_rng_, think_rng_;
  std::vector<Session> sessions_;
  std::vector<std::int32_t> free_;
  std::int64_t started_ = 0, finished_ = 0, peak_active_ = 0, dropped_turns_ = 0;
  std::int64_t measured_started_ = 0, measured_finished_ = 0, measured_active_ = 0, measured_cut_ = 0,
               measured_turns_ = 0;
  std::vector<SystemPrompt> prompts_;  ///< by index mod its size (at most 64 slots, whatever system_prompts is)
  std::vector<Piece> pieces_;  ///< scratch: the turn's token stream as (content key, length) pieces
};

}  // namespace llmsim::engine::detail
