// A calibration raw-results file → RawResults → fit on the card it names (when the catalogue knows it).
#include "fit/profile_fit.hpp"
#include "fit/raw_results.hpp"
#include "fuzz_common.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/catalog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace llmsim;
  try {
    const auto raw = calibration::parse_raw_results(fuzz::text(data, size), "raw.json");
    const auto gpu = spec::Catalog::builtin().gpu(raw.gpu_id.empty() ? "a100-80gb-sxm" : raw.gpu_id);
    const auto report = calibration::fit_profile(raw, gpu, perf::default_profile(gpu));
    (void)calibration::to_json(report).dump();
  } catch (const CalibrationDataError&) {
  } catch (const ConfigError&) {
  }
  return 0;
}
