// A vLLM benchmark result file and a `vllm serve` command line, from the same bytes: each parses or
// throws ConfigError, and a parsed command line's patch parses as a scenario or throws ConfigError.
#include "fuzz_common.hpp"
#include "llmsim/analysis/vllm_result.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/scenario.hpp"
#include "llmsim/spec/vllm_args.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace llmsim;
  const std::string text = fuzz::text(data, size);
  try {
    const auto r = analysis::parse_vllm_result(text, "fuzz.json");
    (void)r.latencies.size();
  } catch (const ConfigError&) {
  }
  try {
    const auto a = spec::parse_vllm_serve_args(text);
    Json patch = spec::scenario_patch(a);
    patch["model"] = "llama-3.1-8b";
    (void)spec::scenario_from_json(JsonView(patch, ""));
  } catch (const ConfigError&) {
  }
  return 0;
}
