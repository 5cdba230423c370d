// What each serving runtime does around the model's kernels. Sources of every value: docs/cost-model.md, "Runtimes".
#include "llmsim/perf/runtime.hpp"

#include "llmsim/perf/eager_host.hpp"
#include "llmsim/perf/inprocess_server.hpp"
#include "llmsim/perf/v0_sampler.hpp"

#include <limits>

namespace llmsim::perf {

namespace {
// The OpenAI server's path around an engine in its own process (vLLM 0.6+ V0's MQLLMEngine, V1's EngineCore):
// offline LLM.generate -> online `vllm serve` added 4 ms to the average TTFT of the same Llama-3.3-70B batch
// ("HTTP server + ZMQ latency", tenstorrent/tt-inference-server#190, 2025-05-08). perf/serving_path.hpp.
constexpr double kMultiprocFrontendS = 4e-3;
// vLLM V1's AsyncLLM without the HTTP server in front (a Python caller of AsyncLLM.generate): the frontend still
// processes the request for the engine and sends it to the EngineCore process over ZMQ, whose outputs come back the
// same way. vllm#51349's frontend timings: process_for_engine 0.5 ms + add_request to the EngineCore 1.0 ms (its
// prompt rendering, 0.3 ms, is the chat template an API server applies; a Python caller passes the rendered prompt)
// [D]. perf/serving_path.hpp.
constexpr double kAsyncLlmClientS = 1.5e-3;
// vLLM V0 behind the OpenAI server (MQLLMEngine since vllm#8157, 2024-09, until V0's removal): the engine process
// pickles each step's RequestOutputs and sends them to the API server over ZMQ (engine/multiprocessing/engine.py
// _send_outputs, called from the async output processor's callback). The PR's own measurement (1 H100, Llama-3.1-8B,
// ShareGPT, single-step scheduling; #8092's table): 34.8 req/s offline (LLM.generate) against 31.6 req/s served, i.e.
// 1/31.6 - 1/34.8 = 2.91 ms more per request; the authors' ShareGPT run of 1,000 prompts generates 197,520 tokens
// (#8125, #8335: 197.5 per request), so 2.91 ms / 197.5 = 14.7 us per generated token = per sequence per step [D].
// perf/served_step_host.hpp.
constexpr double kMqEngineOutputPerSeqS = 15e-6;
// V1's MultiprocExecutor (vllm/v1/executor/multiproc_executor.py, 0.8-0.10; vllm#9856): with world size > 1 every
// step's execute_model pickles ("execute_model", (SchedulerOutput,), {}, rank) into rpc_broadcast_mq, each worker
// unpickles it, and the output rank pickles the ModelRunnerOutput into its worker_response_mq for the EngineCore to
// unpickle; one process serves the whole step at TP 1 (UniProcExecutor). The round trip of 0.8.4's messages
// (per-request CachedRequestData objects, before vllm#20232) measured by calibration/host/executor_pickle.py (CPython
// 3.11, this build host): 8.7 us for one decoding request, a median 2.7 us more per request over 8-512 [D].
constexpr double kMultiprocExecutorIterS = 8e-6, kMultiprocExecutorSeqS = 2.7e-6;
// Prompt tokenisation in the server's process (vLLM's OpenAI server renders and tokenises before add_request; SGLang's
// TokenizerManager before it sends the request to the scheduler over ZMQ): transformers' AutoTokenizer (the Rust fast
// tokenizer) encodes ~500k tokens/s on one core, 1.74 us/token at 679 tokens to 2.17 at 101,615
// (andyluo7/cpu-gpu-codesign-agentic-inference@5fac1f0 RESULTS_SUMMARY.md, phase 2.1); the same run's client TTFT less
// the server's own grows by ~2 us per prompt token (phase 2, single requests 1k-100k). vllm#10635: "long sequence
// lengths (256K), tokenization can take a few hundred milliseconds". perf/serving_path.hpp.
constexpr double kTokenisePerTokenS = 2e-6;
// vLLM V0 replays a decode graph only while every sequence of the batch is at most max_seq_len_to_capture tokens long
// (default 8192, EngineArgs / ModelConfig; clamped to max_model_len, which no sequence exceeds): 0.6-0.10's
// ModelInputForGPUBuilder._use_captured_graph requires max_decode_seq_len <= max_seq_len_to_capture, where a decode
// sequence's seq_len is seq_data.get_len() (its cached tokens plus the one being decoded); 0.2.6-0.4.x's
// _prepare_decode the same test on max(context_lens) <= max_context_len_to_capture (8192), context_len being
// seq_data.get_len() too (renamed max_seq_len_to_capture in mid-2024, the old name deprecated: vllm#4911). A longer
// batch runs the model's Python forward eagerly, as a prefill does (perf/eager_host.hpp).
constexpr std::int64_t kV0MaxSeqLenToCapture = 8192;
}  // namespace

std::string to_string(Runtime r) { return spec::to_string(r); }

RuntimeTraits runtime_traits(Runtime r) {
  RuntimeTraits t;
  switch (r) {
    case Runtime::vllm_v1:
      // The defaults: piecewise graphs, the profile's V1 CPU time, custom all-reduce. Its Inductor-compiled model runs
      // the fp8 input quantisation (QuantFP8's native path) fused with the RMSNorm or SiLU×mul that feeds the GEMM
      // (docs/design/fusions.md: RMSNorm + Quant and SiLU+Mul + Quant, FP8 on sm89+, on by default).
      t.fuses_fp8_input_quant = true;
      // The API server process in front of the EngineCore process (AsyncLLM over ZMQ): perf/serving_path.hpp.
      t.api_server_s = kMultiprocFrontendS;
      // AsyncLLM called in-process still reaches its EngineCore process over ZMQ (AsyncMPClient).
      t.engine_client_s = kAsyncLlmClientS;
      // TP/PP > 1: the EngineCore drives its GPU workers through MultiprocExecutor's shared-memory queues.
      t.multiproc_per_iter_s = kMultiprocExecutorIterS;
      t.multiproc_per_seq_s = kMultiprocExecutorSeqS;
      t.tokenise_per_token_s = kTokenisePerTokenS;
      break;
    case Runtime::vllm_v0:
      t.graphs = GraphMode::vllm_v0;
      t.max_graph_seq_len = kV0MaxSeqLenToCapture;
      t.cpu = CpuCost::profile_v0;
      // 0.6's asynchronous output processor (#7049): LLMEngine.step appends the step's output to ctx.output_queue
      // and _process_model_outputs runs as the next step's async_callback, after that step's forward is launched;
      // AsyncLLMEngine streams the RequestOutputs when that step returns (engine/async_llm_engine.py step_async).
      t.async_output_proc = true;
      // 0.6's frontend multiprocessing (#6883): the API server in front of MQLLMEngine over ZMQ.
      t.api_server_s = kMultiprocFrontendS;
      t.served_step_per_seq_s = kMqEngineOutputPerSeqS;
      t.tokenise_per_token_s = kTokenisePerTokenS;
      // Prefills, mixed steps and decode batches above 256 run the Python forward eagerly (perf/eager_host.hpp): the
      // model runner of 0.6-0.10 replays a graph only for decode-only batches (ModelRunner.execute_model's
      // prefill_metadata is None and use_cuda_graph), so 0.2.1's measured figure is carried over (kVllmV0PerLayerS).
      t.eager_host_per_layer_s = eager_host::kVllmV0PerLayerS;
      // The sampler casts, scales, softmaxes and log-softmaxes the whole fp32 logits before its argmax
      // (perf/v0_sampler.hpp): 42 bytes per logit, not the default 8.
      t.sampler_bytes_per_logit = v0_sampler::kBytesPerLogit;
      break;
    case Runtime::vllm_v0_sync:
    case Runtime::vllm_v0_paged:
      t.max_graph_seq_len = kV0MaxSeqLenToCapture;
      // Before 0.6's asynchronous output processor (vllm#6913, #7049) LLMEngine.step ran _process_model_outputs
      // after every step while the GPU waited: 0.2 ms at batch 1 and 3.4 ms at batch 32 on Llama-3-70B / 4 H100
      // (RFC #6913's profile) = 0.1 ms per sequence; RFC #6854 shows the same 5-13 ms decode bubbles.
      t.graphs = GraphMode::vllm_v0;
      t.cpu = CpuCost::profile_v0;
      t.sync_output_per_seq_s = 100e-6;
      // The engine ran in the API server's process (no ZMQ hop, api_server_s 0), which still tokenised the prompt
      // (AsyncLLMEngine.add_request -> encode_request) before the engine saw it.
      t.tokenise_per_token_s = kTokenisePerTokenS;
      // ... and streamed every step's outputs from coroutines on the engine's own event loop, between two steps
      // (vllm#6883 / RFC #6797): perf/inprocess_server.hpp.
      t.served_step_per_seq_s = inprocess_server_per_output_s(r);
      // V0's eager steps (every step before 0.2.6's CUDA graphs; prefills, mixed steps and decode batches above 256
      // after): the host enqueues the forward from Python while the GPU works, and the GPU waits where that is longer
      // (perf/eager_host.hpp). 0.4.3-0.5.x carry 0.2.1's measured figure (kVllmV0PerLayerS: no A/B of theirs found).
      t.eager_host_per_layer_s =
          r == Runtime::vllm_v0_paged ? eager_host::kVllmV0PagedPerLayerS : eager_host::kVllmV0PerLayerS;
      break;
    case Runtime::sglang:
      // The scheduler drives the model runner from Python every step (as vLLM V1's loop: the V1 profile terms). The
      // overlap scheduler (0.3.6+, perf/sglang_overlap.hpp) runs that host time while the GPU works, as V1's async
      // scheduling does; the synchronous loop (0.3.5 and earlier, --disable-overlap-schedule, static batches) pays it
      // every step. Decode batches replay full graphs up to cuda_graph_max_bs: 160 here (the capture list's largest
      // size in 0.3.0-0.5.2 off small and very large cards); a scenario's is the release's for its card and TP
      // (spec::sglang_cuda_graph_max_bs, CostModel::with_max_graph_batch). Larger decode batches and every prefill
      // run the Python forward eagerly (perf/eager_host.hpp).
      t.graphs = GraphMode::decode_only;
      t.max_graph_batch = 160;
      t.eager_host_per_layer_s = eager_host::kSglangPerLayerS;
      // launch_server: the HTTP server's process holds the TokenizerManager (tokenises, sends the request to the
      // Scheduler process over ZMQ); the Scheduler sends each step's token ids over ZMQ to the DetokenizerManager
      // process, which detokenises the batch and sends the text over ZMQ back to the TokenizerManager, which streams
      // it (srt/managers/tokenizer_manager.py, detokenizer_manager.py). The same FastAPI/uvicorn + ZMQ path as vLLM's
      // multiprocess server, with one more ZMQ hop (tens of us): priced as vLLM's. perf/serving_path.hpp.
      t.api_server_s = kMultiprocFrontendS;
      t.tokenise_per_token_s = kTokenisePerTokenS;
      break;
    case Runtime::lmdeploy_turbomind:
      // TurboMind v0.1 (LlamaBatch.cc): a C++ thread per GPU launches every kernel eagerly, no CUDA graphs; each step
      // ends in Finish(): D2H of the batch's output ids and sequence lengths, cudaStreamSynchronize, host bookkeeping,
      // then the next step's H2D copies and launches. The GPU idles for that gap only: ~30 us of synchronous
      // relaunch (G§B6: 10–20 us for a launch after the host waited, plus the sync's wake-up) and ~1 us per sequence
      // (two host copies of its session_len × 4-byte id row at ~10–25 GB/s) [D]. All-reduce: ftNcclAllReduceSum.
      t.graphs = GraphMode::none;
      t.host_runs_ahead = true;
      t.cpu = CpuCost::fixed;
      t.cpu_per_iter_s = 30e-6;
      t.cpu_per_seq_s = 1e-6;
      t.allreduce = AllReduceImpl::nccl;
      break;
    case Runtime::gpt_fast:
      // generate.py's decode loop calls a torch.compile(mode="reduce-overhead") step (one CUDA graph) and never
      // synchronizes until the end: the host runs ahead, no CPU time on the critical path. Tensor parallel uses
      // PyTorch's intra-node one-shot all-reduce (ENABLE_INTRA_NODE_COMM=1, pytorch#114001; README of 2023-12-16).
      t.graphs = GraphMode::decode_only;
      t.max_graph_batch = std::numeric_limits<int>::max();
      t.host_runs_ahead = true;
      t.cpu = CpuCost::fixed;
      // tp.py (_apply_tp_Transformer, _apply_tp_attn, _apply_tp_ffn): tok_embeddings and output stay whole on every
      // GPU, so no embedding all-reduce and no logits gather.
      t.vocab_parallel = false;
      break;
    case Runtime::llama_cpp:
      // llama-bench's tg loop synchronizes every token; the CUDA backend replays one graph for a batch-1 decode
      // (llama.cpp#6766) and rebuilds the ggml graph on the CPU each token: ~0.6 ms left after graphs (NVIDIA's
      // "up to 10 %" further gain on a 6.1 ms H100 token, llama.cpp#6763) [D].
      t.graphs = GraphMode::decode_only;
      t.max_graph_batch = 1;
      t.cpu = CpuCost::fixed;
      t.cpu_per_iter_s = 0.6e-3;
      // llama-bench of May 2024 (build 2824) runs with flash_attn = 0 by default (FA arrived opt-in as -fa in
      // llama.cpp#5021, 2024-04-30): prefill attention is mul_mat(K, Q) -> soft_max_ext -> mul_mat(V, KQ) over the
      // whole KV view of the unified cache, with the scores materialised (perf/prefill_scores.hpp).
      t.materialises_prefill_scores = true;
      break;
  }
  return t;
}

Runtime runtime_of(const spec::EngineConfig& engine) { return engine.resolved_runtime(); }

bool first_token_after_next_step(const spec::EngineConfig& engine, int pp, bool speculative) {
  // ModelConfig.verify_async_output_proc (vLLM 0.6-0.10): off with pipeline parallel, with enforce_eager
  // (CudaPlatform.is_async_output_supported) and with speculative decoding.
  return runtime_traits(runtime_of(engine)).async_output_proc && engine.cuda_graphs && pp <= 1 && !speculative &&
         engine.policy != spec::SchedulerPolicy::static_batching;
}

}  // namespace llmsim::perf
