#pragma once
// An SGLang server command line (`python -m sglang.launch_server --model-path M --tp-size 2 ...`, or
// `sglang serve ...`) as the same vLLM-named engine arguments vllm_args.hpp produces, so one alias table
// (scenario_prepass.hpp) maps both to scenario fields. Only flags whose meaning is exactly an llmsim field are
// mapped; the others are listed as not modelled (with why, where the meaning differs), never dropped silently.
#include <string>
#include <string_view>
#include <vector>

#include "llmsim/spec/vllm_args.hpp"

namespace llmsim::spec {

/// One SGLang flag that maps: SGLang's name (underscored) and the vLLM engine argument with the same meaning.
struct SglangAlias {
  std::string name;       ///< "max_running_requests"
  std::string vllm_name;  ///< "max_num_seqs"
  bool negate = false;    ///< a bare flag that sets the vLLM boolean false (--disable-radix-cache)
};

/// The mapped flags, in documentation order (docs/vllm.md "SGLang's names" lists them).
const std::vector<SglangAlias>& sglang_aliases();

/// Parses the command line of an SGLang server (sglang/srt/server_args.py: `--flag value`, `--flag=value`, bare
/// booleans, unique prefixes as argparse allows, `--model-path`/`--model`). The result's engine_args use vLLM's
/// names (`--tp-size 2` -> tensor_parallel_size 2) and its runtime is "sglang". ConfigError naming the flag for a
/// value of the wrong type, a flag that is a misspelling of a known one (with the suggestion), or a vLLM command
/// line (give it as --vllm-args).
/// The one parser of an SGLang server line: `--sglang-args` (what = "": a problem is reported at the flag) and a
/// benchmark run's `server_command` (analysis/bench_runs; what = "runs[0] (a.json).server_command": at that field,
/// then the flag).
VllmServeArgs parse_sglang_server_args(std::string_view command_line, const std::string& what = "");

}  // namespace llmsim::spec
