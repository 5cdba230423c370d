// Issue 28's independent check on public measurements: static batches of two cards, fitted at batch 1 and 16,
// predicting batch 32 and 64, which the fit never saw. The one public, non-reserved set we hold with batch 1, 16, 32
// and 64 on an A100 and an H100 is SplitwiseSim's profiling table (data/validation/corpus/splitwise-sim-perf-model,
// perf_model.csv, Patel et al., "Splitwise", ISCA 2024; MIT): Llama-2-70B fp16 at TP 2, 4 and 8 on a DGX-A100 and a
// DGX-H100, each configuration repeated 5 times (15 at 512/128), batch 1 at 13 lengths and batch 2-64 at 512 in /
// 128 out. `make validate` leaves it unscored (its engine release is not stated; vLLM of late 2023 is inferred), and
// nothing of llmsim was set from it; a user's fit to it sets no constant either.
//
// Each configuration becomes one run as `benchmark_latency.py --output-json` would have written it: `latencies` the
// repetitions' e2e_time (whole batch, prefill and decode), `avg_latency` their mean: the value the independent check
// compares. Lengths beyond Llama-2's 4,096-token context (prompt 4096 and 8192, outputs 4096 and 8192 after 512) are
// left out: vLLM refuses them without rope scaling, which the table does not record.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "fit/run_fit.hpp"
#include "llmsim/analysis/bench_runs.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/catalog.hpp"
#include "run_files.hpp"

using namespace llmsim;

namespace {

/// One configuration of perf_model.csv: its repetitions' e2e_time (ms).
struct SplitwiseConfig {
  int tp = 0, batch = 0, in = 0, out = 0;
  std::vector<double> e2e_ms;
  double prompt_ms = 0, token_ms = 0;  ///< means over the repetitions
};

/// The Llama-2-70B rows of `hardware` ("a100-80gb", "h100-80gb"), grouped by TP, batch and lengths.
std::vector<SplitwiseConfig> splitwise_configs(const std::string& hardware) {
  const std::string path =
      std::string(LLMSIM_DATA_DIR) + "/validation/corpus/splitwise-sim-perf-model/perf_model.csv";
  std::ifstream f(path);
  REQUIRE(f.good());
  std::string line;
  std::getline(f, line);
  auto split = [](const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string c;
    while (std::getline(ss, c, ',')) out.push_back(c);
    return out;
  };
  const auto head = split(line);
  auto col = [&](const char* name) {
    const auto it = std::find(head.begin(), head.end(), name);
    REQUIRE(it != head.end());
    return static_cast<std::size_t>(it - head.begin());
  };
  const std::size_t c_model = col("model"), c_hw = col("hardware"), c_in = col("prompt_size"), c_b = col("batch_size"),
                    c_out = col("token_size"), c_e2e = col("e2e_time"), c_tp = col("tensor_parallel"),
                    c_prompt = col("prompt_time"), c_token = col("token_time");
  std::map<std::tuple<int, int, int, int>, SplitwiseConfig> by;
  while (std::getline(f, line)) {
    const auto c = split(line);
    if (c.size() != head.size() || c[c_model] != "llama2-70b" || c[c_hw] != hardware) continue;
    SplitwiseConfig k{std::stoi(c[c_tp]), std::stoi(c[c_b]), std::stoi(c[c_in]), std::stoi(c[c_out]), {}};
    auto& g = by[{k.tp, k.batch, k.in, k.out}];
    if (g.e2e_ms.empty()) g = k;
    g.e2e_ms.push_back(std::stod(c[c_e2e]));
    g.prompt_ms += std::stod(c[c_prompt]);
    g.token_ms += std::stod(c[c_token]);
  }
  std::vector<SplitwiseConfig> out;
  for (auto& [key, g] : by) {
    g.prompt_ms /= static_cast<double>(g.e2e_ms.size());
    g.token_ms /= static_cast<double>(g.e2e_ms.size());
    out.push_back(g);
  }
  return out;
}

/// The configurations as benchmark_latency runs of vLLM `version` on `gpu` (RUNS.json and one file each in `dir`).
analysis::BenchRuns splitwise_runs(const test::TempDir& dir, const std::string& gpu,
                                   const std::vector<SplitwiseConfig>& configs, const std::string& version) {
  Json runs = Json::array();
  for (const auto& c : configs) {
    const std::string name = "tp" + std::to_string(c.tp) + "_b" + std::to_string(c.batch) + "_i" +
                             std::to_string(c.in) + "_o" + std::to_string(c.out) + ".json";
    Json j;
    double sum = 0;
    std::vector<double> lat;
    for (double ms : c.e2e_ms) {
      lat.push_back(ms / 1e3);
      sum += ms / 1e3;
    }
    j["avg_latency"] = sum / static_cast<double>(lat.size());
    j["latencies"] = lat;
    dir.write(name, j.dump(1));
    runs.push_back({{"result", name},
                    {"command", "python benchmarks/benchmark_latency.py --model meta-llama/Llama-2-70b-hf -tp " +
                                    std::to_string(c.tp) + " --batch-size " + std::to_string(c.batch) +
                                    " --input-len " + std::to_string(c.in) + " --output-len " + std::to_string(c.out) +
                                    " --num-iters " + std::to_string(lat.size()) + " --dtype float16 --output-json " +
                                    name},
                    {"engine", "vllm"},
                    {"engine_version", version}});
  }
  Json doc{{"format", "llmsim-runs"}, {"version", 1}, {"gpu", gpu}, {"runs", runs}};
  return analysis::read_bench_runs(dir.write("RUNS.json", doc.dump(1)));
}

struct Errors {
  double median = 0, p90 = 0, signed_median = 0;
};

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double i = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(i);
  return lo + 1 < v.size() ? v[lo] + (i - static_cast<double>(lo)) * (v[lo + 1] - v[lo]) : v[lo];
}

