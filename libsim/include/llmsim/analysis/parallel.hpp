#pragma once
// A small fork-join helper for sweeps and comparisons: runs body(i) for i in [0, n) on `jobs` threads.
// Results go into caller-owned slots indexed by i, so the output order never depends on the thread count.
#include <atomic>
#include <cstddef>
#include <functional>
#include <string>

namespace llmsim::analysis {

/// Called on the calling thread after each finished item: (items done, total items).
using Progress = std::function<void(std::size_t done, std::size_t total)>;

/// What a caller may observe and control while items run. Every callback runs on the calling thread, never
/// concurrently; an exception from one stops the run (no new items) and is rethrown once the workers are joined.
struct ParallelHooks {
  Progress progress;                                   ///< (done, total) after finished items
  std::function<void(std::size_t index)> on_done;      ///< each item that finished without throwing
  std::function<void(const std::string&)> on_warning;  ///< e.g. "started 100 of 512 threads"
  /// When set (by another thread or a signal handler), no new item starts; once the running ones end,
  /// parallel_for throws llmsim::Cancelled. Items that finished were reported through on_done first.
  const std::atomic<bool>* cancel = nullptr;
};

/// Runs body(0..n-1) on min(jobs, n) worker threads (jobs <= 1: on the calling thread). If the system refuses
/// to start that many threads, it runs on those it started (on the calling thread if none), and says so through
/// hooks.on_warning — never std::terminate. If bodies throw, the exception of the lowest index is rethrown after
/// the remaining items are skipped and the workers joined (Cancelled instead when hooks.cancel was set).
/// ConfigError for jobs < 1.
void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& body, const ParallelHooks& hooks);
void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& body, const Progress& progress = {});

}  // namespace llmsim::analysis
