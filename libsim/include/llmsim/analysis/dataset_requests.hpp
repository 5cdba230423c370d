#pragma once
// The requests of a benchmark run on a named dataset whose result file keeps only token totals: each request's
// lengths drawn from the dataset's length distribution (spec/dataset_lengths.hpp), conditioned on the file's means,
// so the simulated requests spread as the measured ones did instead of running in lockstep at the means.
#include "llmsim/analysis/vllm_result.hpp"

namespace llmsim::analysis {

/// For a ShareGPT run (dataset_name "sharegpt") without per-request lists, with token totals and no failures: fills
/// input_lens / output_lens with `completed` requests drawn from ShareGPT's distribution at the file's mean prompt
/// and output lengths (stratified quantiles of a fixed stream, so the draws' means sit within a fraction of a
/// percent of the file's; deterministic), sets lists_from (what they were drawn from) and lists_drawn; returns
/// whether it did. Means the filtered distribution cannot reach leave the file as it was (false).
bool draw_dataset_requests(VllmResult& r);

}  // namespace llmsim::analysis
