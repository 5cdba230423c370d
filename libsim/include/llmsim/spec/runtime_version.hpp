#pragma once
// An engine named by its release ("vllm==0.5.4", "sglang==0.4.9", "llama.cpp==b4000", "lmdeploy==0.1.0"), mapped to
// the runtime llmsim prices (spec::Runtime) and the scheduler that release ran by default. The ranges are read from
// the engines' code and changelogs, never from a fit; each one names the change that bounds it (docs/cost-model.md
// "Runtimes by version"). A user names the version their benchmark ran; they should never need to know which
// attention kernel or output processor that release had.
#include <optional>
#include <string>
#include <vector>

#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::spec {

/// A release string split into its engine and numeric parts: "vllm==0.6.1.post2" is {"vllm", "0.6.1.post2",
/// {0, 6, 1}}; "llama.cpp==b4000" is {"llama.cpp", "b4000", {4000}}.
struct EngineVersion {
  std::string engine;             ///< "vllm" | "sglang" | "llama.cpp" | "lmdeploy"
  std::string version;            ///< as written after "==" (a leading "v" dropped)
  std::vector<int> numbers;       ///< the release's numeric parts (major, minor, patch; a llama.cpp build number)
};

/// What a release runs, for the cost model and the scheduler.
struct RuntimeForVersion {
  Runtime runtime = Runtime::vllm_v1;
  /// The scheduler the release runs by default (vLLM before 0.8: V0's prefill-first; from 0.8: V1's unified step).
  /// Empty = the release does not decide it (llmsim's policy default or the scenario's own applies).
  std::optional<SchedulerPolicy> policy;
  std::string why;  ///< the range the version fell in and the change bounding it, for notes and docs
  /// vLLM releases that ship the V0 engine (0.2 through 0.10; from 0.8 behind VLLM_USE_V1=0): the runtime of that
  /// engine, which a V0 policy named with the release runs (empty for other engines and for 0.11+, which removed it).
  std::optional<Runtime> v0_runtime;
  /// V0's unset max_num_batched_tokens with chunked prefill: 512 until vllm#10544 (first released in 0.6.5) raised
  /// it to 2048. 0 = not a V0 release.
  int v0_chunked_budget = 0;
  /// V0 turns chunked prefill on by itself when max_model_len > 32K (vllm#6666, 2024-07-23; from 0.5.4), to keep the
  /// profiling run of a whole longest prompt from taking the KV cache's memory.
  bool v0_long_context_chunked = false;
  /// MLA models (DeepSeek-V2/V3/R1, `ModelSpec::is_mla`) under V0 run without chunked prefill unless the scenario
  /// turns it on: vllm#12639 ("MLA with chunked prefill", merged 2025-02-21 after 0.7.3, first in the 0.7.4 nightlies
  /// and 0.8.0) made MLA chunk but left V0's default off for it (EngineArgs `_set_default_args_v0`: "Chunked prefill
  /// not supported for Multimodal or MLA in V0."), so vllm#6666's >32K rule does not turn it on. From 0.7.1, the
  /// release MLA itself arrived in (vllm#12601); before it DeepSeek models ran without MLA.
  bool v0_mla_unchunked = false;
  /// 0.7.1-0.7.3: VllmConfig forced chunked prefill and prefix caching off for MLA whatever the scenario asked
  /// (vllm#12642, 2025-02-01: "MLA is enabled; forcing chunked prefill and prefix caching to be disabled"), until
  /// vllm#12639 removed the guard.
  bool v0_mla_forces_unchunked = false;
  /// V0 before 0.5.4 re-sorted the running queue by arrival time (the FCFS policy's sort_by_priority) at every
  /// `_schedule_running`, so the preemption victim (`running_queue.pop()`) was the latest arrival and a re-admitted
  /// victim took its arrival's place again; vllm#6867 ("simplify and improve scheduler", opened 2024-07-27, after
  /// 0.5.3.post1; taken as first released in 0.5.4, its merge date not read — no source here runs 0.5.4) dropped the sort, and from then a re-admitted victim rejoins at the tail, the next victim.
  bool v0_running_by_arrival = false;
  /// The release's offline benchmark scripts (benchmarks/benchmark_latency.py, benchmark_throughput.py) declare their
  /// own engine flags and pass them to LLM(...) by name: `--enable-chunked-prefill` is a store_true flag, so an absent
  /// flag reaches EngineArgs as an explicit enable_chunked_prefill=False and V0's >32K rule (vllm#6666, which reads an
  /// unset flag only) never turns chunking on for an offline run; the budget is then max(max_model_len, 2048) and the
  /// profiling run prefills that many tokens. vllm#9529 ("Make benchmarks use EngineArgs", opened 2024-10-19, after
  /// 0.6.3.post1; taken as first released in 0.6.4, its merge date not read here) made them take EngineArgs'
  /// arguments, whose unset flag the rule reads. True for vLLM releases before 0.6.4.
  bool bench_scripts_pass_chunked_flag = false;
  /// V0's multi-step scheduling (`--num-scheduler-steps`, spec/multi_step.hpp): from 0.6.0 (vllm#7000, "[core] Multi
  /// Step Scheduling") until vllm#22138 removed it (merged 2025-08-03, after 0.10.0: first missing in 0.10.1).
  bool v0_multi_step = false;
  /// Multi-step streams every step's tokens (`multi_step_stream_outputs`, vllm#8335; on by default since vllm#9047,
  /// merged 2024-10-03, first released in 0.6.3). Before, a window's tokens reach the client at its end.
  bool v0_multi_step_streams = false;
  /// Whether the release can replay CUDA graphs at all: vLLM before 0.2.6 has none (vllm#1926, "Optimize model
  /// execution with CUDA graph", merged 2023-12-16 after 0.2.5 and first released in 0.2.6), so every step of those
  /// releases runs eagerly, as under --enforce-eager later.
  bool cuda_graphs = true;
  /// The quantised-GEMM kernels of the release (vLLM: pre-Marlin AWQ/GPTQ, FP8 on Ada by wheel; other engines and
  /// releases: today's vLLM kernels). docs/cost-model.md "Quantised kernels by release".
  QuantKernels quant_kernels;
};

