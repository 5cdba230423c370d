#pragma once
// What a benchmark result file says about its own run that `check` should tell the user before they read the
// errors: an artefact visible in the file's per-request numbers (a stall at the start of the run), and a hint to
// name the engine release when the file shows the run predates the runtime llmsim would otherwise price.
#include <optional>
#include <string>

#include "llmsim/analysis/vllm_result.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {

/// A stall at the start of the measured run: the leading requests (in the order sent) whose TTFT is above both
/// 5x the run's median TTFT and the median + 1 s, when they are at most a quarter of the run and the worst of them
/// waited >= 2 s (model loading, torch.compile or CUDA-graph capture on the first requests, a cold cache). Needs the
/// per-request `ttfts` (saved with --save-detailed / --output-details) of at least 8 requests; nullopt otherwise.
std::optional<std::string> start_stall_note(const VllmResult& result);

/// When the run named no release (`scenario` has no engine.runtime_release): a hint to set --engine-version if
/// the file states a release (VllmResult::version) whose runtime differs from the one simulated, or is dated before
/// the simulated runtime's first release (a vLLM `date` before 0.8.0, 2025-03-18, cannot have run V1 by default).
std::optional<std::string> version_hint(const VllmResult& result, const spec::Scenario& scenario);

}  // namespace llmsim::analysis
