#pragma once
// vLLM V0's chunked-prefill scheduler by release: where the prompts it admitted go in the running queue. The one rule;
// the engine (engine/v0_walk.cpp) and `llmsim check` (analysis/vllm_check_scenario.cpp) read it; docs/engine.md, `chunked`.
//
// `_schedule_chunked_prefill` (vllm/core/scheduler.py) walks the running queue from its head, every entry taking its
// tokens from the step's budget (a decoder one, a partly prefilled prompt min(rest, budget left)), and stops at the
// first entry the budget cannot serve (`if num_running_tokens == 0: break`): the entries behind it skip the step and
// stay at the queue's head. After the step it appends the step's groups back. vllm#6867 (first in 0.5.4) stopped
// re-sorting the queue by arrival before each walk, so from 0.5.4 that append order is the walk order; 0.5.4 and 0.5.5
// appended the prompts admitted from the waiting queue first (`self.running.extend([s.seq_group for s in
// prefills.seq_groups])`, then the running decodes, then the running chunked prefills). A prompt admitted with a
// partial chunk therefore leads the next walk: it takes min(rest of its prompt, budget), and the decoders behind it
// that the budget no longer covers skip that step (their inter-token gap spans two steps). vllm#7874 ("Fix #7592 vllm
// 0.5.4 enable_chunked_prefill throughput is slightly lower than 0.5.3~0.5.0", merged 2024-09-02, first in 0.6.0)
// moved the new prompts behind the decodes ("Once chunked prefill is enabled, the policy is changed to prioritize
// decode requests"), which llmsim's `chunked` policy schedules for every other release (every decoder decodes every
// step).
#include <optional>
#include <string>

namespace llmsim::spec {

/// True for a vLLM release in [0.5.4, 0.6.0) (`release` as engine.runtime_release: "vllm==0.5.5"): its chunked-prefill
/// scheduler puts newly admitted prompts ahead of the running decodes. False for other releases, other engines and
/// no release.
bool v0_prefills_ahead_of_decodes(const std::optional<std::string>& release);

}  // namespace llmsim::spec
