// The serving path as a field of a fit to benchmark runs (HardwareProfile::api_server_s; perf/serving_path.hpp,
// docs/calibration.md): serving runs at light load whose TTFT carries a per-request cost outside the GPU's steps give
// it back, the fitted profile prices it on its own runtime only, and runs that it does not move leave it unfitted.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <string>

#include "fit/run_fit.hpp"
#include "llmsim/analysis/bench_runs.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/perf/serving_path.hpp"
#include "llmsim/spec/catalog.hpp"
#include "synthetic_runs.hpp"

using namespace llmsim;

namespace {

/// The vLLM V1 server's own fixed path (RuntimeTraits::api_server_s, 4 ms), which the synthetic runs' truth departs
/// from.
double v1_api_server_s() { return perf::runtime_traits(spec::Runtime::vllm_v1).api_server_s; }

}  // namespace

// llmsim's own vLLM 0.10.1 serving runs of an H100 at 1, 2 and 4 req/s (below capacity), written from a server whose
// path costs 12 ms per request (3x the runtime's 4 ms: an HTTP stack and tokenizer on a slower host) and whose
// weights stream 10 % slower. The runs' TTFT carries the path and their TPOT does not, so the fit tells the two apart
// and gives both back.
TEST_CASE("run fit: serving runs at light load give back a known per-request serving path",
          "[calibration][runs][serving_path]") {
  for (const auto& entry : {std::pair{"run_fit.serving_path_max_s", calibration::kServingPathMaxS},
                            std::pair{"run_fit.jacobian_step_model", calibration::kStepModel},
                            std::pair{"run_fit.jacobian_step_simulated", calibration::kStepSimulated}}) {
    const std::string field = entry.first;
    INFO(field);
    const auto recorded = test::provenance_value(field);
    REQUIRE(recorded.has_value());
    CHECK(*recorded == entry.second);
  }

  const auto gpu = spec::Catalog::builtin().gpu("h100-80gb-sxm");
  const perf::HardwareProfile base = perf::default_profile(gpu);
  perf::HardwareProfile truth = base;
  truth.api_server_s = 3 * v1_api_server_s();
  for (auto& y : truth.gemm_bw_eff_vs_m.y) y *= 0.90;
  test::TempDir dir("runfit-path");
  const std::vector<test::ServeShape> shapes{{1, 300, 512, 128}, {2, 400, 1024, 128}, {4, 500, 512, 64}};
  const auto runs = analysis::read_bench_runs(test::synthetic_serve_runs(dir, gpu.id, shapes, truth, 0)).runs;
  REQUIRE(runs.front().runtime == spec::Runtime::vllm_v1);

  calibration::RunFitOptions o;
  o.cross_validate = false;
  o.fields = {"api_server_s", "gemm_bw_eff_vs_m"};
  const auto rep = calibration::fit_runs(runs, gpu, base, o);
  std::map<std::string, double> got;
  for (const auto& f : rep.fields) {
    got[f.field] = f.fitted;
    std::cout << "  " << f.field << ": " << f.base << " -> " << f.fitted << " [" << f.lower << ", " << f.upper << "]\n";
  }
  std::cout << "serving path fit: rms before " << rep.rms_before << ", after " << rep.rms_after << "; "
            << rep.iterations << " iterations (" << rep.stopped_by << ")\n";
  REQUIRE(got.count("api_server_s"));
  CHECK(std::abs(got["api_server_s"] / *truth.api_server_s - 1) < 0.02);
  REQUIRE(got.count("gemm_bw_eff_vs_m"));
  CHECK(std::abs(got["gemm_bw_eff_vs_m"] / 0.90 - 1) < 0.02);
  CHECK(rep.rms_before > 0.05);
  CHECK(rep.rms_after < 1e-3);
  // Its bounds: nothing in effect (1 % of the runtime's) to kServingPathMaxS.
  const auto field = std::find_if(rep.fields.begin(), rep.fields.end(), [](const auto& f) { return f.field == "api_server_s"; });
  CHECK(field->base == v1_api_server_s());
  CHECK(field->upper == Approx(calibration::kServingPathMaxS));
  CHECK(field->lower < 1e-4);

  // The fitted profile records it, keeps it through its file, and prices it on its own runtime only: another
  // runtime keeps its own path, and the runtime note says the fitted one is not used.
  REQUIRE(rep.profile.api_server_s);
  const auto back = perf::profile_from_json(JsonView(perf::to_json(rep.profile), "profile"));
  REQUIRE(back.api_server_s);
  CHECK(*back.api_server_s == *rep.profile.api_server_s);
  CHECK(back.runtime == "vllm-v1");
  spec::EngineConfig v1;
  v1.runtime = spec::Runtime::vllm_v1;
  spec::EngineConfig sglang;
  sglang.runtime = spec::Runtime::sglang;
  CHECK(perf::serving_path(v1, false, back).fixed_s == *back.api_server_s);
  CHECK(perf::serving_path(v1, true, back).fixed_s == 0);  // offline: no server
  CHECK(perf::serving_path(sglang, false, back).fixed_s == perf::runtime_traits(spec::Runtime::sglang).api_server_s);
  const auto note = perf::runtime_mismatch(back, spec::Runtime::sglang);
  REQUIRE(note);
  CHECK_THAT(*note, Catch::Contains("api_server_s") && Catch::Contains("not used"));
  // A profile without it (a default or a microbenchmark fit) prices the runtime's path.
  CHECK(perf::serving_path(v1, false, base).fixed_s == v1_api_server_s());
  // ... and the serving runs predicted with the fitted profile carry it: their TTFT is the truth's.
  for (const auto& r : runs) {
    const auto p = analysis::BenchPredictor(r).predict(rep.profile);
    for (std::size_t k = 0; k < p.size(); ++k) CHECK(p[k] / r.measured[k].value - 1 == Approx(0).margin(2e-3));
  }
}

