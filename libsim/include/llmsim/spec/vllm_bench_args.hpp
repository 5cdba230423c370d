#pragma once
// The command line of a benchmark run: `vllm bench latency|throughput|serve ...`, the older
// `python benchmarks/benchmark_{latency,throughput,serving}.py ...`, SGLang's `python -m sglang.bench_one_batch` and
// `python -m sglang.bench_serving` (argparse's unique prefixes accepted: --random-input for --random-input-len), and
// llama.cpp's `llama-bench` (its short flags: -m, -p, -n, -ngl, ...).
// The benchmark's own flags are kept by name; the engine arguments (latency and throughput start an engine in
// process) go through parse_vllm_serve_args, the rules `llmsim check` uses. A flag that is neither is refused
// with the closest names: a typo must not silently change what is predicted.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "llmsim/spec/vllm_args.hpp"

namespace llmsim::spec {

enum class BenchKind {
  vllm_latency, vllm_throughput, vllm_serve, sglang_one_batch, sglang_one_batch_server, sglang_serving, llama_bench
};
/// "vllm bench latency", "vllm bench throughput", "vllm bench serve", "sglang.bench_one_batch",
/// "sglang.bench_serving", "llama-bench".
std::string to_string(BenchKind k);

struct BenchCommand {
  BenchKind kind = BenchKind::vllm_latency;
  std::string what;                          ///< where the command came from, for messages ("runs[2].command")
  std::map<std::string, std::string> flags;  ///< the benchmark's own flags given: name (underscored) -> value
                                             ///< ("" for a bare boolean; several values joined by ' ')
  VllmServeArgs engine;                      ///< engine arguments, by vLLM's names (SGLang's mapped to them)

  bool has(const std::string& name) const { return flags.count(name) > 0; }
  /// The flag's value as an integer, else `fallback` when absent. ConfigError naming the flag for a non-integer.
  std::int64_t integer(const std::string& name, std::int64_t fallback) const;
};

/// Parses a benchmark command line. ConfigError at `what` for a command that is not one of the programs above
/// (the message lists them), an unknown flag (with the closest flags), or a flag missing its value.
BenchCommand parse_bench_command(std::string_view command_line, const std::string& what);

}  // namespace llmsim::spec
