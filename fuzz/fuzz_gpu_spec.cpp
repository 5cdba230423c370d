// A GPU spec file → GpuSpec → validate → peaks, PCIe bandwidth and every MIG slice.
#include "fuzz_common.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/gpu_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace llmsim;
  try {
    const Json j = parse_json(fuzz::text(data, size), "gpu.json");
    const auto g = spec::gpu_spec_from_json(JsonView(j, "gpu"));
    g.validate();
    volatile double sink = g.pcie_bandwidth() + g.tensor_peak(spec::DType::fp16);
    (void)sink;
    for (const auto& p : g.mig_profiles) g.mig_slice(p.name).validate();
  } catch (const ConfigError&) {
  }
  return 0;
}
