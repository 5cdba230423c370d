#pragma once
// Raw calibration results → HardwareProfile, by least-squares fits of the efficiency curves the cost
// model uses, with the residual of every fit reported. Efficiencies are relative to the datasheet peaks
// of the GpuSpec (the same peaks the cost model multiplies them by). Whatever the raw file does not
// measure is kept from the base profile and listed as such.
#include <string>
#include <vector>

#include "llmsim/core/json_view.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/gpu_spec.hpp"
#include "raw_results.hpp"

namespace llmsim::calibration {

/// One fitted term of the profile and how well the model reproduces its measurements.
struct FitTerm {
  std::string field;     ///< profile field, e.g. "mem_bw_efficiency", "gemm_eff_vs_m.bf16"
  std::string model;     ///< what was fitted, e.g. "T = a + V/b over DRAM-sized copies"
  int points = 0;        ///< measurements used
  double rms_rel_residual = 0;   ///< root mean square of (predicted − measured)/measured time
  double max_rel_residual = 0;   ///< largest |relative residual|
  std::string value;     ///< the fitted value(s) in words, for the report
};

struct FitReport {
  perf::HardwareProfile profile;
  std::vector<FitTerm> terms;
  std::vector<std::string> kept_from_base;  ///< profile fields no measurement informed
  std::vector<std::string> notes;           ///< skipped records, ignored tests, fallbacks taken
};

/// Fits `raw` on `gpu` starting from `base` (normally perf::default_profile(gpu)).
/// CalibrationDataError when the raw file names a different GPU than `gpu`, or its data cannot be
/// fitted (e.g. a GEMM dtype whose peak the GPU lacks is skipped with a note, not an error).
FitReport fit_profile(const RawResults& raw, const spec::GpuSpec& gpu, perf::HardwareProfile base);

/// The report as JSON: {"gpu_id", "source", "terms": [...], "kept_from_base": [...], "notes": [...]}.
Json to_json(const FitReport& r);

}  // namespace llmsim::calibration
