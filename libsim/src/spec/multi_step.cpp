// vLLM V0's multi-step scheduling: which engines take `--num-scheduler-steps` (spec/multi_step.hpp).
#include "llmsim/spec/multi_step.hpp"

#include "llmsim/core/error.hpp"
#include "llmsim/spec/runtime_version.hpp"

namespace llmsim::spec {

bool multi_step_flag_ignored(const EngineConfig& e) {
  if (!e.multi_step_stream_outputs || e.num_scheduler_steps > 1) return false;
  if (e.runtime_release) {
    const auto v = parse_engine_version(*e.runtime_release);
    return v.engine == "vllm" && runtime_for_version(v).v0_multi_step;
  }
  return e.policy != SchedulerPolicy::sglang && e.resolved_runtime() == Runtime::vllm_v0;
}

MultiStep multi_step_for(const EngineConfig& e, const std::string& path) {
  MultiStep m;
  m.steps = e.num_scheduler_steps;
  if (m.steps <= 1) {
    // The flag streams a multi-step window's tokens; without a window it changes nothing. vLLM's parser has it only
    // in the releases with multi-step (vllm#8335, 0.6.x, until vllm#22138 removed both after 0.10.0), and there
    // accepts and ignores it without --num-scheduler-steps: so does llmsim (with a warning,
    // analysis::scenario_warnings), since a key whose value changes nothing is no reason to refuse. Where no such
    // parser exists (V1 named without a release, SGLang, a release outside 0.6-0.10) it is refused, naming it.
    if (e.multi_step_stream_outputs && !multi_step_flag_ignored(e)) {
      std::string field = path;
      if (const auto at = field.rfind("num_scheduler_steps"); at != std::string::npos)
        field.replace(at, std::string("num_scheduler_steps").size(), "multi_step_stream_outputs");
      throw ConfigError(field, "streams the tokens of a multi-step window, and this engine has no multi-step "
                               "scheduling (engine.num_scheduler_steps " + std::to_string(m.steps) + "); got " +
                               (*e.multi_step_stream_outputs ? "true" : "false") +
                               " (only vLLM V0 releases from 0.6.0 to 0.10.0 take --multi-step-stream-outputs; "
                               "leave the flag out)");
    }
    return m;
  }
  const std::string n = std::to_string(m.steps);
  const Runtime rt = e.resolved_runtime();
  if (e.policy == SchedulerPolicy::sglang || rt == Runtime::sglang)
    throw ConfigError(path, "SGLang has no multi-step scheduling (--num-scheduler-steps is vLLM V0's, 0.6.0-0.10.0); "
                            "got " + n + " (leave it at 1)");
  if (e.policy == SchedulerPolicy::vllm)
    throw ConfigError(path, "vLLM V1 (policy 'vllm') has no multi-step scheduling: --num-scheduler-steps is the V0 "
                            "engine's (vLLM 0.6.0-0.10.0; 0.8-0.10 fall back to V0 for it when no policy is named); "
                            "got " + n + " (set engine.policy to 'vllm-v0', or engine.runtime to a release from "
                            "vllm==0.6.0 to vllm==0.10.0 without a policy, or leave it at 1)");
  if (e.policy == SchedulerPolicy::static_batching)
    throw ConfigError(path, "multi-step scheduling is vLLM V0's continuous batching; policy 'static' does not take "
                            "it (got " + n + ")");
  // The release first: a release without the flag is refused for that, whatever scheduler its defaults chose.
  if (e.runtime_release) {
    const auto v = parse_engine_version(*e.runtime_release);
    if (v.engine != "vllm" || !runtime_for_version(v).v0_multi_step)
      throw ConfigError(path, "'" + *e.runtime_release + "' has no --num-scheduler-steps: vLLM V0 ran multi-step "
                              "scheduling from 0.6.0 (vllm#7000) until vllm#22138 removed it after 0.10.0; got " + n);
  }
  if (e.policy == SchedulerPolicy::chunked)
    throw ConfigError(path, "multi-step with chunked prefill is not modelled: vLLM 0.6.3's multi-step + chunked "
                            "path (vllm#8645) schedules whole prompts within the token budget (it does not chunk "
                            "them) and runs prefills and decodes n steps together; got " + n + " with policy 'chunked'" +
                            (e.policy_given ? std::string(" (turn chunked prefill off, or leave num_scheduler_steps at 1)")
                                            : std::string(", which the release turned on by itself for a context above "
                                                          "32K tokens (vllm#6666; set engine.max_model_len to 32768 or "
                                                          "less, or engine.policy to 'vllm-v0' as --enable-chunked-"
                                                          "prefill false does, or leave num_scheduler_steps at 1)")));
  if (rt != Runtime::vllm_v0)
    throw ConfigError(path, "multi-step scheduling arrived with vLLM 0.6.0 (vllm#7000); runtime '" + to_string(rt) +
                            "' is an earlier V0 engine (got " + n + "; name a release from vllm==0.6.0 to 0.10.0)");
  if (e.speculative)
    throw ConfigError(path, "vLLM does not run speculative decoding with multi-step scheduling (got " + n +
                            " with engine.speculative set)");
  if (e.runtime_release)
    m.stream_each_step = runtime_for_version(parse_engine_version(*e.runtime_release)).v0_multi_step_streams;
  if (e.multi_step_stream_outputs) m.stream_each_step = *e.multi_step_stream_outputs;  // --multi-step-stream-outputs
  return m;
}

}  // namespace llmsim::spec
