// Tensor-parallel all-reduce by message size, algorithm and link. Sources: docs/cost-model.md, "Tensor parallel".
#include "llmsim/perf/collective.hpp"

#include <algorithm>
#include <string_view>

#include "llmsim/core/names.hpp"

namespace llmsim::perf {

namespace {

// vllm/distributed/device_communicators/custom_all_reduce.py: max_size 8 MiB, world sizes 2/4/6/8, P2P required,
// and for more than two GPUs only when they are fully connected over NVLink.
constexpr double kCustomMaxBytes = 8.0 * 1024 * 1024;
// csrc/custom_all_reduce.cuh: one stage for 2 GPUs; fully connected groups use one stage below 512 KiB (<= 4
// GPUs) or 256 KiB (<= 8 GPUs) and two stages above.
constexpr double kOneShotMax4 = 512.0 * 1024, kOneShotMax8 = 256.0 * 1024;
// NVIDIA/nccl#1639 (gpus-and-efficiency.md B5): on PCIe the ring is limited by the host; 8 GPUs (two root
// complexes / sockets) reach 28 GB/s bus bandwidth where 4 reach 35: 0.8.
constexpr double kPcieCrossSocketFactor = 28.0 / 35.0;
// NCCL's LL protocol (src/graph/tuning.cc): base latency 6.6 us per ring all-reduce call, and half the bus
// bandwidth (8-byte stores carrying 4 bytes of data and a 4-byte flag: `busBw * .5`) up to llMaxBw for one node
// (87.7 GB/s from sm80, 141 GB/s from sm90). Its per-step latency is
// the profile's nccl_ll_step_s; a ring that crosses sockets (more than 4 PCIe GPUs) waits for the slowest hop in
// every step: 8 × RTX 4090 all-reduce 8 B in 42.6 us (NVIDIA/nccl#1530), 8 × RTX 3090 in 54 us (NVIDIA/nccl#1439)
// = 6.6 + 14 × 2.6-3.4 us, against ~1 us per step for two GPUs on one root complex [D].
constexpr double kNcclLLBaseS = 6.6e-6;
constexpr double kNcclLLBandwidthFraction = 0.5;
constexpr double kNcclLLMaxBwAmpere = 87.7e9, kNcclLLMaxBwHopper = 141e9;
constexpr double kPcieCrossSocketLLStepFactor = 3.0;
// The custom kernel's two stages (cross_device_reduce_2stage: a reduce-scatter by peer reads into a buffer the peers
// then read back, a grid-wide barrier before each) move a message of S bytes in k·S / B_peer beyond their two
// synchronisations. Hopper: k least-squares fitted to vllm-project/vllm#24111's H100 communicator benchmark (CUDA
// graphs, ca_2stage, 0.5-4 MiB, 2 × 6 us subtracted): TP4 17/18/27/27/35/43 us -> k = 2.78; TP6 15/17/20/26/29/37
// us -> k = 2.16. k falls with the world size (the stages read from more peers at once); no Hopper source times
// the two stages at TP8 (vLLM 0.11+ hands TP8 messages of 256 KiB and more to symmetric memory on sm90), so TP8
// takes TP6's, the nearest measured.
constexpr double kTwoShotFactorTp4 = 2.8, kTwoShotFactorTp6Up = 2.2;
// Ampere (A100 SXM, NVLink 3 through NVSwitch), from vLLM's own all-reduce timed on 8 × A100-SXM4-80GB under CUDA
// graphs (ai-dynamo/aiconfigurator collector/network/collect_all_reduce.py, vLLM 0.20.0, whose sm80 dispatch is
// 0.4-0.10's: the custom kernel below 8 MiB, one stage below 512 / 256 KiB, NCCL beyond; campaign_checkpoints/
// a100_sxm/custom_allreduce_perf.txt, commit 563b2c4):
//  * one stage, TP 2/4/8, 16 KiB-4 MiB: 6 us + (t-1)·S / B_peer fits with B_peer = 0.69 of the per-direction
//    NVLink (least squares: 0.69; TP2 0.69, TP4 0.56, TP8 0.62 alone) — Hopper's 0.83 read 20 % too fast;
//  * two stages: a free fit gives k = 1.50 (TP4, 0.5-4 MiB: 14.4/18.5/26.2/41.1 us) and 1.46 (TP8, 0.25-4 MiB:
//    17.7/19.3/21.7/28.4/45.4 us) with fixed costs 10.8 us (TP4, the one stage's two latencies) and 15.0 us
//    (TP8: 3 us more). Hopper's factors on Ampere made TP4 28-45 % too slow and TP8 256-512 KiB 15-20 % fast.
// TP6 on Ampere is not measured and takes TP8's.
constexpr double kPeerReadFractionHopper = 0.83, kPeerReadFractionAmpere = 0.69;
constexpr double kTwoShotFactorAmpere = 1.5, kTwoShotSyncAmpereTp6Up = 3e-6;
// Hopper's one stage pays 4.8 us fixed at decode sizes (the default profile's custom_allreduce_latency_s: vLLM 0.20.0
// under CUDA graphs on 8 H100 / 8 H200, hardware_profile.cpp), where vllm#24111's 0.5-4 MiB timings, which the two
// stages' factors k were fitted to, had 6 us: the two stages keep their fitted fixed cost 2 x 6 us, i.e. 2 x 1.2 us
// of synchronisation beyond two one-stage latencies (their own barriers: csrc/custom_all_reduce.cuh).
constexpr double kTwoShotSyncHopper = 2.4e-6;

bool name_contains(const std::string& s, std::string_view part) { return to_lower(s).find(part) != std::string::npos; }

}  // namespace

std::string to_string(AllReduceAlgorithm a) {
  switch (a) {
    case AllReduceAlgorithm::none: return "none";
    case AllReduceAlgorithm::custom_one_shot: return "custom one-shot";
    case AllReduceAlgorithm::custom_two_shot: return "custom two-shot";
    case AllReduceAlgorithm::nccl_ring: return "nccl ring";
    case AllReduceAlgorithm::nccl_host_staged: return "nccl host-staged";
  }
  return "none";
}

std::string to_string(TpLink l) {
  switch (l) {
    case TpLink::nvlink: return "nvlink";
    case TpLink::pcie_p2p: return "pcie-p2p";
    case TpLink::pcie_host: return "pcie-host";
  }
  return "nvlink";
}

AllReduceModel::AllReduceModel(const spec::GpuSpec& gpu, const HardwareProfile& profile, int tp, AllReduceImpl impl)
    : tp_(tp) {
  if (tp_ < 2) return;
  const double pcie = gpu.pcie_bandwidth();
  // SXM boards join all GPUs through NVSwitch; NVLink bridges (PCIe cards, GeForce) join pairs only.
  const bool switch_board = name_contains(gpu.id, "sxm") || name_contains(gpu.name, "sxm") || hopper_class(gpu_family(gpu));
  const bool nvlink = gpu.nvlink_bandwidth > 0 && (tp_ == 2 || switch_board);
  fully_connected_ = nvlink;
  link_ = nvlink ? TpLink::nvlink : (gpu.p2p ? TpLink::pcie_p2p : TpLink::pcie_host);
  custom_ = impl == AllReduceImpl::custom_or_nccl && link_ != TpLink::pcie_host && (tp_ == 2 || fully_connected_) &&
            (tp_ == 2 || tp_ == 4 || tp_ == 6 || tp_ == 8);

  // The profile's link figures describe the card's own GPU-GPU link; a group that cannot use it (bridged pairs
  // beyond two GPUs) falls back to PCIe with the default profile's PCIe figures (hardware_profile.cpp).
  const bool profile_link = gpu.nvlink_bandwidth > 0 ? link_ == TpLink::nvlink : true;
  if (profile_link) {
    ring_bw_ = profile.link_bandwidth > 0 ? profile.link_bandwidth
                                          : (link_ == TpLink::nvlink ? 0.8 * gpu.nvlink_bandwidth : 0.6 * pcie);
    ring_step_s_ = profile.link_latency_s;
  } else {
    ring_bw_ = gpu.p2p ? 0.75 * pcie : 0.6 * pcie;
    ring_step_s_ = gpu.p2p ? 12e-6 : 25e-6;
  }
  if (link_ != TpLink::nvlink && tp_ > 4) ring_bw_ *= kPcieCrossSocketFactor;
  // Over NVSwitch NCCL's bus bandwidth grows with the ring: B·(1 − k/n), k = 0.6 on Hopper, 0.25 on Ampere, both
  // fitted to Vidur's all-reduce timings with the profile's B (hardware_profile.cpp).
  if (link_ == TpLink::nvlink) ring_bw_ *= 1.0 - (hopper_class(gpu_family(gpu)) ? 0.6 : 0.25) / tp_;
  // NCCL's fixed cost per call: over NVLink (n + 2) × link_latency_s, as Vidur's A100/H100 timings fit
  // (hardware_profile.cpp); rings through PCIe or host memory pay each of their 2(n-1) steps.
  nccl_call_s_ = link_ == TpLink::nvlink ? (tp_ + 2.0) * ring_step_s_ : 2.0 * (tp_ - 1) * ring_step_s_;
  // Small messages: NCCL's LL protocol, low latency at half the bandwidth; NCCL picks whichever is faster.
  const double ll_step = profile.nccl_ll_step_s * (link_ != TpLink::nvlink && tp_ > 4 ? kPcieCrossSocketLLStepFactor : 1.0);
  ll_call_s_ = kNcclLLBaseS + 2.0 * (tp_ - 1) * ll_step;
  // All-gather: the same ring with half the steps, (t-1) instead of 2(t-1). NVLink keeps the all-reduce's fitted
  // Simple-protocol call cost (Vidur profiles no all-gather; an upper bound).
  ag_call_s_ = link_ == TpLink::nvlink ? nccl_call_s_ : (tp_ - 1.0) * ring_step_s_;
  ag_ll_call_s_ = kNcclLLBaseS + (tp_ - 1.0) * ll_step;
  ll_bw_ = std::min(kNcclLLBandwidthFraction * ring_bw_,
                    hopper_class(gpu_family(gpu)) ? kNcclLLMaxBwHopper : kNcclLLMaxBwAmpere);

  custom_s_ = profile.custom_allreduce_latency_s;
  // The measured Ampere kernel (A100 over NVSwitch); GDDR cards' NVLink bridges keep the prior.
  ampere_nvlink_ = link_ == TpLink::nvlink && gpu_family(gpu) == GpuFamily::ampere_hbm;
  hopper_nvlink_ = link_ == TpLink::nvlink && gpu_family(gpu) == GpuFamily::hopper_hbm;
  if (profile.custom_allreduce_bandwidth > 0) {
    peer_bw_ = profile.custom_allreduce_bandwidth;
  } else {
    // One GPU reading its peers: H100 TP4 one-stage 0.5/1/2/4 MB in 10/15/22/38 us (vllm-project/vllm#24111) is
    // 6 us + 3 MB read per MB at 375 GB/s = 0.83 of NVLink's 450 GB/s per direction; A100 0.69 (above); PCIe P2P
    // as NCCL's 0.75.
    const double peer_fraction = ampere_nvlink_ ? kPeerReadFractionAmpere : kPeerReadFractionHopper;
    peer_bw_ = link_ == TpLink::nvlink ? peer_fraction * gpu.nvlink_bandwidth : 0.75 * pcie;
  }
}

double AllReduceModel::two_shot_factor() const {
  if (ampere_nvlink_) return kTwoShotFactorAmpere;
  return tp_ <= 4 ? kTwoShotFactorTp4 : kTwoShotFactorTp6Up;
}

double AllReduceModel::two_shot_sync_s() const {
  if (hopper_nvlink_) return kTwoShotSyncHopper;
  return ampere_nvlink_ && tp_ > 4 ? kTwoShotSyncAmpereTp6Up : 0.0;
}

AllReduceAlgorithm AllReduceModel::algorithm(double bytes) const {
  if (tp_ < 2) return AllReduceAlgorithm::none;
  if (custom_ && bytes < kCustomMaxBytes) {
    if (tp_ == 2) return AllReduceAlgorithm::custom_one_shot;
    if ((tp_ <= 4 && bytes < kOneShotMax4) || (tp_ <= 8 && bytes < kOneShotMax8))
      return AllReduceAlgorithm::custom_one_shot;
    return AllReduceAlgorithm::custom_two_shot;
  }
  return link_ == TpLink::pcie_host ? AllReduceAlgorithm::nccl_host_staged : AllReduceAlgorithm::nccl_ring;
}

double AllReduceModel::link_bytes(double bytes) const {
  if (tp_ < 2 || !(bytes > 0)) return 0;
  const double t = tp_;
  switch (algorithm(bytes)) {
    case AllReduceAlgorithm::custom_one_shot: return (t - 1) * bytes;  // every peer's full buffer is read
    case AllReduceAlgorithm::custom_two_shot:
    case AllReduceAlgorithm::nccl_ring:
    case AllReduceAlgorithm::nccl_host_staged: return 2.0 * (t - 1) / t * bytes;
    case AllReduceAlgorithm::none: return 0;
  }
  return 0;
}

double AllReduceModel::time_s(double bytes) const {
  if (tp_ < 2 || !(bytes > 0)) return 0;
  switch (algorithm(bytes)) {
    case AllReduceAlgorithm::custom_one_shot: return custom_s_ + link_bytes(bytes) / peer_bw_;
    // Two stages, each with its own synchronisation (csrc/custom_all_reduce.cuh), and k·S / B_peer [D]: H100 TP4
    // two-stage 1/2/4 MB in 18/27/43 us, TP6 17/26/37 us (vllm-project/vllm#24111); A100 TP4 1/2/4 MB in
    // 18.5/26.2/41.1 us, TP8 21.7/28.4/45.4 us (aiconfigurator, vLLM 0.20.0); the constants above.
    case AllReduceAlgorithm::custom_two_shot:
      return 2.0 * custom_s_ + two_shot_sync_s() + two_shot_factor() * bytes / peer_bw_;
    case AllReduceAlgorithm::nccl_ring:
    case AllReduceAlgorithm::nccl_host_staged:
      return std::min(nccl_call_s_ + link_bytes(bytes) / ring_bw_, ll_call_s_ + link_bytes(bytes) / ll_bw_);
    case AllReduceAlgorithm::none: return 0;
  }
  return 0;
}

double AllReduceModel::all_gather_time_s(double bytes) const {
  if (tp_ < 2 || !(bytes > 0)) return 0;
  // NCCL's ring all-gather: each GPU receives the (t-1)/t of the result it does not hold; Simple or LL, whichever
  // is faster, as for the all-reduce.
  const double moved = (tp_ - 1.0) / tp_ * bytes;
  return std::min(ag_call_s_ + moved / ring_bw_, ag_ll_call_s_ + moved / ll_bw_);
}

}  // namespace llmsim::perf
