#pragma once
// The requests a benchmark client sent, reproduced from its sampler when a result file does not list them.
#include "llmsim/analysis/vllm_result.hpp"

namespace llmsim::analysis {

/// SGLang bench_serving's seed (its --seed default, which np.random.seed takes before sampling). The result files
/// do not record it; the reproduction is used only where it gives the file's token totals exactly.
inline constexpr std::uint32_t kSglangBenchSeed = 1;

/// SGLang bench_serving's random dataset, draw for draw (python/sglang/bench_serving.py: sample_random_requests
/// draws every prompt length, then every output length, with np.random.randint over
/// [max(int(L_in * ratio), 1), L_in] and [int(L_out * ratio), L_out]; get_request then draws each gap
/// np.random.exponential(1 / rate) after a send). Fills input_lens, output_lens, arrivals_s (finite rates), failed
/// and lists_from when `r` is such a run without per-request lists and the draws give its total_input_tokens and
/// total_output_tokens exactly; returns whether it did. Requests drawn with 0 output tokens: a vLLM server
/// refuses max_tokens 0 (they are the run's failures, left out of `completed` and the totals), SGLang's server
/// answers them with one token (simulated so), which the client's total counts as 1 or, in older bench_serving
/// releases that total the lengths asked for, as 0: either total confirms the draws.
bool reproduce_sglang_random(VllmResult& r);

}  // namespace llmsim::analysis
