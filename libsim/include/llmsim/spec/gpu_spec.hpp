#pragma once
// Datasheet description of one GPU (or one MIG slice of it). Plain value type; validate() names bad fields.
#include <cstdint>
#include <string>
#include <vector>

#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/dtype.hpp"

namespace llmsim::spec {

/// One MIG profile of a data-centre GPU, e.g. "mig-3g.40gb": 3 of 7 compute slices, 40 GB.
struct MigProfile {
  std::string name;             ///< "mig-3g.40gb" (usable as "<gpu-id>:<name>")
  int compute_slices = 0;       ///< g in "3g"
  int total_compute_slices = 7; ///< slices of the full GPU (7 on A100/H100/H200)
  int memory_slices = 0;        ///< memory slices of 8 (bandwidth and L2 scale with these)
  std::int64_t memory_bytes = 0;
};

struct GpuSpec {
  std::string id;                        ///< catalogue id, e.g. "a100-80gb-sxm" or "a100-80gb-sxm:mig-3g.40gb"
  std::string name;                      ///< marketing name
  std::int64_t memory_bytes = 0;         ///< device memory: the datasheet "GB" read as GiB (nvidia-smi: 4090 24,564 MiB)
  double memory_bandwidth = 0;           ///< peak DRAM bandwidth, bytes/s
  // Dense tensor-core peaks in FLOP/s (or OP/s), 0 when the card has no such path.
  // fp16/bf16 are with FP32 accumulate (what cuBLAS/PyTorch use; halved on GeForce).
  double fp16_flops = 0, bf16_flops = 0, fp8_flops = 0, int8_ops = 0, int4_ops = 0;
  /// Dense FP4 tensor-core peak, FLOP/s (JSON `tensor_tflops.fp4`, TFLOP/s): Blackwell's native FP4 MMA
  /// (NVFP4 / MXFP4 operands, FP32 accumulate), the datasheet's dense figure (its headline is 2:4 sparse).
  /// 0 = no FP4 tensor path (every pre-Blackwell card): FP4 weights are then dequantised to a wider dtype.
  double fp4_flops = 0;
  double fp32_flops = 0;                 ///< non-tensor FP32 (CUDA cores), used for dequantisation work
  /// SM clock (MHz) the tensor peaks above are quoted at (the datasheet's boost clock, or the clock its TFLOPS
  /// imply); 0 = not stated. Needed only with sustained_tensor_clock_mhz.
  double boost_clock_mhz = 0;
  /// SM clock (MHz) the card holds under sustained dense tensor-core work at its default power limit, where that is
  /// measured below boost_clock_mhz (power-limited boards: A100 PCIe at 250 W, L40S at 350 W, L4 at 72 W); 0 = the
  /// card sustains its peaks' clock. perf/tensor_clock scales the default profile's tensor efficiencies by
  /// sustained / boost. Must be in (0, boost_clock_mhz].
  double sustained_tensor_clock_mhz = 0;
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  double tdp_watts = 0;                  ///< board power under load (datasheet TDP/TGP), W
  /// Board power with nothing running, W (nvidia-smi readings; 0 = unknown, then idle is priced at tdp_watts).
  double idle_watts = 0;
  int pcie_gen = 4, pcie_lanes = 16;
  double nvlink_bandwidth = 0;           ///< per direction, bytes/s; 0 = no NVLink
  /// Per direction, bytes/s, of the optional 2-way NVLink bridge of a PCIe card ("+nvlink"); 0 = no bridge connector.
  double nvlink_bridge_bandwidth = 0;
  bool p2p = false;                      ///< peer-to-peer over PCIe works with the stock driver
  bool ecc = false;                      ///< ECC on (as the card ships: data-centre cards on, GeForce off)
  /// ECC check bits stored in the DRAM itself (GDDR parts have no side-band bits; HBM does): with ecc on they take
  /// 1/16 of the memory and of every DRAM stream (nvidia-smi: L40S 46,068 of 49,152 MiB, A10 23,028 of 24,576).
  bool inline_ecc = false;
  /// Share of the DRAM, capacity and stream, that carries data: 15/16 with inline ECC on, else 1.
  double ecc_data_fraction() const noexcept { return ecc && inline_ecc ? 15.0 / 16.0 : 1.0; }
  /// The total the CUDA driver reports (cudaMemGetInfo / torch.cuda.mem_get_info, vLLM's "total_gpu_memory"), where
  /// measured (JSON `cuda_visible_memory_mib`); 0 = not measured. The driver keeps part of the DRAM for itself, so it
  /// is below the capacity: 23.53 GiB of a 24 GiB card on 2025 drivers (docs/cost-model.md "Memory plan"). It
  /// includes the inline-ECC share (a measured total already lacks it).
  std::int64_t cuda_visible_memory_bytes = 0;
  /// Memory the driver exposes (what vLLM's torch.cuda.mem_get_info total sees): the measured CUDA-visible total
  /// where the catalogue has one, else memory_bytes less inline ECC.
  std::int64_t usable_memory_bytes() const noexcept {
    if (cuda_visible_memory_bytes > 0) return cuda_visible_memory_bytes;
    return ecc_data_fraction() < 1.0 ? memory_bytes / 16 * 15 : memory_bytes;
  }
  std::vector<MigProfile> mig_profiles;
  double price_per_hour = 0;             ///< default rental price, USD per GPU-hour
  bool price_is_placeholder = true;      ///< true: a rough market figure the user should override
  /// How price_per_hour was derived from another entry's, when it was: a MIG slice's "3/7 of the NVIDIA A100 80GB
  /// SXM's $1.79/h" (its share of the card's compute slices). Empty for a price of its own.
  std::string price_basis;
  double purchase_price = 0;             ///< USD to buy one card (0 = none known: owned cost needs one given)
  bool purchase_price_is_placeholder = true;  ///< false only for a vendor list price (MSRP)
  std::string source;                    ///< where the figures come from (citations)
  // Set when this spec is a MIG slice: fraction of the full GPU's compute and of its memory bandwidth.
  // A slice's memory_bytes, memory_bandwidth, peaks, sm_count and l2_bytes are already scaled by these.
  double compute_fraction = 1.0, bandwidth_fraction = 1.0;

  /// Dense tensor peak for `d` (FLOP/s); 0 when unsupported.
  double tensor_peak(DType d) const;
  /// PCIe bandwidth per direction, bytes/s (gen × lanes, after encoding).
  double pcie_bandwidth() const;
  /// The spec of one MIG slice ("mig-3g.40gb"); ConfigError listing valid profiles when unknown.
  GpuSpec mig_slice(const std::string& profile_name) const;
  /// What a price of this GPU is, for the line that prints it: "" for a price the user gave (`placeholder` false),
  /// "a catalogue placeholder" for the catalogue's own rough figure, and for a derived one its derivation ("3/7 of
  /// the NVIDIA A100 80GB SXM's $1.79/h, itself a catalogue placeholder").
  std::string price_label(bool placeholder) const;
  /// Collects every problem (non-positive memory/bandwidth/peaks, ...) into one ConfigError at `path`.
  void validate(const std::string& path = "gpu") const;
};

/// Reads a GPU spec file's JSON (format: data/gpus/*.json, documented in the README).
GpuSpec gpu_spec_from_json(const JsonView& v);
Json to_json(const GpuSpec& g);

}  // namespace llmsim::spec
