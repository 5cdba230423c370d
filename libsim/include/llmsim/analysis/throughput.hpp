#pragma once
// Maximum throughput of a deployment, as `vllm bench throughput` measures it: every request present at t = 0
// (offline arrivals, the LLM class's engine defaults), served to the end. The number to hold against vendor
// max-throughput tables; `llmsim throughput` and `llmsim.throughput()` report it.
#include <cstdint>
#include <string>

#include "llmsim/core/json_view.hpp"
#include "llmsim/metrics/summary.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {

struct ThroughputOptions {
  std::int64_t num_requests = 0;  ///< requests at t = 0; 0 = the scenario's workload.num_requests
};

struct ThroughputResult {
  bool fits = true;
  std::string reason;               ///< why it cannot run (memory plan)
  spec::ResolvedScenario scenario;  ///< the offline scenario that ran (engine knobs as resolved)
  /// The offline run: throughput = requests / elapsed (what vllm bench throughput prints), saturation = the
  /// rate while requests were still waiting, batch = the batch size reached, kv, preemptions, cost.
  metrics::Summary summary;
};

/// The scenario as an offline run: each class's arrivals become offline (classes interleaved in proportion to
/// their offered rates, closed-loop users or 1 each), no warm-up, no horizon, `options.num_requests` if set.
/// Knobs the scenario leaves unset take the offline entry point's defaults (spec::effective_engine).
/// ConfigError for trace replay (its arrival times are the point of it) and for invalid input.
spec::Scenario offline_scenario(const spec::Scenario& scenario, const ThroughputOptions& options = {});

/// Runs offline_scenario() and prices it (cost fields at the achieved throughput, every token counted: no SLO
/// applies to a throughput run). Deterministic in (scenario, seed).
ThroughputResult max_throughput(const spec::Scenario& scenario, const spec::Catalog& catalog,
                                const ThroughputOptions& options = {});

/// `llmsim throughput --json`: {fits, reason, engine, model, gpu, num_gpus, quant, max_num_seqs,
/// max_num_batched_tokens, num_requests, elapsed_s, throughput{requests_per_s, input/output/total_tokens_per_s},
/// saturation{... , time_s, busy_fraction, mean_batch}, batch{max_seqs, mean_seqs}, kv{capacity_tokens,
/// peak_used_fraction, mean_used_fraction}, preemptions, cost{per_hour, per_mtok_output, per_mtok_total}}.
Json to_json(const ThroughputResult& r);

}  // namespace llmsim::analysis
