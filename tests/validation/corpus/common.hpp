#pragma once
// The shared part of the blind-corpus readers (corpus_sets.hpp): a source folder's RUNS.json lookup, the stated
// engine release as a runtime, and the two ways a measured value is predicted — a serve run through
// analysis::check_vllm_result (add_serve) and a static batch through analysis::static_batch (static_row,
// static_timing). One reader per source lives in the files beside this one (corpus/readers.hpp).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "llmsim/analysis/static_batch.hpp"
#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/analysis/vllm_result.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/quantization.hpp"
#include "validation_row.hpp"

namespace llmsim::validation::corpus {

// ---------------------------------------------------------------------------------------------------------------
// RUNS.json: per-run fields override the top-level ones (data/validation/corpus/README.md).
// (Merge note in corpus_sets.hpp: analysis::parse_bench_runs will replace this lookup.)

struct Source {
  std::string name, url;
  std::filesystem::path dir, models;  ///< the folder; data/validation/models for configs the catalogue lacks
  Json top;
};

const Json* field(const Source& s, const Json& run, const char* key);
std::string text(const Source& s, const Json& run, const char* key, const std::string& otherwise = "");
int integer(const Source& s, const Json& run, const char* key, int otherwise);
std::string version_word(std::string v);

struct Release {
  std::string text;  ///< "vllm==0.5.5"
  spec::Runtime runtime = spec::Runtime::vllm_v1;
  spec::QuantKernels kernels;  ///< the release's quantised kernels (pre-Marlin AWQ/GPTQ, FP8 on Ada)
  bool cuda_graphs = true;     ///< false for a release without CUDA graphs (vLLM before 0.2.6)
  std::string error;  ///< why the stated version names no modelled release ("" when it does)
};

Release release_of(const std::string& engine, const std::string& version);
std::string weights_id(std::string w);
std::string kv_id(const std::string& kv, const std::string& weights);
std::string model_ref(const Source& s, const std::string& m);
Row proto(const Source& s, const std::string& where);
void unscore(Row& r, const std::string& why);
bool throughput_key(const std::string& k);

// ---------------------------------------------------------------------------------------------------------------
// Serving: a vLLM result (read from the file, or built from a table or an SGLang line) through check_vllm_result.

bool input_key(const std::string& k);
std::string scored_rate_key(const analysis::VllmResult& r);

struct ServeRun {
  Row proto;
  analysis::VllmCheckOptions options;
  std::string unscored;  ///< non-empty: the run is not simulated, every value kept with this reason
};

void add_serve(std::vector<Row>& out, const ServeRun& run, const analysis::VllmResult& result);
analysis::VllmResult result_from_json(const Json& j, const std::string& source);
Json quant(const std::string& weights, const std::string& kv);
ServeRun serve_run(const Source& s, const Json& run, const std::string& where);

// ---------------------------------------------------------------------------------------------------------------
// Static batches through analysis::static_batch.

struct StaticRun {
  std::string gpu, model, weights, kv;
  int tp = 1;
  spec::Runtime runtime = spec::Runtime::vllm_v1;
  std::int64_t max_batched_tokens = 0;
  spec::QuantKernels kernels{};  ///< the release's quantised kernels (Release::kernels)
  bool cuda_graphs = true;       ///< Release::cuda_graphs
};

analysis::StaticBatchTiming static_timing(const Source& s, const StaticRun& r, std::int64_t batch, std::int64_t in,
                                          std::int64_t out);
std::string kv_overflow(const Source& s, const StaticRun& r, std::int64_t batch, std::int64_t in, std::int64_t out);
/// Why a measured static batch cannot have generated what it states ("" when it can): each of its out − 1 decode
/// steps streams this GPU's weight shard at least once, so the batch takes at least (out − 1) × weights_bytes / the
/// datasheet's peak HBM bandwidth — a floor no engine beats at any batch size. A time below it (an 8-token-per-second
/// 13B model "decoding" 2,048 tokens in 1.7 s) means requests ended early (an error reply, a stop the client did
/// not ask for), so the row measures something other than its stated lengths. Dense models only: an MoE step's
/// bytes depend on the experts its tokens route to.
std::string below_weight_stream(const Source& s, const StaticRun& r, std::int64_t in, std::int64_t out,
                                double measured_s);
Row static_row(const Source& s, const StaticRun& sr, const std::string& where, std::int64_t batch, std::int64_t in,
               std::int64_t out, const std::string& metric, double measured);

// ---------------------------------------------------------------------------------------------------------------
// The runs of a source.

Json runs_of(const Source& s);
void serve_files(const Source& s, std::vector<Row>& out, const std::function<std::string(const Json&)>& why_not,
                 const std::string& extra_args = "");

}  // namespace llmsim::validation::corpus
