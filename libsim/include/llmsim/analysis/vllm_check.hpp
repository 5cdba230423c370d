#pragma once
// Measured against predicted: a vLLM benchmark result (vllm_result.hpp) becomes a scenario — the model,
// the requests' lengths (replayed one by one when the file has input_lens/output_lens), the arrival rate or
// client concurrency, the server's engine arguments (vllm_args.hpp) — which is simulated; every metric the
// file reports is then computed from the simulated requests by vLLM's own definitions (TTFT, TPOT over
// outputs > 1 token, E2EL; numpy's mean, median, population std and linearly interpolated percentiles;
// throughputs over first send to last completion) and set beside the measurement with the relative error.
// docs/vllm.md describes the mapping and what it cannot know (the GPU, the vLLM version).
#include <optional>
#include <string>
#include <vector>

#include "llmsim/analysis/vllm_result.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/published_name.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {

struct VllmCheckOptions {
  Json scenario = Json::object();  ///< a (partial) scenario to start from: GPU, price, engine knobs, seed
  std::string vllm_args;           ///< the measured server's command line: "vllm serve MODEL -tp 2 ..."
  /// Or an SGLang server's: "python -m sglang.launch_server --model-path MODEL --tp 2 ..." (one of the two; both
  /// read by analysis::server_arg_sets, the rule of every command's --vllm-args/--sglang-args). SGLang's sets
  /// engine.runtime "sglang" (its scheduler policy) unless the scenario or engine_version names an SGLang release.
  std::string sglang_args;
  std::string model;               ///< catalogue id or config.json path; overrides the file's model_id
  std::string gpu;                 ///< GPU id or spec file; required unless `scenario` names hardware.gpu
  /// The measured vLLM's release ("0.5.4", or any engine's "sglang==0.4.9"): engine.runtime becomes that release
  /// (spec/runtime_version.hpp: its runtime and default scheduler). Empty = the scenario's runtime, else V1.
  std::string engine_version;
  /// The server's prefix cache held the run's prompts when it began (an earlier run with the same prompts on the
  /// same server): workload.warm_cache. Needs the file's requests replayed in order (not a max_concurrency loop).
  bool warm_cache = false;
  /// The client sent ignore_eos with every request (workload.ignore_eos; spec/sglang_admission.hpp), as the command
  /// stated it (`check --ignore-eos` / `--disable-ignore-eos`; spec::client_ignores_eos reads a command line). Unset:
  /// the scenario's workload.ignore_eos when it states one, else the client's default: SGLang's bench_serving sends
  /// it (unless --disable-ignore-eos, which its file does not record), vLLM's client does not (unless --ignore-eos).
  std::optional<bool> ignore_eos;
};

struct VllmCheckRow {
  std::string key;                  ///< vLLM's key, e.g. "p99_ttft_ms", "output_throughput"
  double measured = 0;
  std::optional<double> predicted;  ///< empty when llmsim cannot state it (the reason is in `note`)
  std::optional<double> rel_error;  ///< (predicted − measured) / measured
  std::string note;                 ///< why a row is not comparable, when it is not
};

struct VllmCheck {
  std::string source;
  int line = 0;                     ///< the line of a JSON-lines file the run is on (0 = a whole-file result)
  spec::Scenario scenario;          ///< what was simulated (to_json gives a scenario `llmsim simulate` runs)
  bool fits = true;
  std::string reason;               ///< why the configuration cannot run (fits = false)
  /// The context simulated: engine.max_model_len resolved (vLLM's auto: the largest that fits, when the scenario
  /// leaves it unset or "auto"), and how ("auto: the model's 131,072 does not fit"; "" when the scenario gave it).
  /// to_json writes the number in the scenario it echoes, never the -1 that stands for auto. 0 when it did not fit.
  int max_model_len = 0;
  std::string max_model_len_note;
  std::vector<VllmCheckRow> rows;   ///< one per number in the file, in the file's order
  std::vector<std::string> notes;   ///< how the file became a scenario, and what is not comparable
  /// An engine path the run took that llmsim does not model (unmodelled_engine_path; also among the notes as a
  /// warning): the predictions are shown but not validated. Empty where the path is modelled.
  std::string not_modelled;
};

/// The scenario of a result: options.scenario, then the vLLM arguments, then the model (options.model,
/// else the arguments', else the scenario's, else the file's model_id matched to a catalogue id), the GPU
/// (options.gpu, else the scenario's hardware.gpu: ConfigError when neither names it — the file does not),
/// and the workload from the file. Each assumption is appended to `notes`.
spec::Scenario vllm_check_scenario(const VllmResult& result, const VllmCheckOptions& options,
                                   const spec::Catalog& catalog, std::vector<std::string>& notes);

/// Simulates the result's scenario and compares. A configuration that does not fit comes back with
/// fits = false and no predictions; bad input throws ConfigError.
VllmCheck check_vllm_result(const VllmResult& result, const VllmCheckOptions& options = {},
                            const spec::Catalog& catalog = spec::Catalog::builtin());

/// check_vllm_result in two steps, for a caller that checks one result against many GPU profiles (a run fit predicts
/// each serving run at every profile it tries): the file's scenario built and resolved once, then simulated per
/// profile. Building the scenario from the file (its requests, the server's arguments) was a quarter of the H200
/// serving fit's CPU (issue 30).
struct PreparedVllmCheck {
  VllmResult served;               ///< the result's requests that were served (failed ones left out)
  VllmCheck check;                 ///< source, line, the scenario (engine knobs as resolved) and the notes so far
  spec::ResolvedScenario resolved;
};
PreparedVllmCheck prepare_vllm_check(const VllmResult& result, const VllmCheckOptions& options = {},
                                     const spec::Catalog& catalog = spec::Catalog::builtin());
/// The prepared check simulated and compared: the same as check_vllm_result(result, options) with options.scenario's
/// hardware.gpu_profile = `gpu_profile` (a file or an inline object's text; empty: the prepared scenario's own), as
/// building and resolving a scenario does not read the profile.
VllmCheck check_vllm_result(const VllmResult& result, const PreparedVllmCheck& prepared,
                            const std::string& gpu_profile = "");

/// {"source", "line", "fits", "reason", "scenario", "rows": [{"key", "measured", "predicted", "rel_error", "note"}],
/// "notes"}; predicted and rel_error are null when not stated.
Json to_json(const VllmCheck& check);

/// A published checkpoint name read as a catalogue model and its format: spec/published_name.hpp (one rule for
/// server lines, check, runs files and --model).
using spec::catalogue_model_for;
using spec::weight_format_in_name;

/// A row's rel_error by vLLM's key (nullopt when the file does not state the key or llmsim cannot predict it).
std::optional<double> check_error(const VllmCheck& check, const std::string& key);
/// The median |rel_error| over the compared rows that measure the engine (not the counts the workload copies from
/// the file: completed, failed, total_input_tokens, total_output_tokens), nullopt when none: the one-number
/// summary of a run in a table of a JSON-lines file's runs.
std::optional<double> median_abs_error(const VllmCheck& check);

/// numpy.percentile(values, q) with its default linear interpolation (q in [0, 100]); 0 when empty.
double numpy_percentile(std::vector<double> values, double q);

}  // namespace llmsim::analysis