Errors errors(const std::vector<analysis::BenchRun>& runs, const perf::HardwareProfile& profile,
              const std::string& label = "") {
  std::vector<double> a, s;
  for (const auto& r : runs) {
    const double e = analysis::BenchPredictor(r).predict(profile).at(0) / r.measured.at(0).value - 1;
    if (!label.empty()) std::cout << "    " << label << " " << r.result << ": " << e << "\n";
    a.push_back(std::abs(e));
    s.push_back(e);
  }
  return {percentile(a, 0.5), percentile(a, 0.9), percentile(s, 0.5)};
}

struct CardResult {
  Errors before, after;
  double per_seq_share = 0;  ///< the runs' share of the V0 per-sequence host cost's estimate (0 when not fitted)
};

CardResult splitwise_card(const std::string& hardware, const std::string& gpu_id) {
  const auto gpu = spec::Catalog::builtin().gpu(gpu_id);
  const perf::HardwareProfile base = perf::default_profile(gpu);
  std::vector<SplitwiseConfig> kept;
  for (const auto& c : splitwise_configs(hardware)) {
    // Every repetition generated the nominal output: its e2e_time is the prefill and out - 1 decode steps (within
    // 2 %). The rows of 512 and more output tokens fall short of it (e2e 25 s at 4,096 and at 8,192 tokens, a
    // coefficient of variation of 20-120 % across repetitions): those runs stopped at an end-of-sequence token, and
    // are not a static batch of the length the row names.
    double e2e = 0;
    for (double v : c.e2e_ms) e2e += v / static_cast<double>(c.e2e_ms.size());
    const double steps = c.prompt_ms + (c.out - 1) * c.token_ms;
    const bool full = std::abs(steps / e2e - 1) < 0.02;
    if (c.in + c.out <= 4096 && full) kept.push_back(c);
    else
      std::cout << "  left out: tp" << c.tp << " b" << c.batch << " " << c.in << "/" << c.out
                << (c.in + c.out > 4096 ? " (beyond Llama-2's 4,096-token context)" : " (stopped before its output length)")
                << "\n";
  }
  test::TempDir dir("splitwise-" + hardware);
  const auto all = splitwise_runs(dir, gpu_id, kept, "0.2.1");
  std::vector<analysis::BenchRun> fit, unseen;
  for (const auto& r : all.runs) {
    try {
      analysis::BenchPredictor p(r);
    } catch (const ConfigError& e) {
      std::cout << "  left out: " << e.what() << "\n";
      continue;
    }
    if (r.batch == 1 || r.batch == 16) fit.push_back(r);
    if (r.batch == 32 || r.batch == 64) unseen.push_back(r);
  }
  std::cout << hardware << ": uncalibrated signed error by batch\n";
  for (int b : {1, 16, 32, 64}) {
    std::vector<analysis::BenchRun> sel;
    for (const auto& r : fit)
      if (r.batch == b) sel.push_back(r);
    for (const auto& r : unseen)
      if (r.batch == b) sel.push_back(r);
    if (sel.empty()) continue;
    const Errors e = errors(sel, base);
    std::cout << "  batch " << b << " (" << sel.size() << " runs): signed median " << e.signed_median << ", median |e| "
              << e.median << "\n";
  }
  calibration::RunFitOptions options;
  options.fields = {"auto"};
  const auto rep = calibration::fit_runs(fit, gpu, base, options);
  const Errors before = errors(unseen, base, "before"), after = errors(unseen, rep.profile, "after");
  std::cout << hardware << ": fitted on " << fit.size() << " runs (batch 1, 16)";
  if (rep.profile.cross_validated_error)
    std::cout << ", leave-one-out median " << rep.profile.cross_validated_error->median_abs << ", p90 "
              << rep.profile.cross_validated_error->p90_abs;
  std::cout << "; unseen " << unseen.size() << " runs (batch 32, 64): median " << before.median << " -> "
            << after.median << ", p90 " << before.p90 << " -> " << after.p90 << ", signed median "
            << before.signed_median << " -> " << after.signed_median << "\n";
  for (const auto& fl : rep.fields)
    std::cout << "  " << fl.field << ": " << fl.base << " -> " << fl.fitted << " (runs' share " << fl.data_share
              << ")\n";
  for (const auto& r : rep.runs)
    std::cout << "    fitted " << r.run << ": " << r.error_before << " -> " << r.error_after << "\n";
  for (const auto& n : rep.notes) std::cout << "  " << n << "\n";
  CardResult out{before, after, 0};
  for (const auto& fl : rep.fields)
    if (fl.field == "v0_cpu_overhead_per_seq_s") out.per_seq_share = fl.data_share;
  return out;
}

}  // namespace

