// The GPU family rule (spec/gpu_family.hpp); perf/hardware_profile re-exports it as perf::gpu_family.
#include "llmsim/spec/gpu_family.hpp"

#include <string>
#include <string_view>

#include "llmsim/core/names.hpp"

namespace llmsim::spec {

namespace {
bool contains(const std::string& s, std::string_view part) { return to_lower(s).find(part) != std::string::npos; }
}  // namespace

// HBM data-centre parts are recognised by name (and by having MIG, which until Blackwell only HBM parts offered:
// the GDDR7 RTX PRO 6000 Blackwell has MIG too, so an "RTX" card is GDDR whatever its MIG profiles); Hopper by HBM
// plus an FP8 tensor path, Blackwell by HBM plus an FP4 one. Everything else is a GDDR GeForce/workstation card.
GpuFamily gpu_family(const GpuSpec& gpu) {
  const bool rtx = contains(gpu.id, "rtx") || contains(gpu.name, "rtx");
  bool hbm = !rtx && (!gpu.mig_profiles.empty() || gpu.compute_fraction < 1.0 || gpu.bandwidth_fraction < 1.0);
  for (std::string_view k : {"a100", "a800", "a30", "h100", "h800", "h200", "h20", "gh200", "b200", "b300", "mi300"}) {
    hbm = hbm || contains(gpu.id, k) || contains(gpu.name, k);
  }
  if (!hbm) return GpuFamily::gddr;
  if (gpu.fp4_flops > 0) return GpuFamily::blackwell_hbm;
  return gpu.fp8_flops > 0 ? GpuFamily::hopper_hbm : GpuFamily::ampere_hbm;
}

}  // namespace llmsim::spec
