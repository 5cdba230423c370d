#pragma once
// What a GPU achieves in practice: efficiencies relative to the datasheet peaks, fixed overheads and link
// speeds. A default profile comes from datasheet peaks × cited public measurements; `calibration/`
// measures one per card (JSON, format in docs/cost-model.md) that overrides it.
#include <map>
#include <string>
#include <vector>

#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/dtype.hpp"
#include "llmsim/spec/gpu_spec.hpp"

namespace llmsim::perf {

/// y(x) piecewise-linear in log(x), clamped at both ends. x strictly increasing, y in (0, 1.5].
struct Curve {
  std::vector<double> x, y;
  double at(double xv) const;
  bool empty() const noexcept { return x.empty(); }
};

struct HardwareProfile {
  std::string gpu_id;       ///< the GPU this profile describes (checked against the scenario's GPU)
  std::string source;       ///< "default: datasheet × priors (...)" or "calibrated <date> on <card>"
  /// Achievable fraction of peak DRAM bandwidth for large streaming transfers.
  double mem_bw_efficiency = 0.85;
  /// Fraction of that sustained bandwidth reached by one kernel moving x bytes (small kernels lower).
  Curve mem_bw_vs_bytes;
  /// GEMM compute efficiency (fraction of dtype peak) vs M (tokens), per tensor-core dtype.
  std::map<spec::DType, Curve> gemm_eff_vs_m;
  /// Weight-streaming efficiency of small-M GEMMs (fraction of peak bandwidth) vs M.
  Curve gemm_bw_eff_vs_m;
  double attn_prefill_efficiency = 0.6;    ///< FlashAttention-like prefill, fraction of fp16 peak
  Curve attn_decode_bw_vs_context;         ///< paged decode attention, fraction of peak bandwidth vs context
  double kernel_launch_s = 2.5e-6;         ///< per kernel, eager
  double graph_launch_s = 1.3e-6;          ///< per kernel, CUDA-graph replay
  double cpu_overhead_per_iter_s = 2e-3;   ///< scheduler + sampling + framework per iteration
  double cpu_overhead_per_seq_s = 5e-6;    ///< per sequence in the batch (input prep, detokenise)
  double link_bandwidth = 0;               ///< GPU↔GPU bytes/s per direction for collectives (0 = derive)
  double link_latency_s = 10e-6;           ///< per collective step
  double host_bandwidth = 0;               ///< host↔device bytes/s (swap, host-staged collectives; 0 = derive)

  /// Checks ranges; ConfigError at `path` naming each bad field.
  void validate(const std::string& path = "profile") const;
};

/// The default profile of a catalogue GPU (datasheet peaks × efficiencies from cited measurements).
HardwareProfile default_profile(const spec::GpuSpec& gpu);
/// Reads a profile file's JSON; CalibrationDataError/ConfigError naming the bad field.
HardwareProfile profile_from_json(const JsonView& v);
Json to_json(const HardwareProfile& p);

}  // namespace llmsim::perf
