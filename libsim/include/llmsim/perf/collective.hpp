#pragma once
// The tensor-parallel all-reduce as vLLM runs it (docs/cost-model.md, "Tensor parallel"): its custom one-stage
// (one-shot) or two-stage kernel between P2P GPUs for messages under 8 MiB, NCCL's ring beyond that or where the
// custom kernel is off, and NCCL through host shared memory where the GPUs have no P2P — each timed by message
// size and link.
#include <string>

#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/gpu_spec.hpp"

namespace llmsim::perf {

enum class AllReduceAlgorithm {
  none,              ///< tp = 1
  custom_one_shot,   ///< vLLM custom all-reduce, one stage: every GPU reads all peers' buffers and reduces
  custom_two_shot,   ///< vLLM custom all-reduce, two stages: reduce-scatter then all-gather through peer reads
  nccl_ring,         ///< NCCL over NVLink or PCIe P2P
  nccl_host_staged,  ///< NCCL through host shared memory (GPUs without P2P, e.g. GeForce)
};
std::string to_string(AllReduceAlgorithm a);

/// The link the TP group's collectives use.
enum class TpLink { nvlink, pcie_p2p, pcie_host };
std::string to_string(TpLink l);

class AllReduceModel {
 public:
  AllReduceModel() = default;
  /// `tp` GPUs of `gpu` in one node, all-reducing with `impl` (the runtime's). ConfigError-free: tp < 2 gives a
  /// model that costs nothing.
  AllReduceModel(const spec::GpuSpec& gpu, const HardwareProfile& profile, int tp,
                 AllReduceImpl impl = AllReduceImpl::custom_or_nccl);

  /// The algorithm the runtime picks for a message of `bytes` (vLLM: csrc/custom_all_reduce.cuh,
  /// custom_all_reduce.py).
  AllReduceAlgorithm algorithm(double bytes) const;
  /// Seconds for one all-reduce of `bytes` per GPU (0 for bytes <= 0 or tp < 2).
  double time_s(double bytes) const;
  /// Bytes each GPU moves over the link for that all-reduce (for the per-op breakdown).
  double link_bytes(double bytes) const;
  /// Seconds for NCCL's all-gather of a tensor of `bytes` in all (each GPU holds bytes / tp of it): vLLM's
  /// tensor_model_parallel_all_gather / gather of the vocabulary-parallel logits, which never takes the custom
  /// kernel. 0 for bytes <= 0 or tp < 2.
  double all_gather_time_s(double bytes) const;
  TpLink link() const noexcept { return link_; }
  int tp() const noexcept { return tp_; }
  /// The link bandwidth the bound is judged against (bytes/s): NCCL bus bandwidth.
  double bus_bandwidth() const noexcept { return ring_bw_; }

 private:
  int tp_ = 1;
  TpLink link_ = TpLink::nvlink;
  bool custom_ = false;           ///< vLLM's custom all-reduce is on for this group
  bool fully_connected_ = false;  ///< every GPU reaches every other over NVLink (NVSwitch)
  double ring_bw_ = 1, ring_step_s_ = 0, nccl_call_s_ = 0;
  double ll_bw_ = 1, ll_call_s_ = 0;  ///< NCCL's LL protocol for small messages
  double ag_call_s_ = 0, ag_ll_call_s_ = 0;  ///< the same two protocols' fixed costs for a ring all-gather
  double peer_bw_ = 1, custom_s_ = 0;
  bool ampere_nvlink_ = false;  ///< A100s over NVSwitch: the two stages' measured Ampere constants (collective.cpp)
  bool hopper_nvlink_ = false;  ///< sm90 over NVLink: the two stages keep vllm#24111's fixed cost (collective.cpp)
  /// The custom two-stage kernel's bytes factor k and its synchronisation beyond 2 × custom_s_ (collective.cpp).
  double two_shot_factor() const;
  double two_shot_sync_s() const;
};

}  // namespace llmsim::perf
