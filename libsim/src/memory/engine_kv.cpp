// The plan's KV-cache groups as the engine charges a sequence in them (engine_kv.hpp).
#include "llmsim/memory/engine_kv.hpp"

namespace llmsim::memory {

KvLayout engine_kv_layout(const MemoryPlan& plan, const spec::EngineConfig& engine) {
  KvLayout l;
  const bool credit =
      engine.policy == spec::SchedulerPolicy::vllm && plan.kv_sliding_groups > 0 && plan.kv_sliding_window > 0;
  l.sliding_groups = credit ? plan.kv_sliding_groups : 0;
  l.full_groups = plan.kv_cache_groups - l.sliding_groups;
  l.window = credit ? plan.kv_sliding_window : 0;
  return l;
}

}  // namespace llmsim::memory
