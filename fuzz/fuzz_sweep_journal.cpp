// The journal an interrupted `llmsim sweep --out F` leaves in F.partial, read back by --resume: any bytes must give
// entries or a ConfigError naming the line, never a crash; what it accepts writes back to the same line.
#include "fuzz_common.hpp"
#include "llmsim/analysis/sweep_journal.hpp"
#include "llmsim/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace llmsim;
  try {
    for (const auto& e : analysis::parse_journal(fuzz::text(data, size), "rows.csv.partial")) {
      if (e.point > analysis::kMaxGridPoints) __builtin_trap();
      const std::string line = analysis::journal_line(e.point, e.key, e.record);
      const auto again = analysis::parse_journal(line, "again");
      if (again.size() != 1 || again[0].key != e.key || again[0].point != e.point || again[0].record.row != e.record.row)
        __builtin_trap();
    }
  } catch (const ConfigError&) {
  }
  return 0;
}
