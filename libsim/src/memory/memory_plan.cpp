#include "llmsim/memory/memory_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine_memory.hpp"
#include "linear_state.hpp"
#include "sglang_mamba_pool.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/memory/expert_layout.hpp"
#include "llmsim/memory/kv_layout.hpp"
#include "llmsim/memory/lora_memory.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::memory {

namespace {
using i64 = std::int64_t;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;
constexpr double kStateBytes = 2.0;  // linear-attention state in the model dtype (vLLM's mamba_cache_dtype "auto");
                                      // a recurrent state the config puts in FP32 (Qwen3.5) is ModelSpec's to say

// Bytes of one decoder layer's mixer (attention, MLA or linear attention) on one GPU: tp-sharded linears in the
// format (16-bit when the format quantizes routed experts only or keeps attention 16-bit), norms and biases 16-bit.
double mixer_bytes(const spec::ModelSpec& m, const spec::WeightFormat& f, int tp, bool linear_attention) {
  const double h = m.hidden_size, bpw = (f.experts_only || f.attention_16bit ? 16 : f.bits_per_weight) / 8;
  double linear = 0, sixteen_bit = static_cast<double>(m.norm_params_per_layer());
  if (linear_attention) {
    // Qwen3NextGatedDeltaNet: in_proj_qkvz, in_proj_ba and out_proj sharded by heads; conv1d, dt_bias and A_log by
    // heads too (16-bit), the gated norm replicated.
    // Mamba-2 (MambaMixer2): in_proj and out_proj sharded by heads (groups with them), conv1d (+ bias), A, D and
    // dt_bias by heads (16-bit), the gated norm sharded (heads × head_dim / tp).
    const double key = static_cast<double>(m.linear_num_key_heads) * m.linear_key_head_dim;
    const double value = static_cast<double>(m.linear_num_value_heads) * m.linear_value_head_dim;
    linear = (h * static_cast<double>(m.linear_in_proj_width()) + value * h) / tp;
    const double conv = 2 * key + value;
    sixteen_bit += m.linear_mamba2
                       ? (conv * (m.linear_conv_kernel_dim + (m.linear_conv_bias ? 1 : 0)) +
                          3.0 * m.linear_num_value_heads + value) / tp
                       : (conv * m.linear_conv_kernel_dim + 2.0 * m.linear_num_value_heads) / tp +
                             m.linear_value_head_dim;
  } else if (m.is_mla()) {
    // DeepseekV2MLAAttention: fused_qkv_a_proj / kv_a_proj_with_mqa are replicated on every rank (disable_tp); q_b (or
    // q_proj), kv_b and o are sharded by heads. V3.2's indexer (wq_b, wk, weights_proj) is replicated.
    const double heads = static_cast<double>(m.num_heads) / tp, qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    const double replicated = h * (m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim);
    const double q = m.q_lora_rank > 0 ? static_cast<double>(m.q_lora_rank) * heads * qk : h * heads * qk;
    linear = replicated + q + m.kv_lora_rank * heads * (m.qk_nope_head_dim + m.v_head_dim) + heads * m.v_head_dim * h;
    sixteen_bit += m.q_lora_rank + m.kv_lora_rank;  // q_a_layernorm, kv_a_layernorm
    if (m.index_head_dim > 0) {
      linear += static_cast<double>(m.q_lora_rank) * m.index_n_heads * m.index_head_dim + h * m.index_head_dim +
                h * m.index_n_heads;
      sixteen_bit += 2.0 * m.index_head_dim;  // the indexer's k_norm
    }
  } else {
    const double hd = m.head_dim;
    const double q = static_cast<double>(m.num_heads) * hd / tp;
    const double kv = static_cast<double>(std::max(1, m.num_kv_heads / tp)) * hd;  // replicated when tp > kv heads
    linear = h * q * (m.attention_output_gate ? 2 : 1) + 2 * h * kv + q * h;
    if (m.attention_bias) sixteen_bit += q + 2 * kv;
    if (m.qk_norm) sixteen_bit += 2 * hd;
  }
  return linear * bpw + sixteen_bit * 2;
}

// What one of Gemma-4's full-attention layers holds beyond mixer_bytes (its global_head_dim and KV heads). vLLM's
// fused qkv_proj keeps a V slot even for attention_k_eq_v layers and loads k_proj's weights into it (gemma4.py,
// Gemma4Attention), so the memory counts V as the checkpoint's K again.
double full_layer_extra_bytes(const spec::ModelSpec& m, const spec::WeightFormat& f, int tp) {
  if (!m.has_full_layer_shape() || m.is_mla()) return 0;
  const double h = m.hidden_size, bpw = (f.experts_only || f.attention_16bit ? 16 : f.bits_per_weight) / 8;
  const double hd = m.full_layer_head_dim();
  const double q = static_cast<double>(m.num_heads) * hd / tp;
  const double kv = static_cast<double>(std::max(1, m.full_layer_kv_heads() / tp)) * hd;
  const double full = (h * q + 2 * h * kv + q * h) * bpw + (m.qk_norm ? 2 * hd : 0.0) * 2 +
                      static_cast<double>(m.norm_params_per_layer()) * 2;
  return full - mixer_bytes(m, f, tp, false);
}

// Bytes of one layer's MLP on one GPU: a MoE layer's routed experts in the format, its shared experts and a dense
// layer's MLP in the format unless it quantizes routed experts only; router and biases 16-bit. An MXFP4
// checkpoint's routed experts are held as `mxfp4` (the kernel vLLM picks) pads them: Mxfp4MoEMethod.create_weights
// allocates w13/w2 (and their block scales) at the padded shape, and the Marlin repack keeps it (expert_layout.hpp).
double mlp_bytes(const spec::ModelSpec& m, const spec::WeightFormat& f, int tp, bool moe,
                 Mxfp4MoeKernel mxfp4 = Mxfp4MoeKernel::none) {
  const double h = m.hidden_size, bpw = f.bits_per_weight / 8, dense_bpw = (f.experts_only ? 16 : f.bits_per_weight) / 8;
  const double mats = m.mlp_matrices;  // gate, up, down; Nemotron-H's relu² MLPs and experts: up, down
  if (!moe) return mats * h * (static_cast<double>(m.intermediate_size) / tp) * dense_bpw;
  ExpertLayout expert = expert_layout(h, static_cast<double>(m.expert_intermediate_size()) / tp, mxfp4);
  expert.matrices = mats;
  const double routed = static_cast<double>(m.num_experts) * expert.params();
  const double shared = static_cast<double>(m.shared_expert_intermediate_size) * mats * h / tp;
  // The router stays 16-bit (quantization.md §2), as do expert biases (sharded with their experts).
  const double sixteen_bit = h * m.num_experts + (m.shared_expert_gate ? h : 0) + static_cast<double>(m.moe_bias_params) / tp;
  return routed * bpw + shared * dense_bpw + sixteen_bit * 2;
}

double embed_bytes(const spec::ModelSpec& m, const spec::WeightFormat& f, int tp) {
  const bool quantized = f.quantize_embeddings && !f.experts_only;
  const double bits = quantized ? f.bits_per_weight : 16;
  // vocab-parallel under TP; a multimodal checkpoint's vision tower (16-bit, tp-sharded like the decoder's linears in
  // vLLM's SigLIP) sits on the first stage with the embedding.
  // Gemma-4 E2B/E4B: the per-layer embedding table is a VocabParallelEmbedding too (same bits, vocab-parallel), and
  // the audio tower sits beside the vision tower.
  return (static_cast<double>(m.embedding_params() + m.per_layer_embedding_params()) * bits / 8 +
          static_cast<double>(m.vision_params + m.audio_params) * 2) /
         tp;
}

// Gemma-4 E2B/E4B per layer on one GPU: the PLE gate and projection (ReplicatedLinear: whole on every rank), the
// layer's share of per_layer_model_projection (ColumnParallelLinear: sharded), the norm; in the dense MLP's format.
double per_layer_input_bytes(const spec::ModelSpec& m, const spec::WeightFormat& f, int tp) {
  if (m.per_layer_input_size <= 0) return 0;
  const double h = m.hidden_size, ple = m.per_layer_input_size, bpw = (f.experts_only ? 16 : f.bits_per_weight) / 8;
  return (2 * h * ple + h * ple / tp) * bpw + (h + ple / m.num_layers) * 2;
}

double head_bytes(const spec::ModelSpec& m, const spec::WeightFormat& f, int tp) {
  return static_cast<double>(m.lm_head_params()) * f.lm_head_bits / 8 / tp + 2.0 * m.hidden_size;  // + final norm
}

// The layers [begin, begin + stage) of one pipeline stage.
double stage_layer_bytes(const spec::ModelSpec& m, const spec::WeightFormat& f, const spec::ParallelConfig& par,
                         int begin, int stage, Mxfp4MoeKernel mxfp4) {
  // The most loaded stage holds as many MoE layers as there are (DeepSeek's dense layers are the first three), and
  // its share of the linear-attention layers (spread through the model: Qwen3-Next's 3 of 4).
  // Nemotron-H's single-block layers are spread through the model too: its MLP-only layers hold no mixer (their norm
  // is counted with the MLP) and its mixer-only layers no MLP.
  const int moe = std::min(stage, m.moe_layers());
  const double linear_share = static_cast<double>(m.linear_attention_layers) * stage / m.num_layers;
  const double mixer_free = static_cast<double>(m.mixer_free_layers) * stage / m.num_layers;
  const double mlp_free = static_cast<double>(m.mlp_free_layers) * stage / m.num_layers;
  const double mixers = linear_share * mixer_bytes(m, f, par.tp, true) +
                        (stage - linear_share - mixer_free) * mixer_bytes(m, f, par.tp, false) +
                        mixer_free * static_cast<double>(m.norm_params_per_layer()) * 2;
  // Gemma-4's full layers (1 in 6) are spread through the model as the sliding ones are.
  const double full_share =
      m.has_full_layer_shape() ? static_cast<double>(m.full_attention_layers()) * stage / m.num_layers : 0;
  // Gemma-4 E2B's double-wide MLPs are its last (KV-shared) layers: the stage holds those of its range.
  const int wide = std::max(0, std::min(begin + stage, m.num_layers) -
                                   std::max(begin, m.num_layers - m.double_wide_mlp_layers));
  return mixers + full_share * full_layer_extra_bytes(m, f, par.tp) + moe * mlp_bytes(m, f, par.tp, true, mxfp4) +
         (std::max(0.0, stage - moe - mlp_free) + wide) * mlp_bytes(m, f, par.tp, false) +
         stage * per_layer_input_bytes(m, f, par.tp);
}

// The kernel whose padded shape an MXFP4 checkpoint's routed experts are held in on `gpu` under the release's
// kernels (memory/expert_layout); none for other formats, and for a card the format cannot run on at all (the cost
// model refuses that scenario by name; the memory plan alone still answers with the checkpoint's shape). SGLang picks
// its own backend: server_args sets moe_runner_backend "triton_kernel" for GPT-OSS off Blackwell (ep_size 1,
// triton_kernels importable: its images ship it), FlashInfer's MXFP4 MoE on Blackwell; its Mxfp4MoEMethod pads as
// vLLM's does for those kernels (width to 64; both to 256), so the same layouts apply.
Mxfp4MoeKernel held_mxfp4_kernel(const spec::ModelSpec& model, const spec::Quantization& quant,
                                 const spec::GpuSpec& gpu, const spec::EngineConfig& engine) {
  if (!model.is_moe() || quant.weights.id.rfind("mxfp4", 0) != 0) return Mxfp4MoeKernel::none;
  const spec::DType fallback = quant.weights.fallback_compute_dtype;
  if (!(gpu.tensor_peak(quant.weights.compute_dtype) > 0) && !(gpu.tensor_peak(fallback) > 0))
    return Mxfp4MoeKernel::none;
  const Mxfp4MoeKernel vllm =
      mxfp4_moe_kernel(spec::format_for_gpu(quant.weights, gpu, "quant.weights"), quant.kernels, gpu);
  if (engine.resolved_runtime() == spec::Runtime::sglang && vllm != Mxfp4MoeKernel::flashinfer)
    return Mxfp4MoeKernel::triton;
  return vllm;
}

double gpu_weight_bytes(const spec::ModelSpec& m, const spec::WeightFormat& f, const spec::ParallelConfig& par,
                        Mxfp4MoeKernel mxfp4 = Mxfp4MoeKernel::none) {
  const double e = embed_bytes(m, f, par.tp), hd = head_bytes(m, f, par.tp);
  if (par.pp <= 1) return stage_layer_bytes(m, f, par, 0, m.num_layers, mxfp4) + e + hd;
  // With pp > 1 the first stage holds the embeddings and the last the LM head; vLLM's split (spec::pp_stage_layers)
  // may give some stages one layer more: report the heaviest stage (with even stages, the heavier end).
  const auto stages = spec::pp_stage_layers(m.num_layers, par);
  double heaviest = 0;
  int begin = 0;
  for (std::size_t k = 0; k < stages.size(); begin += stages[k++])
    heaviest = std::max(heaviest, stage_layer_bytes(m, f, par, begin, stages[k], mxfp4) + (k == 0 ? e : 0.0) +
                                      (k + 1 == stages.size() ? hd : 0.0));
  return heaviest;
}

std::string gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
  return buf;
}

