// The chat endpoint's render barrier: which requests pay it and how much (perf/chat_render.hpp; sources there and in
// docs/cost-model.md "The chat endpoint's render barrier").
#include "llmsim/perf/chat_render.hpp"

#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/runtime_version.hpp"

namespace llmsim::perf {

std::string to_string(ChatRendering r) {
  switch (r) {
    case ChatRendering::jinja: return "jinja";
    case ChatRendering::harmony: return "harmony";
    case ChatRendering::own_encoder: return "own-encoder";
  }
  return "jinja";
}

ChatRendering chat_rendering(const spec::ModelSpec& model) {
  // vllm/entrypoints/openai/serving_chat.py: `self.use_harmony = model_config.hf_config.model_type == "gpt_oss"`
  // (from 0.10.1): gpt-oss's prompt is rendered by openai-harmony, never by a Jinja template.
  if (model.model_type == "gpt_oss") return ChatRendering::harmony;
  // DeepSeek-V3.2's checkpoint ships its encoder as Python (encoding/), no Jinja chat template; vLLM 0.13 serves it
  // with `--tokenizer-mode deepseek_v32`.
  if (model.model_type == "deepseek_v32") return ChatRendering::own_encoder;
  return ChatRendering::jinja;
}

double chat_template_parse_s(const std::optional<std::string>& release) {
  switch (spec::chat_template_parse(release)) {
    case spec::ChatTemplateParse::content_format_detection: return kChatTemplateParseS;
    case spec::ChatTemplateParse::template_kwargs_filter: return kChatTemplateKwargsS;
    case spec::ChatTemplateParse::none: return 0;
  }
  return 0;
}

double chat_render_barrier_s(const spec::ResolvedScenario& rs, std::string* why) {
  const auto& s = rs.scenario;
  const auto say = [&](const std::string& text) {
    if (why) *why = text;
    return 0.0;
  };
  if (s.workload.endpoint != spec::Endpoint::chat_completions) return say("the workload sends to /v1/completions");
  if (s.engine.resolved_runtime() != spec::Runtime::vllm_v1) return say("the runtime is not vLLM V1");
  if (!spec::chat_template_parsed_per_request(s.engine.runtime_release))
    return say("the vLLM release (" + s.engine.runtime_release.value_or("unnamed") +
               ") does not parse the chat template per request");
  if (!s.engine.api_server || s.engine.synthetic_service || spec::offline_workload(s.workload) ||
      s.engine.policy == spec::SchedulerPolicy::static_batching)
    return say("not served through the API server");
  const ChatRendering r = chat_rendering(rs.model);
  if (r != ChatRendering::jinja) return say("the model renders with " + to_string(r) + ", not a Jinja template");
  if (why) *why = "vLLM " + *s.engine.runtime_release + " parses the Jinja chat template on every chat request";
  return chat_template_parse_s(s.engine.runtime_release);
}

}  // namespace llmsim::perf
