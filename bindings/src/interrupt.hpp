#pragma once
// Long C++ work that Python can interrupt. The work runs on a helper thread without the GIL; the calling thread
// (Python's, e.g. a notebook kernel's main thread) waits without the GIL too, waking every 50 ms to let Python
// run its signal handlers (PyErr_CheckSignals). A KeyboardInterrupt sets the work's cancel flag — the engine
// checks it every few thousand events, a sweep between points — and is raised once the work has stopped.
#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace llmsim::python {

namespace py = pybind11;

/// Warnings raised in C++ (e.g. fewer sweep threads than asked) are collected here and issued as Python
/// RuntimeWarnings by run_interruptible, on the calling thread with the GIL.
struct Warnings {
  std::mutex mu;
  std::vector<std::string> items;
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& m) {
      std::lock_guard<std::mutex> lock(mu);
      items.push_back(m);
    };
  }
  void issue() {
    std::vector<std::string> pending;
    pending.swap(items);
    for (const auto& m : pending)
      if (PyErr_WarnEx(PyExc_RuntimeWarning, ("llmsim: " + m).c_str(), 2) != 0) throw py::error_already_set();
  }
};

/// Runs work() (pure C++: it must not touch Python objects) with the GIL released and Python signals checked.
/// Call with the GIL held. Returns work()'s value or rethrows its exception. When a Python signal handler raises
/// (KeyboardInterrupt), `cancel` is set, the work is awaited, `on_interrupt(exception)` may attach what finished,
/// and the exception is raised. If no helper thread can be started, the work runs on this thread, uninterruptible.
template <class F>
auto run_interruptible(std::atomic<bool>& cancel, Warnings& warnings, F&& work,
                       const std::function<void(py::error_already_set&)>& on_interrupt = {}) -> decltype(work()) {
  using R = decltype(work());
  std::optional<R> result;
  std::exception_ptr error;
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  auto task = [&] {
    try {
      result.emplace(work());
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mu);
    finished = true;
    cv.notify_all();
  };
  std::thread helper;
  try {
    helper = std::thread(task);
  } catch (const std::system_error& e) {
    warnings.sink()(std::string("could not start a thread (") + e.what() + "); running without Ctrl-C support");
    py::gil_scoped_release nogil;
    task();
  }
  std::optional<py::error_already_set> pending;
  if (helper.joinable()) {
    for (;;) {
      bool done = false;
      {
        py::gil_scoped_release nogil;
        std::unique_lock<std::mutex> lock(mu);
        done = cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return finished; });
      }
      if (done) break;
      if (!pending && PyErr_CheckSignals() != 0) {  // a handler raised: stop the work, raise when it has stopped
        pending.emplace();
        cancel.store(true);
      }
    }
    helper.join();
  }
  warnings.issue();
  if (pending) {
    if (on_interrupt) on_interrupt(*pending);
    throw std::move(*pending);
  }
  if (error) std::rethrow_exception(error);
  return std::move(*result);
}

}  // namespace llmsim::python