void check_inputs(const spec::ModelSpec& model, const spec::GpuSpec& gpu, const spec::ParallelConfig& par,
                  const spec::EngineConfig& engine, int max_model_len) {
  model.validate("model");
  gpu.validate("gpu");
  engine.validate("engine");
  Problems p;
  if (par.tp < 1) p.add("hardware.tp", "must be >= 1, got " + std::to_string(par.tp));
  if (par.pp < 1) p.add("hardware.pp", "must be >= 1, got " + std::to_string(par.pp));
  p.throw_if_any();
  model.check_tensor_parallel(par.tp, p, "hardware.tp");
  // An uneven split is vLLM's (spec::pp_stage_layers); the plan sizes its largest stage (gpu_weight_bytes, kv_layout).
  if (max_model_len < 0) {
    p.add("engine.max_model_len", "must be >= 0 (0 = the model's limit), got " + std::to_string(max_model_len));
  }
  p.throw_if_any();
}

}  // namespace

// (The activation peak and runtime terms follow vLLM's worker: engine_memory.cpp.)

std::int64_t weight_bytes(const spec::ModelSpec& model, const spec::WeightFormat& format) {
  return static_cast<i64>(std::llround(gpu_weight_bytes(model, format, spec::ParallelConfig{})));
}

StreamedWeights streamed_weight_bytes(const spec::ModelSpec& model, const spec::WeightFormat& format) {
  const spec::ParallelConfig one{};
  // embed_bytes holds the gathered tables and the towers; a tied table is the LM head's operand, read in full.
  const double gathered = embed_bytes(model, format, 1) -
                          (model.tie_word_embeddings
                               ? static_cast<double>(model.embedding_params()) *
                                     (format.quantize_embeddings && !format.experts_only ? format.bits_per_weight : 16) / 8
                               : 0.0);
  StreamedWeights w;
  w.bytes = gpu_weight_bytes(model, format, one) - gathered;
  // mlp_bytes' routed term: every routed expert of every MoE layer, in the format, with the model's matrices per
  // expert (2 for Nemotron-H's relu² experts: counted as 3, they exceeded the whole model's bytes and MBU read -73 %).
  if (model.is_moe())
    w.routed_experts = static_cast<double>(model.moe_layers()) * model.num_experts * model.expert_intermediate_size() *
                       static_cast<double>(model.mlp_matrices) * model.hidden_size * format.bits_per_weight / 8;
  return w;
}

