#pragma once
// The capacity guard of a run fit (issue 28): serving runs that all ran below the server's capacity (the server kept
// up with the offered load) measure step times at the batches those loads made, not where capacity is. A fit on them
// may still move fields that set capacity (GEMM efficiency at the M of a full batch, the host's costs) to absorb
// something else, e.g. a per-request cost outside the GPU's steps that no profile field prices: at one state of the
// cost model the H200 fit lowered mid-M GEMM efficiency to 0.71 for the light loads' TTFT, which moved capacity below
// the unseen runs' 8 req/s (unseen error ~780 %, leave-one-out 19 %). With the guard, such runs may move the predicted
// capacity (the heaviest run's requests sent at once: its output throughput) by at most kCapacityGuard from the
// base profile's: a step beyond is not taken (run_fit_solver.cpp), and the report says the guard held. Private to
// calibration/fit.
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "llmsim/analysis/bench_runs.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "run_fit.hpp"

namespace llmsim::calibration::detail {

/// How far runs below capacity may move the predicted capacity: the prior's σ of a kernel's efficiency
/// (kPriorSigmaKernel, 0.15 in log: the widest range real cards sit around the kernel priors, G§B8). Runs that do
/// not reach capacity carry no evidence of it; the most a card's capacity differs from the prior's without such
/// evidence is then what one kernel's spread between real cards moves it.
inline constexpr double kCapacityGuard = kPriorSigmaKernel;
/// A serving run at a finite request rate reached capacity when the server completed fewer than this fraction of
/// the offered requests per second (completed / duration < 0.9 × rate): the queue grew. A run that kept up reads
/// 0.96-1.0 (the last request's latency adds to the duration, and Poisson arrivals scatter by 1/√N: ~6 % for 300
/// requests); DataCrunch's H200 at 8 and 16 req/s read 0.87 and 0.52.
inline constexpr double kKeptUpFraction = 0.9;

class CapacityGuard {
 public:
  /// The guard of these runs, or none. automatic: none when a run reaches capacity (a serving run sent at once or
  /// whose server fell behind, a `vllm bench throughput` run), when no run is a serving run, or when the heaviest
  /// serving run's file states no output throughput. on: the heaviest serving run that states one (sent at once
  /// counts heaviest) is the probe whatever the runs reached; ConfigError naming --capacity-guard when none does.
  /// off: none. `notes` gets why the guard applies.
  static std::unique_ptr<CapacityGuard> of(const std::vector<analysis::BenchRun>& runs, std::vector<std::string>& notes,
                                           CapacityGuardMode mode = CapacityGuardMode::automatic);

  /// The probe's predicted output throughput (tokens/s) with `profile`, keyed by the fit's profile number (cached).
  double capacity(const perf::HardwareProfile& profile, std::size_t key);
  /// Whether `profile` keeps the predicted capacity within kCapacityGuard (in log) of the base profile's (the first
  /// profile asked: set_base). Counts the steps refused.
  bool allows(const perf::HardwareProfile& profile, std::size_t key);
  void set_base(const perf::HardwareProfile& profile, std::size_t key);
  double base_capacity() const { return base_; }
  int refused() const { return refused_; }
  const std::string& probe_name() const { return run_.name; }

 private:
  explicit CapacityGuard(analysis::BenchRun run);
  analysis::BenchRun run_;
  std::unique_ptr<analysis::BenchPredictor> pred_;
  std::unordered_map<std::size_t, double> seen_;
  double base_ = 0;
  int refused_ = 0;
};

}  // namespace llmsim::calibration::detail
