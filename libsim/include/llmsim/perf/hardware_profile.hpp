#pragma once
// What a GPU achieves in practice: efficiencies relative to the datasheet peaks, fixed overheads and link
// speeds. A default profile comes from datasheet peaks × cited public measurements; `calibration/`
// measures one per card (JSON, format in docs/cost-model.md) that overrides it.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/dtype.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/gpu_family.hpp"
#include "llmsim/spec/gpu_spec.hpp"

namespace llmsim::perf {

/// y(x) piecewise-linear in log(x), clamped at both ends. x strictly increasing and > 0, y in (0, 1.5].
/// A one-point curve is a constant. at() does no allocation (the engine's hot path calls it).
struct Curve {
  std::vector<double> x, y;
  double at(double xv) const;
  bool empty() const noexcept { return x.empty(); }
  static Curve constant(double y) { return Curve{{1.0}, {y}}; }
};

struct HardwareProfile {
  std::string gpu_id;       ///< the GPU this profile describes (checked against the scenario's GPU)
  std::string source;       ///< "default: datasheet × priors (...)" or "calibrated <date> on <card>"
  /// The serving runtime (engine.runtime name, e.g. "vllm-v0.5") whose benchmark runs this profile was fitted from,
  /// and the engine version they name ("vllm 0.5.4"); empty for a profile of kernels alone (microbenchmarks,
  /// defaults). A scenario on another runtime gets a note (runtime_mismatch), never a silent price.
  std::string runtime;
  std::string engine_version;
  /// How far the profile's predictions of runs it was not fitted on were off: the leave-one-run-out errors of
  /// `calibrate-fit --runs` (relative, one per measured value). analysis/error_band uses it for predictions made with
  /// this profile. Empty for a profile not fitted from runs, or fitted without cross-validation.
  struct CrossValidatedError {
    int runs = 0;              ///< runs behind it (each left out once)
    int values = 0;            ///< measured values behind it
    double median_abs = 0;     ///< median |relative error|
    double p90_abs = 0;        ///< 90th percentile of |relative error|
    double signed_median = 0;  ///< + = the profile predicts slower / lower throughput than measured
  };
  std::optional<CrossValidatedError> cross_validated_error;
  /// Achievable fraction of peak DRAM bandwidth for streaming element-wise kernels (norms, KV writes, logits).
  double mem_bw_efficiency = 0.85;
  /// Multiplier on mem_bw_efficiency for an element-wise kernel moving x bytes (small kernels lower).
  /// Empty = 1 everywhere.
  Curve mem_bw_vs_bytes;
  /// GEMM compute efficiency (fraction of the dtype's dense tensor peak) vs M (tokens), per tensor-core dtype.
  /// A dtype without a curve uses the fp16 curve.
  std::map<spec::DType, Curve> gemm_eff_vs_m;
  /// Weight-streaming efficiency of GEMMs (fraction of peak DRAM bandwidth) vs M (tokens).
  Curve gemm_bw_eff_vs_m;
  /// Fixed time of one GEMM kernel (ramp-up, tail), seconds; added to its roofline time.
  double gemm_fixed_s = 5e-6;
  /// p of the smooth roofline t = (t_compute^p + t_memory^p)^(1/p); large p = the sharp max().
  /// Near the ridge real kernels overlap compute and memory imperfectly; p≈2 fits Vidur's A100/H100 GEMMs.
  double roofline_exponent = 2.0;
  double attn_prefill_efficiency = 0.6;    ///< FlashAttention-like prefill, fraction of fp16 tensor peak
  // Paged decode attention (perf/decode_attention.hpp): T = t_fixed + waves·t_cta + bytes / min(e·BW, CTAs·r_cta).
  double attn_decode_bw_efficiency = 0.83;  ///< e: most of peak DRAM bandwidth the kernel streams K/V at
  double attn_decode_cta_bandwidth = 16e9;  ///< r_cta: bytes/s one running CTA streams (bytes in flight / latency)
  double attn_decode_cta_s = 5e-6;          ///< t_cta: fixed time per wave of CTAs (Q load, softmax, O write)
  double attn_decode_fixed_s = 5e-6;        ///< t_fixed: per kernel call (twice with a split-KV combine kernel)
  double kernel_launch_s = 2.5e-6;         ///< per kernel, eager
  double graph_launch_s = 1.3e-6;          ///< per kernel, CUDA-graph replay
  /// Engine CPU time serialized with the GPU, per iteration and per sequence: vLLM V1 (the default engine) ...
  double cpu_overhead_per_iter_s = 1e-3;
  double cpu_overhead_per_seq_s = 4e-6;
  /// ... and vLLM V0 (engine.policy "vllm-v0").
  double v0_cpu_overhead_per_iter_s = 2e-3;
  double v0_cpu_overhead_per_seq_s = 1e-5;
  double link_bandwidth = 0;               ///< NCCL ring all-reduce bus bandwidth, bytes/s (0 = derive from the spec)
  double link_latency_s = 10e-6;           ///< per NCCL ring step of a collective (Simple protocol)
  /// Per ring step of NCCL's low-latency (LL) protocol, which NCCL picks for small messages: a flag round trip
  /// between neighbours (collective.cpp adds NCCL's 6.6 us base per call).
  double nccl_ll_step_s = 1e-6;
  /// vLLM's custom all-reduce (P2P GPUs): fixed time of its one-stage kernel, and the bytes/s one GPU reads from
  /// its peers (0 = derive from the link). Not used where the GPUs have no P2P.
  double custom_allreduce_latency_s = 6e-6;
  double custom_allreduce_bandwidth = 0;
  double host_bandwidth = 0;               ///< host↔device bytes/s (swap, host-staged collectives; 0 = derive)
  /// The serving path's fixed part per request, seconds: HTTP, the IPC hops to the engine process and back,
  /// detokenising and streaming (perf/serving_path.hpp). Unset: the runtime's (RuntimeTraits::api_server_s).
  /// `calibrate-fit --runs` fits it from serving runs whose TTFT it moves; it prices only the runtime the profile
  /// was fitted on (`runtime`; any runtime when that is empty), another runtime keeps its own (runtime_mismatch
  /// says so).
  std::optional<double> api_server_s;
  /// Host seconds per streamed output per step that vLLM before 0.6's OpenAI server, running on the engine's own event
  /// loop, adds to each step (perf/inprocess_server.hpp; perf/served_step_host.hpp says which steps pay it). Unset: the
  /// runtime's, inprocess_server::kPerOutputS (100 us, vllm#6883). `calibrate-fit --runs` fits it from served runs of
  /// such a release; it prices only a runtime that has the in-process server and that the profile was fitted on
  /// (`runtime`; any such runtime when that is empty).
  std::optional<double> inprocess_server_per_output_s;
  /// Seconds of a pre-0.6 vLLM's in-process OpenAI server's synchronous front part per request on the engine's event
  /// loop, besides the prompt's tokenisation (perf/inprocess_server.hpp inprocess_front), fitted from served runs of
  /// such a release (`calibrate-fit --runs`). Unset: inprocess_server::kPerRequestS. Used on the profile's runtime only.
  std::optional<double> inprocess_server_per_request_s;

