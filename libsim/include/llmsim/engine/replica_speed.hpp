#pragma once
// How fast one deployment replica serves, estimated from the cost model without simulating: what the
// speed-aware routers weigh replicas by (docs/fleets.md) and what `search` bounds a configuration's capacity
// with before simulating it (docs/search.md).
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/workload.hpp"

namespace llmsim::engine {

/// Mean prompt and output lengths (tokens) of a workload: each class's nominal mean (lognormal/normal: the given
/// mean; uniform: the midpoint; fixed: the value; empirical: the values' mean, 512 for a CSV not yet read),
/// weighted by the classes' offered rates (equal weights for closed loops). Clipping is ignored.
struct MeanLengths {
  double input = 0, output = 0;
};
MeanLengths mean_lengths(const spec::Workload& w);

struct ReplicaSpeed {
  int reference_batch = 1;            ///< decode sequences: min(max_num_seqs, KV tokens ÷ (input + output))
  double decode_tokens_per_s = 0;     ///< at the reference batch and a context of input + output/2
  double prefill_tokens_per_s = 0;    ///< one max_num_batched_tokens-token chunk (capped at 8192) from context 0
  /// Requests per second at saturation: 1 ÷ (input ÷ prefill rate + output ÷ decode rate), the GPU time one
  /// request takes when the replica is full (the service rate of join-shortest-expected-delay).
  double requests_per_s = 0;
  /// An optimistic upper bound on requests per second meeting any SLO (search's pruning): the best decode rate
  /// over batch sizes up to min(max_num_seqs, KV tokens ÷ input) at a context of the mean input, the best
  /// prefill rate, the larger of the two per-request times (prefill and decode may overlap in mixed batches),
  /// then × 1.5 for what the mean lengths miss (length spread, prefix caching).
  double requests_per_s_bound = 0;
};

/// Speed of one replica (all its tp × pp GPUs) of `cost`'s deployment with `plan`'s KV pool and `engine`'s
/// limits. Costs ~20 iteration_time() calls.
ReplicaSpeed replica_speed(const perf::CostModel& cost, const memory::MemoryPlan& plan,
                           const spec::EngineConfig& engine, const MeanLengths& lengths);

}  // namespace llmsim::engine
