// `llmsim search` at scale (issue 16): the chat-8b scenario at 20 req/s over every catalogue card × 1/2/4/8 GPUs
// (tensor parallel) and 2/4 (pipeline parallel) × 4 weight formats × 2 KV dtypes × 4 max_num_seqs × 4
// max_num_batched_tokens (> 10,000 configurations), with a capacity search per surviving configuration, on 2
// threads. Prints the wall time and the counts. Target: < 60 s on 2 cores. Run from the repository root, or pass
// a scenario file, a target QPS and a front_cost_ratio (1 = branch-and-bound for the winner only).
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "llmsim/analysis/search.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/catalog.hpp"

int main(int argc, char** argv) {
  using namespace llmsim;
  const std::string file = argc > 1 ? argv[1] : std::string("examples/scenarios/chat-8b.json");
  const double target = argc > 2 ? std::stod(argv[2]) : 20.0;
  const double ratio = argc > 3 ? std::stod(argv[3]) : analysis::SearchOptions{}.front_cost_ratio;
  const Json doc = read_json_file(file);
  const auto& catalog = spec::Catalog::builtin();
  std::vector<std::string> gpus;
  for (const auto& id : catalog.gpu_ids())
    for (const std::string prefix : {"", "2x", "4x", "8x"}) gpus.push_back(prefix + id);
  for (const auto& id : catalog.gpu_ids())
    for (const std::string prefix : {"2x", "4x"}) gpus.push_back(prefix + id + "@pp");
  analysis::SearchOptions o;
  o.target_qps = target;
  o.axes = analysis::default_search_axes(gpus);
  o.jobs = 2;
  o.front_cost_ratio = ratio;
  std::size_t space = 1;
  for (const auto& a : o.axes) space *= a.values.size();
  std::printf("search: %s at %.1f req/s over %zu configurations, 2 threads, front_cost_ratio %.2f\n", file.c_str(),
              target, space, ratio);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = analysis::search(doc, o, catalog);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("enumerated %lld: invalid %lld, pruned by memory %lld, by budget %lld, by bound %lld; simulated %lld "
              "(feasible %lld); front %zu re-checked\n",
              static_cast<long long>(r.enumerated), static_cast<long long>(r.invalid),
              static_cast<long long>(r.pruned_memory), static_cast<long long>(r.pruned_budget),
              static_cast<long long>(r.pruned_bound), static_cast<long long>(r.simulated),
              static_cast<long long>(r.feasible), r.front.size());
  if (r.winner) {
    const auto& w = r.front[*r.winner];
    std::printf("winner: %s, $%.0f/month, %d replica(s)\n", w.candidate.name.c_str(), w.evaluation.monthly_cost,
                w.evaluation.replicas);
  }
  std::printf("wall time %.1f s (target < 60 s on 2 cores): %s\n", s, s < 60 ? "OK" : "SLOW");
  return 0;
}
