#pragma once
// One comparison of release numbers for the spec layer's release rules (runtime_version.cpp, v0_running_order.cpp,
// architecture_release.cpp).
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

/// The same for a release held as numbers ({0, 6, 6}).
inline bool release_before(const std::vector<int>& a, const std::vector<int>& b) {
  for (std::size_t i = 0; i < a.size() || i < b.size(); ++i) {
    const int x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y;
  }
  return false;
}

}  // namespace llmsim::spec::detail
