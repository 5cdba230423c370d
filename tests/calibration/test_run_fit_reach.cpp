// DIAG (scratch): sensitivity of static-batch runs to each profile field, by batch.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <iostream>
#include <map>

#include "llmsim/analysis/bench_runs.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/catalog.hpp"
#include "synthetic_runs.hpp"

using namespace llmsim;

TEST_CASE("diag reach", "[.][diag_reach]") {
  for (std::string id : {"h100-80gb-sxm", "a100-80gb-sxm"}) {
    const auto gpu = spec::Catalog::builtin().gpu(id);
    perf::HardwareProfile base = perf::default_profile(gpu);
    for (auto& [dt, c] : base.gemm_eff_vs_m) {
      perf::Curve t;
      for (double x : {1.0, 16.0, 128.0, 512.0, 1024.0, 4096.0, 16384.0}) { t.x.push_back(x); t.y.push_back(c.at(x)); }
      c = t;
    }
    const std::vector<std::pair<int, int>> lengths{{128, 128}, {512, 128},  {1024, 256}, {2048, 128}, {256, 512},
                                                   {1024, 32}, {32, 1024},  {4096, 64},  {512, 512},  {128, 2048}};
    std::vector<test::Shape> shapes;
    for (int b : {1, 16, 32, 64})
      for (auto [in, out] : lengths) shapes.push_back({b, in, out});
    test::Synth s; s.version = "0.5.4";
    test::TempDir dir("diag-reach");
    const auto runs = analysis::read_bench_runs(test::synthetic_runs(dir, id, shapes, base, s)).runs;
    using F = std::function<void(perf::HardwareProfile&, double)>;
    auto range = [](double lo, double hi) {
      return F([lo, hi](perf::HardwareProfile& p, double m) {
        for (auto& [dt, c] : p.gemm_eff_vs_m)
          for (std::size_t i = 0; i < c.x.size(); ++i) if (c.x[i] > lo && c.x[i] <= hi) c.y[i] *= m;
      });
    };
    std::vector<std::pair<std::string, F>> fields{
        {"gemm[M<=128]", range(0, 128)}, {"gemm[128-1024]", range(128, 1024)}, {"gemm[>1024]", range(1024, 1e9)},
        {"gemm_bw", [](perf::HardwareProfile& p, double m) { for (auto& y : p.gemm_bw_eff_vs_m.y) y *= m; }},
        {"attn_dec_bw", [](perf::HardwareProfile& p, double m) { p.attn_decode_bw_efficiency *= m; }},
        {"attn_dec_cta", [](perf::HardwareProfile& p, double m) { p.attn_decode_cta_bandwidth *= m; }},
        {"attn_dec_cta_s", [](perf::HardwareProfile& p, double m) { p.attn_decode_cta_s *= m; }},
        {"attn_dec_fixed", [](perf::HardwareProfile& p, double m) { p.attn_decode_fixed_s *= m; }},
        {"attn_prefill", [](perf::HardwareProfile& p, double m) { p.attn_prefill_efficiency *= m; }},
        {"v0_iter", [](perf::HardwareProfile& p, double m) { p.v0_cpu_overhead_per_iter_s *= m; }},
        {"v0_seq", [](perf::HardwareProfile& p, double m) { p.v0_cpu_overhead_per_seq_s *= m; }},
        {"gemm_fixed", [](perf::HardwareProfile& p, double m) { p.gemm_fixed_s *= m; }},
        {"graph_launch", [](perf::HardwareProfile& p, double m) { p.graph_launch_s *= m; }},
        {"mem_bw", [](perf::HardwareProfile& p, double m) { p.mem_bw_efficiency *= m; }},
        {"roofline_exp", [](perf::HardwareProfile& p, double m) { p.roofline_exponent *= m; }},
    };
    std::vector<double> t0;
    for (const auto& r : runs) t0.push_back(analysis::BenchPredictor(r).predict(base).at(0));
    std::cout << id << " d log T / d log field: max|.| (mean) over lengths, per batch\n";
    for (const auto& [name, f] : fields) {
      perf::HardwareProfile p = base;
      f(p, std::exp(0.02));
      std::map<int, std::pair<double, double>> by;  // batch -> max, sum
      for (std::size_t k = 0; k < runs.size(); ++k) {
        const double d = std::log(analysis::BenchPredictor(runs[k]).predict(p).at(0) / t0[k]) / 0.02;
        auto& e = by[shapes[k].batch];
        e.first = std::max(e.first, std::abs(d));
        e.second += d / lengths.size();
      }
      std::printf("  %-16s", name.c_str());
      for (auto& [b, e] : by) std::printf("  b%-2d %7.4f (%+7.4f)", b, e.first, e.second);
      std::printf("\n");
    }
    std::printf("  per-run breakdown b16 vs b64 for attn_dec_bw / cta:\n");
  }
}
