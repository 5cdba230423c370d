#pragma once
// What a benchmark result file says about its own run that `check` should tell the user before they read the
// errors: an artefact visible in the file's per-request numbers (a stall at the start of the run), and a hint to
// name the engine release when the file shows the run predates the runtime llmsim would otherwise price, and a
// question when its TTFT is below what a cold server could do (a server warm from an earlier run's prompts).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

/// The least time a cold server needs to return the first token of each request (warm_cache_note.cpp): the prompts
/// prefilled one after another in the order sent (vLLM's FCFS), from each one's arrival, at the deployment's dense
/// tensor peak (every GPU of every replica at its datasheet rate), 2 FLOPs per linear weight per prompt token and
/// nothing else (no attention, no decode steps, no host time). `requests` are (arrival s, prompt tokens) in the
/// order sent. A bound no cold run can beat, whatever the kernels' efficiency; seconds, one per request.
std::vector<double> cold_ttft_floor_s(const spec::ResolvedScenario& rs,
                                      const std::vector<std::pair<double, std::int64_t>>& requests);

/// With prefix caching on and no warm cache assumed (workload.warm_cache false): when the measured mean TTFT (else
/// the median) is below the same statistic of cold_ttft_floor_s, the question whether the server was warm from an
/// earlier run with the same prompts, naming both numbers. nullopt otherwise (or when the file states no TTFT).
std::optional<std::string> warm_server_note(const VllmResult& result, const spec::ResolvedScenario& rs,
                                            const std::vector<std::pair<double, std::int64_t>>& requests);

}  // namespace llmsim::analysis
