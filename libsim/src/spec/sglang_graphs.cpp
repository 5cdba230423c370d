// SGLang's decode CUDA-graph batch limit by release, GPU memory and TP (docs/cost-model.md "SGLang's CUDA graphs"),
// read from python/sglang/srt/server_args.py (__post_init__, later _handle_gpu_memory_settings) and
// model_executor/cuda_graph_runner.py (get_batch_sizes_to_capture). A decode batch of up to this many requests is
// padded to a captured size and replayed; a larger one runs eagerly (CudaGraphRunner.can_run: bs <= max_bs).
#include <algorithm>

#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/gpu_spec.hpp"
#include "sglang_release.hpp"

namespace llmsim::spec {

namespace {

// SGLang reads the card's total memory in MiB (get_nvgpu_memory_capacity / get_device_memory_capacity: nvidia-smi's
// memory.total); llmsim's memory_bytes is the datasheet size read as GiB, the same scale (a 40 GB A100: 40,960).
double capacity_mib(const GpuSpec& gpu) { return static_cast<double>(gpu.memory_bytes) / (1024.0 * 1024.0); }

/// The largest size of cuda_graph_runner's default capture list (no --cuda-graph-bs) before the list was generated
/// from cuda_graph_max_bs (0.5.3): [1, 2, 4] + 8..160 step 8 since CUDA graphs came (0.2.x), extended on large cards
/// by sglang#5604 (2025-04-21, first in 0.4.6: range(160, 257, 8) above 120 GiB) and sglang#6718 (2025-05-28, first
/// in 0.4.7: above 96 GiB, and range(256, 513, 16) above 180,000 MiB).
int default_capture_list_max(const detail::SglangRelease& r, double mib) {
  if (r.at_least(0, 4, 7)) return mib > 180000 ? 512 : mib > 96 * 1024 ? 256 : 160;
  if (r.at_least(0, 4, 6)) return mib > 120 * 1024 ? 256 : 160;
  return 160;
}

}  // namespace

int sglang_cuda_graph_max_bs(const GpuSpec& gpu, const std::optional<std::string>& release, int tp,
                             std::optional<int> asked) {
  const detail::SglangRelease r = detail::sglang_release(release);
  const double mib = capacity_mib(gpu);
  const bool tiers = !r.known || r.at_least(0, 5, 3);  // no release: the newest line modelled
  if (asked) {
    // --cuda-graph-max-bs (sglang#1809, 0.3.5) first only filtered the default list; sglang#6201 (2025-05-11, first
    // in 0.4.6.post4) extends the list up to it, and 0.5.3's list is generated up to it.
    return tiers || r.at_least(0, 4, 6, 4) ? *asked : std::min(*asked, default_capture_list_max(r, mib));
  }
  if (tiers) {
    // 0.5.3+ (_handle_gpu_memory_settings after sglang#10372 and #10975, 2025-09): one chain by memory; tp < 4 takes
    // the smaller value ("T4, 4080", "A10, 4090, 5090", "A100 (40GB), L40", "H100, A100", "H20, H200", "B200").
    if (mib < 20 * 1024) return 8;
    if (mib < 35 * 1024) return tp < 4 ? 24 : 80;
    if (mib < 60 * 1024) return tp < 4 ? 32 : 160;
    if (mib < 160 * 1024) return tp < 4 ? 256 : 512;
    return 512;
  }
  // 0.4.0-0.5.2 (__post_init__): small cards capture few graphs ("when serving TP1/TP2 models on lower-end GPUs ...
  // set cuda_graph_max_bs to a very small value ... with TP4 or TP8 ... 80"): below 25,000 MiB from sglang#2268
  // (2024-11-29, 0.4.0: 8) and #2360 (2024-12-05, 0.4.0.post1: 80 at TP >= 4); below 35 GiB by 0.4.7.post1
  // (the server_args.py of sglang#7054). Elsewhere the default capture list.
  if (r.at_least(0, 4, 0)) {
    const double small = r.at_least(0, 4, 7, 1) ? 35 * 1024 : 25000;
    if (mib < small) return tp >= 4 && r.at_least(0, 4, 0, 1) ? 80 : 8;
  }
  return default_capture_list_max(r, mib);
}

}  // namespace llmsim::spec
