// The sweep thread pool: results by index whatever the thread count, progress on the caller's thread.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "llmsim/analysis/parallel.hpp"
#include "llmsim/core/error.hpp"

using namespace llmsim;

TEST_CASE("parallel_for fills every slot once, for any thread count", "[analysis][parallel]") {
  for (int jobs : {1, 2, 3, 8}) {
    std::vector<int> out(100, 0);
    std::vector<std::size_t> seen;
    const auto caller = std::this_thread::get_id();
    analysis::parallel_for(
        out.size(), jobs, [&](std::size_t i) { out[i] += static_cast<int>(i * i); },
        [&](std::size_t done, std::size_t total) {
          CHECK(std::this_thread::get_id() == caller);
          CHECK(total == 100);
          seen.push_back(done);
        });
    for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i] == static_cast<int>(i * i));
    REQUIRE_FALSE(seen.empty());
    CHECK(seen.back() == 100);
    for (std::size_t k = 1; k < seen.size(); ++k) CHECK(seen[k] > seen[k - 1]);
  }
}

TEST_CASE("parallel_for rethrows the failure of the lowest index", "[analysis][parallel]") {
  for (int jobs : {1, 2, 4}) {
    try {
      analysis::parallel_for(50, jobs, [&](std::size_t i) {
        if (i == 7) throw std::runtime_error("seven");
      });
      FAIL("expected an exception");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) == "seven");
    }
  }
  CHECK_THROWS_AS(analysis::parallel_for(3, 0, [](std::size_t) {}), ConfigError);
  analysis::parallel_for(0, 2, [](std::size_t) { FAIL("no items"); });
}

TEST_CASE("parallel_for stops on cancel after reporting what finished", "[analysis][parallel]") {
  for (int jobs : {1, 3}) {
    std::atomic<bool> cancel{false};
    std::vector<std::size_t> done;
    std::atomic<int> started{0};
    analysis::ParallelHooks hooks;
    hooks.cancel = &cancel;
    hooks.on_done = [&](std::size_t i) {
      done.push_back(i);
      if (done.size() == 5) cancel = true;  // as a signal handler would
    };
    CHECK_THROWS_AS(analysis::parallel_for(
                        1000, jobs,
                        [&](std::size_t) {
                          ++started;
                          std::this_thread::sleep_for(std::chrono::microseconds(200));
                        },
                        hooks),
                    Cancelled);
    CHECK(done.size() >= 5);
    CHECK(started < 1000);  // nothing new started after the cancel (a few may have been running)
    std::sort(done.begin(), done.end());
    CHECK(std::adjacent_find(done.begin(), done.end()) == done.end());  // each reported once
  }
}

TEST_CASE("a failing callback stops parallel_for and is rethrown", "[analysis][parallel]") {
  analysis::ParallelHooks hooks;
  int calls = 0;
  hooks.on_done = [&](std::size_t) {
    if (++calls == 3) throw std::runtime_error("disk full");
  };
  std::atomic<int> ran{0};
  CHECK_THROWS_WITH(analysis::parallel_for(
                        10000, 4,
                        [&](std::size_t) {
                          ++ran;
                          std::this_thread::sleep_for(std::chrono::microseconds(200));
                        },
                        hooks),
                    "disk full");
  CHECK(ran < 10000);
}
