#pragma once
// The measurement sets kept in the repository (data/validation/*.csv, schema in data/validation/README.md),
// each row predicted through llmsim's public API: analysis::static_batch over perf::CostModel.
#include <filesystem>
#include <string>
#include <vector>

#include "llmsim/perf/cost_model.hpp"
#include "validation_row.hpp"

namespace llmsim::validation {

/// The cost model of one measurement: catalogue GPU with its default profile, the model (catalogue id or a
/// path relative to `models_dir`'s parent, e.g. "models/internlm-20b.json"), weight format, KV dtype, TP, and the
/// runtime that produced the measurement (its graphs, CPU time, all-reduce and attention kernels) and the quantised
/// kernels of its release (spec::quant_kernels_for; today's vLLM by default).
perf::CostModel cost_model_for(const std::string& gpu, const std::string& model, const std::string& weights,
                               const std::string& kv_dtype, int tp, bool cuda_graphs,
                               const std::filesystem::path& set_dir, perf::Runtime runtime = perf::Runtime::vllm_v1,
                               const spec::QuantKernels& kernels = {});

/// Every row of one set file, predicted unless excluded (its `exclude` cell says why). The set is named after
/// the file. ConfigError "<file>:<line>: <column>: ..." for a malformed cell, an unknown metric or a unit that
/// does not match the metric.
std::vector<Row> load_set(const std::filesystem::path& csv);

/// All *.csv files of `dir` in name order (throws as load_set; ConfigError when `dir` has none).
std::vector<Row> repo_set_rows(const std::filesystem::path& dir);

/// The metrics a set row may carry, with their unit.
const std::vector<std::pair<std::string, std::string>>& set_metrics();

}  // namespace llmsim::validation