// Serving runs sent all at once with long prompts: their TTFT is seconds of queueing and prefill, which a few ms of
// path move by far less than RunFitOptions::min_sensitivity; static batches have no path. Neither fits it.
TEST_CASE("run fit: runs that the serving path does not move leave it unfitted", "[calibration][runs][serving_path]") {
  const auto gpu = spec::Catalog::builtin().gpu("h100-80gb-sxm");
  const perf::HardwareProfile base = perf::default_profile(gpu);
  test::TempDir dir("runfit-path-heavy");
  const auto runs =
      analysis::read_bench_runs(
          test::synthetic_serve_runs(dir, gpu.id, {{0, 300, 4096, 64}, {0, 400, 4096, 32}}, base, 0))
          .runs;
  calibration::RunFitOptions o;
  o.cross_validate = false;
  o.fields = {"api_server_s", "gemm_eff_vs_m"};
  const auto rep = calibration::fit_runs(runs, gpu, base, o);
  for (const auto& f : rep.unconstrained) std::cout << "  unconstrained: " << f << "\n";
  CHECK(std::find(rep.unconstrained.begin(), rep.unconstrained.end(), "api_server_s") != rep.unconstrained.end());
  CHECK(std::none_of(rep.fields.begin(), rep.fields.end(), [](const auto& f) { return f.field == "api_server_s"; }));
  CHECK_FALSE(rep.profile.api_server_s);

  test::TempDir sdir("runfit-path-static");
  const auto batches = analysis::read_bench_runs(
      test::synthetic_runs(sdir, gpu.id, {{1, 128, 128}, {8, 512, 64}, {16, 1024, 32}}, base));
  calibration::RunFitOptions path_only;
  path_only.cross_validate = false;
  path_only.fields = {"api_server_s"};
  CHECK_THROWS_WITH(calibration::fit_runs(batches.runs, gpu, base, path_only),
                    Catch::Contains("'api_server_s' names no candidate field"));
}

