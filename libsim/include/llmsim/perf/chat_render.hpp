#pragma once
// The chat endpoint's render barrier (issue 27; docs/cost-model.md "The chat endpoint's render barrier"). vLLM's API
// server runs every request's handler on one asyncio event loop. A /v1/chat/completions request renders its prompt
// synchronously on that loop (vllm/entrypoints/openai/serving_engine.py `_preprocess_chat`: the content-format
// resolution, the message parse and `apply_hf_chat_template`), then awaits the tokeniser (a one-worker executor, from
// 0.10.2 the AsyncMicrobatchTokenizer), and only its continuation hands the request to the EngineCore
// (`engine_client.generate`). The continuation is queued at the back of the loop's FIFO ready queue, behind the
// front parts of every request the loop received meanwhile: in a burst all N renders run before the first request
// reaches the engine, at light load the wait is one render. The render is short (vllm#51349: 0.3 ms) except in the
// releases that parse the chat template's Jinja source on every request (`env.parse`, no cache): the content-format
// detection of vllm#9919 until vllm#20065 cached it, and the template-kwargs filter of vllm#25794 (0.11.0). vllm#20065
// measured that parse at 6-8 s per 1,000 requests, before the first prompt was processed.
#include <optional>
#include <string>

#include "llmsim/spec/model_spec.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::perf {

/// How vLLM turns a chat request's messages into a prompt.
enum class ChatRendering {
  jinja,        ///< the checkpoint's Hugging Face chat template (tokenizer_config.json / chat_template.jinja)
  harmony,      ///< gpt-oss: openai-harmony's renderer (serving_chat.py `use_harmony` = model_type "gpt_oss")
  own_encoder,  ///< DeepSeek-V3.2: its own Python encoder (vLLM 0.13 `--tokenizer-mode deepseek_v32`; no Jinja)
};
std::string to_string(ChatRendering r);

/// The model's chat rendering, from its Hugging Face model_type (the one rule; every other model renders a Jinja
/// template).
ChatRendering chat_rendering(const spec::ModelSpec& model);

/// vllm#20065's measurement of 0.8.0-0.9.1's content-format detection (parse + AST search of the chat template) per
/// /v1/chat/completions request: 6-8 s of delay before the first of 1,000 requests was processed
/// (Llama-3.1-8B-Instruct's template), the midpoint per request.
inline constexpr double kChatTemplateParseS = 7e-3;

/// 0.11.x's template-kwargs filter (vllm#25794: a new sandboxed environment, `env.parse` and
/// `jinja2.meta.find_undeclared_variables`, whose identifier tracking walks the whole template like Jinja's code
/// generator) over the detection above, on the same template and host: 2.1 (scripts/jinja_parse_bench.py, jinja2 3.1.2,
/// CPU time: a Llama-3.1 template, vLLM's examples/tool_chat_template_llama3.1_json.jinja, 4.9 -> 10.4 ms, 2.11;
/// Qwen3's, 4.7 -> 10.5 ms, 2.21). It carries vllm#20065's measured cost to 0.11 on that report's host.
inline constexpr double kTemplateKwargsOverDetection = 2.1;
inline constexpr double kChatTemplateKwargsS = kChatTemplateParseS * kTemplateKwargsOverDetection;

/// The release's per-request Jinja work on the API loop (seconds): kChatTemplateParseS for 0.8.0-0.9.1,
/// kChatTemplateKwargsS for 0.11.x, 0 otherwise (spec::chat_template_parse).
double chat_template_parse_s(const std::optional<std::string>& release);

/// The API loop's synchronous work per request that the render barrier queues (seconds), or 0 where the barrier is not
/// priced: the workload sends to /v1/chat/completions, the engine is vLLM V1 named by a release that parses the template
/// per request (spec::chat_template_parsed_per_request), served through its API server (engine.api_server), not an
/// offline run or a static batch, and the model renders a Jinja template. `why` (when given) says which condition
/// decided it, for the run's notes.
double chat_render_barrier_s(const spec::ResolvedScenario& rs, std::string* why = nullptr);

}  // namespace llmsim::perf
