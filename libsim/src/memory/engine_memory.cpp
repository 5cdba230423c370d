// vLLM's memory accounting, term by term; sources in docs/cost-model.md ("Memory plan").
#include "engine_memory.hpp"

#include <algorithm>
#include <cstdint>

#include "llmsim/spec/runtime_version.hpp"

namespace llmsim::memory::detail {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

// CUDA context and lazily loaded kernel images before vLLM's snapshot: vLLM 0.11 startup lines "Free memory on
// device (39.0/39.49 GiB)", "(78.66/79.19 GiB)", "(23.08/23.53 GiB)", "(43.9/44.39 GiB)" show 0.45-0.53 GiB in use
// on single-GPU starts.
constexpr double kCudaContextBytes = 0.5 * kGiB;
// At start: NCCL communicators (lazy connection, NCCL >= 2.22) and vLLM's custom all-reduce buffers: meta + 8 MiB
// buffer + 8 MiB rank data + an 8 MiB registered buffer (custom_all_reduce.py). A TP start on an H200 shows 0.60
// GiB in use against 0.53 GiB single-GPU [D]: ~0.07 GiB.
constexpr double kCommInitBytes = 72 * kMiB;
// NCCL's buffers for the profiling run's all-reduce of max_num_batched_tokens × hidden (larger than the custom
// all-reduce's 8 MiB, so NCCL runs and connects its rings): NCCL_BUFFSIZE 4 MiB per protocol buffer; with the
// Simple and LL128 protocols, send and receive side, ≈ 16 MiB per channel and ring neighbour [D]; NCCL opens
// ~32 channels over NVLink/NVSwitch and ~4 over PCIe or shared memory [D]. 32 channels × 2 neighbours × 16 MiB =
// 1 GiB, as the non-torch memory vLLM 0.11 logs for TP runs: 1.38 GiB (H200), 0.95 GiB (B200 TP4); single-GPU
// runs log 0.02-0.07 GiB.
constexpr double kNcclBytesPerChannelPeer = 16 * kMiB;
constexpr double kSingleGpuNonTorch = 0.05 * kGiB;
// CUDA graphs: vLLM warns they take "1~3 GiB" per GPU (serving-engines.md 1.6). The graph pool holds the
// captured batches' intermediate tensors and every graph's kernel nodes, i.e. it grows with the layers captured:
// vLLM 0.11 logs "Graph capturing finished ... took" 0.67-0.68 GiB for 28-32-layer 7-8 B models on one GPU and
// 2.37 GiB for a ~90-layer model under TP on an H200: 0.25 GiB plus 13 MiB per layer on the GPU [D].
constexpr double kGraphBaseBytes = 0.25 * kGiB;
constexpr double kGraphBytesPerLayer = 13 * kMiB;

// vLLM V0's worker takes its memory snapshot before the communicators; SGLang has its own accounting (below); the
// other runtimes are sized as vLLM V1's worker sizes them (docs/cost-model.md "Memory plan").
bool is_v0(const spec::EngineConfig& e) {
  const auto r = e.resolved_runtime();
  return r == spec::Runtime::vllm_v0 || r == spec::Runtime::vllm_v0_sync || r == spec::Runtime::vllm_v0_paged;
}
}  // namespace

double mla_absorbed_weight_bytes(const spec::ModelSpec& m, const spec::ParallelConfig& par,
                                 const spec::EngineConfig& engine, const spec::WeightFormat& f) {
  if (!m.is_mla() || !spec::mla_absorbed_weights(engine.runtime_release)) return 0;
  // MLACommonImpl.process_weights_after_loading (attention/backends/mla/utils.py of the 0.7.x trees): an FP8
  // checkpoint's W_Q_UK and W_UV_O are requantised with its own group shape (scaled_quantize; the block scales, 1 fp32
  // per 128 x 128, are left out: 0.02 %); anything else is kept in the activation dtype.
  const bool fp8 = f.compute_dtype == spec::DType::fp8 && f.bits_per_weight <= 8 && !f.experts_only && !f.attention_16bit;
  const double absorbed = fp8 ? 1.0 : 2.0;
  const double heads = static_cast<double>(m.num_heads) / par.tp, lora = m.kv_lora_rank, h = m.hidden_size;
  const double lq = m.q_lora_rank > 0 ? static_cast<double>(m.q_lora_rank) : h;
  const double per_layer = (lq * heads * lora + heads * lora * h) * absorbed +
                           (lq * heads * m.qk_rope_head_dim + lora * heads * (m.qk_nope_head_dim + m.v_head_dim)) * 2;
  return per_layer * spec::largest_pp_stage(m.num_layers, par);
}

