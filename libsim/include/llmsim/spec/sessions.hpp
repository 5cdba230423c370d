#pragma once
// Session workloads (workload.sessions): conversations instead of independent requests. Sessions arrive by
// workload.arrival (its rate is in sessions/s; a daily_profile scales it like any Poisson rate); each session has
// a number of turns, a system prompt (one of `system_prompts` shared ones, or its own), and per turn the user's new
// tokens, the reply's tokens and the think time before the next turn (the client waits for the reply first).
//
// Turn k's prompt is the system prompt + every earlier completed turn's user tokens and reply + turn k's new
// message. The truncation rule (a chat client's): while system + history + new message + this reply's tokens
// exceed max_model_len, the oldest whole turn (user message and reply) is dropped; what is still too long then
// follows workload.too_long like any request (clip or reject). A turn that does not complete (timed out, failed,
// rejected) adds nothing to the history: the client shows an error and the user's next turn asks anew.
#include <cstdint>
#include <string>
#include <vector>

#include "llmsim/spec/workload_lengths.hpp"

namespace llmsim::spec {

/// Named session shapes (session_preset): "chat", "agent", "reasoning", "rag" (docs/engine.md cites their sources).
inline const std::vector<std::string> kSessionPresets{"chat", "agent", "reasoning", "rag"};
/// Largest number of distinct shared system prompts (each is drawn on use; nothing is stored per prompt).
inline constexpr std::int64_t kMaxSystemPrompts = 1'000'000'000;
/// Most turns one session may have: its history is kept while it is active (O(turns) per active session).
inline constexpr std::int64_t kMaxTurns = 100'000;

struct SessionSpec {
  std::string preset;  ///< the preset it started from ("" = none), kept for the scenario's JSON
  LengthDist turns = LogNormalLength{4.0, 0.8};        ///< turns per session (>= 1; capped at kMaxTurns)
  LengthDist system_tokens = FixedLength{600};         ///< a system prompt's length (drawn once per prompt)
  /// Shared system prompts: each session uses one of this many (uniformly); 0 = every session its own.
  std::int64_t system_prompts = 1;
  LengthDist user_tokens = LogNormalLength{100, 1.0};  ///< a turn's new user message
  LengthDist output_tokens = LogNormalLength{250, 0.8};///< a turn's reply
  LengthDist think_time_ms = LogNormalLength{20000, 1.0};  ///< reply to next turn (ms; >= 1)
  std::int64_t max_output_tokens = 0;  ///< thinking budget: each reply capped at this (0 = none)

  /// Every field; ConfigError naming each bad one under `path` (e.g. "workload.sessions.turns.mean").
  void validate(const std::string& path = "workload.sessions") const;
};

/// The preset `name` (kSessionPresets); ConfigError at `path` listing the valid names otherwise.
SessionSpec session_preset(const std::string& name, const std::string& path = "workload.sessions.preset");

/// One kept turn of a session's history (tokens as sent and received).
struct SessionTurn {
  std::int64_t user = 0, output = 0;
};
/// The truncation rule above, on its own: how many of the oldest `history` turns a prompt drops so that
/// system + kept history + user + output <= max_len (max_len <= 0: no limit). Returns history.size() when even
/// the newest turn does not fit (the prompt is then system + user, which too_long handles).
std::size_t turns_to_drop(const std::vector<SessionTurn>& history, std::int64_t system, std::int64_t user,
                          std::int64_t output, std::int64_t max_len);

}  // namespace llmsim::spec
