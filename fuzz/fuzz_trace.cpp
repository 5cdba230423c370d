// Trace CSV text (plain, Azure, Splitwise layouts) → rows.
#include "fuzz_common.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/workload_source.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace llmsim;
  try {
    const auto rows = engine::parse_trace(fuzz::text(data, size), "trace.csv");
    for (const auto& r : rows)
      if (!(r.arrival_s >= 0) || r.input_tokens < 1 || r.output_tokens < 1) __builtin_trap();  // a bad row got through
  } catch (const ConfigError&) {
  }
  return 0;
}
