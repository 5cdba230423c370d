// vLLM 0.5.4-0.5.5's running-queue order under chunked prefill (spec/v0_running_order.hpp).
#include "llmsim/spec/v0_running_order.hpp"

#include "llmsim/core/error.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "release_order.hpp"

namespace llmsim::spec {

bool v0_prefills_ahead_of_decodes(const std::optional<std::string>& release) {
  if (!release || !is_engine_version(*release)) return false;
  const EngineVersion v = parse_engine_version(*release);
  if (v.engine != "vllm") return false;
  // vllm#6867 (0.5.4) made the append order the walk order; vllm#7874 (merged 2024-09-02, first in 0.6.0) put the
  // new prompts behind the decodes.
  return !detail::release_before(v.numbers, {0, 5, 4}) && detail::release_before(v.numbers, {0, 6, 0});
}

}  // namespace llmsim::spec
