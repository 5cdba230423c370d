#pragma once
// One comparison of release numbers for the spec layer's release rules (runtime_version.cpp, v0_running_order.cpp).
#include <cstddef>
#include <initializer_list>
#include <vector>

namespace llmsim::spec::detail {

/// a < b on (major, minor, patch), missing parts = 0.
inline bool release_before(const std::vector<int>& a, std::initializer_list<int> b) {
  std::size_t i = 0;
  for (int x : b) {
    const int y = i < a.size() ? a[i] : 0;
    if (y != x) return y < x;
    ++i;
  }
  return false;
}

}  // namespace llmsim::spec::detail
