#pragma once
// Helpers shared by the session and host-KV-tier tests: a fixed-length session workload, the message of a scenario the engine refuses, and the
// conservation of a session workload's turns (every measured turn counted once, by outcome and by turn index).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "engine_test_util.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/simulator.hpp"

namespace llmsim::test {

/// The ConfigError's message when simulating `j` is refused, "" when it runs.
inline std::string config_error(const Json& j) {
  try {
    (void)engine::simulate(make(j));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

/// A session workload of fixed lengths: system S, user U and reply O tokens, `turns` turns, think time `think_ms`,
/// sessions arriving by `arrival`, `n` turns in all, no warm-up.
inline Json fixed_sessions(std::int64_t S, std::int64_t U, std::int64_t O, std::int64_t turns, std::int64_t think_ms,
                           const Json& arrival, std::int64_t n, std::int64_t system_prompts = 0) {
  const auto fixed = [](std::int64_t v) { return Json{{"dist", "fixed"}, {"value", v}}; };
  return {{"arrival", arrival},
          {"sessions",
           {{"turns", fixed(turns)},
            {"system_tokens", fixed(S)},
            {"system_prompts", system_prompts},
            {"user_tokens", fixed(U)},
            {"output_tokens", fixed(O)},
            {"think_time_ms", fixed(think_ms)}}},
          {"num_requests", n},
          {"warmup_requests", 0}};
}

/// Turns by index add up to the run's completed and lost requests, and the sessions' counts are of one population
/// (the measured sessions): every started one finished or is still in progress, none counted twice.
inline void check_turns_conserved(const metrics::Summary& s) {
  REQUIRE(s.sessions);
  CHECK(s.sessions->finished >= 0);
  CHECK(s.sessions->in_progress >= 0);
  CHECK(s.sessions->finished + s.sessions->in_progress == s.sessions->started);
  std::int64_t completed = 0, lost = 0;
  for (const auto& t : s.sessions->by_turn) {
    completed += t.completed;
    lost += t.lost;
  }
  CHECK(completed == s.completed_requests);
  CHECK(lost == s.failed_requests + s.timed_out_requests + s.rejected_requests);
}

}  // namespace llmsim::test
