#pragma once
// The blind validation corpus (data/validation/corpus/, format in its README): public sources, each a folder of
// unedited result files (or a table.csv transcribed from the source's tables) and a RUNS.json stating every
// condition. Every measured number becomes a Row, predicted through llmsim's public API only — the catalogue GPU's
// default profile and the runtime of the engine release the source states:
//   * vLLM serve result files (benchmark_serving.py / `vllm bench serve --save-result`): analysis::check_vllm_result;
//     SGLang bench_serving lines and serving tables are translated into the same result and checked the same way
//     (engine.runtime = the stated release, e.g. "sglang==0.4.7.post1");
//   * static batches (vLLM benchmark_latency, SGLang bench_one_batch_server, batch-1 latencies): analysis::static_batch
//     on the cost model repo_sets.cpp's cost_model_for builds;
//   * llama-bench pp / tg rows: as reference_sets.cpp's llamacpp_rows predicts them (runtime llama.cpp).
// A run llmsim cannot represent (a model outside the catalogue with no public config here, a fleet behind Ray Serve,
// pipeline parallel across nodes, an engine or mechanism it does not model, a condition the source does not state)
// is kept as an unscored Row whose note says why — never guessed.
//
// MERGE NOTE: a general RUNS.json loader (analysis::parse_bench_runs / BenchPredictor, branch calib-runs,
// libsim/include/llmsim/analysis/bench_runs.hpp) is being written beside this. This reader is deliberately local to
// the validation report and keyed by source folder; once bench_runs lands on main, the per-run field lookup
// (`field()`), the engine-version → runtime mapping and the serve / latency kinds here should be replaced by it,
// keeping only the corpus-specific adapters (table.csv layouts, SGLang JSONL, the unscored reasons).
#include <filesystem>
#include <vector>

#include "validation_row.hpp"

namespace llmsim::validation {

/// Every measured value of every source folder of `corpus_dir` (folders in name order), predicted where llmsim can
/// represent the run. Row::set is the folder name (= source.name), Row::source_url the source's url, Row::where
/// "folder/file:run". ConfigError when a RUNS.json or a result file does not parse.
std::vector<Row> corpus_rows(const std::filesystem::path& corpus_dir);

}  // namespace llmsim::validation