/// True when `s` has the form ENGINE==VERSION.
bool is_engine_version(const std::string& s);

/// A release as a command line's --engine-version (Python's engine_version=) gives it: "ENGINE==VERSION" as written,
/// a bare version as `engine`'s ("0.7.4" -> "vllm==0.7.4", "v0.7.4" too). Anything else (a runtime name such as
/// "sglang" or "vllm-v0", empty text) is a ConfigError at `path` saying what a release is, quoting what was given.
std::string release_from_flag(const std::string& given, const std::string& engine, const std::string& path);

/// `s` without the blanks around it: the one rule for engine.runtime's spaces (" vllm==0.5.4", "vllm == 0.5.4 " and
/// "sglang " all read as written without them, in parse_engine_version and parse_runtime alike).
std::string trim_runtime_text(const std::string& s);

/// Parses "ENGINE==VERSION". ConfigError at `path` for a malformed string, an engine llmsim does not model
/// (listing the ones it does) or a version without a number.
EngineVersion parse_engine_version(const std::string& s, const std::string& path = "engine.runtime");

/// The runtime and default scheduler of a release. ConfigError at `path` for a release no modelled runtime stands
/// for (LMDeploy other than TurboMind v0.1, vLLM before 0.2), naming the versions that are modelled.
RuntimeForVersion runtime_for_version(const EngineVersion& v, const std::string& path = "engine.runtime");

/// The quantised kernels a release named in engine.runtime runs ("vllm==0.4.1" -> awq_gemm, exllama GPTQ); today's
/// vLLM kernels for no release, a runtime name or an engine whose kernels are not versioned. ConfigError as
/// runtime_for_version for a malformed or unmodelled release.
QuantKernels quant_kernels_for(const std::optional<std::string>& release, const std::string& path = "engine.runtime");

/// Whether the release named in engine.runtime can use CUDA graphs (RuntimeForVersion::cuda_graphs); true for no
/// release, a runtime name, or an engine whose graphs are not versioned. ConfigError as runtime_for_version for a
/// malformed or unmodelled release.
bool release_has_cuda_graphs(const std::optional<std::string>& release, const std::string& path = "engine.runtime");

