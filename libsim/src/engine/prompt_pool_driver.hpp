#pragma once
// The prompt pool's requests (private to the engine; spec/prompt_pool.hpp, docs/engine.md "Prompt pools"): which
// pool prompt request n sends, and the cache keys of its blocks. The pool's order is shuffled once; request n sends
// prompt order[n mod size]. A block's content id names what it holds — a group's system prompt (block k ends inside
// it), a pool prompt (it ends inside that prompt's question), or this request's reply (it ends past the prompt) —
// and its key chains the content ids from the first block as vLLM's block hashes do (KvBlockManager::chain_hash),
// so two requests share a block exactly when they share every token up to its end. Memory: the order (8 bytes a
// prompt) and one request's keys.
#include <cstdint>
#include <vector>

#include "llmsim/core/rng.hpp"
#include "llmsim/spec/prompt_pool.hpp"

namespace llmsim::engine::detail {

class PromptPoolDriver {
 public:
  /// `block_size` > 0: the engine's block (the keys' granularity). ConfigError (workload.prompt_pool...) for an
  /// invalid pool.
  PromptPoolDriver(const spec::PromptPool& pool, std::uint64_t seed, int block_size);

  /// The pool prompt the next request sends (advances the request counter); then keys() for its blocks.
  std::int64_t next_prompt();
  /// The cache keys (KvBlockManager::block_key of each chained hash) of the full blocks of a request of pool prompt
  /// `prompt` with `input` prompt and `output` reply tokens; `serial` tells requests' replies apart. The returned
  /// buffer is reused by the next call.
  const std::vector<std::uint64_t>& keys(std::int64_t prompt, std::int64_t input, std::int64_t output,
                                         std::uint64_t serial);
  /// The group (system prompt) of pool prompt `prompt`.
  std::int64_t group_of(std::int64_t prompt) const noexcept { return prompt / pool_.prompts_per_group; }
  /// Requests drawn so far.
  std::int64_t drawn() const noexcept { return drawn_; }
  const std::vector<std::int64_t>& order() const noexcept { return order_; }

 private:
  spec::PromptPool pool_;
  int block_size_;
  std::vector<std::int64_t> order_;
  std::vector<std::uint64_t> keys_;
  std::int64_t drawn_ = 0;
};

}  // namespace llmsim::engine::detail
