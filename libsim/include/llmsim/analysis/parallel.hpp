#pragma once
// A small fork-join helper for sweeps and comparisons: runs body(i) for i in [0, n) on `jobs` threads.
// Results go into caller-owned slots indexed by i, so the output order never depends on the thread count.
#include <cstddef>
#include <functional>

namespace llmsim::analysis {

/// Called on the calling thread after each finished item: (items done, total items).
using Progress = std::function<void(std::size_t done, std::size_t total)>;

/// Runs body(0..n-1) on min(jobs, n) worker threads (jobs <= 1: on the calling thread). `progress` is
/// always called on the calling thread, never concurrently. If bodies throw, the exception of the lowest
/// index is rethrown after the remaining items are skipped and the workers joined. ConfigError for jobs < 1.
void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& body,
                  const Progress& progress = {});

}  // namespace llmsim::analysis