/// Whether an offline vLLM benchmark command (benchmark_latency.py / benchmark_throughput.py) of the release named in
/// engine.runtime passes enable_chunked_prefill explicitly, False when the flag is absent
/// (RuntimeForVersion::bench_scripts_pass_chunked_flag: vLLM before 0.6.4). False for no release, a runtime name or
/// another engine. ConfigError as runtime_for_version for a malformed or unmodelled release.
bool bench_scripts_pass_chunked_flag(const std::optional<std::string>& release,
                                     const std::string& path = "engine.runtime");

/// The version ranges, one line each ("vllm 0.2.0 - 0.4.2: vllm-v0-paged, ..."), for help texts and docs.
std::vector<std::string> runtime_version_ranges();

/// Whether the release runs vLLM V1's async scheduling unless told otherwise: vLLM 0.14.0 and later (vllm#27614,
/// "Enable async scheduling by default", merged after 0.13.0). Unset (the `vllm-v1` runtime without a release
/// models the 0.11 line), older releases and other engines: false. perf/async_scheduling.hpp applies vLLM's other
/// conditions.
bool async_scheduling_by_default(const std::optional<std::string>& release);

/// vLLM V1's hybrid KV-cache manager puts the layers of each attention type (full, sliding, linear) in groups of
/// equal size (vllm/v1/core/kv_cache_utils.py `_get_kv_cache_groups_uniform_page_size`): the smallest type's layer
/// count, or the largest type's when it is less than this ratio times the smallest (fewer padding layers). By release:
///  * before 0.12.0: 0 (always the smallest; the 2025-06-02 FIXME "use the '1' in the n:1 pattern");
///  * 0.12.0-0.17.x: 1.25 (vllm#29303, "Better layer padding strategy for gpt-oss eagle", opened 2025-11-24, after
///    0.11.2: "if max_num_layers < min_num_layers * 1.25"; taken as first released in 0.12.0, the tag not read);
///  * 0.18.0 on: 1.5 (vllm#36684, "increase hybrid attention grouping threshold from 1.25 to 1.5", merged
///    2026-03-10; taken as first released in 0.18.0, the tag not read).
/// No release (a runtime name) and other engines: 1.5, today's vLLM.
double hybrid_kv_group_ratio(const std::optional<std::string>& release);

/// Whether a vLLM release keeps MLA's absorbed decode weights beside the raw ones (memory/engine_memory.cpp):
/// `MLACommonImpl.process_weights_after_loading` (attention/backends/mla, V0 and V1 alike) with
/// VLLM_MLA_PERFORM_MATRIX_ABSORPTION (default on) materialises W_Q_UK = W_UQ·W_UK (q_lora_rank × heads·kv_lora_rank)
/// and W_UV_O = W_UV·W_O (heads·kv_lora_rank × hidden), requantised to FP8 for an FP8 checkpoint
/// (VLLM_MLA_DISABLE_REQUANTIZATION off), and W_QR (q_lora_rank × heads·rope) in the activation dtype, while q_proj,
/// kv_b_proj and o_proj stay for the prefill. From 0.7.1 (vllm#12528, "MLA decode optimizations", committed
/// 2025-01-30) until vllm#14770 ("MLA get rid of materialization", committed 2025-03-13, first released in 0.8.0).
/// False for no release (a runtime name) and other engines.
bool mla_absorbed_weights(const std::optional<std::string>& release);

/// Whether V0's CacheEngine pads every MLA cache entry to a multiple of 256 bytes in the model dtype (576 -> 640
/// elements for DeepSeek's 512 + 64 latent), counted in `get_cache_block_size` and so in the number of blocks:
/// vllm#12676 ("Mem align KV caches for CUDA devices", committed 2025-02-04, first released in 0.7.2;
/// VLLM_CUDA_MEM_ALIGN_KV_CACHE default on) until vllm#14842 ("Get rid of mla cache alignment", committed
/// 2025-03-15, first released in 0.8.0). False for no release and other engines; V0's only (V1 allocates its own).
bool mla_kv_entries_aligned(const std::optional<std::string>& release);

