#include "llmsim/analysis/parallel.hpp"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "llmsim/core/error.hpp"

namespace llmsim::analysis {

void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& body, const Progress& progress) {
  if (jobs < 1) throw ConfigError("--jobs", "must be >= 1, got " + std::to_string(jobs));
  if (n == 0) return;
  if (jobs == 1 || n == 1) {
    for (std::size_t i = 0; i < n; ++i) {
      body(i);
      if (progress) progress(i + 1, n);
    }
    return;
  }

  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  std::size_t done = 0;
  std::size_t failed_index = n;
  std::exception_ptr failure;

  auto worker = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= n || stop.load()) return;
      std::exception_ptr err;
      try {
        body(i);
      } catch (...) {
        err = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu);
      if (err && i < failed_index) {
        failed_index = i;
        failure = err;
        stop = true;
      }
      ++done;
      cv.notify_one();
    }
  };

  const std::size_t threads = std::min<std::size_t>(static_cast<std::size_t>(jobs), n);
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(worker);

  // The calling thread only reports progress, so callbacks never run concurrently (or on a worker).
  std::size_t reported = 0;
  {
    std::unique_lock<std::mutex> lock(mu);
    while (reported < n && !stop) {
      cv.wait(lock, [&] { return done > reported || stop; });
      const std::size_t now = done;
      if (progress && now > reported && !stop) {
        lock.unlock();
        try {
          progress(now, n);
        } catch (...) {  // e.g. an interrupt raised by a Python callback: stop the workers, then rethrow
          std::lock_guard<std::mutex> guard(mu);
          stop = true;
          failure = std::current_exception();
          failed_index = 0;
        }
        lock.lock();
      }
      reported = now;
    }
  }
  for (auto& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace llmsim::analysis
