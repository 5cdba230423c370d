#pragma once
// Serving-engine knobs, named as vLLM names them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmsim/spec/speculative.hpp"

namespace llmsim::spec {

struct GpuSpec;
struct ModelSpec;

enum class SchedulerPolicy {
  /// "vllm": vLLM V1's unified scheduler (the only engine of vLLM >= 0.8; defaults of the 0.11 line): decodes and
  /// prefill chunks share every step under max_num_batched_tokens, KV blocks allocated per chunk, no watermark,
  /// prefix caching on, preemption by recompute of the newest running request.
  vllm,
  vllm_v0,  ///< "vllm-v0": vLLM V0's prefill-first scheduler (0.5-0.6, chunked prefill off)
  chunked,  ///< decode-first, prefills chunked into the leftover token budget (V0 chunked prefill, Sarathi-Serve)
  static_batching,  ///< request-level batching: a batch runs until its longest request ends ("static")
  /// "sglang": SGLang's scheduler (engine/schedule_sglang.cpp): a step is a prefill batch when one can be formed
  /// (decodes stall), else a decode of every running request; prefills chunked at chunked_prefill_size
  /// (max_num_batched_tokens); admission reserves the running requests' future output (new_token_ratio);
  /// retraction of the newest decodes when a decode step does not fit. The default of runtime sglang / sglang==x.
  sglang
};
enum class PreemptionMode { recompute, swap };

std::string to_string(SchedulerPolicy p);   ///< "vllm" | "vllm-v0" | "chunked" | "static" | "sglang"
std::string to_string(PreemptionMode p);    ///< "recompute" | "swap"
SchedulerPolicy parse_policy(const std::string& s, const std::string& path = "engine.policy");
PreemptionMode parse_preemption(const std::string& s, const std::string& path = "engine.preemption");
/// The engine and version a policy models, for result summaries ("vLLM V1 (0.11 scheduler)", ...).
std::string engine_name(SchedulerPolicy p);
/// The serving runtime whose fixed costs, CUDA-graph rules, all-reduce and attention kernels the cost model
/// prices (its meaning lives in perf/runtime.hpp, docs/cost-model.md "Runtimes"). JSON `engine.runtime`.
enum class Runtime {
  vllm_v1,             ///< "vllm-v1": vLLM V1 (0.8+), the default
  vllm_v0,             ///< "vllm-v0": vLLM V0 0.6 (FlashAttention, asynchronous output processing)
  vllm_v0_sync,        ///< "vllm-v0.5": vLLM V0 0.4.3-0.5 (flash-attn decode, outputs processed after every step)
  vllm_v0_paged,       ///< "vllm-v0-paged": vLLM V0 before flash-attn decoding (0.2-0.4.2: PagedAttention decode kernels)
  sglang,              ///< "sglang": SGLang (2024, FlashInfer)
  lmdeploy_turbomind,  ///< "lmdeploy-turbomind": LMDeploy's TurboMind C++ engine (v0.1)
  gpt_fast,            ///< "gpt-fast": torch.compile + CUDA graphs, no scheduler
  llama_cpp,           ///< "llama.cpp": llama.cpp's CUDA backend
};

std::string to_string(Runtime r);           ///< "vllm-v1" | "vllm-v0" | ... (the JSON names above)
/// A runtime name, or a release ("vllm==0.5.4": spec/runtime_version.hpp picks its runtime). ConfigError at `path`
/// listing the valid names for an unknown one.
Runtime parse_runtime(const std::string& s, const std::string& path = "engine.runtime");
const std::vector<std::string>& runtime_names();

/// Replaces the roofline cost model by a per-request service time drawn from a distribution, with one
/// request in service at a time (max_num_seqs = 1). For checking the engine against queueing theory.
struct SyntheticService {
  enum class Kind { fixed, exponential, lognormal } kind = Kind::exponential;
  double mean_s = 0.1;  ///< in [1e-9, 1e6] s
  double cv = 1.0;      ///< coefficient of variation (lognormal only), in [1e-3, 100]
};

/// The ranks vLLM's LoRAConfig accepts for max_lora_rank (vllm/config/lora.py MaxLoRARanks, 0.11).
inline constexpr int kLoraRanks[] = {1, 8, 16, 32, 64, 128, 256, 320, 512};

/// engine.max_model_len = "auto" (also -1, as vLLM's CLI takes it).
inline constexpr int kMaxModelLenAuto = -1;

struct EngineConfig {
  SchedulerPolicy policy = SchedulerPolicy::vllm;
  /// The scenario named the scheduler (engine.policy, or vLLM's enable_chunked_prefill): a release's defaults do
  /// not replace it. vLLM turns chunked prefill on above 32K tokens of context only when it is left unset
  /// (vllm#6666), so `--enable-chunked-prefill False` keeps the prefill-first V0 scheduler (effective_engine).
  bool policy_given = false;
  /// Most sequences running at once; 0 = the policy's default (effective_engine), which is what a scenario
  /// read from JSON without the key gets. A config built in C++ starts at vLLM V0's 256.
  int max_num_seqs = 256;
  /// Token budget of one iteration; 0 = the policy's default (effective_engine), as for max_num_seqs. A config
  /// built in C++ starts at 8192.
  int max_num_batched_tokens = 8192;
  int block_size = 16;                  ///< KV block size in tokens
  double gpu_memory_utilization = 0.90; ///< fraction of device memory the engine may use
  /// The scenario named gpu_memory_utilization (engine JSON, `--set`, a server line's --gpu-memory-utilization /
  /// --mem-fraction-static). Unnamed, an SGLang release takes its own mem_fraction_static
  /// (sglang_mem_fraction_static, applied by spec::resolve).
  bool gpu_memory_utilization_given = false;
  PreemptionMode preemption = PreemptionMode::recompute;
  /// Context limit in tokens. kMaxModelLenAuto (-1, JSON "auto") or 0 (unset) = vLLM's `--max-model-len auto`:
  /// the model's limit when its KV fits, else the largest that does (memory::plan_memory fits it). A number the
  /// user sets keeps vLLM's strict behaviour: a KV cache that cannot hold one such sequence does not fit.
  int max_model_len = 0;
  bool max_model_len_auto() const noexcept { return max_model_len <= 0; }
  /// Fraction of KV blocks kept free at admission; unset = 0.01 (vLLM V0) or 0 (V1 has no watermark).
  std::optional<double> watermark;
  double swap_space_gb = 4;             ///< host swap space per GPU for preemption by swap, GiB (<= 1e6)
  /// Reuse of cached KV blocks (shared prompt prefixes, a preempted request's own blocks); unset = on for V1,
  /// off for the other policies (vLLM's defaults).
  std::optional<bool> enable_prefix_caching;
  bool cuda_graphs = true;              ///< decode iterations replayed from CUDA graphs (lower launch cost)
  /// Requests come through the runtime's OpenAI-compatible HTTP server (`vllm serve`), whose path around the
  /// engine adds a fixed latency to every request (perf/serving_path.hpp); false = an in-process engine
  /// (`AsyncLLMEngine` / `LLM` called from Python), which does not. JSON "engine.api_server", default true.
  bool api_server = true;
  /// vLLM V1's async scheduling (`--async-scheduling` / `--no-async-scheduling`, JSON "engine.async_scheduling"):
  /// unset = the release's default (on from vLLM 0.14.0, vllm#27614; perf/async_scheduling.hpp says when vLLM
  /// turns it off and what it changes).
  std::optional<bool> async_scheduling;
  /// vLLM V0's multi-step scheduling (`--num-scheduler-steps n`, JSON "engine.num_scheduler_steps", vLLM 0.6.0 to
  /// 0.10.0): a scheduled decode batch runs n steps back to back (spec/multi_step.hpp says which runtimes take it;
  /// engine/multi_step.cpp runs it). 1 = off, the default.
  int num_scheduler_steps = 1;
  /// vLLM's `--multi-step-stream-outputs` (JSON "engine.multi_step_stream_outputs"): whether a multi-step window streams
  /// every step's tokens (true) or all of them at its end (false); unset = the release's default (on from 0.6.3,
  /// vllm#9047; off before). Read only when num_scheduler_steps > 1.
  std::optional<bool> multi_step_stream_outputs;
  /// Batches in flight under pipeline parallel, each from its own virtual engine with 1/k of the KV cache
  /// (vLLM v0's virtual engines): 0 = pp (one per stage), 1 = one batch at a time (stages idle (pp−1)/pp).
  int max_concurrent_batches = 0;
  /// GiB of weights per GPU kept in host memory and copied over PCIe in every forward pass (vLLM
  /// --cpu-offload-gb): a model larger than the GPU runs, at the host link's pace.
  double cpu_offload_gb = 0;
  /// GiB of host memory per replica (all its GPUs together) for a second prefix-cache tier: KV blocks copied to
  /// the host as they are computed and read back over PCIe on a GPU miss (vLLM --kv-offloading-size with the
  /// native CPU backend, the OffloadingConnector; engine/kv_host_tier.hpp). 0 = off; needs prefix caching;
  /// in [0, 1e6].
  double kv_offload_gb = 0;
  std::optional<SyntheticService> synthetic_service;  ///< JSON "engine.synthetic_service"; testing only
  /// JSON "engine.runtime": the runtime the cost model prices; unset = vLLM V0 for policy "vllm-v0", else V1.
  std::optional<Runtime> runtime;
  /// When engine.runtime named a release ("vllm==0.5.4", spec/runtime_version.hpp): that release, canonical
  /// (engine lower case, no leading "v"), kept for output; `runtime` (and the policy, unless the scenario set one)
  /// were derived from it.
  std::optional<std::string> runtime_release;
  /// JSON "engine.speculative": speculative decoding (spec/speculative.hpp); absent = off.
  std::optional<SpeculativeConfig> speculative;
  /// SGLang's --cuda-graph-max-bs (JSON "engine.cuda_graph_max_bs", runtime sglang only): the largest decode batch
  /// replayed from a CUDA graph; larger decode batches run eagerly. Unset = the release's default
  /// (sglang_cuda_graph_max_bs), which spec::resolve fills in for an SGLang engine.
  std::optional<int> cuda_graph_max_bs;
  /// vLLM's LoRA (--enable-lora, JSON "engine.enable_lora"): GPU buffers for max_loras adapter slots of rank
  /// max_lora_rank on every LoRA-capable linear, allocated before the KV profile, so they come out of the KV pool
  /// (memory/lora_memory.hpp). Off by default, as in vLLM.
  bool enable_lora = false;
  /// Adapter slots on the GPU: vLLM's --max-loras (default 1), the most adapters one batch can use.
  int max_loras = 1;
  /// The rank every slot is allocated at: vLLM's --max-lora-rank (default 16; one of kLoraRanks).
  int max_lora_rank = 16;

