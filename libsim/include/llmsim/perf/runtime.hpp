#pragma once
// The serving runtime around the model's kernels (docs/cost-model.md, "Runtimes"): which kernels it replays from
// CUDA graphs, whether its host loop waits for the GPU every step and how long it then keeps the GPU idle, which
// all-reduce it runs under tensor parallel and which decode-attention kernels it picks. The runtime's names live in
// spec (engine.runtime); what they mean for the cost lives here.
#include <string>

#include "llmsim/spec/engine_config.hpp"

namespace llmsim::perf {

using Runtime = spec::Runtime;
/// The former name of the runtime dimension (vLLM V1/V0 only).
using EngineGeneration = spec::Runtime;
std::string to_string(Runtime r);

/// Which kernels a runtime replays from CUDA graphs.
enum class GraphMode {
  vllm_v1,      ///< piecewise graphs (attention launched eagerly) for batches of <= 512 tokens, full graphs for decode
  vllm_v0,      ///< full graphs for decode-only batches of <= 256 sequences
  decode_only,  ///< full graphs for decode-only batches of <= max_graph_batch sequences (SGLang, gpt-fast, llama.cpp)
  none,         ///< every kernel launched eagerly (LMDeploy TurboMind v0.1)
};

/// The all-reduce a runtime runs between tensor-parallel GPUs.
enum class AllReduceImpl {
  custom_or_nccl,  ///< a one-/two-shot peer-read kernel for small messages (vLLM's custom all-reduce, which SGLang
                   ///< also uses; PyTorch's intra-node one-shot for gpt-fast), NCCL beyond it (perf/collective)
  nccl,            ///< NCCL for every message
};

/// Where a runtime's serialized CPU time per iteration comes from.
enum class CpuCost {
  profile_v1,  ///< the profile's cpu_overhead_per_iter_s / _per_seq_s (a Python step loop as vLLM V1's)
  profile_v0,  ///< the profile's v0_cpu_overhead_per_iter_s / _per_seq_s
  fixed,       ///< RuntimeTraits::cpu_per_iter_s / cpu_per_seq_s (a C++ loop, or none on the critical path)
};

struct RuntimeTraits {
  GraphMode graphs = GraphMode::vllm_v1;
  int max_graph_batch = 0;       ///< decode_only: largest decode batch replayed from a graph
  /// vllm_v0: a decode-only batch replays its graph only while its longest sequence (the tokens in its KV cache plus
  /// the one being decoded) is at most this long; longer ones run the Python forward eagerly (vLLM V0's
  /// max_seq_len_to_capture, before 0.5 max_context_len_to_capture). 0 = no such limit.
  std::int64_t max_graph_seq_len = 0;
  /// The host enqueues kernels without waiting for the GPU within a step (a C++ loop or a compiled graph): eager
  /// launches overlap the GPU's work, which then waits only when the host is the slower of the two.
  bool host_runs_ahead = false;
  CpuCost cpu = CpuCost::profile_v1;
  double cpu_per_iter_s = 0, cpu_per_seq_s = 0;  ///< CpuCost::fixed
  /// CPU time per sequence to turn each step's sampled token into the request's output (detokenize, build the
  /// output object, check stop conditions) when the engine does it synchronously between steps; on top of `cpu`.
  double sync_output_per_seq_s = 0;
  AllReduceImpl allreduce = AllReduceImpl::custom_or_nccl;
  /// TP shards the embedding and the LM head by vocabulary (vLLM's VocabParallelEmbedding / ParallelLMHead, SGLang's
  /// copies, TurboMind): each step all-reduces the embedding's output and gathers the logits. gpt-fast's tp.py shards
  /// attention and FFN only and keeps both replicated.
  bool vocab_parallel = true;
  /// Prefill attention without a fused (flash) kernel: the score matrix of heads × tokens × KV cells is written to
  /// and read back from memory between a batched GEMM, a softmax and a second GEMM (perf/prefill_scores.hpp).
  bool materialises_prefill_scores = false;
  /// W8A8 FP8: the compiled model (torch.compile/Inductor) quantises a GEMM's input inside the kernel that produces
  /// it (the RMSNorm before qkv and gate_up, the SiLU×mul before down), which then writes 8 bits; only o_proj's input,
  /// after the opaque attention op, is quantised by a kernel of its own. Without it, every GEMM input is.
  bool fuses_fp8_input_quant = false;
  /// vLLM V0's asynchronous output processor (RFC vllm#6913, PR #7049, 0.6.0 until V0's removal): a step's sampled
  /// tokens are turned into request outputs (detokenised, streamed) only inside the next step, so a prompt's first
  /// token reaches the caller when the following iteration ends (first_token_after_next_step).
  bool async_output_proc = false;
  /// Latency the runtime's OpenAI-compatible server adds to every request outside the engine's iterations: the HTTP
  /// request parsed, the prompt tokenised and handed to the engine process over IPC, and each output sent back over
  /// IPC, detokenised and streamed (perf/serving_path.hpp); 0 = not modelled for this runtime.
  double api_server_s = 0;
  /// Latency an engine driven in-process (no HTTP server: `engine.api_server` false) still adds to every request
  /// outside its iterations, because the caller's engine object is itself a client of an engine process: vLLM V1's
  /// AsyncLLM always runs the EngineCore in a process of its own (AsyncMPClient) and sends it each request over ZMQ
  /// (perf/serving_path.hpp). Part of api_server_s when served; 0 = the engine runs in the caller's process.
  double engine_client_s = 0;
  /// Host time per sequence per step that serving through the runtime's OpenAI-compatible server adds to the
  /// engine's own step, serialized with the GPU like `cpu` (perf/served_step_host.hpp): vLLM V0's MQLLMEngine pickles
  /// every step's RequestOutputs and sends them to the API server process over ZMQ; before 0.6 the server's streaming
  /// coroutines ran on the engine's own event loop between steps (perf/inprocess_server.hpp). 0 = none or not
  /// modelled.
  double served_step_per_seq_s = 0;
  /// With more than one GPU (TP or PP) the runtime drives its workers from another process and pays, every step, the
  /// pickling of the step's inputs broadcast to them and of the sampled output returned (vLLM V1's MultiprocExecutor:
  /// SchedulerOutput through a shared-memory MessageQueue, ModelRunnerOutput from one rank back): per step and per
  /// scheduled sequence, serialized with the GPU; 0 = in-process or not modelled (perf/engine_overhead).
  double multiproc_per_iter_s = 0, multiproc_per_seq_s = 0;
  /// CPU seconds per prompt token to tokenise a served request's prompt in the server's own process before the engine
  /// sees it (vLLM's OpenAI server, SGLang's TokenizerManager): a Hugging Face fast tokenizer called from Python,
  /// one request at a time (perf/serving_path.hpp); 0 = not modelled for this runtime.
  double tokenise_per_token_s = 0;
  /// Host seconds per decoder layer to enqueue a forward whose kernels launch eagerly from Python, while the GPU works
  /// (perf/eager_host.hpp): a step without a graph costs the longer of the GPU's work and this × layers. 0 = the
  /// runtime's eager steps are priced by their kernel launches alone.
  double eager_host_per_layer_s = 0;
  /// Bytes the sampler moves in GPU memory per logit (rows sampled x vocabulary) for a greedy request that asks for no
  /// logprobs: by default the fp32 logits written and read once; vLLM V0 0.6-0.10's sampler makes more passes over
  /// them (perf/v0_sampler.hpp).
  double sampler_bytes_per_logit = 8;
};

/// The traits of `r`; sources in docs/cost-model.md "Runtimes".
RuntimeTraits runtime_traits(Runtime r);

/// Whether a served request's first token reaches the caller one engine iteration after the step that sampled it:
/// the runtime processes outputs asynchronously and vLLM leaves that processor on (ModelConfig
/// .verify_async_output_proc: CUDA graphs on, no pipeline parallel, no speculative decoding); static batches (one
/// generate call whose end is drained at once) are not affected. `pp` is hardware.parallel.pp.
bool first_token_after_next_step(const spec::EngineConfig& engine, int pp, bool speculative);

/// The runtime a scenario's engine runs: engine.runtime when set, else vLLM V0 for policy "vllm-v0", else V1.
Runtime runtime_of(const spec::EngineConfig& engine);

}  // namespace llmsim::perf
