#pragma once
// The result files RUNS.json names (bench_runs.hpp): what kind of file each is, from its keys (the tools write no
// format tag), and the measured numbers read from it. Private to the analysis layer.
#include <string>
#include <vector>

#include "llmsim/analysis/bench_runs.hpp"

namespace llmsim::analysis::bench_files {

enum class FileType {
  vllm_latency, vllm_throughput, vllm_serve, sglang_one_batch, sglang_one_batch_server, sglang_serving, llama_bench,
  unknown
};

/// "a vLLM latency result (vllm bench latency --output-json)", ...
const char* describe(FileType t);
/// Every type read, with its telling keys, for the "unknown file type" message.
extern const char* const kKnownTypes;
/// The type of one JSON document (a llama-bench array, or one object).
FileType file_type(const Json& j);
/// The type a benchmark command writes.
FileType expected_type(spec::BenchKind k);
/// A serving result (vllm_result.hpp) is typed by its writer: SGLang's client or vLLM's.
FileType serve_type(const VllmResult& r);

/// The file's JSON documents: one JSON value, or JSON lines (SGLang's bench_one_batch appends one object per run).
std::vector<Json> documents(const std::string& text, const std::string& where);

/// Fills run.measured (and batch, lengths, requests where the file states them) from one document; serving runs
/// read run.serve, which the caller has parsed. ConfigError naming the run for a command that contradicts the
/// file, or a file with nothing llmsim predicts.
void read_measured(BenchRun& run, const Json& doc, FileType type, const spec::BenchCommand& cmd);

/// The last path part of a model name or path.
std::string base_name(std::string s);

}  // namespace llmsim::analysis::bench_files
