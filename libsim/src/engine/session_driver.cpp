#include "session_driver.hpp"

#include <algorithm>

#include <boost/random/uniform_int_distribution.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/engine/kv_block_manager.hpp"

namespace llmsim::engine::detail {

namespace {
constexpr const char* kPath = "workload.sessions";
constexpr std::uint64_t kOffsetMul = 0xA24BAED4963EE407ULL;  // a block's offset into its piece, into its key
// Content keys of a session's token pieces: role 0 = user message, 1 = reply, 2 = its own system prompt (shared
// ones have keys of their own). The session's mixed id plus odd multiples of turn + 1 (<= kMaxTurns) and role, mixed:
// two pieces of one session never collide (|Δturn| would have to be ~4·10^17), two sessions' by chance (~2^-64).
std::uint64_t piece_key(std::uint64_t uid, std::int64_t turn, int role) {
  const std::uint64_t at = static_cast<std::uint64_t>(turn + 1) * 0x9FB21C651E98DF25ULL +
                           static_cast<std::uint64_t>(role) * 0xC2B2AE3D27D4EB4FULL;
  return KvBlockManager::mix64(KvBlockManager::mix64(uid * 2 + 1) + at + 0x5E55);
}
}  // namespace

SessionDriver::SessionDriver(const spec::SessionSpec& spec, std::uint64_t seed, std::int64_t max_model_len,
                             spec::TooLongPolicy too_long, int block_size, bool prefix_caching)
    : spec_(spec),
      seed_(seed),
      max_len_(max_model_len),
      too_long_(too_long),
      block_size_(block_size),
      prefix_caching_(prefix_caching),
      turns_(spec.turns, std::string(kPath) + ".turns", 0),
      system_(spec.system_tokens, std::string(kPath) + ".system_tokens", 0),
      user_(spec.user_tokens, std::string(kPath) + ".user_tokens", 0),
      output_(spec.output_tokens, std::string(kPath) + ".output_tokens", 0),
      think_(spec.think_time_ms, std::string(kPath) + ".think_time_ms", 0),
      turns_rng_(rng_stream(seed, "session_turns")),
      pick_rng_(rng_stream(seed, "session_system")),
      user_rng_(rng_stream(seed, "session_user")),
      output_rng_(rng_stream(seed, "session_output")),
      think_rng_(rng_stream(seed, "session_think")) {
  spec_.validate(kPath);
  LLMSIM_CHECK(block_size > 0, "session driver without a block size");
}

std::int32_t SessionDriver::start() {
  std::int32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<std::int32_t>(sessions_.size());
    sessions_.emplace_back();
  }
  Session& s = sessions_[static_cast<std::size_t>(slot)];
  s.uid = static_cast<std::uint64_t>(started_++);
  s.turns = std::min(turns_.sample(turns_rng_), spec::kMaxTurns);
  s.next_turn = 0;
  s.history.clear();  // the vectors keep their capacity: a reused slot allocates nothing
  s.history_key.clear();
  s.stream.clear();
  s.stream_whole = false;  // the first turn takes the general path
  s.keys.clear();
  s.active = true;
  s.measured = false;
  // A shared system prompt's length is drawn from its own stream (seeded by its index), so every session using it
  // sees the same prompt with nothing stored per prompt; 0 = every session its own.
  if (spec_.system_prompts > 0) {
    const auto group = static_cast<std::uint64_t>(
        boost::random::uniform_int_distribution<std::int64_t>(0, spec_.system_prompts - 1)(pick_rng_));
    s.system_key = KvBlockManager::chain_hash(0x5157E3, group);
    if (reference_) {
      RandomEngine sys = rng_stream(seed_, "session_system_prompt", group);
      s.system_len = system_.sample(sys);
      peak_active_ = std::max(peak_active_, active());
      return slot;
    }
    // The recently used prompts' lengths and full-block hashes are kept (a few slots, by index): a session starts
    // from them instead of seeding a stream and hashing its prompt again.
    if (prompts_.empty()) prompts_.resize(static_cast<std::size_t>(std::min<std::int64_t>(spec_.system_prompts, 64)));
    SystemPrompt& p = prompts_[group % prompts_.size()];
    if (!p.used || p.group != group) {
      p.used = true;
      p.group = group;
      RandomEngine sys = rng_stream(seed_, "session_system_prompt", group);
      p.len = system_.sample(sys);
      if (prefix_caching_) {
        pieces_.assign(1, Piece{s.system_key, p.len, 0});
        p.keys.clear();
        extend_hashes(pieces_, 0, p.len / block_size_, p.keys);
      }
    }
    s.system_len = p.len;
    if (prefix_caching_ && p.len > 0) {  // the stream so far: the prompt, hashed
      s.stream.assign(1, Piece{s.system_key, p.len, 0});
      s.keys = p.keys;
    }
  } else {
    s.system_key = piece_key(s.uid, -1, 2);
    RandomEngine sys = rng_stream(seed_, "session_system_prompt", (1ULL << 62) + s.uid);  // a stream of its own
    s.system_len = system_.sample(sys);
  }
  peak_active_ = std::max(peak_active_, active());
  return slot;
}

