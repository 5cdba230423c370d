// Trace text (CSV: plain, Azure, Splitwise, BurstGPT layouts; Mooncake JSONL) → rows, with the default options
// and with BurstGPT's filters and a row window.
#include "fuzz_common.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/workload_source.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace llmsim;
  const auto text = fuzz::text(data, size);
  try {
    const auto rows = engine::parse_trace(text, "trace.csv");
    for (const auto& r : rows)
      if (!(r.arrival_s >= 0) || r.input_tokens < 1 || r.output_tokens < 1) __builtin_trap();  // a bad row got through
  } catch (const ConfigError&) {
  }
  try {
    spec::TraceReplay o;
    o.log_type = "API";
    o.start_row = 1;
    o.max_rows = 3;
    const auto t = engine::parse_trace(text, "trace.csv", o);
    if (t.rows.empty() || t.rows.size() > 3 || t.rows.front().arrival_s != 0) __builtin_trap();
    for (const auto& r : t.rows)
      if (r.hash_begin < 0 || r.hash_begin + r.hash_count > static_cast<std::int64_t>(t.hash_ids.size())) __builtin_trap();
  } catch (const ConfigError&) {
  }
  return 0;
}
