#pragma once
// An SGLang release as the server_args.py defaults need it: 0.minor.patch and the ".postN" suffix (0.4.7.post1 is
// not 0.4.7). Internal to spec: sglang_defaults (engine_config.cpp) and sglang_cuda_graph_max_bs (sglang_graphs.cpp).
#include <optional>
#include <string>

#include "llmsim/spec/runtime_version.hpp"

namespace llmsim::spec::detail {

struct SglangRelease {
  bool known = false;  ///< false: no release, or not an SGLang 0.x one (the newest line modelled applies)
  int minor = 0, patch = 0, post = 0;
  /// This release is major.minor.patch.postN or later (every SGLang release modelled is 0.x).
  bool at_least(int major, int mi, int pa, int po = 0) const noexcept {
    if (major != 0) return major < 0;
    if (minor != mi) return minor > mi;
    if (patch != pa) return patch > pa;
    return post >= po;
  }
};

inline SglangRelease sglang_release(const std::optional<std::string>& release) {
  SglangRelease r;
  if (!release || !is_engine_version(*release)) return r;
  const EngineVersion v = parse_engine_version(*release);
  if (v.engine != "sglang" || v.numbers.empty() || v.numbers[0] != 0) return r;
  r.known = true;
  r.minor = v.numbers.size() > 1 ? v.numbers[1] : 0;
  r.patch = v.numbers.size() > 2 ? v.numbers[2] : 0;
  if (const auto at = v.version.find("post"); at != std::string::npos) {
    int n = 0;
    for (std::size_t i = at + 4; i < v.version.size() && v.version[i] >= '0' && v.version[i] <= '9'; ++i)
      n = n * 10 + (v.version[i] - '0');
    r.post = n;
  }
  return r;
}

}  // namespace llmsim::spec::detail