SessionTurnDraw SessionDriver::draw_turn(std::int32_t slot) {
  Session& s = sessions_[static_cast<std::size_t>(slot)];
  LLMSIM_CHECK(s.active && s.next_turn < s.turns, "a turn drawn for a session that has had them all");
  SessionTurnDraw d;
  d.turn = static_cast<std::int32_t>(std::min<std::int64_t>(s.next_turn, INT32_MAX));
  ++s.next_turn;
  if (s.measured) ++measured_turns_;
  s.user = user_.sample(user_rng_);
  s.output = output_.sample(output_rng_);
  if (spec_.max_output_tokens > 0) s.output = std::min(s.output, spec_.max_output_tokens);
  // The chat client's rule (spec::turns_to_drop): the oldest whole turns go until the prompt and its reply fit.
  const std::size_t drop = spec::turns_to_drop(s.history, s.system_len, s.user, s.output, max_len_);
  d.dropped_turns = static_cast<std::int64_t>(drop);
  dropped_turns_ += d.dropped_turns;
  std::int64_t input = s.system_len + s.user;
  for (std::size_t k = drop; k < s.history.size(); ++k) input += s.history[k].user + s.history[k].output;
  std::int64_t output = s.output;
  // Still too long without any history: workload.too_long, as for any request (clip: the prompt first).
  if (max_len_ > 0 && input + output > max_len_) {
    if (too_long_ == spec::TooLongPolicy::reject) {
      d.too_long = true;
    } else {
      input = std::min(input, max_len_ - 1);
      output = std::min(output, max_len_ - input);
      d.clipped = true;
    }
  }
  d.input = input;
  d.output = output;
  s.output = output;  // the history keeps the reply as sent
  if (prefix_caching_ && !d.too_long) {
    s.user_key = piece_key(s.uid, s.next_turn - 1, 0);
    s.output_key = piece_key(s.uid, s.next_turn - 1, 1);
    hash_blocks(s, drop, input, output, !d.clipped);
    d.keys = &s.keys;
  }
  return d;
}

