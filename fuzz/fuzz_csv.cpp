// RFC 4180 CSV (core/csv.hpp: quotes, BOM, CRLF/LF/CR) with strict numbers, and the empirical-length column reader
// built on it. A record must never start before the previous one, and a value that got through must be in range.
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "llmsim/core/csv.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/number.hpp"
#include "llmsim/engine/workload_source.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace llmsim;
  const std::string text = fuzz::text(data, size);
  try {
    CsvReader csv(text, "f.csv");
    std::vector<std::string> fields;
    std::size_t last_line = 0;
    while (csv.next(fields)) {
      if (csv.line() < last_line || fields.empty()) __builtin_trap();
      last_line = csv.line();
      for (const auto& f : fields) (void)parse_number(f);
    }
  } catch (const ConfigError&) {
  }
  try {
    for (const auto v : engine::parse_csv_column(text, "f.csv", "len", "workload.input_tokens"))
      if (v < 1 || v > 1'000'000'000) __builtin_trap();
  } catch (const ConfigError&) {
  }
  return 0;
}
