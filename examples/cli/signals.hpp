#pragma once
// SIGINT and SIGTERM in the CLI: the first one asks the running command to stop (a flag the engine checks every
// few thousand events, and sweeps between points); the command then exits non-zero, having removed every
// output it had not finished. A second signal (0.3 s or more after the first; `timeout` delivers one request
// twice, to the child and to its process group) ends the process at once.
#include <atomic>

namespace llmsim::cli {

/// While alive, SIGINT/SIGTERM set the cancel flag instead of killing the process. Commands that check the flag
/// (simulate, capacity, compare, sweep) hold one; the others keep the default (immediate) behaviour.
class CancelScope {
 public:
  CancelScope();
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;
  /// For engine::SimulationOptions::cancel, analysis::RowOptions::cancel, CapacityOptions::cancel.
  const std::atomic<bool>* flag() const noexcept;
};

/// True once a handled signal arrived.
bool interrupted() noexcept;
/// The signal that arrived (0 if none).
int interrupt_signal() noexcept;
/// Throws llmsim::Cancelled naming the signal.
[[noreturn]] void throw_interrupted();

}  // namespace llmsim::cli
