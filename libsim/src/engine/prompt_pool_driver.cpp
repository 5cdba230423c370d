#include "prompt_pool_driver.hpp"

#include <numeric>

#include <boost/random/uniform_int_distribution.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/engine/kv_block_manager.hpp"

namespace llmsim::engine::detail {

namespace {
// Content ids of the three kinds of block (salts keep them apart from each other and from sessions' pieces).
std::uint64_t content(std::uint64_t salt, std::uint64_t owner, std::int64_t k) {
  return KvBlockManager::chain_hash(KvBlockManager::chain_hash(salt, owner), static_cast<std::uint64_t>(k));
}
constexpr std::uint64_t kSystemSalt = 0x9001'5157, kPromptSalt = 0x9001'0A5C, kReplySalt = 0x9001'4E91;
}  // namespace

PromptPoolDriver::PromptPoolDriver(const spec::PromptPool& pool, std::uint64_t seed, int block_size)
    : pool_(pool), block_size_(block_size) {
  pool_.validate("workload.prompt_pool");
  LLMSIM_CHECK(block_size > 0, "prompt pool driver without a block size");
  order_.resize(static_cast<std::size_t>(pool_.size()));
  std::iota(order_.begin(), order_.end(), std::int64_t{0});
  if (pool_.shuffle) {  // Fisher-Yates, as Python's random.shuffle (its own stream: other draws keep theirs)
    auto rng = rng_stream(seed, "prompt_pool");
    for (std::size_t i = order_.size(); i > 1; --i) {
      const auto j = boost::random::uniform_int_distribution<std::size_t>(0, i - 1)(rng);
      std::swap(order_[i - 1], order_[j]);
    }
  }
}

std::int64_t PromptPoolDriver::next_prompt() {
  const std::int64_t p = order_[static_cast<std::size_t>(drawn_ % pool_.size())];
  ++drawn_;
  return p;
}

const std::vector<std::uint64_t>& PromptPoolDriver::keys(std::int64_t prompt, std::int64_t input, std::int64_t output,
                                                         std::uint64_t serial) {
  const std::int64_t B = block_size_;
  const std::int64_t blocks = (input + output) / B;
  keys_.resize(static_cast<std::size_t>(blocks));
  const auto group = static_cast<std::uint64_t>(group_of(prompt));
  std::uint64_t parent = 0;
  for (std::int64_t k = 0; k < blocks; ++k) {
    const std::int64_t end = (k + 1) * B;  // the block's content is fixed by the tokens up to its end
    const std::uint64_t c = end <= pool_.system_tokens ? content(kSystemSalt, group, k)
                            : end <= input           ? content(kPromptSalt, static_cast<std::uint64_t>(prompt), k)
                                                     : content(kReplySalt, serial, k);
    parent = KvBlockManager::chain_hash(parent, c);
    keys_[static_cast<std::size_t>(k)] = KvBlockManager::block_key(parent, k);
  }
  return keys_;
}

}  // namespace llmsim::engine::detail