  /// Checks ranges; ConfigError at `path` naming each bad field and value.
  void validate(const std::string& path = "profile") const;
};

/// The GPU families whose kernels and defaults differ (the rule lives in spec/gpu_family: the memory plan reads it too).
using spec::GpuFamily;
using spec::gpu_family;
/// Hopper and Blackwell HBM parts: FP8 tensor cores, NVSwitch boards with NVLS, FA3/FlashMLA-class decode kernels
/// (the code paths that test for "Hopper" apply to both).
inline bool hopper_class(GpuFamily f) { return f == GpuFamily::hopper_hbm || f == GpuFamily::blackwell_hbm; }

/// Thread-instructions per second the GPU's warp schedulers issue: 4 per SM, one warp-instruction (32 threads) per
/// clock each, on Ampere, Ada and Hopper. The clock comes from the FP32 peak: 64 FP32 lanes per SM on data-centre
/// Ampere (GA100), 128 on the others (GA10x, AD10x, GH100, GB20x), so the rate is the FP32 FLOP/s on GA100 and half
/// of it elsewhere. The limit of kernels that are bound by instruction issue (docs/cost-model.md, "GGUF decode GEMV").
double instruction_issue_rate(const spec::GpuSpec& gpu);

/// The default profile of a GPU (datasheet peaks × efficiencies from cited measurements); the GPU's family
/// (HBM data-centre Ampere, Hopper, GDDR GeForce/workstation) picks the priors. Never throws for a valid spec.
HardwareProfile default_profile(const spec::GpuSpec& gpu);
/// Reads a profile file's JSON (fields as in to_json; omitted fields keep the defaults of the GPU named by
/// "gpu_id" when `base` is given, else the struct defaults). ConfigError naming the bad field.
HardwareProfile profile_from_json(const JsonView& v);
HardwareProfile profile_from_json(const JsonView& v, const HardwareProfile& base);
/// The parsed document of hardware.gpu_profile `ref` (a file, or an inline object's text): a file is read once per
/// process while its size and modification time stay the same (every simulation of a sweep or capacity search builds
/// a cost model from it; perf/profile_cache.cpp), and an inline text parsed once while it is among the last few
/// (a fit's runs are simulated at the same profile one after another). ConfigError as read_json_ref. Thread-safe.
std::shared_ptr<const Json> profile_document(const std::string& ref);
/// Profile files read from disk so far (profile_document's misses): what the tests count.
std::int64_t profile_file_reads() noexcept;
/// Reads and parses a profile file (profile_document). ConfigError (unreadable, bad JSON, bad field) naming the path.
HardwareProfile load_profile(const std::string& path);
/// Same, with omitted fields taken from `base` (normally default_profile of the scenario's GPU).
HardwareProfile load_profile(const std::string& path, const HardwareProfile& base);
Json to_json(const HardwareProfile& p);

/// The note for pricing runtime `runtime` with a profile fitted from another runtime's runs; nullopt when the
/// profile names no runtime or the same one. A fitted serving path (api_server_s) or in-process server cost
/// (inprocess_server_per_output_s, inprocess_server_per_request_s) is then not used, and the note says so.
std::optional<std::string> runtime_mismatch(const HardwareProfile& p, spec::Runtime runtime);

}  // namespace llmsim::perf