void SessionDriver::extend_hashes(const std::vector<Piece>& pieces, std::int64_t kept, std::int64_t blocks,
                                  std::vector<std::uint64_t>& keys) const {
  // Blocks [kept, blocks) of the stream `pieces` (their `before` hashes set), after the `kept` already in `keys`.
  // Block k's key names the tokens up to its end, (k + 1)·B: the pieces before the one it ends in (their hash, which
  // covers their lengths), that piece's key and how far into it the block ends — what vLLM's parent-chained block
  // hash names, with one mix per block and none depending on the block before. It also fixes k (the lengths before
  // plus the offset), so it is the cache key as it stands: equal keys mean equal blocks 0..k, as the cache needs.
  const std::int64_t B = block_size_;
  keys.resize(static_cast<std::size_t>(blocks));
  std::size_t p = 0;
  std::int64_t start = 0;  // the first token of pieces[p]
  for (std::int64_t k = kept; k < blocks;) {
    const std::int64_t end = (k + 1) * B;
    while (start + pieces[p].len < end) start += pieces[p++].len;
    // The blocks that end inside pieces[p] (at least block k): one mix each, the piece read once.
    const std::int64_t stop = std::min(blocks, (start + pieces[p].len) / B);
    const std::uint64_t before = pieces[p].before;
    std::uint64_t v = pieces[p].key + static_cast<std::uint64_t>(end - start) * kOffsetMul;
    for (; k < stop; ++k, v += static_cast<std::uint64_t>(B) * kOffsetMul)
      keys[static_cast<std::size_t>(k)] = KvBlockManager::mix64(before ^ v);
  }
}

void SessionDriver::set_before(std::vector<Piece>& pieces, std::size_t from) {
  for (std::size_t i = std::max<std::size_t>(from, 1); i < pieces.size(); ++i)
    pieces[i].before = KvBlockManager::mix64(pieces[i - 1].before ^ (pieces[i - 1].key + static_cast<std::uint64_t>(pieces[i - 1].len) * 0x9FB21C651E98DF25ULL));
}

void SessionDriver::hash_blocks(Session& s, std::size_t drop, std::int64_t input, std::int64_t output, bool whole) {
  const std::int64_t blocks = (input + output) / block_size_;
  // The common case: the last hashed turn completed, nothing was cut from either prompt and no further turn dropped,
  // so this stream is the last one (which ends with that turn's message and reply, now the history's last turn) and
  // this turn's message and reply — what the general path below would build, compare and keep, without rebuilding it.
  if (!reference_ && s.stream_whole && whole && drop == s.stream_drop && s.history.size() == s.stream_turns + 1 &&
      s.history.back().output > 0) {
    const std::size_t same = s.stream.size();
    const std::int64_t kept =
        std::min<std::int64_t>(s.stream_tokens / block_size_, static_cast<std::int64_t>(s.keys.size()));
    if (s.user > 0) s.stream.push_back({s.user_key, s.user});
    s.stream.push_back({s.output_key, output});
    set_before(s.stream, same);
    extend_hashes(s.stream, kept, blocks, s.keys);
    s.stream_turns = s.history.size();
    s.stream_tokens = input + output;
    return;
  }
  // The token stream as pieces: system prompt, kept turns (message, reply), the new message — cut at `input` tokens
  // (a clipped prompt) — then this turn's reply.
  pieces_.clear();
  std::int64_t left = input;
  auto add = [&](std::uint64_t key, std::int64_t len) {
    const std::int64_t n = std::min(len, left);
    if (n > 0) pieces_.push_back({key, n});
    left -= n;
  };
  add(s.system_key, s.system_len);
  for (std::size_t k = drop; k < s.history.size(); ++k) {
    add(s.history_key[2 * k], s.history[k].user);
    add(s.history_key[2 * k + 1], s.history[k].output);
  }
  add(s.user_key, s.user);
  pieces_.push_back({s.output_key, output});
  // Full blocks of prompt + reply: each block's hash names every token up to its end (the pieces before the one it
  // ends in, that piece, how far in), as vLLM's parent-chained hash_block_tokens does. A block's hash depends only on
  // the tokens up to its end, so the blocks inside the part this stream shares with the last hashed one (the same
  // pieces, and the first tokens of a piece cut shorter or grown longer) keep their hashes: a turn that follows a
  // completed one hashes only the last partial block of the history, its new message and its reply. A dropped
  // turn (truncation) changes the stream right after the system prompt, so everything after it is hashed anew.
  std::int64_t shared = 0;  // tokens at the start of both streams
  std::size_t same = 0;     // pieces at the start of both streams
  for (std::size_t i = 0; !reference_ && i < std::min(pieces_.size(), s.stream.size()); ++i) {
    if (pieces_[i] == s.stream[i]) {
      shared += pieces_[i].len;
      ++same;
      continue;
    }
    if (pieces_[i].key == s.stream[i].key) shared += std::min(pieces_[i].len, s.stream[i].len);
    break;
  }
  // The hash of the pieces before each piece: the shared pieces keep theirs, the rest are hashed (one mix each).
  for (std::size_t i = 0; i < same; ++i) pieces_[i].before = s.stream[i].before;
  pieces_[0].before = 0;
  set_before(pieces_, same);
  const std::int64_t kept = std::min<std::int64_t>(shared / block_size_, static_cast<std::int64_t>(s.keys.size()));
  extend_hashes(pieces_, kept, blocks, s.keys);
  s.stream.swap(pieces_);  // the scratch keeps the old stream's capacity: nothing allocated in the steady state
  s.stream_whole = whole;
  s.stream_drop = drop;
  s.stream_turns = s.history.size();
  s.stream_tokens = input + output;
}