MemoryPlan plan_memory(const spec::ModelSpec& model, const spec::Quantization& quant, const spec::GpuSpec& gpu,
                       const spec::ParallelConfig& parallel, const spec::EngineConfig& engine, int max_model_len,
                       const ProposerMemory& proposer) {
  return plan_memory(model, quant, gpu, parallel, engine, ContextRequest{max_model_len, false}, proposer);
}

MemoryPlan plan_memory(const spec::ModelSpec& model, const spec::Quantization& quant, const spec::GpuSpec& gpu,
                       const spec::ParallelConfig& parallel, const spec::EngineConfig& engine, ContextRequest context,
                       const ProposerMemory& proposer) {
  const int max_model_len = context.tokens;
  check_inputs(model, gpu, parallel, engine, max_model_len);
  MemoryPlan plan;
  plan.params = model.param_count();
  plan.max_model_len = max_model_len > 0 ? max_model_len : model.max_position_embeddings;
  plan.max_model_len_auto = context.auto_fit;
  plan.max_model_len_wanted = context.auto_fit ? plan.max_model_len : 0;
  // "auto" (-1) named under a vLLM release that has none: planned all the same, the note says what to pass instead.
  if (context.auto_fit && engine.max_model_len == spec::kMaxModelLenAuto)
    plan.auto_context_refused_by = spec::vllm_release_without_auto_context(engine.runtime_release).value_or("");
  plan.kv_bytes_per_token = model.kv_bytes_per_token(quant.kv_bytes_per_element());

  // vLLM's worker (V1 gpu_worker.determine_available_memory; V0 worker.determine_num_available_blocks): KV bytes =
  // total × gpu_memory_utilization − (weights + activation peak of the profiling run + memory allocated outside
  // PyTorch meanwhile); CUDA context, communicators (V1) and CUDA graphs live in the remaining headroom.
  const double total = static_cast<double>(gpu.usable_memory_bytes());  // inline ECC's check bits are not exposed
  const double budget = std::floor(total * engine.gpu_memory_utilization);
  const double shard = gpu_weight_bytes(model, quant.weights, parallel, held_mxfp4_kernel(model, quant, gpu, engine));
  const double offloaded = std::min(shard, engine.cpu_offload_gb * kGiB);
  // vLLM's LoRA slots are allocated with the model, before the profiling run: charged as the weights are.
  const double lora = lora_bytes_per_gpu(model, parallel, engine);
  const i64 tokens = engine.max_num_batched_tokens;
  const bool multi_gpu = parallel.tp > 1 || parallel.pp > 1;
  const detail::EngineMemory em = detail::engine_memory(model, gpu, parallel, engine, quant.weights);
  // MLA's absorbed decode weights (vLLM 0.7.1-0.7.x) sit beside the raw ones in "model weights take".
  const double weights = shard - offloaded + proposer.weight_bytes_per_gpu + lora + em.mla_absorbed_weights;
  // vLLM V1's hybrid KV-cache manager gives sliding layers only their window; V0 and SGLang (but for Llama-4)
  // allocate every layer in full (detail::engine_memory's windowed_kv).
  const KvLayout layout = kv_layout(model, parallel, quant.kv_bytes_per_element(), em.windowed_kv, em.kv_group_ratio,
                                    em.kv_groups_whole_model, em.mla_kv_entries_aligned);
  // The proposer's KV sits in the same blocks (one block table per request): each block costs its bytes too.
  const double target_kv_token = layout.bytes_per_token_all_groups();
  const double kv_share = target_kv_token / (target_kv_token + proposer.kv_bytes_per_token_per_gpu);
  plan.kv_bytes_per_token_per_gpu = target_kv_token + proposer.kv_bytes_per_token_per_gpu;
  plan.proposer_kv_bytes_per_token_per_gpu = proposer.kv_bytes_per_token_per_gpu;
  plan.kv_sliding_window = layout.sliding_groups > 0 ? layout.window : 0;
  plan.kv_cache_groups = layout.groups();
  if (layout.window > 0 && layout.full_block_scale == 1 && layout.sliding_block_scale == 1)
    plan.kv_sliding_groups = layout.sliding_groups;
  const double act = em.activation;
  const double comm = em.non_torch * (multi_gpu ? 1.0 : 0.0) + em.comm_init;
  const double in_budget_runtime = em.in_budget() - act;
  const double headroom_runtime = em.in_headroom();
  const double runtime = in_budget_runtime + headroom_runtime;
  const double headroom = total - budget;
  // What the context and graphs do not find in the headroom comes out of the KV pool.
  const double deficit = std::max(0.0, headroom_runtime - headroom);
  const double pool = budget - weights - act - in_budget_runtime - deficit;
  // Linear-attention layers (Qwen3-Next's, Qwen3.5's gated DeltaNet) keep a fixed state per running sequence, not
  // per token (in the model dtype, Qwen3.5's recurrent part in FP32: ModelSpec::linear_state_bytes_per_layer;
  // sharded by heads over tp; a stage holds its own linear layers, the one with most sizes the plan:
  // detail::largest_stage_linear_layers). vLLM V1 holds it as blocks of the one KV pool, taken when a
  // request is scheduled (linear_state.hpp): nothing is reserved, the pool bounds how many run. V0 (MambaCacheManager)
  // and SGLang (its Mamba pool) allocate max_num_seqs states up front: reserved here before the KV blocks.
  const double state_per_seq = model.linear_state_bytes_per_layer(kStateBytes) *
                               detail::largest_stage_linear_layers(model, parallel) / parallel.tp;
  const bool state_in_pool = state_per_seq > 0 && !em.v0 && !em.sglang;
  const detail::LinearStatePages pages =
      state_in_pool ? detail::linear_state_pages(model, parallel, model.linear_state_bytes_per_layer(kStateBytes) / parallel.tp,
                                                 layout.bytes_per_token_layer, em.kv_group_ratio,
                                                 em.kv_groups_whole_model)
                    : detail::LinearStatePages{};
  // SGLang: its Mamba pool, by the radix cache's memory ratio or by max_running_requests (sglang_mamba_pool.hpp).
  const detail::SglangMambaPool mamba = em.sglang ? detail::sglang_mamba_pool(model, parallel, engine, pool) : detail::SglangMambaPool{};
  const double state = state_in_pool ? 0.0 : em.sglang ? mamba.bytes : state_per_seq * engine.max_num_seqs;
  plan.linear_state_bytes_per_seq_per_gpu = state_in_pool ? pages.bytes_per_seq() : em.sglang ? mamba.bytes_per_slot : state_per_seq;
  detail::record_sglang_mamba_pool(plan, mamba, engine);
  const double kv_pool = pool - state;

  auto& pg = plan.per_gpu;
  pg.total_bytes = gpu.usable_memory_bytes();
  pg.weights_bytes = static_cast<i64>(std::llround(shard - offloaded));
  pg.offloaded_weights_bytes = static_cast<i64>(std::llround(offloaded));
  pg.activation_bytes = static_cast<i64>(std::llround(act));
  pg.runtime_bytes = static_cast<i64>(std::llround(runtime));
  pg.comm_buffer_bytes = static_cast<i64>(std::llround(comm));
  pg.cuda_context_bytes = static_cast<i64>(std::llround(em.context));
  pg.cuda_graph_bytes = static_cast<i64>(std::llround(em.cuda_graphs));
  pg.non_torch_bytes = static_cast<i64>(std::llround(em.non_torch));
  pg.requested_bytes = static_cast<i64>(std::llround(budget));
  pg.free_bytes = static_cast<i64>(std::llround(std::max(0.0, headroom - headroom_runtime)));
  pg.proposer_weights_bytes = static_cast<i64>(std::llround(proposer.weight_bytes_per_gpu));
  pg.linear_state_bytes = static_cast<i64>(std::llround(state));
  pg.lora_bytes = static_cast<i64>(std::llround(lora));
  pg.mla_absorbed_weights_bytes = static_cast<i64>(std::llround(em.mla_absorbed_weights));
  plan.kv_mla_entries_aligned = em.mla_kv_entries_aligned;

  const std::string util = "gpu_memory_utilization " + format_value(engine.gpu_memory_utilization);
  const std::string of_gpu = " of the " + gb(total) + " " + gpu.id;
  const std::string per_gpu_note = multi_gpu ? " per GPU" : "";
  // vLLM (V1) refuses to start when total × util exceeds the free memory it finds after the CUDA context and the
  // communicators exist ("Free memory on device ... is less than desired GPU memory utilization").
  const double startup_free = total - em.context - (em.v0 ? 0.0 : em.comm_init);
  if (!em.v0 && budget > startup_free) {
    plan.reason = util + " asks for " + gb(budget) + of_gpu + " but only " + gb(startup_free) +
                  " is free after the CUDA context" + (multi_gpu ? " and communicators" : "") +
                  " (vLLM refuses to start); lower gpu_memory_utilization";
    return plan;
  }
  if (weights > budget) {
    plan.reason = "weights need " + gb(weights) + per_gpu_note +
                  (proposer.weight_bytes_per_gpu > 0 ? " (" + gb(proposer.weight_bytes_per_gpu) + " of them the speculative proposer's)" : "") +
                  (lora > 0 ? " (" + gb(lora) + " of them the LoRA slots: max_loras " + std::to_string(engine.max_loras) +
                                  " x rank " + std::to_string(engine.max_lora_rank) + ")"
                            : "") +
                  (offloaded > 0 ? " beside the offloaded " + gb(offloaded) : "") +
                  " but " + util + of_gpu + " allows " + gb(budget) + "; short by " + gb(weights - budget) +
                  " (engine.cpu_offload_gb can keep part in host memory, copied over PCIe every iteration)";
    return plan;
  }
  if (weights + act > budget) {
    plan.reason = "activations for max_num_batched_tokens " + std::to_string(tokens) + " need " + gb(act) +
                  " on top of " + gb(weights) + " of weights" + per_gpu_note + ", over the " + gb(budget) +
                  " that " + util + of_gpu + " allows; short by " + gb(weights + act - budget);
    return plan;
  }
  if (plan.reason = detail::sglang_mamba_pool_refusal(mamba, pool); !plan.reason.empty()) return plan;
  if (state > 0 && pool > 0 && kv_pool <= 0) {
    plan.reason = "the linear-attention state of max_num_seqs " + std::to_string(engine.max_num_seqs) +
                  " sequences needs " + gb(state) + per_gpu_note + " (" + gb(state_per_seq) + " each) but " +
                  gb(pool) + " is left after weights, activations and runtime; lower max_num_seqs";
    return plan;
  }
  if (kv_pool <= 0) {
    plan.reason = "runtime (CUDA context, CUDA graphs" + std::string(multi_gpu ? ", NCCL buffers" : "") +
                  ") needs " + gb(runtime) + " beside " + gb(weights) + " of weights and " + gb(act) +
                  " of activations" + per_gpu_note + "; nothing is left for the KV cache (short by " + gb(-kv_pool) + ")";
    return plan;
  }
  // The pool is cut into blocks of a page per layer of a group (kv_layout.hpp); V1's block pool keeps one null block
  // that no request can use (vllm/v1/core/block_pool.py). The engine's block is a page in every group, as vLLM's "GPU
  // KV cache size" counts (num_blocks // groups × block_size); under V1 a decoder past the window gives its sliding
  // groups' pages back (kv_sliding_groups; engine/kv_window.cpp).
  const i64 pool_blocks = std::max<i64>(
      0, static_cast<i64>(std::floor(kv_pool * kv_share / layout.pool_block_bytes(engine.block_size))) - (em.v0 ? 0 : 1));
  const i64 blocks = static_cast<i64>(std::floor(static_cast<double>(pool_blocks) / layout.groups_per_token()));
  const i64 tokens_cap = blocks * engine.block_size;
  // What one max_model_len sequence holds (vLLM's _check_enough_kv_cache_memory and max concurrency use the same
  // per-group sums, sliding groups capped at their window).
  const i64 chunk = engine.max_num_batched_tokens;
  // V1: a sequence's state as blocks of this pool (whole blocks: the engine charges them at admission), counted in
  // what one sequence needs as vLLM's _check_enough_kv_cache_memory and "Maximum concurrency" count MambaSpec's page.
  const i64 state_blocks =
      state_in_pool ? static_cast<i64>(std::ceil(pages.bytes_per_seq() / layout.pool_block_bytes(engine.block_size))) : 0;
  plan.linear_state_blocks_per_seq = state_blocks;
  // Mamba-2 layers cache their state per chunk-aligned block ("all" mode); gated DeltaNet's at the aligned block.
  if (state_in_pool && engine.prefix_caching())
    plan.hybrid_prefix_block_tokens = detail::hybrid_prefix_block_tokens(
        model.linear_state_bytes_per_layer(kStateBytes) / parallel.tp, layout.bytes_per_token_layer,
        model.linear_mamba2 ? model.linear_chunk_size : 0);
  if (state_in_pool) {
    plan.linear_state_seqs_fit = pool_blocks / state_blocks;
    plan.mamba_cache_blocks = std::max<i64>(0, static_cast<i64>(std::floor(kv_pool / pages.vllm_block_bytes())));
  }
  i64 blocks_per_seq = layout.blocks_for(plan.max_model_len, engine.block_size, chunk) + state_blocks;
  plan.longest_context_tokens =
      layout.longest_context(pool_blocks - state_blocks, engine.block_size, chunk, model.max_position_embeddings);
  if (context.auto_fit && pool_blocks < blocks_per_seq && plan.longest_context_tokens > 0) {
    // vLLM's --max-model-len auto: the largest context whose one sequence fits the pool.
    plan.max_model_len = static_cast<int>(std::min<i64>(plan.max_model_len, plan.longest_context_tokens));
    blocks_per_seq = layout.blocks_for(plan.max_model_len, engine.block_size, chunk) + state_blocks;
  }
  pg.kv_cache_bytes = static_cast<i64>(std::llround(kv_pool));
  plan.kv_capacity_blocks = blocks;
  plan.kv_capacity_tokens = tokens_cap;
  if (pool_blocks < blocks_per_seq) {
    // vLLM refuses to start when one max_model_len sequence does not fit the KV cache.
    plan.reason = "KV cache of " + gb(kv_pool) + per_gpu_note + " holds " + std::to_string(plan.longest_context_tokens) +
                  " tokens of one sequence, fewer than max_model_len " + std::to_string(plan.max_model_len) +
                  " (short by " + gb(static_cast<double>(blocks_per_seq - pool_blocks) *
                                     layout.pool_block_bytes(engine.block_size)) +
                  "); lower max_model_len" + (context.auto_fit ? "" : " (or leave it unset: auto)");
    return plan;
  }
  if (state_in_pool && engine.cuda_graphs && engine.max_num_seqs > plan.mamba_cache_blocks) {
    // vLLM V1 with FULL decode CUDA graphs (the default cudagraph_mode) refuses at start when max_num_seqs exceeds
    // the pool's blocks (gpu_model_runner._check_and_update_cudagraph_mode, vllm#38270, merged 2026-03-26): each
    // decoding sequence needs one Mamba block in a captured batch.
    plan.reason = "max_num_seqs (" + std::to_string(engine.max_num_seqs) + ") exceeds available Mamba cache blocks (" +
                  std::to_string(plan.mamba_cache_blocks) + ") (vLLM refuses at CUDA graph capture: each decoding " +
                  "sequence needs one); lower max_num_seqs to at most " + std::to_string(plan.mamba_cache_blocks) +
                  " or increase gpu_memory_utilization";
    return plan;
  }
  plan.fits = true;
  plan.max_concurrent_seqs = pool_blocks / blocks_per_seq;
  for (const int len : {2048, 8192, 32768})
    if (len < plan.max_model_len)
      plan.concurrent_seqs_at.emplace_back(len, pool_blocks / (layout.blocks_for(len, engine.block_size, chunk) + state_blocks));
  return plan;
}

}  // namespace llmsim::memory
