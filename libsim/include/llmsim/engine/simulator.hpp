#pragma once
// Layer 4 entry point: run one scenario through the discrete-event serving engine.
#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "llmsim/metrics/summary.hpp"
#include "llmsim/metrics/time_series.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::engine {

/// One finished (or rejected) request. Times in seconds of simulated time.
/// How a recorded request ended: served to its last token; lost to a replica failure (on_failure "fail", or its
/// retries spent); given up by its client (workload.timeout_s); or still in the system when the run ended.
enum class RequestOutcome : std::uint8_t { completed, failed, timed_out, unfinished };
const char* outcome_name(RequestOutcome o) noexcept;  ///< "completed", "failed", "timed_out", "unfinished"

/// One request that entered the system (rejected ones never did). finish_s is its exit (last token, failure,
/// timeout) or the end of the run (unfinished); output_tokens its length when completed, else the tokens it had
/// produced (for an unfinished request, by its last step boundary).
struct RequestRecord {
  std::int64_t id = 0;
  std::int32_t tenant = 0;
  std::int32_t replica = 0;
  double arrival_s = 0, admitted_s = 0, first_token_s = 0, finish_s = 0;
  std::int32_t input_tokens = 0, output_tokens = 0;
  std::int32_t preemptions = 0;
  std::int32_t retries = 0;  ///< times started again after a replica failure evicted it
  bool warmup = false;
  RequestOutcome outcome = RequestOutcome::completed;
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
  /// Early stop at overload, for the capacity search only (analysis::find_capacity sets it): the run ends as
  /// soon as it is known to be unstable — the waiting queue passed `max_queue`, or the number in the system
  /// grew over the second half of the arrivals — since such a run fails the SLO whatever happens next. Off,
  /// every finite workload runs to its end and overload is only flagged (summary.unstable and its reason).
  bool stop_when_unstable = false;
  /// With stop_when_unstable: the waiting-queue bound (0 = automatic: max(2000, 16 × max_num_seqs × batches in
  /// flight × replicas); synthetic service counts one slot per server).
  std::int64_t max_queue = 0;
  /// Memory bound: a run with more requests than this in the system at once stops there, flagged unstable and
  /// incomplete (summary.complete = false), its summary covering the run until then. Memory is proportional to
  /// the requests in the system (~200 B each), so the default 500,000 keeps a run under ~100 MB. An offline
  /// workload (all requests at t = 0) larger than this is a ConfigError at workload.num_requests.
  std::int64_t max_in_system = 500'000;
  /// Time series of the run (SimulationResult::time_series): window width in simulated seconds; 0 =
  /// automatic (about 256-512 windows over the run); negative = off (the default).
  double time_series_window_s = -1;
  /// Decode runs (docs/engine.md): a replica's decode-only steps between an admission and a completion are simulated
  /// without an event each. The results are the same bits either way; off only to check that (tests,
  /// bench/identical_outputs.sh) or to time the difference.
  bool decode_runs = true;
  /// When set, the run checks the flag every few thousand events and throws llmsim::Cancelled once it is
  /// true (Python's KeyboardInterrupt, CLI signals): a long simulation stops within milliseconds.
  const std::atomic<bool>* cancel = nullptr;
};

struct SimulationResult {
  metrics::Summary summary;              ///< cost fields left 0 here; analysis fills them
  std::vector<RequestRecord> requests;   ///< when recorded
  std::vector<IterationRecord> iterations;
  std::vector<metrics::TimeWindow> time_series;  ///< when SimulationOptions::time_series_window_s >= 0
  /// KV blocks still allocated on all replicas when the run ended: 0 after a run that drained (an invariant
  /// the trust tests check); in-flight requests' blocks after an unstable or horizon-cut run.
  std::int64_t kv_blocks_in_use_at_end = 0;
  /// Events the loop processed (a diagnostic: with decode runs, well under the iterations of a busy run).
  std::int64_t events = 0;
};

/// Simulates the scenario. A model that does not fit yields summary.fits = false with the reason (no
/// exception); invalid input throws ConfigError. Deterministic in (scenario, seed).
SimulationResult simulate(const spec::ResolvedScenario& scenario, const SimulationOptions& options = {});

}  // namespace llmsim::engine
