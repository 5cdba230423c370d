#pragma once
// The router (private to the engine): picks the deployment replica a request goes to on arrival
// (round_robin, least_outstanding, least_kv, power_of_two, and the speed-aware weighted_least_outstanding and
// shortest_expected_delay for heterogeneous fleets: docs/fleets.md; session_affinity for session turns), then, inside it, the virtual engine (pipeline
// batch in flight) with the fewest unfinished requests, as vLLM v0 does.
#include <cstdint>
#include <vector>

#include "llmsim/core/error.hpp"
#include "llmsim/core/rng.hpp"
#include "llmsim/spec/deployment.hpp"
#include "replica.hpp"

namespace llmsim::engine::detail {

class Router {
 public:
  /// `groups` deployment replicas of `engines_per_group` virtual engines each (replicas[g·k + v]).
  /// `outstanding[e]`: engine e's requests routed and not finished (the replicas keep their counts there).
  /// `seed`: the scenario's; power_of_two draws its pairs from its "router" stream.
  Router(spec::RouterPolicy policy, std::int32_t groups, std::int32_t engines_per_group, const std::int64_t* outstanding,
         std::uint64_t seed = 1)
      : policy_(policy), groups_(groups), per_group_(engines_per_group), outstanding_(outstanding),
        rng_(rng_stream(seed, "router")) {}

  /// The speed-aware policies' per-group speeds (> 0): weighted_least_outstanding divides outstanding requests by
  /// `weight[g]` (decode tokens/s), shortest_expected_delay divides (outstanding + 1) by `rate[g]` (requests/s at
  /// saturation). Unset, every group counts as equally fast.
  void set_speeds(std::vector<double> weight, std::vector<double> rate) {
    weight_ = std::move(weight);
    rate_ = std::move(rate);
  }

  /// The engine (index into `replicas`) that takes the next request; -1 when no deployment replica is ready.
  std::int32_t route(const std::vector<Replica>& replicas);
  /// session_affinity for a session's turn whose previous turn went to deployment replica `home` (-1 = none yet):
  /// `home` while it is ready and holds fewer than `slots` unfinished requests per engine (its batch has room), or
  /// while no ready replica holds fewer than it; else least_outstanding. -1 when no replica is ready.
  std::int32_t route_sticky(const std::vector<Replica>& replicas, std::int32_t home, std::int64_t slots);
  std::int32_t engines_per_group() const noexcept { return per_group_; }
  /// Restricts routing to the groups whose byte is non-zero (the fleet's ready replicas), also listed ascending in
  /// `list`; null = all of them.
  void set_ready(const std::vector<char>* mask, const std::vector<std::int32_t>* list) {
    LLMSIM_CHECK((mask == nullptr) == (list == nullptr), "a router's ready mask and list are set together");
    ready_ = mask;
    ready_list_ = list;
  }
  /// KV blocks used / capacity over the virtual engines of deployment replica `g`.
  double group_kv_fraction(const std::vector<Replica>& replicas, std::int32_t g) const;

 private:
  std::int64_t group_outstanding(std::int32_t g) const {  // inline, from the compact array: read per group per arrival
    if (per_group_ == 1) return outstanding_[g];
    std::int64_t n = 0;
    for (std::int32_t v = 0; v < per_group_; ++v) n += outstanding_[g * per_group_ + v];
    return n;
  }
  double score(std::int32_t g) const;  ///< speed-aware: lower is better
  std::int32_t least_outstanding() const;  ///< the ready group least_outstanding picks (at least one is ready)
  std::int32_t least_outstanding_engine(std::int32_t g) const;  ///< the engine of group `g` with the fewest
  std::int32_t power_of_two();  ///< the less loaded of two distinct ready groups drawn at random
  spec::RouterPolicy policy_;
  std::vector<double> weight_, rate_;
  std::int32_t groups_, per_group_;
  std::int32_t rr_next_ = 0;
  const std::vector<char>* ready_ = nullptr;
  const std::vector<std::int32_t>* ready_list_ = nullptr;
  const std::int64_t* outstanding_;
  RandomEngine rng_;
  bool ok(std::int32_t g) const { return !ready_ || (*ready_)[static_cast<std::size_t>(g)]; }
};

}  // namespace llmsim::engine::detail
