// Which validation sources are blind (issue 27, docs/trust.md "Blind sources"): the sets llmsim was developed on
// before issue 27, and every source a constant of the provenance table (provenance.cpp) was chosen while looking at,
// are not; every other source is. The headline of `make validate` is the error on the blind ones.
#include <set>
#include <string>

#include "llmsim/perf/provenance.hpp"

namespace llmsim::perf {

const std::vector<DevelopmentSource>& development_sources() {
  // Every set that was in data/validation, ../shared/reference or tests/data/vllm_results before issue 27: the
  // mechanisms of issues 8-26 were built and checked while reading their rows, so their errors measure fit, not
  // transfer. The repository fragment catches the same data arriving again under another name (a corpus folder).
  static const std::vector<DevelopmentSource> s = {
      {"lmdeploy", "InternLM/lmdeploy"},
      {"gpt_fast", "pytorch-labs/gpt-fast"},
      {"sglang_issue2087", "sgl-project/sglang/issues/2087"},
      {"vllm_pr2192", "vllm-project/vllm/pull/2192"},
      {"vllm_pr23197", "vllm-project/vllm/pull/23197"},
      {"vidur-ops", "microsoft/vidur"},
      {"vidur-allreduce", "microsoft/vidur"},
      {"llamacpp", "XiongjieDai/GPU-Benchmarks-on-LLM-Inference"},
      {"lambdalabs", "LambdaLabsML/vllm-benchmark"},
  };
  return s;
}

std::optional<std::string> development_source_of(const std::string& id, const std::string& url) {
  for (const auto& d : development_sources()) {
    if (d.id == id) return d.id;
    if (!url.empty() && url.find(d.repository) != std::string::npos) return d.id;
  }
  return std::nullopt;
}

std::set<std::string> non_blind_sources() {
  std::set<std::string> s;
  for (const auto& d : development_sources()) s.insert(d.id);
  for (const auto& e : constant_provenance()) s.insert(e.looked_at.begin(), e.looked_at.end());
  return s;
}

bool is_blind_source(const std::string& id, const std::string& url) {
  if (development_source_of(id, url)) return false;
  return non_blind_sources().count(id) == 0;
}

}  // namespace llmsim::perf