// One case per card, so that ctest runs the two side by side (tests/calibration/CMakeLists.txt). The fields are the
// ones the runs' leave-one-out error chooses (`--fields auto`, as for the serving runs of test_run_fit.cpp): on the
// H100, decode attention's bandwidth is moved by one run only (TP 2, batch 16), which a plain fit of every constrained
// field refuses with a ConfigError naming it. What the check's bar asks (unseen median <= 6 %, p90 <= 12 %, better
// than uncalibrated) is printed; asserted are the p90 bar and a median a third of the uncalibrated one, and that the
// runs, not the prior, set the per-sequence host cost: batch 1 to 16 grow the decode step by 0.2-0.25 ms per
// sequence, 2-4 times the whole cost vLLM 0.2's runtime pays (docs/calibration.md, "Static batches").
void check_card(const CardResult& c) {
  CHECK(c.after.median < c.before.median / 3);
  CHECK(c.after.p90 < c.before.p90);
  CHECK(c.after.p90 <= 0.12);
  CHECK(c.per_seq_share > 0.5);
}

// Hidden in the sanitizer tree (LLMSIM_DEEP_CHECKS), like the other real cards' fits.
#ifdef LLMSIM_DEEP_CHECKS
#define LLMSIM_SPLITWISE_TAGS(own) "[calibration][runs][real][static_splitwise]" own "[.]"
#else
#define LLMSIM_SPLITWISE_TAGS(own) "[calibration][runs][real][static_splitwise]" own
#endif
TEST_CASE("run fit: Splitwise's static batches fitted at batch 1 and 16 predict batch 32 and 64, A100 SXM",
          LLMSIM_SPLITWISE_TAGS("[splitwise_a100]")) {
  check_card(splitwise_card("a100-80gb", "a100-80gb-sxm"));
}

TEST_CASE("run fit: Splitwise's static batches fitted at batch 1 and 16 predict batch 32 and 64, H100 SXM",
          LLMSIM_SPLITWISE_TAGS("[splitwise_h100]")) {
  check_card(splitwise_card("h100-80gb", "h100-80gb-sxm"));
}