/// Whether vLLM V1 decides a hybrid model's KV-cache groups on the whole model and projects them onto each pipeline
/// stage (vllm/v1/core/kv_cache_utils.py `get_kv_cache_configs`: the specs of every worker merged, `get_kv_cache_groups`
/// on the merge, each type's layers dealt round-robin into its groups, `layers[i::num_groups]`, and
/// `_project_kv_cache_groups_to_worker`; a stage's tensors are the most layers one group has there), rather than on
/// each stage's own layers (`get_kv_cache_config` per worker, then `unify_kv_cache_configs`). vllm#23974 ("[Hybrid
/// Allocator] Support Pipeline Parallel", opened 2025-08-30, updated 2025-09-10): taken as first released in 0.11.0,
/// neither its merge date nor the tags read. True from 0.11.0, with no release (today's vLLM) and for other engines
/// (whose plans do not group); false for earlier vLLM releases.
bool kv_groups_whole_model(const std::optional<std::string>& release);

/// The first vLLM release that takes `--max-model-len auto` (or -1): fit the context to the KV cache instead of
/// refusing to start. vllm#29431 ("Add `--max-model-len auto` to auto-fit context to available memory", opened
/// 2025-11-25) added it; vllm#31260 (2025-12-24, "Fix `max_model_len=\"auto\"` handling") repaired -1 after
/// vllm#30695 had started refusing it, so 0.14.0 is taken as the first release where it works (the tags not read).
/// Earlier releases have no auto: "auto" is no integer for their argument parser, and -1 is no context length.
inline constexpr const char* kMaxModelLenAutoSince = "0.14.0";
/// The vLLM release of `release` ("vllm==0.8.4" -> "0.8.4") when it is older than kMaxModelLenAutoSince, so that
/// engine.max_model_len "auto" (-1) would be refused by it; nullopt for later releases, no release (a runtime name)
/// and other engines. ConfigError as runtime_for_version for a malformed release.
std::optional<std::string> vllm_release_without_auto_context(const std::optional<std::string>& release);

/// The first vLLM releases that serve a hybrid model (Mamba-2 or gated-DeltaNet layers beside attention) with prefix
/// caching. Before them `MambaModelConfig.verify_and_update_config` (vllm/model_executor/models/config.py, read at a
/// 0.11.0-line commit) sets `cache_config.enable_prefix_caching = False` for every hybrid or Mamba model ("Hybrid or
/// mamba-based model detected: disabling prefix caching since it is not yet supported"), and V0 refused it too.
///  * Mamba-2 (Nemotron-H, Nemotron-3-Nano): vllm#25752 ("[V1] [Hybrid] Mamba2 Automatic Prefix Caching", in review
///    2025-10-03, after 0.11.0's release): taken as first released in 0.11.1, the tag not read. Later code enables it
///    only where `model_config.supports_mamba_prefix_caching`, else "without support for prefix caching: disabling".
///  * gated DeltaNet (Qwen3-Next, Qwen3.5): vllm#30877 (`--mamba-cache-mode align`, opened mid-December 2025, after
///    0.13.0's branch): taken as first released in 0.14.0, the tag not read.
/// The vLLM release of `release` ("vllm==0.11.0" -> "0.11.0") and the first with it, when it turns prefix caching off for a hybrid model
/// (`mamba2`: Mamba-2 layers, first with it in 0.11.1; else gated DeltaNet, in 0.14.0); nullopt for later releases, no release
/// (a runtime name: today's vLLM) and other engines. ConfigError as runtime_for_version for a malformed release.
struct HybridPrefixCachingOff {
  std::string release;     ///< the release that turns it off ("0.11.0")
  std::string first_with;  ///< the first release with it for this kind of layer ("0.11.1")
};
std::optional<HybridPrefixCachingOff> vllm_release_without_hybrid_prefix_caching(
    const std::optional<std::string>& release, bool mamba2);
/// The SGLang counterpart: releases whose model runner forces the radix cache off for a hybrid model ("Hybrid GDN
/// model detected, disable radix cache"; its Mamba pool then holds max_running_requests states, or 512:
/// memory/sglang_mamba_pool.hpp).
///  * gated DeltaNet (Qwen3-Next): sglang#11214 ("Support mamba radix cache v0", merged 2025-10-13, after 0.5.3 of
///    early October): taken as first released in 0.5.4, the tag not read.
///  * Mamba-2 (Nemotron-H, Nemotron-3-Nano): sglang#13584 ("Enable RadixCache for Mamba2 models", opened 2025-11-19,
///    after 0.5.5): taken as first released in 0.5.6, the tag not read.
/// nullopt for later releases, no release (a runtime name: the newest line modelled) and other engines.
std::optional<HybridPrefixCachingOff> sglang_release_without_hybrid_radix_cache(const std::optional<std::string>& release,
                                                                               bool mamba2);

