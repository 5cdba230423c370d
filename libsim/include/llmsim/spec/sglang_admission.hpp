#pragma once
// SGLang's admission of requests that ignore EOS with the radix cache off (PrefillAdder.add_one_req_ignore_eos,
// python/sglang/srt/managers/schedule_policy.py), by release. `add_one_req` sends a request there when
// `req.sampling_params.ignore_eos and tree_cache.disable` (--disable-radix-cache): instead of reserving
// min(max_new_tokens, 4096) x new_token_ratio of every running request's future output, it walks the running
// requests, the batch being formed and the candidate in order of tokens left (max_new_tokens - output so far; x 1.0
// for an ignore_eos request) and admits only if the pool never runs dry as they finish: at the i-th of n, with
// bs = n - i still running, free - candidate's input + sum of the tokens the earlier ones held - left x bs must stay
// positive. The engine's walk is engine/schedule_sglang_eos.cpp; this is the rule of which walk a release has.
#include <cstdint>
#include <optional>
#include <string_view>

#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/workload.hpp"

namespace llmsim::spec {

enum class SglangEosWalk : std::uint8_t {
  none,         ///< not taken: another policy, the radix cache on, or requests that stop at EOS
  next_finish,  ///< 0.3.x-0.4.5: the i-th entry is charged the *next* entry's tokens left, bs = n - i; fails at <= 0
  own_finish,   ///< 0.4.6+: its own tokens left; fails at <= IGNORE_EOS_RESERVE_TOKENS (1) x bs
};

struct SglangEosAdmission {
  SglangEosWalk walk = SglangEosWalk::none;
  /// 0.4.6+: "Early exit if no enough tokens for the input tokens": the candidate's uncached input must fit both the
  /// free pool less this batch's inputs and the ratio-based remainder (rem_total_tokens).
  bool early_exit = false;
  /// 0.4.8+ (sglang#7434): the walk takes the candidate's extend_input_len (a retracted request's prompt + output
  /// so far) off the free pool, not its original prompt's length.
  bool extend_in_walk = false;
  /// Tokens each still-running request keeps in hand at every finish (IGNORE_EOS_RESERVE_TOKENS; 0 before 0.4.6).
  std::int64_t reserve_per_request = 0;
};

/// The walk `engine` (policy sglang, its runtime_release) runs for `workload`'s requests: none unless the policy is
/// sglang, prefix caching (the radix cache) is off and workload.ignore_eos. An unversioned SGLang runtime takes the
/// newest line modelled (0.4.8+).
SglangEosAdmission sglang_eos_admission(const EngineConfig& engine, const Workload& workload);

/// Whether a benchmark client's command line sends ignore_eos with every request: SGLang's `bench_serving`
/// (`python -m sglang.bench_serving`, bench_serving.py) unless --disable-ignore-eos (sglang#824, 0.2.x on); vLLM's
/// client (`vllm bench serve`, benchmarks/benchmark_serving.py) only with --ignore-eos. Empty for any other
/// program. The words are scanned, not parsed, so a command written as a template ("--dataset-name {a|b}") is read.
std::optional<bool> client_ignores_eos(std::string_view command_line);

}  // namespace llmsim::spec