void SessionDriver::turn_ended(std::int32_t slot, bool completed) {
  Session& s = sessions_[static_cast<std::size_t>(slot)];
  LLMSIM_CHECK(s.active, "a turn ended for a session that is not active");
  if (!completed) return;
  s.history.push_back({s.user, s.output});
  if (prefix_caching_) {  // the content keys of its message and reply (hashed at its draw), for the next turns'
    s.history_key.push_back(s.user_key);
    s.history_key.push_back(s.output_key);
  }
}

void SessionDriver::end(std::int32_t slot) {
  Session& s = sessions_[static_cast<std::size_t>(slot)];
  LLMSIM_CHECK(s.active, "ending a session that is not active");
  s.active = false;
  if (s.measured) {
    --measured_active_;
    ++measured_cut_;
  }
  free_.push_back(slot);
}

void SessionDriver::mark_measured(std::int32_t slot) {
  Session& s = sessions_[static_cast<std::size_t>(slot)];
  LLMSIM_CHECK(s.active && !s.measured && s.next_turn == 1, "a session marked measured twice or after its first turn");
  s.measured = true;
  ++measured_started_;
  ++measured_active_;
  ++measured_turns_;  // its first turn, drawn before the run knew it was measured
}

std::size_t SessionDriver::state_bytes() const noexcept {
  std::size_t bytes = sessions_.capacity() * sizeof(Session) + free_.capacity() * sizeof(std::int32_t) +
                      pieces_.capacity() * sizeof(Piece);
  for (const Session& s : sessions_)
    bytes += s.history.capacity() * sizeof(spec::SessionTurn) + s.history_key.capacity() * sizeof(std::uint64_t) +
             s.stream.capacity() * sizeof(Piece) + s.keys.capacity() * sizeof(std::uint64_t);
  for (const SystemPrompt& p : prompts_)
    bytes += sizeof(SystemPrompt) + p.keys.capacity() * sizeof(std::uint64_t);
  return bytes;
}

std::optional<double> SessionDriver::next_turn_time(std::int32_t slot, double now_s) {
  Session& s = sessions_[static_cast<std::size_t>(slot)];
  LLMSIM_CHECK(s.active, "the next turn of a session that is not active");
  if (s.next_turn >= s.turns) {
    s.active = false;
    ++finished_;
    if (s.measured) {
      --measured_active_;
      ++measured_finished_;
    }
    free_.push_back(slot);
    return std::nullopt;
  }
  return now_s + static_cast<double>(think_.sample(think_rng_)) * 1e-3;
}

}  // namespace llmsim::engine::detail
