#pragma once
// Test helpers of the run fit: synthetic vLLM latency runs written from a known profile (llmsim's own predictions,
// optionally with a benchmark's scatter), and the RMS error of runs predicted with a profile.
#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "llmsim/analysis/bench_runs.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/perf/provenance.hpp"
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

/// A serving run (`vllm bench serve --save-result`) of `prompts` requests of `in` prompt and `out` output tokens
/// arriving at `rate` per second (Poisson; 0: every request at once, "inf").
struct ServeShape {
  double rate;
  int prompts, in, out;
};

/// The file `vllm bench serve --save-result` writes, with the values given (every request `in` and `out` tokens).
inline std::string vllm_serve_json(const ServeShape& s, double duration, double output_throughput, double mean_ttft_ms,
                                   double mean_tpot_ms) {
  Json j{{"backend", "vllm"}, {"model_id", "meta-llama/Llama-3.1-8B-Instruct"}, {"num_prompts", s.prompts},
         {"request_rate", s.rate > 0 ? Json(s.rate) : Json("inf")}, {"duration", duration}, {"completed", s.prompts},
         {"total_input_tokens", s.prompts * s.in}, {"total_output_tokens", s.prompts * s.out},
         {"request_throughput", s.prompts / duration}, {"output_throughput", output_throughput},
         {"mean_ttft_ms", mean_ttft_ms}, {"mean_tpot_ms", mean_tpot_ms},
         {"input_lens", std::vector<int>(static_cast<std::size_t>(s.prompts), s.in)},
         {"output_lens", std::vector<int>(static_cast<std::size_t>(s.prompts), s.out)}};
  return j.dump(1);
}

/// RUNS.json of vLLM `version` (0.10.1 unless given) serving runs of llama-3.1-8b on `gpu`, each file's output
/// throughput, mean TTFT and mean TPOT the ones `truth` predicts, and each TTFT `extra_ttft_s` longer: a per-request
/// cost outside the GPU's steps (an HTTP server, tokenization) that no profile field prices. Before 0.9 the client is
/// benchmarks/benchmark_serving.py and the server `python3 -m vllm.entrypoints.openai.api_server` (as LambdaLabs ran
/// 0.5.4). Returns the RUNS.json path.
inline std::string synthetic_serve_runs(const TempDir& dir, const std::string& gpu, const std::vector<ServeShape>& shapes,
                                        const perf::HardwareProfile& truth, double extra_ttft_s,
                                        const std::string& version = "0.10.1") {
  const bool old = version.rfind("0.", 0) == 0 && std::stoi(version.substr(2)) < 9;
  Json runs = Json::array();
  for (const auto& s : shapes) {
    const std::string name = "serve_r" + std::to_string(static_cast<int>(s.rate * 100)) + "_n" +
                             std::to_string(s.prompts) + ".json";
    runs.push_back({{"result", name},
                    {"command", std::string(old ? "python3 benchmarks/benchmark_serving.py --backend vllm"
                                                : "vllm bench serve") +
                                    " --model meta-llama/Llama-3.1-8B-Instruct --num-prompts " +
                                    std::to_string(s.prompts) + " --request-rate " +
                                    (s.rate > 0 ? std::to_string(s.rate) : std::string("inf")) +
                                    " --save-result"},
                    {"server_command", std::string(old ? "python3 -m vllm.entrypoints.openai.api_server --model"
                                                       : "vllm serve") +
                                           " meta-llama/Llama-3.1-8B-Instruct"},
                    {"model", "llama-3.1-8b"},
                    {"engine", "vllm"},
                    {"engine_version", version}});
    dir.write(name, vllm_serve_json(s, 100.0, s.prompts * s.out / 100.0, 50.0, 10.0));  // placeholder: rewritten
  }
  Json doc{{"format", "llmsim-runs"}, {"version", 1}, {"gpu", gpu}, {"runs", runs}};
  const std::string path = dir.write("RUNS.json", doc.dump(1));
  const auto parsed = analysis::read_bench_runs(path);
  for (std::size_t i = 0; i < parsed.runs.size(); ++i) {
    const auto& run = parsed.runs[i];
    const auto p = analysis::BenchPredictor(run).predict(truth);
    double thr = 0, ttft = 0, tpot = 0;
    for (std::size_t k = 0; k < p.size(); ++k) {
      const std::string& key = run.measured[k].key;
      (key == "output_throughput" ? thr : key == "mean_ttft_ms" ? ttft : tpot) = p[k];
    }
    const ServeShape& s = shapes[i];
    dir.write(run.result, vllm_serve_json(s, s.prompts * s.out / thr, thr, ttft + 1e3 * extra_ttft_s, tpot));
  }
  return path;
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


/// The value perf/provenance.cpp's table records for `field`; nullopt when it has no entry or no value.
inline std::optional<double> provenance_value(const std::string& field) {
  const auto& t = perf::constant_provenance();
  const auto e = std::find_if(t.begin(), t.end(), [&](const perf::ConstantProvenance& c) { return c.field == field; });
  if (e == t.end()) return std::nullopt;
  return e->value;
}

}  // namespace llmsim::test
