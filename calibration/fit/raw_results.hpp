#pragma once
// The raw-results file written by calibration/run_all.sh (format in docs/calibration.md): which card,
// when, and one record per measured point. Reading it checks that it is ours and complete.
#include <string>
#include <vector>

#include "llmsim/core/json_view.hpp"

namespace llmsim::calibration {

inline constexpr const char* kRawFormat = "llmsim-calibration-raw";
inline constexpr int kRawVersion = 1;

struct MemBwPoint {       ///< one kernel over one array size
  std::string kernel;     ///< read, write, copy, triad (or a public suite's name for them)
  double bytes = 0;       ///< bytes moved (copy counts read + write)
  double footprint_bytes = 0;  ///< distinct bytes touched (decides L2-resident or DRAM)
  double time_s = 0;      ///< median
};
struct GemmPoint {
  std::string dtype;      ///< fp16, bf16, fp8, int8
  double m = 0, n = 0, k = 0;
  double flops = 0, bytes = 0, time_s = 0;
};
struct AttnDecodePoint {
  std::string impl;
  double batch = 0, context = 0;  ///< context: mean tokens per sequence
  double bytes = 0, time_s = 0;
  double heads = 32, kv_heads = 8, head_dim = 128;  ///< the shape measured (Llama-3-8B's when not recorded)
};
struct AttnPrefillPoint {
  std::string impl, dtype;
  double seq = 0, flops = 0, time_s = 0;
};
struct LaunchPoint {
  std::string mode;       ///< stream, graph, host_enqueue, round_trip, memcpy_8b_h2d
  double kernels = 0, time_s = 0;
};
struct CopyPoint {
  std::string kind;       ///< h2d, d2h, d2d, peer, peer_staged
  double bytes = 0, time_s = 0;
};

struct RawResults {
  std::string gpu_id;     ///< catalogue id of the card measured
  std::string source;     ///< how the file was produced
  std::string date;
  std::string device_name;
  Json device;            ///< everything recorded about the machine
  std::vector<MemBwPoint> mem_bw;
  std::vector<GemmPoint> gemm;
  std::vector<AttnDecodePoint> attn_decode;
  std::vector<AttnPrefillPoint> attn_prefill;
  std::vector<LaunchPoint> launch;
  std::vector<CopyPoint> copy;
  int skipped = 0;        ///< records marked "skipped" (unsupported dtype, did not fit, ...)
  std::vector<std::string> ignored_tests;  ///< test names this fitter does not use, once each
};

/// Parses a raw file's text. CalibrationDataError naming `source_name` when the text is not complete
/// JSON (truncated), is not an llmsim raw file (foreign), has a newer version, declares more or fewer
/// measurements than it holds, or a record lacks a field or holds a non-positive time.
RawResults parse_raw_results(const std::string& text, const std::string& source_name);

}  // namespace llmsim::calibration
