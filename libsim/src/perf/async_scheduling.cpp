// vLLM V1's async scheduling: when the engine runs it (vllm/config/vllm.py, VllmConfig.__post_init__'s
// `async_scheduling is None` resolution; vllm#27614 made it the default, vllm#31998 extended it to EAGLE/MTP).
#include "llmsim/perf/async_scheduling.hpp"

#include "llmsim/core/error.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/perf/sglang_overlap.hpp"
#include "llmsim/spec/runtime_version.hpp"

namespace llmsim::perf {

bool async_scheduling(const spec::EngineConfig& engine, int pp,
                      const std::optional<spec::SpeculativeConfig>& speculative) {
  // SGLang's overlap scheduler prices and admits the same way (perf/sglang_overlap.hpp).
  if (runtime_of(engine) == Runtime::sglang && engine.policy == spec::SchedulerPolicy::sglang)
    return sglang_overlap(engine, pp, speculative);
  const bool v1 = runtime_of(engine) == Runtime::vllm_v1 && engine.policy == spec::SchedulerPolicy::vllm;
  // EAGLE/MTP proposers run inside the worker with the padded drafter batch (vllm#31998); the others need the
  // scheduler to see the draft tokens before the next plan, which async scheduling cannot give.
  const bool spec_ok = !speculative || speculative->method == spec::SpeculativeMethod::eagle ||
                       speculative->method == spec::SpeculativeMethod::mtp;
  if (engine.async_scheduling) {
    if (!*engine.async_scheduling) return false;
    const std::string path = "engine.async_scheduling";
    if (!v1) {
      throw ConfigError(path, "async scheduling is vLLM V1's (runtime vllm-v1 with policy 'vllm') or SGLang's "
                              "overlap scheduler (runtime sglang with policy 'sglang'); this engine runs '" +
                                  spec::to_string(runtime_of(engine)) + "' with policy '" +
                                  spec::to_string(engine.policy) + "'");
    }
    if (pp > 1) {
      throw ConfigError(path, "vLLM rejects async scheduling with pipeline parallel (hardware.pp = " +
                                  std::to_string(pp) + ")");
    }
    if (!spec_ok) {
      throw ConfigError(path, "vLLM rejects async scheduling with the '" + spec::to_string(speculative->method) +
                                  "' proposer (EAGLE and MTP only)");
    }
    return true;
  }
  return v1 && pp <= 1 && spec_ok && spec::async_scheduling_by_default(engine.runtime_release);
}

}  // namespace llmsim::perf
