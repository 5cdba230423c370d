#pragma once
// Replica failures (private to the engine): when each replica fails and how long it stays down — exponential
// times between failures (mean failures.mtbf_h) and to repair (mean failures.mttr_h), the memoryless model of
// reliability engineering, from one seeded stream per replica (rng_stream(seed, "failures", replica)), plus
// scheduled outages. The simulator evicts the failed replica's requests (Replica::evict_all) and re-queues or
// fails them (failures.on_failure).
#include <cstdint>
#include <vector>

#include <boost/random/exponential_distribution.hpp>

#include "llmsim/core/rng.hpp"
#include "llmsim/spec/failures.hpp"

namespace llmsim::engine::detail {

class FailureModel {
 public:
  FailureModel(const spec::FailureSpec& spec, std::int32_t groups, std::uint64_t seed) : spec_(spec) {
    if (spec_.mtbf_h > 0)
      for (std::int32_t g = 0; g < groups; ++g) rng_.push_back(rng_stream(seed, "failures", static_cast<std::uint64_t>(g)));
  }
  bool random() const noexcept { return spec_.mtbf_h > 0; }
  /// Seconds from a replica's (re)start to its next random failure.
  double time_to_failure(std::int32_t g) { return draw(g, spec_.mtbf_h); }
  /// Seconds a random failure keeps replica `g` down.
  double time_to_repair(std::int32_t g) { return draw(g, spec_.mttr_h); }

 private:
  double draw(std::int32_t g, double mean_h) {
    return boost::random::exponential_distribution<double>(1.0 / (mean_h * 3600))(rng_[static_cast<std::size_t>(g)]);
  }
  spec::FailureSpec spec_;
  std::vector<RandomEngine> rng_;
};

}  // namespace llmsim::engine::detail
