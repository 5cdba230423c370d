#pragma once
// A fixed pool of prompts sent over and over (workload.prompt_pool): the load kubernetes-sigs/inference-perf's
// `shared_prefix` data generator makes (inference_perf/datagen/shared_prefix_datagen.py, releases up to v0.3.0,
// when it had no multi-turn mode). It draws `groups` system prompts and, under each, `prompts_per_group`
// questions; every prompt is its group's system prompt + its own question. The pool is shuffled once
// (random.shuffle), then request n of a load stage sends prompt n mod pool size (get_request(n)). So a prompt comes
// back every pool-size requests: with prefix caching its blocks hit whenever they survived that long in the cache,
// and the system prompt's blocks hit across the prompts of its group.
//
// What the pool fixes is which tokens a request's prompt starts with, not its length: the request's prompt and
// reply lengths are drawn from workload.input_tokens / output_tokens (or a replayed trace's rows) as usual, and its
// first `system_tokens` tokens are its group's. (inference-perf's prompts have a fixed length: give input_tokens
// as a fixed length, system prompt + question.) The reply's blocks are cached too (vLLM V1 caches every full block
// it computes) under keys of their own, so they compete for the cache as in vLLM and never hit.
#include <cstdint>
#include <string>

namespace llmsim::spec {

/// Largest pool (groups × prompts_per_group): each prompt's place in the shuffled order is kept (8 bytes each).
inline constexpr std::int64_t kMaxPoolPrompts = 10'000'000;

struct PromptPool {
  std::int64_t groups = 10;             ///< system prompts (inference-perf num_groups; default 10)
  std::int64_t prompts_per_group = 10;  ///< questions per system prompt (num_prompts_per_group; default 10)
  std::int64_t system_tokens = 100;     ///< a system prompt's tokens: the part a group's prompts share (>= 0)
  bool shuffle = true;                  ///< the order is shuffled once (workload.seed); false = group by group

  std::int64_t size() const noexcept { return groups * prompts_per_group; }
  /// Every field; ConfigError naming each bad one under `path` (e.g. "workload.prompt_pool.groups").
  void validate(const std::string& path = "workload.prompt_pool") const;
};

}  // namespace llmsim::spec
