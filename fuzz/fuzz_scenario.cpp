// Scenario text → parse → resolve against the built-in catalogue → JSON round trip.
#include "fuzz_common.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace llmsim;
  try {
    const auto sc = spec::scenario_from_text(fuzz::text(data, size), "fuzz.json");
    const auto rs = spec::resolve(sc, spec::Catalog::builtin());
    const auto back = spec::scenario_from_json(JsonView(spec::to_json(rs.scenario), ""));
    (void)spec::offered_rate(back.workload);
  } catch (const ConfigError&) {
  }
  return 0;
}
