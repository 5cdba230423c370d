#include "router.hpp"

namespace llmsim::engine::detail {

double Router::group_kv_fraction(const std::vector<Replica>& replicas, std::int32_t g) const {
  std::int64_t used = 0, cap = 0;
  for (std::int32_t v = 0; v < per_group_; ++v) {
    const auto& kv = replicas[static_cast<std::size_t>(g * per_group_ + v)].kv();
    used += kv.held();
    cap += kv.capacity();
  }
  return static_cast<double>(used) / static_cast<double>(cap);
}

double Router::score(std::int32_t g) const {
  const auto n = static_cast<double>(group_outstanding(g));
  const auto i = static_cast<std::size_t>(g);
  // Weighted least outstanding: requests in flight per unit of speed (vLLM production-stack / llm-d route by
  // load; weighting by speed is the heterogeneous form). Shortest expected delay (Whitt 1986): the time to serve
  // what is there plus the new request at the replica's service rate.
  if (policy_ == spec::RouterPolicy::weighted_least_outstanding) return weight_.empty() ? n : n / weight_[i];
  return rate_.empty() ? n + 1 : (n + 1) / rate_[i];
}

std::int32_t Router::least_outstanding() const {
  // The first ready group with the fewest: the smallest (count, group) pair, packed as count << 32 | group and taken
  // with a branchless min. Scanned every arrival, whose counts change unpredictably: a compare-and-branch per group
  // would mispredict. A dynamic fleet scans its ready groups only (ascending, as the mask would). Instantiated for
  // one engine per group (the common case) and for several.
  auto over = [&](auto count) {
    std::uint64_t best = ~std::uint64_t{0};
    auto take = [&](std::int32_t r) {
      const std::uint64_t key = (static_cast<std::uint64_t>(count(r)) << 32) | static_cast<std::uint32_t>(r);
      best = key < best ? key : best;
    };
    if (ready_list_) {
      for (const std::int32_t r : *ready_list_) take(r);
    } else {
      for (std::int32_t r = 0; r < groups_; ++r) take(r);
    }
    return static_cast<std::int32_t>(best & 0xffffffffu);
  };
  if (per_group_ == 1) return over([&](std::int32_t r) { return outstanding_[r]; });
  return over([&](std::int32_t r) { return group_outstanding(r); });
}

std::int32_t Router::least_outstanding_engine(std::int32_t g) const {
  std::int32_t best = g * per_group_;
  for (std::int32_t v = 1; v < per_group_; ++v) {
    const std::int32_t e = g * per_group_ + v;
    if (outstanding_[e] < outstanding_[best]) best = e;
  }
  return best;
}

std::int32_t Router::power_of_two() {
  // Ray Serve's PowerOfTwoChoicesRequestRouter: sample two distinct candidate replicas, send to the one with the
  // shorter queue (its replicas report their ongoing requests; here: routed and unfinished). A uniform draw of an
  // index in [0, n) and one in [0, n - 1) shifted past the first gives a uniform distinct pair.
  const auto n = static_cast<std::uint64_t>(ready_list_ ? ready_list_->size() : static_cast<std::size_t>(groups_));
  if (n == 1) return ready_list_ ? ready_list_->front() : 0;
  const std::uint64_t i = rng_() % n;
  std::uint64_t j = rng_() % (n - 1);
  j += j >= i;
  const auto at = [&](std::uint64_t k) {
    return ready_list_ ? (*ready_list_)[static_cast<std::size_t>(k)] : static_cast<std::int32_t>(k);
  };
  const std::int32_t a = at(i), b = at(j);
  return group_outstanding(b) < group_outstanding(a) ? b : a;
}

std::int32_t Router::route(const std::vector<Replica>& replicas) {
  std::int32_t g = 0;
  if (ready_) {  // a dynamic fleet: start from the first ready group, skip the others
    if (ready_list_->empty()) return -1;
    g = ready_list_->front();
  }
  if (groups_ > 1) {
    switch (policy_) {
      case spec::RouterPolicy::round_robin:
        for (std::int32_t k = 0; k < groups_; ++k) {
          g = rr_next_;
          rr_next_ = (rr_next_ + 1) % groups_;
          if (ok(g)) break;
        }
        break;
      case spec::RouterPolicy::least_outstanding:
      case spec::RouterPolicy::session_affinity: g = least_outstanding(); break;  // a request that is no session turn
      case spec::RouterPolicy::weighted_least_outstanding:
      case spec::RouterPolicy::shortest_expected_delay: {
        double best = score(g);
        for (std::int32_t r = g + 1; r < groups_; ++r) {
          if (!ok(r)) continue;
          const double x = score(r);
          if (x < best) best = x, g = r;
        }
        break;
      }
      case spec::RouterPolicy::power_of_two: g = power_of_two(); break;
      case spec::RouterPolicy::least_kv:
        for (std::int32_t r = g + 1; r < groups_; ++r) {
          if (!ok(r)) continue;
          const double a = group_kv_fraction(replicas, r), b = group_kv_fraction(replicas, g);
          if (a < b || (a == b && group_outstanding(r) < group_outstanding(g))) g = r;
        }
        break;
    }
  }
  return least_outstanding_engine(g);
}

std::int32_t Router::route_sticky(const std::vector<Replica>& replicas, std::int32_t home, std::int64_t slots) {
  if (home < 0 || home >= groups_ || !ok(home)) return route(replicas);  // first turn, or its replica is gone
  const std::int64_t n = group_outstanding(home);
  if (n >= slots * per_group_) {  // its batch is full: the turn would queue there; elsewhere if somewhere has less
    const std::int32_t g = least_outstanding();
    if (group_outstanding(g) < n) return least_outstanding_engine(g);
  }
  return least_outstanding_engine(home);
}

}  // namespace llmsim::engine::detail