EngineMemory engine_memory(const spec::ModelSpec& m, const spec::GpuSpec& gpu, const spec::ParallelConfig& par,
                           const spec::EngineConfig& engine, const spec::WeightFormat& weights) {
  EngineMemory r;
  r.v0 = is_v0(engine);
  r.mla_absorbed_weights = mla_absorbed_weight_bytes(m, par, engine, weights);
  // V0's CacheEngine._align_cache: use_mla on CUDA (every llmsim card) with VLLM_CUDA_MEM_ALIGN_KV_CACHE on.
  r.mla_kv_entries_aligned = r.v0 && m.is_mla() && spec::mla_kv_entries_aligned(engine.runtime_release);
  // Profiling run (gpu_model_runner.profile_run / V0 model_runner.profile_run): one forward over
  // max_num_batched_tokens tokens spread over min(max_num_seqs, tokens) requests, then the sampler over those
  // requests' last hidden states. Freed tensors return to PyTorch's cache, so the peak is the larger of the two
  // phases' live tensors.
  const double t = static_cast<double>(engine.max_num_batched_tokens), h = m.hidden_size, hd = m.head_dim;
  const double rows = std::min<double>(engine.max_num_seqs, t);
  const double heads = static_cast<double>(m.num_heads) / par.tp;
  const double residual = 2 * t * h * 2;  // hidden states and residual, bf16
  double attn = 0;
  if (m.is_mla()) {
    // MLA prefill (vLLM's compute-friendly path, attention/backends/mla/utils.py of the 0.7.x V0 tree, MLACommonImpl
    // forward / _forward_prefill; issue 27), the tensors alive when o_proj runs: q_a_proj's output and the normed
    // q_c (2 × q_lora_rank), kv_a's latent + rope (kv_lora_rank + qk_rope) and the normed latent (kv_lora_rank),
    // the layer's output buffer allocated before the prefill (hidden), q of nope+rope per head, kv_b's up-projected
    // K/V per head (nope + v), K with k_pe broadcast per head and V zero-padded to the q/k head width (nope+rope
    // each), the attention output sliced to v_head_dim and copied contiguous, and o_proj's output (hidden). The
    // flash-attention output itself (nope+rope per head) is freed by then and smaller than o_proj's output.
    const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    attn = t * 2 *
           (2.0 * m.q_lora_rank + (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank + h + heads * qk +
            heads * (m.qk_nope_head_dim + m.v_head_dim) + 2 * heads * qk + heads * m.v_head_dim + h);
  } else {
    const double q = heads * hd;
    const double kv = static_cast<double>(std::max(1, m.num_kv_heads / par.tp)) * hd;
    attn = t * (q + 2 * kv) * 2 + t * q * 2;  // qkv and attention output
  }
  // The widest dense MLP of the model (gate_up and the activation's output). Gemma-4 E2B's double-wide layers
  // (use_double_wide_mlp) run 2 × intermediate_size.
  const double dense_inter = m.is_moe() && m.dense_layers == 0
                                 ? 0.0
                                 : static_cast<double>(m.intermediate_size) * (m.double_wide_mlp_layers > 0 ? 2 : 1) / par.tp;
  double mlp = t * 2 * dense_inter * 2 + t * dense_inter * 2;
  if (m.is_moe()) {
    // A MoE layer (vLLM's fused_moe.fused_experts_impl, issue 27): the shared experts' output is computed first and
    // held (DeepseekV2MoE, Qwen2-MoE); the router's logits (bf16) and fp32 scores; then fused_experts walks the
    // tokens in chunks of VLLM_FUSED_MOE_CHUNK_SIZE (32,768 in the 0.7.x envs.py) with one intermediate_cache13 of
    // M × top_k × max(2 × I/tp, hidden) bf16 elements (cache1 and cache3 are views of it) and cache2 of
    // M × top_k × I/tp. Its output is written in place; the routed scaling and the shared experts' sum then
    // allocate two more token × hidden tensors while the input and residual are still held.
    const double shared = m.shared_expert_intermediate_size > 0 ? 1.0 : 0.0;
    const double chunk = std::min(t, static_cast<double>(kFusedMoeChunkTokens));
    const double ie = static_cast<double>(m.expert_intermediate_size()) / par.tp;
    const double caches = chunk * m.experts_per_token * (std::max(2 * ie, h) + ie) * 2;
    const double shared_mlp = t * 3 * (m.shared_expert_intermediate_size / par.tp) * 2;  // its gate_up + activation
    const double router = t * m.num_experts * (2 + 4);
    const double in_experts = t * h * 2 * shared + router + caches;
    const double after = t * h * 2 * (1 + 2 * shared);
    mlp = std::max({mlp, shared_mlp, in_experts, after});
  }
  const double forward = residual + std::max(attn, mlp);
  // Sampler: bf16 logits gathered to the full vocabulary, their fp32 copy, fp32 probabilities and the fp32
  // exponential draw of random sampling = 14 bytes per (row, token); V0's dummy run asks for top-k/top-p, whose
  // sort adds fp32 values and int64 indices (26 bytes). Hidden states of the forward are still held.
  const double per_logit = r.v0 ? 26.0 : 14.0;
  const double sampler = t * h * 2 + rows * h * 2 + rows * static_cast<double>(m.vocab_size) * per_logit;
  r.activation = std::max(forward, sampler);
  // SGLang runs no profiling pass: model_runner.py sizes the KV pool as the memory free after loading the weights
  // minus total × (1 − mem_fraction_static), so what was in use at start (context, communicators) comes out of the
  // fraction and activations and graphs must fit the rest (gpu_memory_utilization plays mem_fraction_static).
  r.sglang = engine.resolved_runtime() == spec::Runtime::sglang;
  if (r.sglang) r.activation = 0;
  // Which layers keep only their window. vLLM V1's hybrid KV-cache manager windows every sliding layer; V0 allocates
  // every layer in full. SGLang's pool (mem_cache/memory_pool.py) is one MHA pool of every layer for every token
  // unless model_config.is_hybrid_swa_model names the architecture — in 0.5.x Llama-4 and gpt-oss only (Gemma-2/3,
  // Mistral's window: the attention kernel masks, the pool keeps all) — and server_args._handle_model_specific_
  // adjustments sets disable_hybrid_swa_memory = True for GptOssForCausalLM from its day-0 support through at least
  // commit 2fb32810 of 2026-01 (sglang#17630 reproduces its bug by deleting that line), so a gpt-oss token holds KV
  // in all 36 (24) layers: twice the bytes vLLM V1 keeps at ShareGPT lengths. Llama-4's chunked layers keep the
  // window plan (SGLang's SWA pool, sized by swa_full_tokens_ratio, is not modelled apart).
  r.windowed_kv = !r.v0 && (!r.sglang || m.model_type.rfind("llama4", 0) == 0);
  r.kv_group_ratio = spec::hybrid_kv_group_ratio(engine.runtime_release);
  r.kv_groups_whole_model = spec::kv_groups_whole_model(engine.runtime_release);

  const bool multi = par.tp > 1 || par.pp > 1;
  const bool nvlink = gpu.nvlink_bandwidth > 0;
  r.non_torch = multi ? (nvlink ? 32.0 : 4.0) * 2.0 * kNcclBytesPerChannelPeer : kSingleGpuNonTorch;
  r.comm_init = multi ? kCommInitBytes : 0.0;
  r.context = kCudaContextBytes;
  if (engine.cuda_graphs) r.cuda_graphs = kGraphBaseBytes + kGraphBytesPerLayer * spec::largest_pp_stage(m.num_layers, par);
  return r;
}

}  // namespace llmsim::memory::detail
