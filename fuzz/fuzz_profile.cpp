// A HardwareProfile file → profile (over the A100 defaults) → validate → curve lookups.
#include "fuzz_common.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/catalog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace llmsim;
  static const perf::HardwareProfile base = perf::default_profile(spec::Catalog::builtin().gpu("a100-80gb-sxm"));
  try {
    const Json j = parse_json(fuzz::text(data, size), "profile.json");
    const auto p = perf::profile_from_json(JsonView(j, "profile"), base);
    p.validate();
    volatile double sink = p.gemm_bw_eff_vs_m.empty() ? 0 : p.gemm_bw_eff_vs_m.at(37.0);
    (void)sink;
  } catch (const ConfigError&) {
  }
  return 0;
}
