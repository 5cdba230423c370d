#include "llmsim/spec/sessions.hpp"

#include <algorithm>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"

namespace llmsim::spec {

// workload.cpp: the length distributions' bounds (one rule for requests and sessions).
void check_length(const LengthDist& d, const std::string& path, Problems& p, const char* unit = "tokens");

void SessionSpec::validate(const std::string& path) const {
  Problems p;
  check_length(turns, path + ".turns", p, "turns");
  check_length(system_tokens, path + ".system_tokens", p);
  check_length(user_tokens, path + ".user_tokens", p);
  check_length(output_tokens, path + ".output_tokens", p);
  check_length(think_time_ms, path + ".think_time_ms", p, "ms");
  if (system_prompts < 0 || system_prompts > kMaxSystemPrompts)
    p.add(path + ".system_prompts", "must be in 0..1e9 (0 = every session its own), got " + std::to_string(system_prompts));
  if (max_output_tokens < 0 || max_output_tokens > 1'000'000'000)
    p.add(path + ".max_output_tokens", "must be in 0..1e9 (0 = no thinking budget), got " + std::to_string(max_output_tokens));
  p.throw_if_any();
}

// The presets' statistics, each from a public source's published summary (no data copied; docs/engine.md
// "Session workloads" lists them with their conditions). Where no public number exists the value is an
// assumption and says so: override it with what your product measures.
SessionSpec session_preset(const std::string& name, const std::string& path) {
  SessionSpec s;
  s.preset = name;
  if (name == "chat") {
    // LMSYS-Chat-1M (Zheng et al. 2023, arXiv:2309.11998, Table 1): 2.0 turns per conversation, 69.5 tokens per
    // user prompt, 214.5 per response; ShareGPT in the same table: 3.5 turns, 94.5 / 348.5 tokens. Between them.
    // System prompt 600 tokens shared by every user, think time 20 s mean: assumptions (a product's own prompt;
    // reading a reply and typing the next message).
    s.turns = LogNormalLength{3.0, 0.8};
    s.system_tokens = FixedLength{600};
    s.system_prompts = 1;
    s.user_tokens = LogNormalLength{80, 1.0};
    s.output_tokens = LogNormalLength{250, 0.8};
    s.think_time_ms = LogNormalLength{20000, 1.0};
  } else if (name == "agent") {
    // Tool-using agent loops: SWE-agent (Yang et al. 2024, arXiv:2405.15793) reports trajectories of tens of
    // steps whose context grows to tens of thousands of tokens with tool output; many short model turns, tool
    // latency as think time. 20 turns of ~900 tokens of observation + call over a 2,000-token tool prompt reach
    // ~20k tokens. Tool latency 2 s mean: assumption.
    s.turns = LogNormalLength{20, 0.5};
    s.system_tokens = FixedLength{2000};
    s.system_prompts = 1;
    s.user_tokens = LogNormalLength{700, 1.0};
    s.output_tokens = LogNormalLength{150, 0.7};
    s.think_time_ms = LogNormalLength{2000, 1.0};
  } else if (name == "reasoning") {
    // Reasoning models write long chains of thought before the answer: DeepSeek-R1 (arXiv:2501.12948) reports
    // responses growing to thousands of tokens on reasoning tasks; a thinking budget (Qwen3's, arXiv:2505.09388)
    // caps them. Mean 4,000 output tokens, budget 8,192; 1.5 turns, think time 60 s: assumptions.
    s.turns = LogNormalLength{1.5, 0.5};
    s.system_tokens = FixedLength{200};
    s.system_prompts = 1;
    s.user_tokens = LogNormalLength{200, 1.0};
    s.output_tokens = LogNormalLength{4000, 0.7};
    s.think_time_ms = LogNormalLength{60000, 1.0};
    s.max_output_tokens = 8192;
  } else if (name == "rag") {
    // Retrieval-augmented generation: long prompts (retrieved documents) and short answers. Mooncake's published
    // trace statistics (Qin et al. 2024, arXiv:2407.00079): mean input 7,590 tokens, output 182; the Azure LLM
    // inference trace 2023 (Splitwise, Patel et al. 2024): conversation prompts ~1k tokens, coding ~1.5k with short
    // outputs. 3,000 input tokens of documents + question, 200 output, mostly one turn; a shared instruction prompt.
    s.turns = LogNormalLength{1.3, 0.4};
    s.system_tokens = FixedLength{300};
    s.system_prompts = 1;
    s.user_tokens = LogNormalLength{3000, 0.6};
    s.output_tokens = LogNormalLength{200, 0.7};
    s.think_time_ms = LogNormalLength{30000, 1.0};
  } else {
    throw ConfigError(path, unknown_name_message("session preset", name, kSessionPresets));
  }
  return s;
}

std::size_t turns_to_drop(const std::vector<SessionTurn>& history, std::int64_t system, std::int64_t user,
                          std::int64_t output, std::int64_t max_len) {
  if (max_len <= 0) return 0;
  std::int64_t total = system + user + output;
  for (const auto& t : history) total += t.user + t.output;
  std::size_t drop = 0;
  while (drop < history.size() && total > max_len) {
    total -= history[drop].user + history[drop].output;
    ++drop;
  }
  return drop;
}

}  // namespace llmsim::spec
