#include "llmsim/spec/prompt_pool.hpp"

#include "llmsim/core/error.hpp"

namespace llmsim::spec {

void PromptPool::validate(const std::string& path) const {
  Problems p;
  if (groups < 1 || groups > kMaxPoolPrompts)
    p.add(path + ".groups", "must be in 1..1e7 system prompts, got " + std::to_string(groups));
  if (prompts_per_group < 1 || prompts_per_group > kMaxPoolPrompts)
    p.add(path + ".prompts_per_group", "must be in 1..1e7 prompts, got " + std::to_string(prompts_per_group));
  else if (groups >= 1 && groups <= kMaxPoolPrompts && groups * prompts_per_group > kMaxPoolPrompts)
    p.add(path + ".prompts_per_group", "groups x prompts_per_group must be at most 1e7 prompts, got " +
                                           std::to_string(groups) + " x " + std::to_string(prompts_per_group));
  if (system_tokens < 0 || system_tokens > 1'000'000'000)
    p.add(path + ".system_tokens", "must be in 0..1e9 tokens (0 = no shared system prompt), got " +
                                       std::to_string(system_tokens));
  p.throw_if_any();
}

}  // namespace llmsim::spec