  /// Prompts are split into chunks (V1 always, sharing steps with decodes; the `chunked` policy; SGLang's
  /// chunked_prefill_size, in prefill-only steps).
  bool chunked_prefill() const noexcept {
    return policy == SchedulerPolicy::vllm || policy == SchedulerPolicy::chunked || policy == SchedulerPolicy::sglang;
  }
  /// vLLM V1 and SGLang admit without a watermark (SGLang reserves future output instead: schedule_sglang.cpp).
  double watermark_or_default() const noexcept {
    return watermark ? *watermark : policy == SchedulerPolicy::vllm || policy == SchedulerPolicy::sglang ? 0.0 : 0.01;
  }
  /// On by default for vLLM V1 and SGLang (its radix cache; --disable-radix-cache turns it off).
  bool prefix_caching() const noexcept {
    return enable_prefix_caching ? *enable_prefix_caching
                                 : policy == SchedulerPolicy::vllm || policy == SchedulerPolicy::sglang;
  }
  /// The runtime this engine runs: `runtime` when set, else vLLM V0 for policy "vllm-v0", SGLang for policy
  /// "sglang", else vLLM V1.
  Runtime resolved_runtime() const noexcept {
    if (runtime) return *runtime;
    if (policy == SchedulerPolicy::sglang) return Runtime::sglang;
    return policy == SchedulerPolicy::vllm_v0 ? Runtime::vllm_v0 : Runtime::vllm_v1;
  }
  /// Checks the knobs on their own (0 = default is accepted for max_num_seqs / max_num_batched_tokens).
  void validate(const std::string& path = "engine") const;
};

/// The configuration the engine runs: unset knobs filled with the defaults of the engine the policy models.
/// vLLM V1 (vllm/engine/arg_utils.py get_batch_defaults, 0.11 line): on a GPU with >= 70 GiB that is not an
/// A100 (H100, H200, MI300) max_num_batched_tokens 8192 for `vllm serve` and 16384 for the offline LLM class
/// (`vllm bench throughput`), max_num_seqs 1024; on every other GPU 2048 / 8192 and 256. The other policies:
/// 8192 and 256 (vLLM V0's max_num_seqs; llmsim's long-standing budget), except `sglang` (sglang_defaults below)
/// and, with a vLLM release that ships V0 (engine.runtime "vllm==X", RuntimeForVersion in spec/runtime_version.hpp holds its facts):
/// * given the model, the prefill-first policy (`vllm-v0`) takes max(max_model_len, 2048)
///   (vllm_v0_default_batched_tokens), max_model_len being engine.max_model_len when set, else the model's; above
///   32K (no sliding window, no speculative decoding) it becomes `chunked` instead, as V0 turned chunked prefill on
///   by itself from 0.5.4 (vllm#6666);
/// * a chunked V0 policy takes the release's budget: 512 before 0.6.5, 2048 from it (vllm#10544).
/// `offline` selects the LLM-class defaults (every request present at t = 0). Watermark and prefix caching as
/// documented on the fields (of the resolved policy).
EngineConfig effective_engine(const EngineConfig& e, const GpuSpec& gpu, bool offline, const ModelSpec* model = nullptr);

/// vLLM V0's unset max_num_batched_tokens without chunked prefill: max(max_model_len, 2048) (SchedulerConfig,
/// vLLM 0.2-0.10): a whole prompt of the longest allowed context fits one prefill step.
int vllm_v0_default_batched_tokens(int max_model_len);

/// SGLang's server_args defaults for a GPU (python/sglang/srt/server_args.py; docs/engine.md "SGLang"): the chunked
/// prefill size by the GPU's memory and the release (0.5.3+: < 35 GiB 2048, < 60 GiB 4096, < 160 GiB 8192, else 16384;
/// 0.4.7.post1-0.5.2, sglang#7054's __post_init__: < 35 GiB 2048, < 160 GiB 8192, else 16384; before: 2048 below
/// 25,000 MiB, else 8192) and max_running_requests (2048: the floor of its request pool,
/// clamp(KV tokens / context × 512, 2048, 4096), which the KV reservation rarely lets a batch reach).
struct SglangDefaults {
  int chunked_prefill_size = 8192;
  int max_running_requests = 2048;
};
/// SGLang's scheduler constants (policy "sglang", engine/schedule_sglang.cpp), read from its code; their provenance
/// is in perf/provenance.cpp (scope "sglang").
namespace sglang {
/// new_token_ratio: the fraction of the running requests' remaining output reserved at admission. Starts at
/// 0.7 × schedule_conservativeness (SGLANG_INIT_NEW_TOKEN_RATIO / global_config.default_init_new_token_ratio), decays
/// linearly per decode step to 0.14 × that (default_min_new_token_ratio_factor) over 600 steps
/// (default_new_token_ratio_decay_steps); 0.3.x: 0.7 → 0.1 by 0.001 a step, the same line within 0.002.
inline constexpr double kInitNewTokenRatio = 0.7;
inline constexpr double kMinNewTokenRatioFactor = 0.14;
inline constexpr double kNewTokenRatioDecaySteps = 600;
/// schedule_policy.py CLIP_MAX_NEW_TOKENS(_ESTIMATION): a request's output counts at most this much in reservations.
inline constexpr std::int64_t kClipMaxNewTokens = 4096;
/// global_config.retract_decode_steps: retraction frees KV until every remaining request has this many tokens.
inline constexpr std::int64_t kRetractDecodeSteps = 20;
/// schedule_policy.py IGNORE_EOS_RESERVE_TOKENS (0.4.6+): tokens each still-running request must keep in hand at
/// every finish of the ignore_eos admission walk (spec/sglang_admission.hpp).
inline constexpr std::int64_t kIgnoreEosReserveTokens = 1;
/// server_args max_prefill_tokens: input tokens of one prefill batch (the first request may exceed it).
inline constexpr std::int64_t kMaxPrefillTokens = 16384;
/// server_args._handle_speculative_decoding: with a speculative algorithm (EAGLE, EAGLE3, STANDALONE, NGRAM) an
/// unset max_running_requests is 48 ("Max running requests is reset to 48 for speculative decoding").
inline constexpr int kSpeculativeMaxRunningRequests = 48;
/// The Mamba state pool of a hybrid model (Qwen3-Next, Nemotron-H; memory/sglang_mamba_pool.hpp), read from
/// model_runner's handle_max_mamba_cache / init_memory_pool (0.5.4-0.5.8 line):
/// * with the radix cache off, the pool holds max_running_requests states, or 512 when unset (max_mamba_cache_size's
///   default; before sglang#11214 the same rule for every hybrid, its radix cache forced off);
/// * with it on, the states take rest x r / (1 + r) of the memory left after the weights, r = mamba_full_memory_ratio
///   (0.9 from sglang#11679; its 0.2 of sglang#11214 was on main for two days, in no release), and running requests
///   are capped at the slots / 3 (MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO: a running request's state, its
///   radix-tree copy and a fork);
/// * the recurrent (SSM) state in FP32 (server_args mamba_ssm_dtype "float32") unless the checkpoint names its own.
inline constexpr int kMaxMambaCacheSize = 512;
inline constexpr double kMambaFullMemoryRatio = 0.9;
inline constexpr int kMambaSlotsPerRunningRequest = 3;
inline constexpr double kMambaSsmStateBytes = 4;
}  // namespace sglang

/// `release` is the engine release ("sglang==0.4.7"; empty = the newest line modelled, 0.5.3+).
SglangDefaults sglang_defaults(const GpuSpec& gpu, const std::optional<std::string>& release);

/// SGLang's default mem_fraction_static (server_args.py __post_init__) for `release` on `gpu` at tensor x pipeline
/// parallel `parallel` (tp x pp), `speculative` = a draft model runs:
/// * 0.3.0-0.4.7: by parallel size, 0.88 (1), 0.87 (2), 0.85 (4), 0.81 (8), 0.79 (16+), on cards up to 80 GiB
///   (0.4.6-0.4.7 adjust larger cards for H20/H200; not applied);
/// * 0.4.7.post1-0.5.2 (sglang#7054, 2025-06-10, after the 0.4.7 bump #7038): (capacity - reserve) / capacity,
///   capacity in MiB, the reserve by capacity: < 35 GiB 2.8 + parallel / 10 GiB, < 90 GiB 9.5 + parallel / 2, < 160
///   GiB 12 + parallel / 2, else 32; + 2 GiB with a draft model; rounded to 3 decimals;
/// * 0.5.3 and later (sglang#10975, 2025-09-27, `_handle_gpu_memory_settings`; 0.5.3rc0, cut on 2025-09-15, keeps
///   the rule above): the reserve from the step sizes,
///   512 MiB + max(`chunk`, 2048) x 1.5 MiB + `graph_max_bs` x 2 MiB + parallel / 8 GiB, at least 10 GiB on cards
///   above 60 GiB, + 2 GiB with a draft model (chunk = chunked_prefill_size, graph_max_bs = cuda_graph_max_bs, both
///   as resolved: the release's defaults or the scenario's own).
/// nullopt where llmsim does not apply one (no release, another engine, and the cases above): gpu_memory_utilization
/// keeps its value.
std::optional<double> sglang_mem_fraction_static(const GpuSpec& gpu, const std::optional<std::string>& release,
                                                 int parallel, bool speculative, std::int64_t chunk = 0,
                                                 int graph_max_bs = 0);

/// The largest decode batch SGLang replays from a CUDA graph (cuda_graph_max_bs; larger decode batches run eagerly)
/// for `release` on `gpu` at tensor parallel `tp` (sglang_graphs.cpp; docs/cost-model.md "SGLang's CUDA graphs"):
/// * 0.3.x: 160 (cuda_graph_runner's capture list [1, 2, 4] + 8..160);
/// * 0.4.0-0.5.2: below 25,000 MiB (35 GiB from 0.4.7.post1) 8, or 80 at tp >= 4 (from 0.4.0.post1); elsewhere
///   the capture list: 160, extended on large cards (0.4.6: 256 above 120 GiB; 0.4.7+: 256 above 96 GiB, 512 above
///   180,000 MiB);
/// * 0.5.3+ and no release (the newest line): by memory, < 20 GiB 8, < 35 GiB 24 (80 at tp >= 4), < 60 GiB 32
///   (160), < 160 GiB 256 (512), else 512.
/// `asked` (--cuda-graph-max-bs / --cuda-graph-bs, engine.cuda_graph_max_bs) wins; before 0.4.6.post4 (sglang#6201)
/// it only filtered the default capture list, so a value above that list's largest size is not reached.
int sglang_cuda_graph_max_bs(const GpuSpec& gpu, const std::optional<std::string>& release, int tp,
                             std::optional<int> asked = std::nullopt);

}  // namespace llmsim::spec
