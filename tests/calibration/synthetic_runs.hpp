#pragma once
// Test helpers of the run fit: synthetic vLLM latency runs written from a known profile (llmsim's own predictions,
// optionally with a benchmark's scatter), and the RMS error of runs predicted with a profile.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "llmsim/analysis/bench_runs.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/catalog.hpp"
#include "run_files.hpp"

namespace llmsim::test {

struct Shape {
  int batch, in, out;
};

/// Six batch-1, decode-heavy shapes on an A100 80GB SXM whose host costs 1.5x the base per step and whose decode
/// attention is 10 % slower: what batch 1 pins (their sum) and what it barely sees (the split between them).
struct Batch1HostAttentionCase {
  perf::HardwareProfile base, truth;
  std::vector<Shape> shapes{{1, 128, 256}, {1, 512, 512}, {1, 1024, 128}, {1, 64, 1024}, {1, 256, 64}, {1, 1000, 48}};
  explicit Batch1HostAttentionCase(const spec::GpuSpec& gpu) : base(perf::default_profile(gpu)), truth(base) {
    truth.cpu_overhead_per_iter_s *= 1.5;
    truth.attn_decode_cta_bandwidth *= 0.9;
  }
};

/// How synthetic runs are written: the release and entry point, and the measurement's scatter.
struct Synth {
  int tp = 1;
  std::string version = "0.10.1";  ///< vllm 0.10: runtime vllm-v1, `vllm bench latency`
  /// Each file's latency is the truth's times (1 + u), u uniform in [-noise, noise] (seeded): a benchmark's
  /// run-to-run scatter, so that a field the runs pin only below it is seen to wander.
  double noise = 0;
  unsigned seed = 1;
};

/// RUNS.json of latency runs of llama-3.1-8b on `gpu`, each file's avg_latency the one `truth` predicts (with the
/// scatter of `synth`). Returns the RUNS.json path.
inline std::string synthetic_runs(const TempDir& dir, const std::string& gpu, const std::vector<Shape>& shapes,
                                  const perf::HardwareProfile& truth, const Synth& synth) {
  // vLLM before 0.9 had no `vllm bench`: its benchmarks/benchmark_latency.py (same flags, same file).
  const bool old = synth.version.rfind("0.", 0) == 0 && std::stoi(synth.version.substr(2)) < 9;
  Json runs = Json::array();
  for (const auto& s : shapes) {
    const std::string name = "lat_b" + std::to_string(s.batch) + "_i" + std::to_string(s.in) + "_o" +
                             std::to_string(s.out) + ".json";
    runs.push_back({{"result", name},
                    {"command", std::string(old ? "python benchmarks/benchmark_latency.py" : "vllm bench latency") +
                                    " --model meta-llama/Llama-3.1-8B-Instruct --batch-size " +
                                    std::to_string(s.batch) + " --input-len " + std::to_string(s.in) +
                                    " --output-len " + std::to_string(s.out) + " -tp " + std::to_string(synth.tp) +
                                    " --dtype bfloat16 --output-json " + name},
                    {"engine", "vllm"},
                    {"engine_version", synth.version}});
    dir.write(name, vllm_latency_json(1.0));  // placeholder: read once to know the run, then rewritten
  }
  Json doc{{"format", "llmsim-runs"}, {"version", 1}, {"gpu", gpu}, {"runs", runs}};
  const std::string path = dir.write("RUNS.json", doc.dump(1));
  const auto parsed = analysis::read_bench_runs(path);
  std::mt19937 rng(synth.seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (const auto& run : parsed.runs) {
    const double t = analysis::BenchPredictor(run).predict(truth).at(0) * (1 + synth.noise * u(rng));
    dir.write(run.result, vllm_latency_json(t));
  }
  return path;
}

inline std::string synthetic_runs(const TempDir& dir, const std::string& gpu, const std::vector<Shape>& shapes,
                                  const perf::HardwareProfile& truth, int tp = 1) {
  Synth s;
  s.tp = tp;
  return synthetic_runs(dir, gpu, shapes, truth, s);
}

/// RMS relative error of the runs' values predicted with `profile`.
inline double rms_error(const std::vector<analysis::BenchRun>& runs, const perf::HardwareProfile& profile) {
  double s = 0;
  int n = 0;
  for (const auto& r : runs) {
    const auto p = analysis::BenchPredictor(r).predict(profile);
    for (std::size_t i = 0; i < p.size(); ++i, ++n) s += std::pow(p[i] / r.measured[i].value - 1.0, 2);
  }
  return std::sqrt(s / n);
}


}  // namespace llmsim::test
