#pragma once
// The Python host path of an eager forward in vLLM's V0 engine and SGLang (issue 27; docs/cost-model.md "Eager steps
// of vLLM V0"). Without a CUDA graph, vLLM's model runner calls the model's nn.Modules from Python every step:
// per decoder layer the RMSNorms, the linear layers' apply paths, the split of qkv, the rotary and cache ops, the
// attention op and the activation each cross Python, the PyTorch dispatcher and a kernel launch. The kernels are
// enqueued asynchronously (model_runner.execute_model first synchronises in the sampler, when the sampled ids reach
// the host), so the host runs ahead of the GPU and the forward costs whichever is longer: the GPU's work, or the
// host's time to enqueue it. A GPU fast enough per layer (a 4-bit model at batch 1, a small model, a short prompt)
// therefore waits on Python. What the GPU pays per kernel either way (kernel_launch_s) stays as before.
//
// vLLM 0.2.0-0.2.5 ran every step this way (CUDA graphs arrived with vllm#1926, first released in 0.2.6); later
// releases capture decode graphs and run prefills, mixed steps and decode batches above 256 sequences eagerly: the
// same holds for every V0 release to 0.10 (vllm-v0-paged, vllm-v0.5, vllm-v0; issue 27). SGLang's model runner does
// the same: its prefills, and decode batches above its cuda_graph_max_bs (spec::sglang_cuda_graph_max_bs), run the
// Python forward eagerly. With tensor parallelism each layer's two RowParallelLinear all-reduces also cross Python
// eagerly (kEagerAllReduceHostS). vLLM V1 is not priced here: its steps above the largest capture size run the
// torch.compile'd pieces without graphs (Inductor's generated wrappers, not the modules' Python), for which no public
// host timing was found.
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
/// The same for vLLM V0 0.4.3-0.10 (vllm-v0.5, vllm-v0): no public A/B of an eager against a graphed step of these
/// releases was found, so vllm#1440's 0.2.1 figure is carried over [assumed]. Their decoder layer makes the same
/// module calls from Python (two fused add+RMSNorms, qkv, rotary, attention, o_proj, gate_up, SiLU×mul, down), each
/// linear now through a quant_method.apply dispatch and the attention through an attention backend's forward (a
/// torch.ops.vllm custom op from 0.6.2): not fewer Python calls per layer than 0.2.1's.
inline constexpr double kVllmV0PerLayerS = kVllmV0PagedPerLayerS;
/// Host seconds of one eager tensor-parallel all-reduce through vLLM's Python call path
/// (tensor_model_parallel_all_reduce -> GroupCoordinator -> the custom all-reduce, whose eager call first copies the
/// input into its registered IPC buffer), at TP > 1 two per decoder layer (o_proj's and down_proj's
/// RowParallelLinear). ai-dynamo/aiconfigurator collector/collect_all_reduce.py times vLLM 0.20.0's
/// tensor_model_parallel_all_reduce eagerly (a loop of calls on a cloned input, CUDA events) beside the same call
/// replayed from a CUDA graph (campaign_checkpoints/<gpu>/custom_allreduce_perf.txt @563b2c4, bf16, 256 B-1 MiB):
/// eager 22.3 / 22.4 / 23.9 us median at TP 2 / 4 / 8 on 8 H100 SXM and 20.6 / 21.9 / 22.5 us on 8 H200, flat in the
/// size, where the graph replays take 4.5-5.5 us: the eager call is the host's time, ~22 us (it includes the loop's
/// clone of the input, one small kernel's launch, so it is an upper bound by a few us). The A100 SXM machine of the
/// same collection reads 45.6-46.2 us (a slower host; the host's speed is not a modelled dimension) [D].
inline constexpr double kEagerAllReduceHostS = 22e-6;
/// All-reduces per decoder layer at TP > 1 (as the cost model counts them: o_proj's and down_proj's, or a MoE layer's
/// after its experts and the attention's).
inline constexpr double kAllReducesPerLayer = 2;
}  // namespace eager_host

/// Host seconds per decoder layer of an eager forward under `traits` at tensor-parallel degree `tp`: the runtime's
/// Python per layer plus, at TP > 1, its two eager all-reduces' Python call path. 0 for runtimes whose eager steps are
/// priced by their kernel launches alone (eager_host_per_layer_s 0).
inline double eager_layer_host_s(const RuntimeTraits& traits, int tp) {
  if (!(traits.eager_host_per_layer_s > 0)) return 0.0;
  return traits.eager_host_per_layer_s + (tp > 1 ? eager_host::kAllReducesPerLayer * eager_host::kEagerAllReduceHostS
                                                 : 0.0);
}

/// Host seconds to enqueue one eager forward of `layers` decoder layers under `traits` at TP `tp` (0 for runtimes
/// whose host time per kernel is priced otherwise).
inline double eager_forward_host_s(const RuntimeTraits& traits, double layers, int tp = 1) {
  return layers > 0 ? eager_layer_host_s(traits, tp) * layers : 0.0;
}

/// The launch term of a step whose forward the host enqueues eagerly from Python while the GPU works: the GPU's own
/// price of its kernel launches (`launches_s`, as for any step), or the part of the host's enqueue time
/// (`host_s`) that the GPU's work (`gpu_busy_s`) does not cover, whichever is larger. Never negative.
inline double eager_host_launch_s(double launches_s, double host_s, double gpu_busy_s) {
  const double wait = host_s - gpu_busy_s;
  return wait > launches_s ? wait : launches_s;
}

}  // namespace llmsim::perf
