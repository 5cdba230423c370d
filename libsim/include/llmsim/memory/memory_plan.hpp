#pragma once
// Layer 2: does the model fit, and how many KV-cache tokens remain per GPU?
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/deployment.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/gpu_spec.hpp"
#include "llmsim/spec/model_spec.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::spec {
struct ResolvedScenario;
struct ResolvedSpeculation;
}

namespace llmsim::memory {

/// Memory of one GPU of the deployment (the most loaded one under PP).
struct PerGpuMemory {
  std::int64_t total_bytes = 0;       ///< device memory
  std::int64_t weights_bytes = 0;     ///< this GPU's shard of the weights resident on it (incl. quantization metadata)
  std::int64_t offloaded_weights_bytes = 0;  ///< of its shard, kept in host memory (engine.cpu_offload_gb)
  std::int64_t kv_cache_bytes = 0;    ///< KV pool left for the cache (0 when it does not fit)
  std::int64_t activation_bytes = 0;  ///< peak activations for max_num_batched_tokens (+ logits)
  std::int64_t runtime_bytes = 0;     ///< CUDA context, CUDA graphs, NCCL and all-reduce buffers, other non-torch memory
  std::int64_t comm_buffer_bytes = 0; ///< part of runtime_bytes used by TP collectives (NCCL, custom all-reduce)
  std::int64_t cuda_context_bytes = 0;  ///< part of runtime_bytes: CUDA context (in the headroom)
  std::int64_t cuda_graph_bytes = 0;    ///< part of runtime_bytes: CUDA graphs captured after sizing (in the headroom)
  std::int64_t non_torch_bytes = 0;     ///< part of runtime_bytes: allocated outside PyTorch during profiling (budget)
  std::int64_t requested_bytes = 0;     ///< total × gpu_memory_utilization: what weights, activations, runtime
                                        ///< charged to the budget and the KV cache share
  std::int64_t free_bytes = 0;        ///< reserved by gpu_memory_utilization (the margin), never used
  std::int64_t proposer_weights_bytes = 0;  ///< speculative decoding's draft model / head on this GPU (beside weights_bytes)
  /// Linear-attention state reserved up front for max_num_seqs sequences (vLLM V0's MambaCacheManager, SGLang's
  /// Mamba pool); 0 under vLLM V1, which takes each running sequence's state from the pool as blocks.
  std::int64_t linear_state_bytes = 0;
  /// vLLM's LoRA adapter slots (engine.enable_lora: max_loras × max_lora_rank; memory/lora_memory.hpp), beside
  /// weights_bytes and charged as weights are, before the KV cache is sized.
  std::int64_t lora_bytes = 0;
  /// MLA's absorbed decode weights W_Q_UK / W_UV_O (and W_QR, the dequantised kv_b) that vLLM 0.7.1-0.7.x keeps beside
  /// the raw projections (spec::mla_absorbed_weights), beside weights_bytes and charged as weights are.
  std::int64_t mla_absorbed_weights_bytes = 0;
};

struct MemoryPlan {
  bool fits = false;
  std::string reason;                      ///< empty when it fits: "weights need 28.0 GB per GPU but ..."
  std::int64_t params = 0;
  double kv_bytes_per_token = 0;           ///< whole model at full context (all layers, all KV heads; MLA: latent)
  double kv_bytes_per_token_per_gpu = 0;   ///< what the KV pool charges a token on this GPU under TP/PP (every
                                           ///< KV-cache group holds it: sliding layers and group padding included)
  /// MLA entries padded to 256 bytes (vLLM V0 0.7.2-0.7.x, spec::mla_kv_entries_aligned): kv_bytes_per_token_per_gpu
  /// counts the padded entry, kv_bytes_per_token the latent itself.
  bool kv_mla_entries_aligned = false;
  int kv_sliding_window = 0;               ///< window of the sliding-window KV groups (0 = none; kv_layout.hpp)
  int kv_cache_groups = 1;                 ///< vLLM's KV-cache groups (1 unless full and sliding layers mix)
  /// Of those, the sliding-window groups whose blocks a sequence past the window frees (vLLM V1's
  /// SlidingWindowManager; the engine's window credit, docs/engine.md "Sliding-window groups"). 0 without them, and
  /// for Gemma-4's scaled blocks (a block of one type holds more tokens: not modelled by the engine).
  int kv_sliding_groups = 0;
  std::int64_t kv_capacity_tokens = 0;     ///< tokens the KV pool holds (per replica) when every group holds them
                                           ///< (vLLM's "GPU KV cache size"); sequences past the window take less
  std::int64_t kv_capacity_blocks = 0;     ///< of engine.block_size tokens
  std::int64_t max_concurrent_seqs = 0;    ///< sequences of max_model_len tokens that fit at once (sliding windows
                                           ///< counted as vLLM's "Maximum concurrency" does)
  /// (tokens, sequences) at the shorter contexts 2,048, 8,192 and 32,768 below max_model_len: the one pool holds
  /// more of them (the same per-sequence sum). Auto plans the longest context that fits, where one sequence is all
  /// the pool holds: "1 sequence of 50,336 tokens" alone reads as one user, where it holds 6 chats of 8,192.
  std::vector<std::pair<int, std::int64_t>> concurrent_seqs_at;
  std::int64_t longest_context_tokens = 0; ///< one sequence's limit: the KV pool or the model, whichever is less
  int max_model_len = 0;                   ///< the context planned for (auto: what fits)
  bool max_model_len_auto = false;         ///< planned under vLLM's --max-model-len auto
  int max_model_len_wanted = 0;            ///< auto: what it aimed for (the model's limit); 0 otherwise
  /// The scenario asked for "auto" (-1) by name under a vLLM release that has no auto
  /// (spec::vllm_release_without_auto_context: "0.8.4"); "" otherwise. The plan fits the context all the same (the
  /// planner's default); context_note says that release would refuse it and which number to pass instead.
  std::string auto_context_refused_by;
  double proposer_kv_bytes_per_token_per_gpu = 0;  ///< part of kv_bytes_per_token_per_gpu: the proposer's own KV
  double linear_state_bytes_per_seq_per_gpu = 0;   ///< one running sequence's linear-attention state (Qwen3-Next;
                                                   ///< V1: its pages, padded as vLLM pads them)
  /// vLLM V1: pool blocks (of engine.block_size tokens, kv_capacity_blocks' unit) one running sequence's state takes;
  /// the engine charges them when it admits the sequence and frees them when it leaves (0: no linear layers, or an
  /// engine that reserves the states up front).
  std::int64_t linear_state_blocks_per_seq = 0;
  /// vLLM V1, a hybrid model with prefix caching on: the attention block size vLLM forces for it
  /// (detail::hybrid_prefix_block_tokens), the granule of a prefix-cache hit; 0 otherwise.
  std::int64_t hybrid_prefix_block_tokens = 0;
  /// vLLM V1: sequences whose state alone fits the pool ("max_num_seqs 1024 -> N sequences' state fit"): the most that
  /// can run at once, whatever their context.
  std::int64_t linear_state_seqs_fit = 0;
  /// vLLM V1: the pool's blocks as vLLM counts them (a page per layer of a KV-cache group): its "available Mamba cache
  /// blocks", which max_num_seqs may not exceed when CUDA graphs are on.
  std::int64_t mamba_cache_blocks = 0;
  /// SGLang: the state slots of its Mamba pool (max_mamba_cache_size), reserved at start beside the token pool
  /// (per_gpu.linear_state_bytes); 0 without linear layers and under vLLM.
  std::int64_t linear_state_slots = 0;
  /// SGLang with its radix cache on: mamba_full_memory_ratio, the states' share r / (1 + r) of the memory left after
  /// the weights; 0 when the pool is sized by max_running_requests (radix cache off) or under vLLM.
  double linear_state_memory_ratio = 0;
  /// The most requests the engine runs at once: engine.max_num_seqs, or less where SGLang's Mamba pool caps it
  /// (slots / 3 with the radix cache: each running request may hold its state, its tree copy and a fork). The
  /// simulation's scheduler runs at most this many.
  std::int64_t max_running_requests = 0;
  PerGpuMemory per_gpu;
};

/// What speculative decoding's proposer adds to a GPU (memory/proposer_memory.cpp): its weights, taken from the
/// budget before the KV cache as vLLM loads the drafter beside the model, and its KV per token, held in the same
/// blocks as the target's (vLLM V1 allocates the drafter's attention layers in the one KV-cache config).
struct ProposerMemory {
  double weight_bytes_per_gpu = 0;
  double kv_bytes_per_token_per_gpu = 0;
};

/// The context a plan is for: `tokens`; with `auto_fit` (vLLM's `--max-model-len auto`, the planner's default)
/// the largest context up to `tokens` whose KV cache fits one sequence.
struct ContextRequest {
  int tokens = 0;
  bool auto_fit = false;
};

/// Plans memory for one replica. A configuration that does not fit returns fits=false with a reason
/// naming the term that overflowed and by how much. Invalid inputs (tp not dividing heads, ...) throw
/// ConfigError.
/// `proposer`: speculative decoding's share (proposer_memory); none by default.
MemoryPlan plan_memory(const spec::ModelSpec& model, const spec::Quantization& quant, const spec::GpuSpec& gpu,
                       const spec::ParallelConfig& parallel, const spec::EngineConfig& engine,
                       int max_model_len, const ProposerMemory& proposer = {});
/// The same for a context request: with auto_fit, a KV cache too small for `context.tokens` plans the largest
/// context that fits instead of refusing (plan.max_model_len_auto, plan.max_model_len_wanted say so).
MemoryPlan plan_memory(const spec::ModelSpec& model, const spec::Quantization& quant, const spec::GpuSpec& gpu,
                       const spec::ParallelConfig& parallel, const spec::EngineConfig& engine,
                       ContextRequest context, const ProposerMemory& proposer = {});

/// "max_model_len 50,336 (auto: the model's 131,072 does not fit)", "max_model_len 8,192 (auto: the model's
/// limit)" or "max_model_len 4,096": how every output names the context a plan is for.
std::string describe_context(const MemoryPlan& plan);
/// The same from a run's summary fields (metrics::Summary::max_model_len, max_model_len_note).
std::string describe_context(int max_model_len, const std::string& note);
/// The parenthesis of describe_context without the parentheses ("" when the user set the number). Under a vLLM
/// release without `--max-model-len auto` (plan.auto_context_refused_by) it adds that the release would refuse it and
/// the number to pass: "auto: the model's limit; vLLM 0.8.4 has no --max-model-len auto (from 0.14.0) and would
/// refuse it: pass --max-model-len 8192".
std::string context_note(const MemoryPlan& plan);
/// What kv_capacity_tokens counts, where it differs from the tokens the pool holds ("" where they are one number):
/// with sliding-window layers it counts tokens at every layer's cost (vLLM's "GPU KV cache size"), while those
/// layers keep only their last kv_sliding_window tokens, so a longer sequence takes less and the pool holds more
/// tokens than it says (Gemma-4 E4B on an L4: 82,752 tokens, yet 2 sequences of 131,072). `memory` prints it beside
/// the capacity and to_json carries it (kv_capacity_note), so the two numbers never read as one quantity.
std::string kv_capacity_note(const MemoryPlan& plan);

/// Fits an auto context (vLLM's --max-model-len auto) of a resolved scenario, its fleet members and disaggregated
/// pools: max_model_len becomes the largest that fits (unchanged when the wanted one fits, when set by the user,
/// or when nothing fits: the plan then says why); a fleet's or disaggregated deployment's own context is the smallest
/// of its members' and pools' (requests are cut once, before routing). What the simulator runs; idempotent.
void fit_context(spec::ResolvedScenario& scenario);
/// context_note for a scenario after fit_context (a fleet's or disaggregated deployment's: the context its
/// requests are cut to): "" when set by the user, else whether the model's limit fit.
std::string context_note(const spec::ResolvedScenario& fitted);

/// The proposer's memory on each GPU of a tensor-parallel group of `tp` with the target's quantization `quant`:
/// zero for n-gram.
ProposerMemory proposer_memory(const spec::ResolvedSpeculation& speculation, const spec::Quantization& quant, int tp);
/// The same for a resolved scenario; zero without speculative decoding.
ProposerMemory proposer_memory(const spec::ResolvedScenario& scenario);
/// plan_memory for a resolved scenario's replica, with its proposer.
MemoryPlan plan_memory(const spec::ResolvedScenario& scenario);

/// Weight bytes of the whole model in this format (embeddings and LM head per the format's rules).
std::int64_t weight_bytes(const spec::ModelSpec& model, const spec::WeightFormat& format);
/// The weight bytes one forward pass reads from GPU memory, whole model in this format: every layer's linears and
/// norms and the LM head (a tied embedding table is read whole as the head), not the tables a pass gathers only its
/// tokens' rows from (an untied input embedding, Gemma-4 E2B/E4B's per-layer embeddings: vLLM's VocabParallelEmbedding
/// forward is an embedding lookup) nor the vision and audio towers, which a text request never runs. What MBU counts
/// per iteration; weight_bytes (resident) is what the memory holds. `routed_experts`: of those, a MoE model's routed
/// experts, which a pass reads only for the experts its tokens pick (perf::experts_touched); 0 for a dense model.
struct StreamedWeights {
  double bytes = 0;           ///< everything a pass streams, all routed experts included
  double routed_experts = 0;  ///< the routed experts' part of `bytes`
};
StreamedWeights streamed_weight_bytes(const spec::ModelSpec& model, const spec::WeightFormat& format);

/// What the plan's KV units stand for on the scenario's server, where they are llmsim's and not the server's: under
/// SGLang, kv_capacity_blocks counts llmsim's blocks of engine.block_size while SGLang's token pool allocates by
/// --page-size (1 token by default, server_args.py), and a 16-bit KV cache is --kv-cache-dtype auto (the model's
/// dtype); "" under vLLM, whose block and dtype the plan's are. JSON "kv_unit_note", printed by `llmsim memory`.
std::string kv_unit_note(const spec::ResolvedScenario& scenario);

/// JSON with the contract fields of `llmsim memory --json`.
Json to_json(const MemoryPlan& plan);
/// The `llmsim memory --json` / Python llmsim.memory() document of a resolved scenario's `plan` (plan_memory):
/// to_json(plan) with what was planned — model, gpu, num_gpus, tp, pp, quant, kv_dtype, gpu_memory_utilization and
/// the notes of resolving (the checkpoint's quantization_config, MTP layers, ...). One writer for both faces.
Json to_json(const spec::ResolvedScenario& scenario, const MemoryPlan& plan);

}  // namespace llmsim::memory
