// `llmsim search` at scale (issue 16): the chat-8b scenario at 20 req/s over every catalogue card × 1/2/4/8 GPUs
// (tensor parallel) and 2/4 (pipeline parallel) × 4 weight formats × 2 KV dtypes × 4 max_num_seqs × 4
// max_num_batched_tokens (> 10,000 configurations), with a capacity search per surviving configuration, on 2
// threads. Prints the wall time, the CPU time (what a loaded machine does not inflate) and the counts of each
// pruning stage, for the default mode (the front within 2x the winner's bill) and the winner-only mode
// (front_cost_ratio 1). Target: < 60 s on 2 cores. Run from the repository root, or pass a scenario file, a target
// QPS and one front_cost_ratio to run only that mode.
#include <sys/resource.h>

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
  auto cpu_s = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  };
  std::vector<double> ratios{analysis::SearchOptions{}.front_cost_ratio, 1.0};
  if (argc > 3) ratios = {ratio};
  bool slow = false;
  for (const double r : ratios) {
    analysis::SearchOptions o;
    o.target_qps = target;
    o.axes = analysis::default_search_axes(gpus);
    o.jobs = 2;
    o.front_cost_ratio = r;
    std::size_t space = 1;
    for (const auto& a : o.axes) space *= a.values.size();
    std::printf("search: %s at %.1f req/s over %zu configurations, 2 threads, front_cost_ratio %.2f%s\n", file.c_str(),
                target, space, r, r == 1.0 ? " (the winner only)" : " (the default: the front within that x the winner)");
    auto t0 = std::chrono::steady_clock::now();
    analysis::plan_search(doc, o, catalog);  // timed alone: the static pruning's share
    const double plan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_s();
    const auto res = analysis::search(doc, o, catalog);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_s() - c0;
    std::printf("  enumerated %lld: invalid %lld, pruned by memory %lld, by budget %lld, by bound %lld; simulated %lld "
                "(screened out early %lld, run in full %lld, feasible %lld); front %zu after re-checking %lld\n",
                static_cast<long long>(res.enumerated), static_cast<long long>(res.invalid),
                static_cast<long long>(res.pruned_memory), static_cast<long long>(res.pruned_budget),
                static_cast<long long>(res.pruned_bound), static_cast<long long>(res.simulated),
                static_cast<long long>(res.screened), static_cast<long long>(res.simulated - res.screened),
                static_cast<long long>(res.feasible), res.front.size(), static_cast<long long>(res.rechecked));
    if (res.winner) {
      const auto& w = res.front[*res.winner];
      std::printf("  winner: %s, $%.0f/month, %d replica(s)\n", w.candidate.name.c_str(), w.evaluation.monthly_cost,
                  w.evaluation.replicas);
    }
    for (const auto& m : res.front)
      std::printf("  front: %s $%.0f TTFT %.0f ms TPOT %.1f ms\n", m.candidate.name.c_str(), m.evaluation.monthly_cost,
                  m.evaluation.ttft_p95_ms, m.evaluation.tpot_p95_ms);
    std::printf("  wall time %.1f s (of which the static pruning %.1f s), CPU %.1f s (target < 60 s "
                "wall on 2 cores): %s\n",
                s, plan_s, cpu, s < 60 ? "OK" : "SLOW");
    slow = slow || !(s < 60);
  }
  return slow ? 1 : 0;
}
