#pragma once
// A user's own benchmark runs (RUNS.json, docs/calibration.md "From your benchmark files"): each run is the file a
// benchmark tool wrote, unedited, with the command line that produced it. Read here into normalised measured
// records (tool, batch, lengths, TP, dtype, the measured values), and predicted for any HardwareProfile — what
// `calibrate-fit --runs` fits and `make validate` can score.
//
// RUNS.json: {"format": "llmsim-runs", "version": 1, "gpu": ID, "source": {...},
//             "runs": [{"result": FILE, "command": CMD, "server_command": CMD, "model": ID, "engine": "vllm",
//                       "engine_version": "0.5.4" (alias "vllm_version"), "runtime": NAME, "gpu": ID, "notes": ...}]}
// The runtime is the engine's release (engine.runtime "vllm==0.5.4": its kernels, host costs and scheduler) unless
// "runtime" names one.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/analysis/vllm_result.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/scenario.hpp"
#include "llmsim/spec/vllm_bench_args.hpp"

namespace llmsim::analysis {

inline constexpr const char* kRunsFormat = "llmsim-runs";
inline constexpr int kRunsVersion = 1;

/// One measured number of a run, with the unit the file gives it in.
struct BenchValue {
  std::string key;   ///< "avg_latency" (s), "requests_per_second", "mean_ttft_ms", "prefill_latency" (s), ...
  double value = 0;
};

struct BenchRun {
  std::string name;                 ///< "runs[2] (lat_b16.json)": how every message names the run
  std::string result;               ///< the result file as RUNS.json names it
  std::string command, server_command, notes;
  spec::BenchKind kind = spec::BenchKind::vllm_latency;
  std::string gpu;                  ///< catalogue id (or spec file) of the card
  std::string model;                ///< catalogue id or config.json path
  std::string engine, engine_version;
  spec::Runtime runtime = spec::Runtime::vllm_v1;
  std::string runtime_from;         ///< how the runtime was chosen, for the report
  std::int64_t batch = 0, input_len = 0, output_len = 0, requests = 0;
  std::int64_t prompt_chunk = 0;    ///< llama-bench: the prompt is processed n_ubatch tokens at a time (0 = not set)
  /// The run as a partial scenario: model, hardware.gpu, engine.runtime and the engine arguments (vLLM names).
  Json scenario = Json::object();
  std::vector<BenchValue> measured;
  std::optional<VllmResult> serve;  ///< serve runs: the parsed file
  std::vector<std::string> notes_out;  ///< assumptions made reading the run
};

struct SkippedRun {
  std::string name;    ///< "runs[3]"
  std::string reason;  ///< the ConfigError's message
};

struct BenchRuns {
  std::string path;
  std::string gpu;                  ///< the file's default GPU (or the override)
  Json source = Json::object();
  std::vector<BenchRun> runs;
  std::vector<SkippedRun> skipped;  ///< with skip_unreadable: the runs not read, and why
};

/// Parses RUNS.json text; result files are read relative to `path`'s folder. `gpu_override` (e.g. --gpu) replaces
/// every run's GPU. Top-level engine, engine_version, runtime, model, hf_model, weights, kv_cache_dtype, tp and pp are
/// defaults for every run (the validation corpus, data/validation/corpus, sets them there); a run's own keys win.
/// ConfigError naming the run ("runs[2] (lat.json): ...") and field for: an unknown key, a missing result or command,
/// an unreadable result, a file of unknown type (the message lists the known ones), a file that is another tool's
/// than the command's, a command whose flags contradict the file or the run's keys (--num-prompts, --num-iters,
/// batch, model), a run with no GPU, an unknown runtime or engine release, a run over several replicas or picking
/// rows of a file (select). With `skip_unreadable` (make validate over the corpus), such a run is listed in
/// `skipped` instead, and the others are read; errors in the file as a whole still throw.
BenchRuns parse_bench_runs(std::string_view text, const std::string& path, const std::string& gpu_override = "",
                           bool skip_unreadable = false);
BenchRuns read_bench_runs(const std::string& path, const std::string& gpu_override = "", bool skip_unreadable = false);

/// A run made ready to predict: its scenario resolved once. ConfigError naming the run when its configuration
/// cannot run on the GPU (weights or the batch's KV cache do not fit, lengths beyond max_model_len, TP that does
/// not divide the model).
class BenchPredictor {
 public:
  explicit BenchPredictor(const BenchRun& run, const spec::Catalog& catalog = spec::Catalog::builtin());
  /// One predicted value per run.measured (same order and unit), with `profile` as the card's profile.
  std::vector<double> predict(const perf::HardwareProfile& profile) const;
  const spec::ResolvedScenario& resolved() const noexcept { return resolved_; }
  const BenchRun& run() const noexcept { return *run_; }

 private:
  const BenchRun* run_;
  const spec::Catalog* catalog_;
  spec::ResolvedScenario resolved_;
  /// A serving run's check, its scenario built from the file once (analysis/vllm_check.hpp); null when preparing it
  /// failed, and then predict() reports that error, as it did.
  std::shared_ptr<const PreparedVllmCheck> check_;
};

/// {"name", "result", "tool", "gpu", "model", "runtime", "batch", "input_len", "output_len", "requests",
///  "measured": [{"key", "value"}, ...] (predict()'s order), "notes": [...]}
Json to_json(const BenchRun& run);

}  // namespace llmsim::analysis
