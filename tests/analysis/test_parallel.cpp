// The sweep thread pool: results by index whatever the thread count, progress on the caller's thread.
#include <catch2/catch.hpp>

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
