// The provenance of the engines' behaviour: runtime traits (perf/runtime.cpp), per runtime; vLLM V1's async
// scheduling and SGLang's overlap scheduler; vLLM V0's and SGLang's scheduler defaults by release. The hardware
// priors and kernel constants are in provenance.cpp; the table is read through constant_provenance().
#include "provenance_rows.hpp"

#include "llmsim/perf/chat_render.hpp"

#include "llmsim/perf/eager_host.hpp"
#include "llmsim/perf/inprocess_server.hpp"
#include "llmsim/perf/rpc_frontend.hpp"
#include "llmsim/perf/v0_sampler.hpp"
#include "llmsim/spec/engine_config.hpp"

namespace llmsim::perf::provenance_rows {

void add_engine_provenance(std::vector<ConstantProvenance>& t) {
  // --- Runtime traits (perf/runtime.cpp), per runtime.
  const std::string mp =
      "vLLM V1 MultiprocExecutor (vllm/v1/executor/multiproc_executor.py, vllm#9856): with TP/PP > 1 each step pickles "
      "the SchedulerOutput into rpc_broadcast_mq for every worker and the output rank pickles the ModelRunnerOutput "
      "back; calibration/host/executor_pickle.py times that round trip of 0.8.4's message classes (CPython 3.11, "
      "median of 5 runs' best, a loaded 2-core build host) [D]";
  t.push_back(c("runtime.multiproc_per_iter_s", "vllm-v1", P::microbenchmark, mp + ": 8.7 us for one request", {},
                8e-6));
  t.push_back(c("runtime.multiproc_per_seq_s", "vllm-v1", P::microbenchmark,
                mp + ": a median 2.7 us more per request over 8-512 requests (2.1-5.0)", {}, 2.7e-6));
  t.push_back(c("runtime.fuses_fp8_input_quant", "vllm-v1", P::engine_code,
                "vLLM docs/design/fusions.md: RMSNorm + Quant and SiLU+Mul + Quant fused by Inductor, FP8 on sm89+, "
                "on by default"));
  for (const char* r : {"vllm-v0", "vllm-v0.5", "vllm-v0-paged"}) {
    t.push_back(c("runtime.graphs", r, P::engine_code, "vLLM V0 CUDA graphs: decode-only batches of <= 256 sequences "
                                                       "(_BATCH_SIZES_TO_CAPTURE)"));
    t.push_back(c("runtime.cpu", r, P::engine_code, "the profile's V0 CPU terms (v0_cpu_overhead_*)"));
    t.push_back(c("runtime.max_graph_seq_len", r, P::engine_code,
                  "vLLM V0 replays a decode graph only while every sequence (cached tokens + the one decoded) is at "
                  "most max_seq_len_to_capture = 8192 tokens long (EngineArgs default): worker/model_runner.py "
                  "ModelInputForGPUBuilder._use_captured_graph, max_decode_seq_len <= max_seq_len_to_capture "
                  "(0.6-0.10); _prepare_decode's max(context_lens) <= max_context_len_to_capture (8192) in "
                  "0.2.6-0.4.x, context_len = seq_data.get_len() (the old name deprecated by mid-2024, vllm#4911); "
                  "a longer batch runs the Python forward eagerly",
                  {}, 8192));
  }
  // The eager steps of vLLM 0.2-0.4.2 (perf/eager_host.hpp, issue 27).
  t.push_back(c("runtime.cuda_graphs_from_release", "vllm-v0-paged", P::engine_code,
                "vLLM before 0.2.6 has no CUDA graphs: model_runner.py @v0.2.5 (31c1f325) calls the model eagerly every "
                "step; vllm#1926 \"Optimize model execution with CUDA graph\" (merged 2023-12-16, 37ca5581) and "
                "#2161 arrived in v0.2.6 (671af2b1, 2023-12-17), whose _verify_cuda_graph still forced GPTQ and "
                "SqueezeLLM eager until #2318 (0.2.7); AWQ ran graphs from 0.2.6"));
  t.push_back(c("runtime.eager_host_per_layer_s", "vllm-v0-paged", P::public_measurement,
                "vllm#1440 (2023-10-20, vLLM 0.2.1's model code, Llama-2-7B, batch 1, 5 prompt + 100 output tokens, one "
                "GPU not named, A100 assumed): 1.2 s without CUDA graphs, 1.05 s with them. Without graphs the host is "
                "the slower side at batch 1, so 12.0 ms per token less V0's serialized CPU time (2.1 ms, the A100 "
                "profile's v0_cpu_overhead_per_iter_s) is the Python forward's enqueue time: 9.9 ms over 32 layers "
                "= 0.31 ms per layer; read as the GPU's work (llmsim's A100 fp16 forward, 9.3 ms) plus the 1.5 ms the "
                "graphs saved, 10.8 ms = 0.34 ms [D]",
                {}, eager_host::kVllmV0PagedPerLayerS));
  // The eager steps of V0 0.4.3-0.10 (prefills, mixed steps, decode batches above 256) and the eager all-reduce's
  // Python call path at TP > 1 (perf/eager_host.hpp, issue 27).
  for (const char* r : {"vllm-v0.5", "vllm-v0"})
    t.push_back(c("runtime.eager_host_per_layer_s", r, P::assumed,
                  "carried over from vllm#1440's vLLM 0.2.1 figure (vllm-v0-paged's row): no public A/B of an eager "
                  "against a graphed step of 0.4.3-0.10 was found. Their model runner replays a graph only for "
                  "decode-only batches (ModelRunner.execute_model: prefill_metadata is None and use_cuda_graph), and "
                  "their decoder layer makes the same Python module calls as 0.2.1's, each linear through a "
                  "quant_method.apply dispatch and the attention through a backend's forward (a torch.ops.vllm custom "
                  "op from 0.6.2): not fewer per layer",
                  {}, eager_host::kVllmV0PerLayerS));
  // V0's sampler passes over the logits (perf/v0_sampler.hpp, issue 27).
  t.push_back(c("runtime.sampler_bytes_per_logit", "vllm-v0", P::engine_code,
                "vllm/model_executor/layers/sampler.py, V0's Sampler.forward in its 0.6-0.10 form (penalties from "
                "layers/utils.py, the FlashInfer top-k/top-p path): logits.to(torch.float) (2 B read, 4 written), "
                "logits.div_(temperatures) (4 + 4), probs = torch.softmax(logits, dtype=float) (4 + 4), logprobs = "
                "torch.log_softmax(logits, dtype=float) (4 + 4), greedy rows torch.argmax(logprobs[long_sample_indices]) "
                "(the advanced index copies the rows: 4 + 4; argmax 4) = 42 bytes per logit, every pass counted once; "
                "_get_ranks is skipped without logprobs (largest_num_logprobs == -1). Other runtimes keep the "
                "default 8 (fp32 logits written and read once; not re-examined here)",
                {}, v0_sampler::kBytesPerLogit));
  t.push_back(c("eager_host.allreduce_host_s", "all", P::public_measurement,
                "ai-dynamo/aiconfigurator collector/collect_all_reduce.py (benchmark_vllm_allreduce: vLLM 0.20.0's "
                "tensor_model_parallel_all_reduce called eagerly in a loop on a cloned bf16 input, timed with CUDA "
                "events, beside the same call replayed from a CUDA graph), campaign_checkpoints/<gpu>/"
                "custom_allreduce_perf.txt @563b2c4, 256 B-1 MiB: eager medians 22.3 / 22.4 / 23.9 us at TP 2 / 4 / 8 "
                "on 8 H100 SXM, 20.6 / 21.9 / 22.5 us on 8 H200 (19.7-20.5 on 8 B200), flat in the size, where the "
                "graph replays take 4.5-5.5 us: the eager call is host-bound, ~22 us of Python call path per "
                "all-reduce (the loop's input clone included: an upper bound by a few us). The A100 SXM machine of "
                "the same collection reads 45.6-46.2 us (a slower host, not modelled). Two per decoder layer at TP > 1 "
                "in an eager forward of vLLM V0 and SGLang (SGLang's parallel_state is vLLM's port: assumed the same) [D]",
                {}, eager_host::kEagerAllReduceHostS));
  t.push_back(c("runtime.async_output_proc", "vllm-v0", P::engine_code,
                "vLLM 0.6-0.10 V0 (PR #7049): LLMEngine.step / step_async append a step's output to ctx.output_queue "
                "and run _process_model_outputs as the next step's async_callback, streamed when that step returns; "
                "on unless enforce_eager, pipeline parallel or speculative decoding (verify_async_output_proc). The "
                "first token's delay it causes at batch 1 is named by tenstorrent/vllm#116 and HabanaAI/vllm-fork#855 "
                "(VLLM_STEP0_FIRST_TOKEN). No constant: one iteration of the engine's own model"));
  // --- vLLM V1's async scheduling (perf/async_scheduling.hpp; issue 27). No constant: it rearranges the step's
  // existing host (cpu_overhead_*) and GPU terms and the admission order.
  t.push_back(c("runtime.async_scheduling.step", "vllm-v1", P::engine_code,
                "vllm/v1/engine/core.py @00080ee13c7a451fce071ccb8d0e94d395acf5a7 EngineCore.step_with_batch_queue "
                "(batch_queue_size 2 under async scheduling): schedule + execute_model(non_block) + sample_tokens"
                "(non_block) of step k+1 are issued before blocking on step k's future; "
                "vllm/v1/core/sched/async_scheduler.py @014b23503270d029739d400ec4c14ba0714bdcd8 plans with output "
                "placeholders; PR vllm#19970 (\"overlapping scheduling with model execution\", NanoFlow). The host's "
                "per-step time overlaps the GPU's: step = max(GPU work, host time)"));
  t.push_back(c("runtime.async_scheduling.admission", "vllm-v1", P::engine_code,
                "core.py @00080ee1 step_with_batch_queue: step k+1 is planned when step k is launched, before the "
                "input queue is read again (EngineCore.run_busy_loop), so a request arriving while step k runs is "
                "first planned into step k+2; an empty plan is queued and planned again at once. Outputs of step k "
                "are processed (update_from_output) as soon as it ends: no step of output delay"));
  t.push_back(c("runtime.async_scheduling.default", "vllm-v1", P::engine_code,
                "on by default from vLLM 0.14.0: PR vllm#27614 \"Enable async scheduling by default\" (VllmConfig: "
                "async_scheduling None -> True unless pooling, an unsupported executor or proposer; merged after "
                "0.13.0, listed last in the plan issue vllm#27679); PR vllm#31998 (2026-01-08, in 0.14.0) keeps it on "
                "with EAGLE/MTP and off with other proposers and with pipeline parallel"));
  // --- SGLang's overlap scheduler (perf/sglang_overlap.hpp; issue 27). No constant: the same rearrangement of the
  // step's host (the profile's V1 terms) and GPU terms and of the admission order as vLLM V1's async scheduling.
  t.push_back(c("runtime.sglang_overlap.step", "sglang", P::engine_code,
                "sgl-project/sglang python/sglang/srt/managers/scheduler.py (0.3.6-0.5.x) event_loop_overlap: "
                "recv_requests, get_next_batch_to_run and run_batch of batch k+1 (handed to the forward thread of "
                "managers/tp_worker_overlap_thread.py, future token ids resolved on the GPU) come before "
                "process_batch_result of batch k, which waits for its GPU work: the CPU's scheduling, batch "
                "preparation and result processing run while the GPU works, step = max(GPU work, host time). PR "
                "sglang#1738 (2024-10-21, Llama-3.1-8B, 3000 ShareGPT prompts, radix cache off): +10 % throughput "
                "from the overlap alone"));
  t.push_back(c("runtime.sglang_overlap.admission", "sglang", P::engine_code,
                "scheduler.py event_loop_overlap: batch k+1 is formed from the requests received after batch k-1's "
                "result, i.e. when batch k starts; a request arriving while batch k runs joins batch k+2 (an idle "
                "engine forms its batch at once). Batch k's tokens are streamed when its result is processed, as it "
                "ends (sglang#2067: the first batch's result waits for the next launch, a delay not modelled)"));
  t.push_back(c("runtime.sglang_overlap.default", "sglang", P::engine_code,
                "PR sglang#2067 \"Enable overlap by default\" (merged 2024-11-19, after Release v0.3.5.post2, "
                "sglang#2046): --enable-overlap-schedule became the default (--disable-overlap-schedule turns it "
                "off), first in 0.3.6; server_args.py turns it off with pp_size > 1 and with EAGLE speculative "
                "decoding"));
  for (const char* r : {"vllm-v0.5", "vllm-v0-paged"}) {
    t.push_back(c("runtime.sync_output_per_seq_s", r, P::engine_code,
                  "RFC vllm#6913's profile of _process_model_outputs before the async output processor (#7049): 0.2 ms "
                  "at batch 1, 3.4 ms at batch 32 on Llama-3-70B / 4 H100 = 0.1 ms per sequence; checked against "
                  "LambdaLabs' vLLM 0.5.4 H100 runs (docs/vllm.md). Offline (LLM.generate, benchmark_latency) runs the "
                  "same LLMEngine.step -> _process_model_outputs in the engine's process, detokenize on, at any TP: "
                  "the same price (issue-27 check, docs/cost-model.md)",
                  {"lambdalabs"}, 100e-6));
  }
  // The OpenAI server's path around an engine in its own process (perf/serving_path.hpp, issue 27). SGLang's
  // launch_server runs the same FastAPI/uvicorn + ZMQ stack (TokenizerManager in the HTTP process, Scheduler and
  // DetokenizerManager processes: sgl-project/sglang python/sglang/srt/managers/tokenizer_manager.py @001067ff,
  // "TokenizerManager is a process that tokenizes the text"), one ZMQ hop more.
  for (const char* r : {"vllm-v1", "vllm-v0", "sglang"}) {
    t.push_back(c("runtime.api_server_s", r, P::public_measurement,
                  "tenstorrent/tt-inference-server#190 (2025-05-08, Llama-3.3-70B, tenstorrent's vLLM fork, its upstream "
                  "OpenAI server): the same batch's average TTFT offline (LLM.generate) 231 ms, online "
                  "(`vllm serve`, benchmark_serving) 235 ms: +4 ms of HTTP server + ZMQ. The path is host code, the "
                  "same for any accelerator; V1 keeps it (API server -> ZMQ -> EngineCore, AsyncLLM). Bracketed by "
                  "vllm#54628 (client TTFT - the server's own vllm:time_to_first_token_seconds, 8-12 ms at "
                  "concurrency 8 on a WSL2 laptop) and vllm#51349's frontend timings (prompt rendering 0.3 ms, "
                  "process_for_engine 0.5 ms, add_request to the EngineCore 1.0 ms)",
                  {}, 4e-3));
  }
  // The chat endpoint's render barrier (perf/chat_render.hpp, issue 27): one Jinja parse of the chat template per
  // /v1/chat/completions request on the API server's event loop, in the vLLM releases that do not cache it.
  t.push_back(c("runtime.chat_template_parse_s", "vllm-v1", P::public_measurement,
                "vllm#20065 ('Cached resolution for resolving chat templates', 2025-06-25): "
                "resolve_chat_template_content_format -> _detect_content_format loaded and walked the Jinja template on "
                "every /v1/chat/completions request; 'when we send 1000 requests to OpenAI server, it internally calls "
                "this function 1000 times which results in 6-8 seconds delay before prompts actually are started to "
                "process' (meta-llama Llama-3.1-8B-Instruct's template): the midpoint, 7 ms per request. vllm#19735 "
                "(skipping that detection: 3x requests/s for Qwen3-0.6B at max_tokens 1 on an L20) bounds it from "
                "the same side. Priced for 0.8.0-0.9.1; 0.11.x's per-request pass is another one "
                "(runtime.chat_template_kwargs_over_detection)",
                {}, kChatTemplateParseS));
  t.push_back(c("runtime.chat_template_kwargs_over_detection", "vllm-v1", P::microbenchmark,
                "scripts/jinja_parse_bench.py (jinja2 3.1.2, CPU time, best of 5): vllm#25794's per-request "
                "_resolve_chat_template_kwargs (0.11.x: a new ImmutableSandboxedEnvironment, env.parse and "
                "jinja2.meta.find_undeclared_variables, whose identifier tracking walks the template as Jinja's code "
                "generator does) over 0.9's _detect_content_format (parse with the cached environment + the search "
                "for a loop over message content) on the same template: a Llama-3.1 template (vLLM's "
                "examples/tool_chat_template_llama3.1_json.jinja) 4.9 -> 10.4 ms (2.11), Qwen3's 4.7 -> 10.5 ms "
                "(2.21). 0.11's cost = vllm#20065's 7 ms x 2.1 = 14.7 ms per request",
                {}, kTemplateKwargsOverDetection));
  // An in-process AsyncLLM's hop to its EngineCore process (perf/serving_path.hpp, issue 27).
  t.push_back(c("runtime.engine_client_s", "vllm-v1", P::public_measurement,
                "vllm#51349's frontend timings: process_for_engine 0.5 ms + add_request to the EngineCore 1.0 ms; "
                "vllm/v1/engine/async_llm.py: AsyncLLM always drives the EngineCore through "
                "EngineCoreClient.make_async_mp_client (a process of its own, ZMQ both ways), with or without the "
                "HTTP server; prompt rendering (0.3 ms) is left to the caller",
                {}, 1.5e-3));
  // Host work the OpenAI server adds to each V0 engine step (perf/served_step_host.hpp, issue 27).
  t.push_back(c("runtime.served_step_per_seq_s", "vllm-v0", P::public_measurement,
                "vllm#8157 / #8092 (MQLLMEngine, merged 2024-09 after 0.6.0; 1 H100, Llama-3.1-8B, ShareGPT, "
                "single-step): 34.8 req/s offline (LLM.generate) vs 31.6 req/s served through the OpenAI server = "
                "2.91 ms more per request; the authors' 1,000-prompt ShareGPT runs generate 197,520 tokens (#8125, "
                "#8335) = 197.5 per request: 14.7 us per token, i.e. per sequence per step. The work: "
                "engine/multiprocessing/engine.py @02d0d889 _send_outputs (pickle.dumps of the step's RequestOutputs, "
                "ZMQ send_multipart), called per step from _async_socket_engine_callback. Bracketed above by "
                "vllm#7957 on an A100 (0.6.0 RPC frontend before MQLLMEngine: 18 req/s LLM vs 15.5 req/s async, "
                "~45 us per token)",
                {}, 15e-6));
  // Before 0.6 the OpenAI server streamed each step's outputs from coroutines on the engine's own event loop, between
  // two steps (perf/inprocess_server.hpp, issues 27/28).
  for (const char* r : {"vllm-v0.5", "vllm-v0-paged"}) {
    t.push_back(c("runtime.served_step_per_seq_s", r, P::public_measurement,
                  "vllm#6883 (frontend multiprocessing, RFC #6797; first released in 0.6.0), its table: "
                  "Llama-3-8B-Instruct, 1 H100, 550 input / 150 output tokens, 10 QPS, chunked prefill: mean TPOT "
                  "70.74 ms with the OpenAI server in the engine's process (main, 0.5.3-0.5.4) vs 57.35 ms split "
                  "out (zmq + pickle), mean TTFT 687.69 vs 298.09 ms. Streaming requests by Little's law "
                  "10 x (TTFT + 149 x TPOT): 112.3 vs 88.4. (13.39 ms - 140 us x 23.9 [the engine's own growth per "
                  "sequence as llmsim prices a vllm-v0.5 step] + 15 us x 88.4 [the split engine's own pickle+send "
                  "per output, vllm-v0's value]) / 112.3 = 101 us per streamed output per step, rounded to 100 us. "
                  "Serialized: engine/async_llm_engine.py engine_step puts each RequestOutput into its AsyncStream, "
                  "run_engine_loop yields (asyncio.sleep(0)) before the next engine_step, so the streaming coroutines "
                  "run between two steps",
                  {}, 100e-6));
  }
  // Before 0.6 each request's handler ran its synchronous front part on the engine's own event loop, and handed the
  // request to the engine only after the handlers queued meanwhile (perf/inprocess_server.hpp inprocess_front, issue 28).
  for (const char* r : {"vllm-v0.5", "vllm-v0-paged"}) {
    t.push_back(c("runtime.inprocess_server_per_request_s", r, P::assumed,
                  "carried over from vLLM V1's API server: vllm#51349's frontend timings, process_for_engine 0.5 ms per "
                  "request (the request's validation and processing for the engine, its prompt rendered and "
                  "tokenised apart), the same handler work the pre-0.6 OpenAI server ran on the engine's event loop "
                  "(serving_completion.py: the pydantic request, SamplingParams, _validate_prompt_and_tokenize's "
                  "length check, AsyncLLMEngine.generate's setup; its tokenizer call is runtime.tokenise_per_token_s, "
                  "run on the same loop: serving_engine.py calls self.tokenizer(prompt) synchronously until "
                  "vllm#10635, 2024-11, 'blocking the asyncio event loop'). No measurement of 0.5's own handler found; "
                  "calibrate-fit --runs fits it (inprocess_server_per_request_s)",
                  {}, inprocess_server::kPerRequestS));
  }
  // vLLM 0.6.0-0.6.4: the API server in a process of its own still ran that front part on its event loop
  // (perf/inprocess_server.hpp inprocess_front), carved out of runtime.api_server_s (the whole frontend's 4 ms).
  t.push_back(c("runtime.inprocess_server_per_request_s", "vllm-v0", P::assumed,
                "releases 0.6.0-0.6.4 only: the same handler and value as vllm-v0.5's row (vllm#51349's "
                "process_for_engine, 0.5 ms): from 0.6.0 the OpenAI server runs in a process of its own (MQLLMEngine, "
                "vllm#6883), but its create_completion (read at a 0.5.4-era snapshot; the 0.6.x embedding handler, "
                "engine_client naming, has the same shape) awaits only get_tokenizer and the guided-decoding check, "
                "which do not suspend without LoRA or guided decoding, then runs "
                "list(_tokenize_prompt_input_or_inputs(...)), whose _normalize_prompt_text_to_input calls "
                "tokenizer(prompt) on the event loop, and only then creates the engine_client.generate iterators; "
                "vllm#10635 (opened 2024-11-25, after 0.6.4.post1; taken as first released in 0.6.5) moved the "
                "tokenisation to a thread pool. The 0.5 ms is taken out of runtime.api_server_s (4 ms, the whole "
                "frontend's) for these releases, so the serving path is 3.5 ms after the engine",
                {}, inprocess_server::kPerRequestS));
  // vLLM 0.6.0-0.6.1: the RPC frontend around AsyncLLMEngine (perf/rpc_frontend.hpp, issue 28), before MQLLMEngine.
  const std::string rpc_table =
      "vllm#8092's table (2024-09-02, 0.6.0's server: the OpenAI server over AsyncEngineRPCClient/Server around "
      "AsyncLLMEngine, rpc/client.py and rpc/server.py; 1 H100, Llama-3.1-8B, ShareGPT, 197.52 output tokens per request "
      "as vllm#8125/#8335's 1,000-prompt runs): served vs offline LLM.generate 14.9 vs 34.8 req/s single-step, 33.3 vs "
      "42.9 req/s with 8 scheduler steps, which 'only stream 1/8 tokens'. A served request costs the engine c_r + "
      "outputs x c_o more: (38.38 ms - 6.72 ms) / (197.52 x 7/8) = c_o";
  t.push_back(c("runtime.rpc_frontend_per_output_s", "vllm-v0", P::public_measurement,
                "releases 0.6.0-0.6.1 only, in place of runtime.served_step_per_seq_s: " + rpc_table +
                " = 183 us per streamed output (rounded to 180 us; MQLLMEngine's 15 us from 0.6.2, "
                "vllm#8157): rpc/server.py pickles and sends every RequestOutput from a task per request on "
                "AsyncLLMEngine's event loop",
                {}, rpc_frontend::kPerOutputS));
  t.push_back(c("runtime.rpc_frontend_per_request_s", "vllm-v0", P::public_measurement,
                "releases 0.6.0-0.6.1 only: " + rpc_table + " = 183 us, then c_r = 6.72 ms - 197.52 / 8 x 183 us = 2.20 ms per request (rounded to "
                "2.2 ms): the RPC server's task and cloudpickle.loads, AsyncLLMEngine's AsyncStream and "
                "add_request_async (engine_step adds every new request before its step). Priced ahead of the "
                "engine's first step, on the front part's queue (perf/inprocess_server.hpp inprocess_front), added to "
                "runtime.inprocess_server_per_request_s; where in the request's life the rest of it falls is not "
                "measured",
                {}, rpc_frontend::kPerRequestS));
  // Prompt tokenisation in the serving process (perf/serving_path.hpp, issue 27): every vLLM release's OpenAI server
  // (before 0.6 in the engine's own process) and SGLang's TokenizerManager tokenise the prompt before the engine sees it.
  for (const char* r : {"vllm-v1", "vllm-v0", "vllm-v0.5", "vllm-v0-paged", "sglang"}) {
    t.push_back(c("runtime.tokenise_per_token_s", r, P::microbenchmark,
                  "andyluo7/cpu-gpu-codesign-agentic-inference@5fac1f0 RESULTS_SUMMARY.md phase 2.1 (2026-05-14, "
                  "vLLM 0.19's host, one core): transformers AutoTokenizer encode 1.18 ms for 679 tokens (1.74 us/token) "
                  "... 220 ms for 101,615 (2.17 us/token), ~500k tokens/s; its phase-2 server decomposition (client "
                  "TTFT - vllm:time_to_first_token_seconds, single requests) grows by ~2 us per prompt token from 1k to "
                  "100k. vllm#10635: 256K-token prompts take \"a few hundred milliseconds\" to tokenise",
                  {}, 2e-6));
  }
  // --- vLLM V0's scheduler defaults by release (spec/runtime_version.cpp, spec::effective_engine; issue 27).
  t.push_back(c("engine.v0_max_num_batched_tokens", "vllm-v0", P::engine_code,
                "vllm/config.py SchedulerConfig (0.2-0.10) without chunked prefill: max(max_model_len, 2048) (\"if "
                "max_model_len is too short, use 2048 as the default value for higher throughput\")", {}, 2048));
  t.push_back(c("engine.v0_chunked_budget", "vllm-v0", P::engine_code,
                "SchedulerConfig with chunked prefill: 512 (\"the best balance between ITL and TTFT on A100\"), 2048 "
                "from vllm#10544 (2024-11-21, first released in 0.6.5)"));
  t.push_back(c("engine.v0_long_context_chunked", "vllm-v0", P::engine_code,
                "EngineArgs.create_engine_config (vllm#6666, 2024-07-23; from 0.5.4): chunked prefill left unset turns "
                "on for max_model_len > 32K without a sliding window, speculative decoding or LoRA (`not "
                "self.enable_lora` beside `not self.enable_prompt_adapter` in that condition from 0.5.4 to V0's last "
                "form)",
                {}, 32768));
  t.push_back(c("engine.v0_mla_unchunked", "vllm-v0", P::engine_code,
                "MLA models under V0 stay prefill-first above 32K: vllm#12642 (2025-02-01, in 0.7.1-0.7.3) VllmConfig "
                "\"MLA is enabled; forcing chunked prefill and prefix caching to be disabled\"; after vllm#12639 "
                "(merged 2025-02-21, first in the 0.7.4 nightlies and 0.8.0) EngineArgs._set_default_args_v0 "
                "\"Chunked prefill not supported for Multimodal or MLA in V0\" (0.8-0.10)"));
  t.push_back(c("engine.v0_running_by_arrival", "vllm-v0", P::engine_code,
                "vllm/core/scheduler.py _schedule_running before vllm#6867 (opened 2024-07-27, after 0.5.3.post1; "
                "taken as first in 0.5.4): policy.sort_by_priority(now, running_queue) with FCFS's priority "
                "now - arrival_time (vllm/core/policy.py), then running_queue.pop() as the victim: the latest arrival "
                "(engine/running_order.cpp)"));
  t.push_back(c("engine.v0_prefills_ahead_of_decodes", "vllm-v0", P::engine_code,
                "vllm/core/scheduler.py _schedule_chunked_prefill in 0.5.4-0.5.5 (spec::v0_prefills_ahead_of_decodes): "
                "self.running.extend(prefills.seq_groups) before the running decodes, and _schedule_running's walk "
                "breaks at the first group the budget cannot serve; vllm#7874 (merged 2024-09-02, first in 0.6.0) put "
                "new prompts behind the decodes. Simulated for those releases (engine/v0_walk.cpp)"));
  // --- vLLM V0's multi-step scheduling (engine/multi_step.cpp, spec/multi_step.hpp; issue 28). No constant: the
  // engine's own step times rearranged, release boundaries from the changelog.
  t.push_back(c("engine.multi_step.window", "vllm-v0", P::engine_code,
                "vllm/engine/llm_engine.py step (0.6-0.10): the scheduler is called only when the cached batch has no "
                "remaining steps (_has_remaining_steps, _cache_scheduler_outputs_for_multi_step); vllm/core/"
                "scheduler.py _append_slots with num_lookahead_slots = n - 1 for decodes, 0 for prefills "
                "(vllm/sequence.py init_multi_step_from_lookahead_slots); MultiStepModelRunner advance_step on the GPU "
                "with outputs pythonised while the next step runs: a window's later steps carry no scheduling CPU "
                "time; MultiStepOutputProcessor truncates tokens after a stop (the batch stays fixed)"));
  t.push_back(c("engine.multi_step.releases", "vllm-v0", P::engine_code,
                "--num-scheduler-steps from vLLM 0.6.0 (vllm#7000, RFC vllm#6854) until vllm#22138 removed it (merged "
                "2025-08-03, after 0.10.0); multi_step_stream_outputs (vllm#8335) on by default from vllm#9047 "
                "(merged 2024-10-03, first in 0.6.3): before it a window's tokens reach the client at its end"));
  t.push_back(c("runtime.graphs", "sglang", P::engine_code, "SGLang: decode-only CUDA graphs (cuda_graph_max_bs)"));
  t.push_back(c("runtime.max_graph_batch", "sglang", P::engine_code,
                "sgl-project/sglang python/sglang/srt/model_executor/cuda_graph_runner.py: the default capture list "
                "[1, 2, 4] + 8..160 step 8 (0.2.x-0.5.2, extended above 96/120 GiB from 0.4.6); the fallback when no "
                "scenario resolves the release's own (spec::sglang_cuda_graph_max_bs)", {}, 160));
  t.push_back(c("runtime.eager_host_per_layer_s", "sglang", P::public_measurement,
                "sglang#1401 (2024-09-12, SGLang 0.3.1, Llama-3-8B, batch 1, bench_latency --input 128 --output 8, H100 "
                "assumed): decode 7.35 ms with CUDA graphs and 8.23 ms with --disable-cuda-graph on FlashInfer, 7.06 "
                "and 9.28 ms on Triton. Nearly the same GPU kernels, yet Triton's eager step (more Python per layer) is "
                "1.05 ms slower: eager, the step is the host's forward (bench_latency has no scheduler), 8.23 ms over "
                "32 layers = 0.26 ms per layer [D]",
                {}, eager_host::kSglangPerLayerS));
  t.push_back(c("engine.cuda_graph_max_bs", "sglang", P::engine_code,
                "sgl-project/sglang server_args.py + cuda_graph_runner.py get_batch_sizes_to_capture (spec::"
                "sglang_cuda_graph_max_bs): 0.3.x 160; 0.4.0 8 below 25,000 MiB (sglang#2268), from 0.4.0.post1 80 "
                "there at TP >= 4 (#2360), below 35 GiB from 0.4.7.post1 (#7054's __post_init__), else 160 (256 above "
                "120 GiB in 0.4.6, #5604; above 96 GiB and 512 above 180,000 MiB from 0.4.7, #6718); 0.5.3+ "
                "(_handle_gpu_memory_settings, #10372/#10975) < 20 GiB 8, < 35 GiB 24 (80 at TP >= 4), < 60 GiB 32 "
                "(160), < 160 GiB 256 (512), else 512. --cuda-graph-max-bs extends the list to it from 0.4.6.post4 "
                "(#6201); before, it only filtered the list"));
  // --- SGLang's scheduler (policy "sglang": spec::sglang, engine/schedule_sglang.cpp), read from its code.
  const std::string sg = "sgl-project/sglang python/sglang/srt/";
  t.push_back(c("scheduler.init_new_token_ratio", "sglang", P::engine_code,
                sg + "managers/scheduler.py: init_new_token_ratio = SGLANG_INIT_NEW_TOKEN_RATIO (0.7) x "
                "schedule_conservativeness (1.0), 0.4.x-0.5.x; global_config.init_new_token_ratio 0.7 in 0.3.x",
                {}, spec::sglang::kInitNewTokenRatio));
  t.push_back(c("scheduler.min_new_token_ratio_factor", "sglang", P::engine_code,
                sg + "managers/scheduler.py: min_new_token_ratio = init x 0.14 (default_min_new_token_ratio_factor), "
                "0.4.x-0.5.x; 0.3.x base_min_new_token_ratio 0.1",
                {}, spec::sglang::kMinNewTokenRatioFactor));
  t.push_back(c("scheduler.new_token_ratio_decay_steps", "sglang", P::engine_code,
                sg + "managers/scheduler.py: new_token_ratio_decay = (init - min) / 600 "
                "(default_new_token_ratio_decay_steps); 0.3.x: 0.001 per step",
                {}, spec::sglang::kNewTokenRatioDecaySteps));
  t.push_back(c("scheduler.clip_max_new_tokens", "sglang", P::engine_code,
                sg + "managers/schedule_policy.py: CLIP_MAX_NEW_TOKENS(_ESTIMATION) = 4096",
                {}, static_cast<double>(spec::sglang::kClipMaxNewTokens)));
  t.push_back(c("scheduler.retract_decode_steps", "sglang", P::engine_code,
                sg + "managers/schedule_batch.py retract_decode: free KV until every remaining request has "
                "global_config.retract_decode_steps = 20 tokens",
                {}, static_cast<double>(spec::sglang::kRetractDecodeSteps)));
  t.push_back(c("scheduler.ignore_eos_reserve_tokens", "sglang", P::engine_code,
                sg + "managers/schedule_policy.py: IGNORE_EOS_RESERVE_TOKENS = 1, add_one_req_ignore_eos refuses when "
                "min_free_tokens <= it x bs (the 0.4.7 tree; 0.3.x-0.4.5's walk has no reserve: spec/sglang_admission)",
                {}, static_cast<double>(spec::sglang::kIgnoreEosReserveTokens)));
  t.push_back(c("scheduler.max_prefill_tokens", "sglang", P::engine_code,
                sg + "server_args.py: max_prefill_tokens = 16384", {}, static_cast<double>(spec::sglang::kMaxPrefillTokens)));
  t.push_back(c("scheduler.chunked_prefill_size", "sglang", P::engine_code,
                sg + "server_args.py: 0.3-0.4.7 8192 (2048 below 25,000 MB); 0.4.7.post1-0.5.2 (#7054's "
                "__post_init__) < 35 GiB 2048, < 160 GiB 8192, else 16384; 0.5.3+ (_handle_gpu_memory_settings, "
                "#10372/#10975) < 35 GiB 2048, < 60 GiB 4096, < 160 GiB 8192, else 16384 (spec::sglang_defaults)"));
  // SGLang's default mem_fraction_static (spec::sglang_mem_fraction_static; issue 27): the KV pool when the scenario
  // does not set gpu_memory_utilization.
  t.push_back(c("memory.mem_fraction_static.by_parallel", "sglang", P::engine_code,
                sg + "server_args.py __post_init__ (0.3.0-0.4.7): tp x pp >= 16 0.79, >= 8 0.81, >= 4 0.85, >= 2 0.87, "
                "else 0.88 (0.4.6-0.4.7 raise it on cards above 96 GiB for H20/H200, sglang#5893: not applied)",
                {}, 0.88));
  t.push_back(c("memory.mem_fraction_static.reserve", "sglang", P::engine_code,
                sg + "server_args.py after PR sglang#7054 \"Simplify the heuristics for setting --mem-fraction-static\" "
                "(merged 2025-06-10, after \"chore: bump v0.4.7\" #7038; until sglang#10975 of 2025-09-27, 0.5.2): "
                "mem_fraction_static = round((gpu_mem - reserved_mem) / gpu_mem, 3), gpu_mem in MiB, reserved_mem "
                "(2.8 + n / 10) GiB below 35 GiB, (9.5 + n / 2) below 90 GiB (\"H100, A100. (chunked_prefill_size 8k, "
                "cuda_graph_max_bs 160)\"), (12 + n / 2) below 160 GiB, else 32 GiB, n = tp x pp; + 2 GiB with a "
                "speculative algorithm, + 4 GiB with DP attention (not modelled)",
                {}, 9.5));
  t.push_back(c("memory.mem_fraction_static.reserve_by_step", "sglang", P::engine_code,
                sg + "server_args.py _handle_gpu_memory_settings after PR sglang#10975 \"Use more general heuristics to "
                "set the default value of --mem-fraction-static\" (merged 2025-09-27; 0.5.3 on): reserved_mem = 512 "
                "(\"Constant meta data\") + max(chunked_prefill_size, 2048) x 1.5 (\"For activation during large "
                "prefill\") + cuda_graph_max_bs x 2 (\"For cuda graphs\") + tp x pp / 8 x 1024, in MiB; "
                "max(reserved_mem, 10 x 1024) when gpu_mem > 60 x 1024; + 2048 with an EAGLE draft; "
                "mem_fraction_static = round((gpu_mem - reserved_mem) / gpu_mem, 3) (spec::sglang_mem_fraction_static; "
                "sglang#29092 reads 0.828 on an H100 in a 2026 tree with later terms); DP attention's terms not "
                "modelled",
                {}, 512.0));
  // vLLM's profiling-run peak of a MoE / MLA model (memory/engine_memory.cpp; issue 27, branch r1mem27).
  t.push_back(c("memory.profile_run.fused_moe_chunk", "vllm-v0", P::engine_code,
                "vllm-project/vllm vllm/envs.py (0.7.x trees): VLLM_FUSED_MOE_CHUNK_SIZE default \"32768\"; "
                "model_executor/layers/fused_moe/fused_moe.py fused_experts_impl: M = min(tokens, CHUNK_SIZE), "
                "intermediate_cache13 of M x top_k x max(N, K) elements (cache1 and cache3 views of it), cache2 of "
                "M x top_k x N/2 (memory::detail::kFusedMoeChunkTokens)",
                {}, 32768.0));
  t.push_back(c("memory.profile_run.mla_prefill", "vllm-v0", P::engine_code,
                "vllm-project/vllm vllm/attention/backends/mla/utils.py at 04644e3f (the 0.7.x V0 MLA backend): "
                "MLACommonImpl.forward allocates the (tokens x hidden) output before _forward_prefill, which holds "
                "kv_b_proj's per-head K/V, K with k_pe expanded and V padded to the q/k head dim while o_proj runs on "
                "the sliced, contiguous attention output"));
  // vLLM 0.7.x's MLA memory that later releases dropped (memory/engine_memory.cpp, kv_layout.cpp; issue 27, r1pool31).
  t.push_back(c("memory.weights.mla_absorbed", "vllm-v0", P::engine_code,
                "vllm-project/vllm vllm/attention/backends/mla/utils.py at 04644e3f (a 0.7.4 nightly) "
                "MLACommonImpl.process_weights_after_loading: with VLLM_MLA_PERFORM_MATRIX_ABSORPTION (default on) "
                "keeps W_Q_UK (q_lora x heads*kv_lora) and W_UV_O (heads*kv_lora x hidden) requantised to FP8 for an "
                "FP8 checkpoint (scaled_quantize, VLLM_MLA_DISABLE_REQUANTIZATION off), else in the activation dtype, "
                "W_QR in the activation dtype and W_UK/W_UV as views of the dequantised kv_b_proj, beside q_proj, "
                "kv_b_proj and o_proj; from vllm#12528 (2025-01-30, 0.7.1) until vllm#14770 (2025-03-13, 0.8.0). "
                "Checked, not set from it: a public vLLM 0.7.3 V0 log of DeepSeek-R1 at TP 8 on H200 reads "
                "'model weights take 83.88GiB' (llmsim: 79.27 + 4.47 GiB)",
                {}, 1.0));
  t.push_back(c("memory.kv_pool.mla_entry_alignment", "vllm-v0", P::engine_code,
                "vllm-project/vllm vllm/worker/cache_engine.py after vllm#12676 (2025-02-04, 0.7.2): _align_cache "
                "(use_mla, CUDA, VLLM_CUDA_MEM_ALIGN_KV_CACHE default 1); get_cache_block_size pads the entry with "
                "align_to_256bytes(num_heads * head_size, model dtype): 576 -> 640 elements; removed by vllm#14842 "
                "(2025-03-15, 0.8.0), whose 8 x H200 R1 log reads 4,739 blocks padded against 5,266 unpadded",
                {}, 256.0));
  t.push_back(c("memory.kv_pool.sglang_full_layers", "sglang", P::engine_code,
                sg + "configs/model_config.py is_hybrid_swa_model: only Llama4ForConditionalGeneration and "
                "GptOssForCausalLM (0.5.x) get the hybrid SWA pool; server_args.py _handle_model_specific_adjustments "
                "sets disable_hybrid_swa_memory = True for GptOssForCausalLM (and Gemma-2/3) from gpt-oss's day-0 "
                "support through at least commit 2fb32810 (2026-01: sglang#17630 enables the pool by deleting that "
                "line): every other model's token pool caches every layer for every token, sliding windows masked in "
                "the attention kernel only (memory::detail::engine_memory windowed_kv)"));
  t.push_back(c("memory.kv_cache_groups.max_ratio_0_12_to_0_17", "vllm-v1", P::engine_code,
                "vllm/v1/core/kv_cache_utils.py _get_kv_cache_groups_uniform_page_size after vllm#29303 (\"Better layer "
                "padding strategy for gpt-oss eagle\", opened 2025-11-24, after 0.11.2; taken as first released in "
                "0.12.0): group_size = max_num_layers if max_num_layers < min_num_layers * 1.25, else min_num_layers; "
                "earlier releases always min_num_layers (spec::hybrid_kv_group_ratio, memory::hybrid_kv_group_size)",
                {}, 1.25));
  t.push_back(c("memory.kv_cache_groups.max_ratio", "vllm-v1", P::engine_code,
                "vllm/v1/core/kv_cache_utils.py after vllm#36684 (\"increase hybrid attention grouping threshold from "
                "1.25 to 1.5\", merged 2026-03-10; taken as first released in 0.18.0): \"if max_num_layers < "
                "min_num_layers * 1.5\"; also a runtime named without a release (spec::hybrid_kv_group_ratio)",
                {}, 1.5));
  t.push_back(c("memory.kv_cache_groups.whole_model_from", "vllm-v1", P::engine_code,
                "vllm/v1/core/kv_cache_utils.py get_kv_cache_configs after vllm#23974 (\"[Hybrid Allocator] Support "
                "Pipeline Parallel\", opened 2025-08-30, updated 2025-09-10; taken as first released in 0.11.0): the "
                "KV cache specs of every worker merged, get_kv_cache_groups on the whole model, each type's layers "
                "dealt into its groups as layers[i::num_groups], _project_kv_cache_groups_to_worker; a worker's tensors "
                "are its largest projected group; earlier releases group each worker's own layers "
                "(spec::kv_groups_whole_model, memory::hybrid_kv_groups)"));
  t.push_back(c("engine.max_model_len_auto_from", "vllm-v1", P::engine_code,
                "vllm#29431 (\"Add `--max-model-len auto` to auto-fit context to available memory\", opened "
                "2025-11-25: kv_cache_utils._auto_fit_max_model_len when original_max_model_len == -1) and vllm#31260 "
                "(2025-12-24: -1 accepted again after vllm#30695); taken as first released working in 0.14.0: an "
                "earlier release's result notes that it would refuse auto and the number to pass "
                "(spec::vllm_release_without_auto_context, memory::context_note)"));
  t.push_back(c("spec.architecture_first_release", "all", P::engine_code,
                "the first vLLM and SGLang release serving each catalogued architecture (spec/architecture_release.cpp, "
                "one row per Hugging Face architecture, each with its PR, release notes or maintainer's word, or a "
                "bound from the model's publication date): DeepseekV3ForCausalLM vLLM 0.6.6 (vllm#11559) / SGLang 0.4.1 "
                "(its release notes, sglang#2585); DeepseekV32ForCausalLM vLLM 0.11.0 / SGLang no earlier than 0.5.2; "
                "GptOssForCausalLM vLLM 0.10.1 / SGLang 0.5.0 (sglang#8833); a release before it is refused "
                "(spec::check_release_serves)"));
  t.push_back(c("scheduler.max_running_requests", "sglang", P::engine_code,
                sg + "model_executor/model_runner.py: min(KV tokens / 2, request pool = clamp(KV tokens / context x 512, "
                "2048, 4096)); 2048, the pool's floor, is taken (the reservation bounds the batch first)",
                {}, 2048.0));
  t.push_back(c("scheduler.max_running_requests.speculative", "sglang", P::engine_code,
                sg + "server_args.py _handle_speculative_decoding: EAGLE/EAGLE3/STANDALONE and NGRAM set an unset "
                "max_running_requests to 48 (\"Max running requests is reset to 48 for speculative decoding\")",
                {}, static_cast<double>(spec::sglang::kSpeculativeMaxRunningRequests)));
  t.push_back(c("runtime.graphs", "lmdeploy-turbomind", P::engine_code, "LlamaBatch.cc v0.1: every kernel launched eagerly"));
  t.push_back(c("runtime.host_runs_ahead", "lmdeploy-turbomind", P::engine_code, "TurboMind's C++ thread per GPU enqueues without waiting"));
  t.push_back(c("runtime.cpu", "lmdeploy-turbomind", P::engine_code, "a C++ loop: fixed host time"));
  t.push_back(c("runtime.cpu_per_iter_s", "lmdeploy-turbomind", P::engine_code,
                "Finish(): D2H, cudaStreamSynchronize, relaunch: 10-20 us for a launch after the host waited (G§B6) "
                "plus the wake-up",
                {}, 30e-6));
  t.push_back(c("runtime.cpu_per_seq_s", "lmdeploy-turbomind", P::engine_code,
                "two host copies of a session_len x 4-byte id row at 10-25 GB/s", {}, 1e-6));
  t.push_back(c("runtime.vocab_parallel", "gpt-fast", P::engine_code,
                "gpt-fast tp.py: apply_tp shards each block's attention (wqkv, wo) and feed_forward (w1, w3, w2); "
                "tok_embeddings and output stay whole: no embedding all-reduce, no logits gather"));
  t.push_back(c("runtime.allreduce", "lmdeploy-turbomind", P::engine_code, "ftNcclAllReduceSum: NCCL for every message"));
  t.push_back(c("runtime.graphs", "gpt-fast", P::engine_code, "generate.py: torch.compile(mode=\"reduce-overhead\"), one graph"));
  t.push_back(c("runtime.max_graph_batch", "gpt-fast", P::engine_code, "one compiled graph for any decode batch"));
  t.push_back(c("runtime.host_runs_ahead", "gpt-fast", P::engine_code, "generate.py never synchronizes until the end"));
  t.push_back(c("runtime.cpu", "gpt-fast", P::engine_code, "no host time on the critical path"));
  t.push_back(c("runtime.graphs", "llama.cpp", P::engine_code, "batch-1 decode CUDA graphs (llama.cpp#6766)"));
  t.push_back(c("runtime.max_graph_batch", "llama.cpp", P::engine_code, "graphs for batch-1 decode only (#6766)", {}, 1));
  t.push_back(c("runtime.cpu", "llama.cpp", P::engine_code, "the ggml graph rebuilt on the CPU every token"));
  t.push_back(c("runtime.cpu_per_iter_s", "llama.cpp", P::public_measurement,
                "CPU part 10-15 % of a 7B/13B Q4_K_M token on A100/H100 with CUDA graphs (llama.cpp#7456)", {}, 0.6e-3));
  t.push_back(c("runtime.materialises_prefill_scores", "llama.cpp", P::engine_code,
                "llama-bench of May 2024 runs flash_attn = 0: mul_mat(K, Q) -> soft_max_ext -> mul_mat(V, KQ) "
                "through DRAM (llama.cpp#5021 made FA opt-in)"));
}

}  // namespace llmsim::perf::provenance_rows
