#include "llmsim/analysis/parallel.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "llmsim/core/error.hpp"

namespace llmsim::analysis {

namespace {

bool cancelled(const ParallelHooks& hooks) { return hooks.cancel && hooks.cancel->load(std::memory_order_relaxed); }

[[noreturn]] void throw_cancelled(std::size_t done, std::size_t n) {
  throw Cancelled("interrupted: " + std::to_string(done) + " of " + std::to_string(n) + " items finished");
}

void run_serial(std::size_t n, const std::function<void(std::size_t)>& body, const ParallelHooks& hooks) {
  for (std::size_t i = 0; i < n; ++i) {
    if (cancelled(hooks)) throw_cancelled(i, n);
    try {
      body(i);
    } catch (const Cancelled&) {
      throw_cancelled(i, n);
    }
    if (hooks.on_done) hooks.on_done(i);
    if (hooks.progress) hooks.progress(i + 1, n);
  }
}

}  // namespace

void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& body, const Progress& progress) {
  ParallelHooks hooks;
  hooks.progress = progress;
  parallel_for(n, jobs, body, hooks);
}

void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& body, const ParallelHooks& hooks) {
  if (jobs < 1) throw ConfigError("--jobs", "must be >= 1, got " + std::to_string(jobs));
  if (n == 0) return;
  if (jobs == 1 || n == 1) return run_serial(n, body, hooks);

  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::size_t> finished;  // indices done since the calling thread last looked
  std::size_t done = 0, succeeded = 0, running = 0;
  std::size_t failed_index = n;
  std::exception_ptr failure;

  auto worker = [&] {
    for (;;) {
      if (stop.load() || cancelled(hooks)) break;
      const std::size_t i = next.fetch_add(1);
      if (i >= n) break;
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
      if (!err) {
        finished.push_back(i);
        ++succeeded;
      }
      ++done;
      cv.notify_one();
    }
    std::lock_guard<std::mutex> lock(mu);
    --running;
    cv.notify_one();
  };

  const std::size_t wanted = std::min<std::size_t>(static_cast<std::size_t>(jobs), n);
  std::vector<std::thread> pool;
  pool.reserve(wanted);
  std::string refused;
  for (std::size_t t = 0; t < wanted; ++t) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ++running;
    }
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error& e) {  // thread limits, address space: degrade instead of terminating
      std::lock_guard<std::mutex> lock(mu);
      --running;
      refused = e.what();
      break;
    }
  }
  if (pool.size() < wanted && hooks.on_warning) {
    try {
      hooks.on_warning("started " + std::to_string(pool.size()) + " of " + std::to_string(wanted) +
                       " threads (the system refused more: " + refused + ")" +
                       (pool.empty() ? "; running on the calling thread" : ""));
    } catch (...) {
      stop = true;
      for (auto& th : pool) th.join();
      throw;
    }
  }
  if (pool.empty()) return run_serial(n, body, hooks);

  // The calling thread only reports, so callbacks never run concurrently (or on a worker).
  std::exception_ptr callback_failure;
  {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return !finished.empty() || running == 0; });
      if (finished.empty() && running == 0) break;
      std::deque<std::size_t> batch;
      batch.swap(finished);
      const std::size_t now = done;
      if (callback_failure) continue;
      lock.unlock();
      try {
        for (const std::size_t i : batch)
          if (hooks.on_done) hooks.on_done(i);
        if (hooks.progress) hooks.progress(now, n);
      } catch (...) {  // e.g. a full disk while writing a row: stop the workers, then rethrow
        callback_failure = std::current_exception();
        stop = true;
      }
      lock.lock();
    }
  }
  for (auto& th : pool) th.join();
  if (callback_failure) std::rethrow_exception(callback_failure);
  if (cancelled(hooks)) throw_cancelled(succeeded, n);
  if (failure) std::rethrow_exception(failure);
}

}  // namespace llmsim::analysis
