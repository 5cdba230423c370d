#pragma once
// The Python host path of an eager forward in vLLM's early V0 engine (issue 27; docs/cost-model.md "Eager steps of
// vLLM 0.2-0.4.2"). Without a CUDA graph, vLLM's model runner calls the model's nn.Modules from Python every step:
// per decoder layer the RMSNorms, the linear layers' apply paths, the split of qkv, the rotary and cache ops, the
// attention op and the activation each cross Python, the PyTorch dispatcher and a kernel launch. The kernels are
// enqueued asynchronously (model_runner.execute_model first synchronises in the sampler, when the sampled ids reach
// the host), so the host runs ahead of the GPU and the forward costs whichever is longer: the GPU's work, or the
// host's time to enqueue it. A GPU fast enough per layer (a 4-bit model at batch 1, a small model, a short prompt)
// therefore waits on Python. What the GPU pays per kernel either way (kernel_launch_s) stays as before.
//
// vLLM 0.2.0-0.2.5 ran every step this way (CUDA graphs arrived with vllm#1926, first released in 0.2.6); later
// releases of the same runtime (vllm-v0-paged, to 0.4.2) capture decode graphs and run prefills, and decode batches
// above 256 sequences, eagerly. SGLang's model runner does the same: its prefills, and decode batches above its
// cuda_graph_max_bs (spec::sglang_cuda_graph_max_bs), run the Python forward eagerly.
#include "llmsim/perf/runtime.hpp"

namespace llmsim::perf {

namespace eager_host {
/// Host seconds per decoder layer to enqueue an eager forward of vLLM 0.2.x's Python model code (vllm#1440,
/// 2023-10-20, Llama-2-7B at batch 1, one GPU: 1.2 s for 100 tokens without CUDA graphs against 1.05 s with them; at
/// batch 1 without graphs the host is the slower side, so the 12.0 ms token less V0's serialized CPU time per step
/// (2.1 ms, the A100 profile's v0_cpu_overhead_per_iter_s) is the host's forward, 9.9 ms over 32 layers) [D].
inline constexpr double kVllmV0PagedPerLayerS = 0.31e-3;
/// Host seconds per decoder layer to enqueue an eager forward of SGLang's Python model code (its prefills, decode
/// batches above cuda_graph_max_bs, --disable-cuda-graph): sglang#1401 (2024-09-12, 0.3.1, Llama-3-8B, batch 1,
/// bench_latency, H100 assumed) times a decode step at 7.35 ms with graphs and 8.23 ms without on the FlashInfer
/// backend, 7.06 and 9.28 ms on the Triton backend. The two backends run nearly the same GPU kernels, yet Triton's
/// eager step, whose Python prepares more per layer, is 1.05 ms slower: the eager step is the host's time, not the
/// GPU's. bench_latency calls the model runner directly (no scheduler), so the FlashInfer eager step is the host's
/// forward: 8.23 ms over 32 layers [D].
inline constexpr double kSglangPerLayerS = 0.26e-3;
}  // namespace eager_host

/// Host seconds to enqueue one eager forward of `layers` decoder layers under `traits` (its eager_host_per_layer_s;
/// 0 for runtimes whose host time per kernel is priced otherwise).
inline double eager_forward_host_s(const RuntimeTraits& traits, double layers) {
  return layers > 0 ? traits.eager_host_per_layer_s * layers : 0.0;
}

/// The launch term of a step whose forward the host enqueues eagerly from Python while the GPU works: the GPU's own
/// price of its kernel launches (`launches_s`, as for any step), or the part of the host's enqueue time
/// (`host_s`) that the GPU's work (`gpu_busy_s`) does not cover, whichever is larger. Never negative.
inline double eager_host_launch_s(double launches_s, double host_s, double gpu_busy_s) {
  const double wait = host_s - gpu_busy_s;
  return wait > launches_s ? wait : launches_s;
}

}  // namespace llmsim::perf
