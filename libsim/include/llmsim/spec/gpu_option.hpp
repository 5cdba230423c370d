#pragma once
// GPU option strings — what a user writes wherever a GPU is named (hardware.gpu, --gpu, compare --gpus, sweep grid
// axes, Python): "rtx4090-24gb" (one card), "2xrtx4090-24gb" (two cards in one replica, tensor parallel 2),
// "2xrtx4090-24gb@pp" (the same cards as a two-stage pipeline), "2xa100-80gb-pcie+nvlink" (a pair of PCIe cards
// joined by an NVLink bridge), "rtx4090-24gb+offload64" (the card with a 64 GiB host KV tier per replica,
// engine.kv_offload_gb: a second prefix-cache tier in host memory). One parser, here; every command, scenario file, grid and Python reach it through
// spec::resolve().
#include <optional>
#include <string>

#include "llmsim/spec/deployment.hpp"
#include "llmsim/spec/gpu_spec.hpp"

namespace llmsim::spec {

class Catalog;

struct GpuOption {
  std::string card;            ///< catalogue id ("a100-80gb-sxm", "a100-80gb-sxm:mig-3g.40gb") or GPU spec file
  int count = 1;               ///< cards in one replica
  bool count_given = false;    ///< "<N>x" was written (else the deployment's tp × pp decide the count)
  bool pipeline = false;       ///< "@pp": pipeline stages; else ("@tp" or nothing) tensor parallel
  bool nvlink_bridge = false;  ///< "+nvlink": the pair is joined by the card's NVLink bridge
  /// "+offload<G>": a host KV tier of G GiB per replica (engine.kv_offload_gb; whole GiB, 1..1000000); 0 = none.
  int kv_offload_gb = 0;
  std::string text;            ///< as written
};

/// Parses "[<N>x]<card>[@tp|@pp][+nvlink][+offload<G>]" (the suffixes in any order; 'X' or '×' also mark the count).
/// ConfigError at `path` for a count outside 1..64, an empty card or an unknown suffix. A '@' or '+' followed
/// by text containing '/' or '.' belongs to a file path, not a suffix.
GpuOption parse_gpu_option(const std::string& text, const std::string& path = "hardware.gpu");

/// The tensor × pipeline split of one replica: without a count prefix, `given` (the deployment's tp and pp) as it
/// is; with one, the option's split (tp = N, or pp = N for "@pp") when neither tp nor pp was given
/// (ParallelConfig::tp_given / pp_given), else what was given (a pp alone leaves tp = N / pp, a tp alone the option's pp) when it
/// agrees (tp × pp = N, and tp = 1 for "@pp"). A given 1 counts: "2x…" with tp 1 is refused, since the option is one
/// replica of N GPUs (not N replicas). ConfigError at `tp_path` naming both when they contradict.
ParallelConfig split_for(const GpuOption& option, ParallelConfig given, const std::string& tp_path = "hardware.tp");

/// One replica's split from a GPU count (`llmsim memory --num-gpus`, Python `memory(num_gpus=)`): without `tp`,
/// tensor parallel over num_gpus / pp; with it, num_gpus must equal tp x pp. ConfigError at `path` otherwise
/// (num_gpus < 1, not a multiple of pp, or contradicting tp x pp).
ParallelConfig split_for_count(int num_gpus, std::optional<int> tp, int pp, const std::string& path = "num_gpus");

/// The card's spec as one replica of `gpus_per_replica` cards sees it: "+nvlink" gives it the bridge's NVLink
/// bandwidth (GpuSpec::nvlink_bridge_bandwidth, from the datasheet) and peer-to-peer access. ConfigError at `path`
/// when the card has no bridge connector, already has NVLink (SXM), or the replica is not a pair.
GpuSpec gpu_for(const GpuOption& option, int gpus_per_replica, const Catalog& catalog,
                const std::string& path = "hardware.gpu");

/// What the GPUs of one replica talk over, in words, e.g. "NVLink bridge, 300 GB/s per direction",
/// "PCIe 4.0 x16 with P2P", "PCIe 4.0 x16 without P2P (host-staged); no NVLink bridge assumed (+nvlink for a
/// bridged pair)". Empty for one GPU.
std::string interconnect(const GpuSpec& gpu, int gpus_per_replica, bool bridged = false);

}  // namespace llmsim::spec
