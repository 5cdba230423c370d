#pragma once
// The report's section for session workloads (issue 31): what each option's KV cache keeps of the conversations.
// A chat turn re-sends its history; whether the history is still cached decides its TTFT and the GPU time it costs,
// which is what a card with more memory buys beyond fitting the model. Per option: the KV cache per replica, the
// prefix-cache hit rate and P95 TTFT at the user's load (the sized fleet) and at one replica's capacity, and the
// token cost; then one sentence from the smallest cache to the largest ("what does 48 GB buy").
#include <string>

#include "llmsim/analysis/compare.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::cli::report {

/// The section's HTML (heading, table, sentence); empty unless the workload has sessions.
std::string cache_value_section(const spec::Scenario& base, const analysis::CompareResult& result);

/// The sentence alone (plain text; empty unless sessions and two fitting options with different KV caches).
std::string cache_value_sentence(const spec::Scenario& base, const analysis::CompareResult& result);

}  // namespace llmsim::cli::report
