// A 1,000-point sweep of the default scenario (4 GPUs x 2 formats x 5 rates x 5 max_num_seqs x 5 seeds) with
// 1 and 2 threads: wall time, points per second, and whether the rows match. Target (issue 5): < 30 s
// with --jobs 2.
#include <chrono>
#include <cstdio>
#include <string>

#include "llmsim/analysis/sweep.hpp"
#include "llmsim/core/json_view.hpp"

int main(int argc, char** argv) {
  using namespace llmsim;
  const std::string base = argc > 1 ? argv[1] : std::string("examples/scenarios/chat-8b.json");
  Json grid = Json::object();
  grid["base"] = base;
  grid["grid"] = Json::parse(R"({
    "hardware.gpu": ["rtx4090-24gb", "rtx4090-48gb", "a100-80gb-pcie", "a100-80gb-sxm"],
    "quant.weights": ["fp16", "awq-int4"],
    "workload.arrival.rate": [1, 2, 3, 4, 6],
    "engine.max_num_seqs": [16, 32, 64, 128, 256],
    "workload.seed": [1, 2, 3, 4, 5]})");
  const auto g = analysis::expand_grid(JsonView(grid, ""));
  std::printf("sweep: %zu points of %s (2000 requests each)\n", g.points.size(), base.c_str());
  std::vector<analysis::Row> rows1, rows2;
  double t1 = 0, t2 = 0;
  for (int jobs : {1, 2}) {
    const auto t0 = std::chrono::steady_clock::now();
    auto rows = analysis::run_sweep(g.points, jobs);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("--jobs %d: %.2f s wall, %.0f points/s\n", jobs, s, g.points.size() / s);
    (jobs == 1 ? rows1 : rows2) = std::move(rows);
    (jobs == 1 ? t1 : t2) = s;
  }
  bool same = rows1.size() == rows2.size();
  for (std::size_t i = 0; same && i < rows1.size(); ++i)
    same = analysis::to_json(rows1[i]).dump() == analysis::to_json(rows2[i]).dump();
  std::printf("speed-up with 2 threads: %.2fx; rows identical: %s; target < 30 s with --jobs 2: %s\n", t1 / t2,
              same ? "yes" : "NO", t2 < 30 ? "OK" : "SLOW");
  return same ? 0 : 1;
}
