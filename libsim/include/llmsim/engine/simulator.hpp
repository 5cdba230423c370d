#pragma once
// Layer 4 entry point: run one scenario through the discrete-event serving engine.
#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "llmsim/metrics/summary.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::engine {

/// One finished (or rejected) request. Times in seconds of simulated time.
struct RequestRecord {
  std::int64_t id = 0;
  std::int32_t tenant = 0;
  std::int32_t replica = 0;
  double arrival_s = 0, admitted_s = 0, first_token_s = 0, finish_s = 0;
  std::int32_t input_tokens = 0, output_tokens = 0;
  std::int32_t preemptions = 0;
  bool warmup = false;
};

/// One engine iteration of one replica. Under pipeline parallel, start_s is when the batch entered the
/// first stage and duration_s runs until it left the last one.
struct IterationRecord {
  double start_s = 0, duration_s = 0;
  std::int32_t replica = 0;
  std::int32_t virtual_engine = 0;  ///< which of the replica's concurrent batches (0 without pipeline parallel)
  std::int32_t prefill_tokens = 0, prefill_seqs = 0, decode_seqs = 0;
  std::int32_t waiting = 0;
  std::int64_t kv_blocks_used = 0;
};

struct SimulationOptions {
  bool record_requests = false;
  bool record_iterations = false;
  /// Stop as "unstable" when the waiting queue exceeds this many requests (0 = automatic bound:
  /// max(2000, 16 × max_num_seqs × replicas); synthetic service counts one slot per server).
  std::int64_t max_queue = 0;
  /// When set, the run checks the flag every few thousand events and throws llmsim::Cancelled once it is
  /// true (Python's KeyboardInterrupt, CLI signals): a long simulation stops within milliseconds.
  const std::atomic<bool>* cancel = nullptr;
};

struct SimulationResult {
  metrics::Summary summary;              ///< cost fields left 0 here; analysis fills them
  std::vector<RequestRecord> requests;   ///< when recorded
  std::vector<IterationRecord> iterations;
  /// KV blocks still allocated on all replicas when the run ended: 0 after a run that drained (an invariant
  /// the trust tests check); in-flight requests' blocks after an unstable or horizon-cut run.
  std::int64_t kv_blocks_in_use_at_end = 0;
};

/// Simulates the scenario. A model that does not fit yields summary.fits = false with the reason (no
/// exception); invalid input throws ConfigError. Deterministic in (scenario, seed).
SimulationResult simulate(const spec::ResolvedScenario& scenario, const SimulationOptions& options = {});

}  // namespace llmsim::engine