/// Whether a vLLM V1 release parses the chat template's Jinja source (jinja2 `env.parse`, no cache) on every
/// /v1/chat/completions request, synchronously in the API server's event loop (perf/chat_render.hpp):
///  * 0.8.0-0.9.1: `resolve_chat_template_content_format` -> `_detect_content_format` per request (vllm#9919's
///    content-format detection, from 0.6.4; V1 from 0.8.0) until vllm#20065 ("Cached resolution for resolving chat
///    templates", opened 2025-06-25; taken as first released in 0.9.2, its merge date not read here) cached it;
///  * 0.11.x: `resolve_chat_template_kwargs` -> `_resolve_chat_template_kwargs` per request, added uncached by
///    vllm#25794 ("Add filtering for chat template kwargs", a security fix merged in the week to 2025-10-03 and taken
///    as first released in 0.11.0; its review: "it's called by each request"); the 0.13-era chat_utils read here calls
///    `_cached_resolve_chat_template_kwargs` (lru_cache); 0.12 not read, taken as cached.
/// False for no release (a runtime name), other engines and every other vLLM release.
bool chat_template_parsed_per_request(const std::optional<std::string>& release);

/// Whether a vLLM release's OpenAI server tokenises the prompt synchronously on its asyncio event loop, inside the
/// request's handler, before the handler hands the request to the engine: every vLLM release before 0.6.5.
/// `serving_engine.py` called `tokenizer(prompt)` in `_normalize_prompt_text_to_input` (0.5.4-0.6.4; before it
/// `_validate_prompt_and_tokenize`) until vllm#10635 ("don't block event loop in tokenization (preprocess) in OpenAI
/// compatible server", opened 2024-11-25 after 0.6.4.post1 of 2024-11-17, approved the same day; taken as first
/// released in 0.6.5, its merge date not read here) moved it to a thread pool. perf/inprocess_server.hpp prices the
/// queue it makes (for 0.6.x, on the API server's own process: inprocess_front). False for no release (a runtime
/// name), other engines and later releases.
bool api_server_tokenises_on_loop(const std::optional<std::string>& release);

/// Whether a vLLM release's OpenAI server drives the engine through 0.6.0's RPC frontend (AsyncEngineRPCClient ->
/// AsyncEngineRPCServer around AsyncLLMEngine, vllm/entrypoints/openai/rpc/): 0.6.0 and 0.6.1.x. vllm#8157
/// (MQLLMEngine, opened 2024-09-04, after 0.6.0) replaced it; taken as first released in 0.6.2 (its merge date not read
/// here; 0.6.1.post2 is of 2024-09-13). perf/rpc_frontend.hpp prices it. False for no release (a runtime name), other
/// engines and other releases.
bool vllm_rpc_frontend(const std::optional<std::string>& release);

/// Which of the two per-request Jinja passes above a release runs (the work differs, so does its cost:
/// perf/chat_render.hpp): none, 0.8.0-0.9.1's content-format detection (parse + a search of the AST), or 0.11.x's
/// template-kwargs filter (a new sandboxed environment, parse + `jinja2.meta.find_undeclared_variables`).
enum class ChatTemplateParse { none, content_format_detection, template_kwargs_filter };
ChatTemplateParse chat_template_parse(const std::optional<std::string>& release);

/// Whether an SGLang release runs its overlap scheduler unless told otherwise (`--disable-overlap-schedule`):
/// sglang#2067 ("Enable overlap by default", merged 2024-11-19) turned `--enable-overlap-schedule` on for the
/// releases after 0.3.5; earlier ones ran the synchronous event loop. Unset (the `sglang` runtime without a
/// release models today's SGLang): true. Other engines: false. perf/sglang_overlap.hpp applies SGLang's other
/// conditions.
bool sglang_overlap_by_default(const std::optional<std::string>& release);

}  // namespace llmsim::spec
