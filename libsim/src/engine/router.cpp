#include "router.hpp"

namespace llmsim::engine::detail {

std::int64_t Router::group_outstanding(const std::vector<Replica>& replicas, std::int32_t g) const {
  std::int64_t n = 0;
  for (std::int32_t v = 0; v < per_group_; ++v) n += replicas[static_cast<std::size_t>(g * per_group_ + v)].outstanding();
  return n;
}

double Router::group_kv_fraction(const std::vector<Replica>& replicas, std::int32_t g) const {
  std::int64_t used = 0, cap = 0;
  for (std::int32_t v = 0; v < per_group_; ++v) {
    const auto& kv = replicas[static_cast<std::size_t>(g * per_group_ + v)].kv();
    used += kv.used();
    cap += kv.capacity();
  }
  return static_cast<double>(used) / static_cast<double>(cap);
}

std::int32_t Router::route(const std::vector<Replica>& replicas) {
  std::int32_t g = 0;
  if (ready_) {  // a dynamic fleet: start from the first ready group, skip the others
    while (g < groups_ && !ok(g)) ++g;
    if (g == groups_) return -1;
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
        for (std::int32_t r = g + 1; r < groups_; ++r)
          if (ok(r) && group_outstanding(replicas, r) < group_outstanding(replicas, g)) g = r;
        break;
      case spec::RouterPolicy::least_kv:
        for (std::int32_t r = g + 1; r < groups_; ++r) {
          if (!ok(r)) continue;
          const double a = group_kv_fraction(replicas, r), b = group_kv_fraction(replicas, g);
          if (a < b || (a == b && group_outstanding(replicas, r) < group_outstanding(replicas, g))) g = r;
        }
        break;
    }
  }
  std::int32_t best = g * per_group_;
  for (std::int32_t v = 1; v < per_group_; ++v) {
    const std::int32_t e = g * per_group_ + v;
    if (replicas[static_cast<std::size_t>(e)].outstanding() < replicas[static_cast<std::size_t>(best)].outstanding()) best = e;
  }
  return best;
}

}  // namespace llmsim::engine::detail
