// The constants of one CostModel from the model, format, GPU, profile and layout (the op formulas they feed are in
// cost_model_ops.hpp; the source of every constant in docs/cost-model.md).
#include <algorithm>
#include <cmath>
#include <memory>

#include "cost_model_ops.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/ada_fp8.hpp"
#include "llmsim/perf/block_fp8.hpp"
#include "llmsim/perf/hopper_fp8.hpp"
#include "llmsim/perf/moe_kernels.hpp"
#include "llmsim/perf/dsa_indexer.hpp"
#include "llmsim/perf/sparse_mla.hpp"
#include "llmsim/perf/triton_unified_attention.hpp"
#include "llmsim/perf/speculative.hpp"

namespace llmsim::perf {

CostModel::CostModel(spec::ModelSpec model, spec::Quantization quant, spec::GpuSpec gpu, HardwareProfile profile,
                     spec::ParallelConfig parallel, bool cuda_graphs, double cpu_offload_bytes, Runtime runtime,
                     std::int64_t table_tokens)
    : model_(std::move(model)),
      quant_(std::move(quant)),
      gpu_(std::move(gpu)),
      profile_(std::move(profile)),
      parallel_(parallel),
      cuda_graphs_(cuda_graphs),
      runtime_(runtime) {
  profile_.validate("profile");
  const auto& m = model_;
  const int tp = parallel_.tp, pp = parallel_.pp;
  Problems problems;
  if (tp < 1) problems.add("hardware.tp", "must be >= 1, got " + std::to_string(tp));
  if (pp < 1) problems.add("hardware.pp", "must be >= 1, got " + std::to_string(pp));
  if (m.hidden_size <= 0 || m.num_layers <= 0 || m.num_heads <= 0 || m.head_dim <= 0 || m.intermediate_size <= 0 ||
      m.vocab_size <= 0)
    problems.add("model", "hidden_size, num_layers, num_heads, head_dim, intermediate_size and vocab_size must be > 0");
  problems.throw_if_any();
  const int kv = m.num_kv_heads > 0 ? m.num_kv_heads : m.num_heads;
  m.check_tensor_parallel(tp, problems, "hardware.tp");
  if (pp > m.num_layers)
    problems.add("hardware.pp", "pipeline parallel " + std::to_string(pp) + " exceeds the " +
                                    std::to_string(m.num_layers) + " layers of " + m.id);
  if (!(gpu_.memory_bandwidth > 0) || !(gpu_.fp16_flops > 0))
    problems.add("hardware.gpu", "'" + gpu_.id + "' needs a memory bandwidth and an fp16 tensor peak > 0");
  problems.throw_if_any();

  auto c = std::make_shared<Constants>();
  const double t = tp;
  c->tp = tp;
  c->pp = pp;
  c->layers = m.num_layers;
  c->stage_layers = spec::largest_pp_stage(m.num_layers, parallel_);  // VLLM_PP_LAYER_PARTITION or vLLM's split
  c->hidden = m.hidden_size;
  c->head_dim = m.head_dim;
  c->heads = m.num_heads / t;
  c->kv_heads = kv >= tp ? static_cast<double>(kv / tp) : 1.0;  // fewer KV heads than GPUs: replicated
  c->inter = m.intermediate_size / t;
  c->vocab = m.vocab_size;
  c->qkv_params = c->hidden * (c->heads + 2 * c->kv_heads) * c->head_dim +
                  (m.attention_bias ? (c->heads + 2 * c->kv_heads) * c->head_dim : 0.0);
  c->o_params = c->heads * c->head_dim * c->hidden;
  c->prefill_qk_dim = c->head_dim;
  c->prefill_v_dim = c->head_dim;
  c->rotary_norm_elems = 2 * (c->heads + c->kv_heads) * c->head_dim;  // rotary reads and writes q and k
  // Nemotron-H: no rotary (NemotronHAttention takes no positions), and one fused add+RMSNorm per single-block layer.
  if (!m.rotary) c->rotary_norm_elems = 0;
  if (m.norms_per_layer == 1) c->norm_act_elems = 4 * c->hidden;
  // Nemotron-H's layers are one block each: one RowParallelLinear (out_proj, o_proj or down_proj) all-reduces.
  if (m.mixer_free_layers + m.mlp_free_layers == m.num_layers) c->allreduces_per_layer = 1;
  if (m.is_mla()) {
    // DeepseekV2MLAAttention on one rank: the replicated q_a + kv_a projection (hidden -> q_lora + kv_lora + rope),
    // q_b (or q_proj) and o_proj sharded by heads; kv_b_proj (kv_lora -> heads × (nope + v)) sharded by heads.
    c->mla = true;
    c->kv_latent = static_cast<double>(m.kv_lora_rank) + m.qk_rope_head_dim;
    c->kv_rope_dim = m.qk_rope_head_dim;
    const double qk = static_cast<double>(m.qk_nope_head_dim) + m.qk_rope_head_dim;
    c->qkv_params = c->hidden * (static_cast<double>(m.q_lora_rank) + c->kv_latent) +
                    (m.q_lora_rank > 0 ? m.q_lora_rank : c->hidden) * c->heads * qk;
    c->o_params = c->heads * m.v_head_dim * c->hidden;
    c->kv_b_params = static_cast<double>(m.kv_lora_rank) * c->heads * (m.qk_nope_head_dim + m.v_head_dim);
    c->head_dim = qk;
    c->kv_heads = c->heads;  // prefill attends per head on the up-projected K/V
    c->prefill_v_dim = m.v_head_dim;
    // Rotary touches only the rope part of q (per head) and the shared k_pe; q_a/kv_a_layernorm read and write
    // the q and KV latents.
    c->rotary_norm_elems = 2 * (c->heads + 1) * m.qk_rope_head_dim + 2 * (static_cast<double>(m.q_lora_rank) + m.kv_lora_rank);
  }
  if (m.double_wide_mlp_layers > 0) {
    // Gemma-4 E2B: the KV-shared layers' MLPs are 2 × intermediate_size wide; the MLP carries the per-layer average
    // (weights, FLOPs, activation), as qkv_proj / o_proj do over two attention shapes.
    c->inter *= 1.0 + static_cast<double>(m.double_wide_mlp_layers) / m.num_layers;
  }
  c->mlp_params = m.mlp_matrices * c->hidden * c->inter;  // a dense layer's MLP: gate, up, down (relu²: up, down)
  if (m.per_layer_input_size > 0) {
    // Gemma-4 E2B/E4B's per-layer inputs: every layer's gate (hidden → size) and projection back (replicated on every
    // rank) and its share of per_layer_model_projection (hidden → layers × size, column-parallel), run for every token
    // beside the MLP. The table lookup (layers × size elements per token) is an embedding gather, not priced.
    const double ple = m.per_layer_input_size;
    c->mlp_params += 2.0 * m.hidden_size * ple + m.hidden_size * ple / t;
  }
  c->dense_layers = m.dense_mlp_layers();  // every layer but Nemotron-H's mixer-only ones
  if (m.is_moe()) {
    c->experts = m.num_experts;
    c->experts_per_token = std::max(1, m.experts_per_token);
    c->router_params = c->hidden * m.num_experts + (m.shared_expert_gate ? c->hidden : 0.0);
    c->dense_layers = m.dense_layers;
    c->moe_layers = m.moe_layers();
    c->expert_inter = m.expert_intermediate_size() / t;
    c->expert_params = m.mlp_matrices * c->hidden * c->expert_inter;
    c->shared_inter = m.shared_expert_intermediate_size / t;
    c->shared_params = m.mlp_matrices * c->hidden * c->shared_inter;
  }
  // The gated activation's width per token, averaged over the layer mix (routed experts per token + shared ones).
  c->act_inter = c->experts > 1 ? (c->dense_layers * c->inter + c->moe_layers * (c->expert_inter * c->experts_per_token +
                                                                                  c->shared_inter)) / c->layers
                    : c->inter * (c->dense_layers / c->layers);  // Nemotron-H: only its MLP layers have one
  c->sliding_layers = m.has_sliding_window() ? m.sliding_layers : 0;
  c->full_layers = m.attention_layers() - c->sliding_layers;
  if (m.has_linear_attention()) {
    // Qwen3-Next: attention layers' q_proj also emits the output gate; the gated-DeltaNet layers project hidden ->
    // q, k, v, z (+ b, a) and back. qkv_proj / o_proj carry the per-layer average over both kinds (their weights and
    // GEMM FLOPs); the DeltaNet core is priced in family_ops.
    // Nemotron-H: Mamba-2 layers (in_proj hidden -> z, x, B, C, dt; out_proj back), no gate on q; its MLP-only
    // layers have no mixer and add nothing to the average.
    const double attn_layers = m.attention_layers(), lin = m.linear_attention_layers, all = m.num_layers;
    const double attn_qkv = c->hidden * ((m.attention_output_gate ? 2 : 1) * c->heads + 2 * c->kv_heads) * c->head_dim;
    const double key = static_cast<double>(m.linear_num_key_heads) * m.linear_key_head_dim / t;
    const double value = static_cast<double>(m.linear_num_value_heads) * m.linear_value_head_dim / t;
    const double lin_in = c->hidden * static_cast<double>(m.linear_in_proj_width()) / t;
    c->qkv_params = (attn_layers * attn_qkv + lin * lin_in) / all;
    c->o_params = (attn_layers * c->o_params + lin * value * c->hidden) / all;
    c->linear_layers = lin;
    c->linear_state_bytes = m.linear_state_bytes_per_layer(kActBytes) / t;  // Qwen3.5, Nemotron-H: FP32 SSM state
    const double nv = m.linear_num_value_heads / t, conv = 2.0 * (2 * key + value) * m.linear_conv_kernel_dim;
    const double state = nv * m.linear_key_head_dim * m.linear_value_head_dim;  // state elements per token's layer
    if (m.linear_mamba2) {
      // Mamba-2 (docs/cost-model.md, "Mamba-2 layers"). Decode (selective_state_update): per state element the decay,
      // the dt·x·B update and the C readout, ~5 FLOPs. Prefill (the SSD chunked scan of Dao & Gu 2024, §6, Listing 1:
      // mamba_chunk_scan_combined) per token with chunks of Q: the intra-chunk C·Bᵀ scores (2·Q·state per group) and
      // their product with x (2·Q·head_dim per head), the chunk state Bᵀ·x and the output C·h (2·state·head_dim per
      // head each), full Q-wide tiles as the kernel computes them. The causal conv: 2 × kernel per channel.
      const double q = m.linear_chunk_size > 0 ? m.linear_chunk_size : 128;
      const double groups = m.linear_num_key_heads / t;
      c->linear_flops_per_token = 5.0 * state + conv;
      c->linear_prefill_flops_per_token = 2.0 * q * groups * m.linear_key_head_dim +
                                          2.0 * q * nv * m.linear_value_head_dim + 4.0 * state + conv;
      c->linear_chunk = q;
    } else {
      // Gated DeltaNet, per token and layer: the delta-rule update and readout (~6 FLOPs per state element: decay,
      // k·S, the rank-1 update, q·S) and the causal conv (2 × kernel per channel).
      c->linear_flops_per_token = 6.0 * state + conv;
      c->linear_prefill_flops_per_token = c->linear_flops_per_token;
      c->linear_chunk = 64;
    }
  } else if (m.attention_output_gate) {
    c->qkv_params += c->hidden * c->heads * c->head_dim;
  } else if (m.mixer_free_layers > 0) {
    // A Nemotron-H pattern without Mamba layers: its MLP-only layers have no attention to average in.
    c->qkv_params *= static_cast<double>(m.attention_layers()) / m.num_layers;
    c->o_params *= static_cast<double>(m.attention_layers()) / m.num_layers;
  }
  if (m.has_full_layer_shape() && !m.is_mla() && !m.has_linear_attention()) {
    // Gemma-4: the full-attention layers' q/o use global_head_dim and their k (and the V slot vLLM fills with it)
    // num_global_key_value_heads; qkv_proj / o_proj carry the per-layer average of both kinds (weights and GEMMs).
    const double full = m.full_attention_layers(), all = m.num_layers, hd = m.full_layer_head_dim();
    const int fkv = m.full_layer_kv_heads();
    const double kv_full = fkv >= tp ? static_cast<double>(fkv / tp) : 1.0;
    c->qkv_params = ((all - full) * c->qkv_params + full * c->hidden * (c->heads + 2 * kv_full) * hd) / all;
    c->o_params = ((all - full) * c->o_params + full * c->heads * hd * c->hidden) / all;
  }
  c->window = m.sliding_window;
  if (m.is_mla() && m.index_topk > 0) {
    // DeepSeek-V3.2 (DSA): each query attends to the index_topk tokens its indexer selects — other tokens than a
    // window's, the same count of query-key pairs and latents read — so the MLA is priced as a window of index_topk
    // on every layer (the KV cache still holds every token: the memory plan is unchanged), except where vLLM's sparse
    // kernel runs (below). The indexer's own scoring pass over all cached tokens is added in family_ops.
    c->sliding_layers = m.attention_layers();
    c->full_layers = 0;
    c->window = m.index_topk;
    c->indexer_bytes_per_token = m.indexer_kv_bytes_per_token_per_layer();
    c->indexer_flops_per_pair = 2.0 * m.index_n_heads * m.index_head_dim;
    if (vllm_flashmla_sparse(m, gpu_, runtime_)) {
      // vLLM's FLASHMLA_SPARSE (perf/sparse_mla.hpp): every token, prefill and decode, runs FlashMLA's sparse kernel
      // in MQA mode over the latent (576 query/key, 512 value; the absorbed W_UK / W_UV, no up-projection of the
      // context) on all index_topk slots and the padded heads, whatever the context: no window, no MHA prefill.
      const int padded = flashmla_sparse_padded_heads(static_cast<int>(c->heads), gpu_);
      c->sliding_layers = 0;
      c->sparse_mla_topk = m.index_topk;
      c->sparse_mla_flops_per_token =
          sparse_mla_flops_per_token(padded, m.index_topk, c->kv_latent, static_cast<double>(m.kv_lora_rank));
      c->sparse_mla_eff = flashmla_sparse_efficiency(gpu_);
      c->sparse_mla_qo_bytes = padded * (c->kv_latent + m.kv_lora_rank) * kActBytes;
      c->sparse_mla_latent_bytes = c->kv_latent * quant_.kv_bytes_per_element();
    }
  }
  c->lm_params = c->vocab * c->hidden / t;

  // Weight-only formats dequantise to fp16 (rate x q_c, bandwidth x q_bw); W8A8/fp8 use their tensor path when
  // the GPU has it, else spec::format_for_gpu turns them into the weight-only fallback (fp8 on A100 -> W8A16).
  quant_.weights = spec::format_for_gpu(quant_.weights, gpu_, "quant.weights");  // ConfigError: no usable path
  const auto& fmt = quant_.weights;
  GemmPath& fg = c->format_gemm;
  fg.bytes_per_param = fmt.bits_per_weight / 8.0;
  fg.in_format = true;
  c->kv_bytes_per_token_layer = 2.0 * c->kv_heads * c->head_dim * quant_.kv_bytes_per_element();
  c->kv_cache_write_bytes = c->kv_bytes_per_token_layer;
  if (m.is_mla()) {
    // Prefill reads each KV token's latent from the cache and FlashAttention reads its up-projected K and V per head;
    // a new token writes one latent.
    c->kv_cache_write_bytes = c->kv_latent * quant_.kv_bytes_per_element();
    c->kv_bytes_per_token_layer = c->kv_cache_write_bytes + c->heads * (c->head_dim + c->prefill_v_dim) * kActBytes;
  }

  fg.q_bw = fmt.dequant_bw_efficiency;
  fg.q_c = fmt.dequant_compute_efficiency;
  if (fmt.weight_only && fg.q_c == spec::kMarlinComputeEfficiency && hopper_class(gpu_family(gpu_))) {
    // Marlin's measured large-M rate is an A100's; on Hopper/Blackwell its mma.sync (no wgmma) reaches less of the
    // tensor peak that cuBLAS reaches, and no public large-M figure exists: the former 0.7 stays there.
    fg.q_c = quant_kernel::kMarlinHopperComputeEfficiency;
  }
  c->gemm_dtype = fmt.weight_only ? spec::DType::fp16 : fmt.compute_dtype;
  c->bw = gpu_.memory_bandwidth;
  fg.peak = gpu_.tensor_peak(c->gemm_dtype);
  c->fp16_peak = gpu_.fp16_flops;
  const auto fp16 = profile_.gemm_eff_vs_m.find(spec::DType::fp16);
  c->fp16_eff = LogCurve(fp16->second);  // validate() guarantees it exists
  const auto it = profile_.gemm_eff_vs_m.find(c->gemm_dtype);
  fg.eff = it != profile_.gemm_eff_vs_m.end() ? LogCurve(it->second) : c->fp16_eff;
  if (fmt.max_compute_flops > 0) {
    // Folded into q_c against the large-M rate, so the per-iteration path is unchanged.
    const double large_m_rate = fg.peak * fg.eff.at(4096) * fg.q_c;
    if (large_m_rate > fmt.max_compute_flops) fg.q_c *= fmt.max_compute_flops / large_m_rate;
  }
  // The 16-bit path: the MoE router, and whatever a format keeps 16-bit; the LM head streams the format's LM-head
  // bytes (GGUF's Q6_K) on it.
  GemmPath& f16 = c->fp16_gemm;
  f16.peak = c->fp16_peak;
  f16.eff = c->fp16_eff;
  c->lm_gemm = f16;
  c->lm_gemm.bytes_per_param = fmt.lm_head_bits / 8.0;
  // Attention, dense and shared MLPs run the format's path too, unless it quantizes the routed experts only
  // (gpt-oss's MXFP4 checkpoint keeps attention, router and embeddings in BF16): then they stream 16-bit weights.
  c->dense_gemm = fmt.experts_only && m.is_moe() ? f16 : fg;
  // The kernel the release runs for the format's linear layers on this GPU (pre-Marlin AWQ/GPTQ, unfused FP8:
  // perf/quant_kernels); a MoE's routed experts keep their fused-MoE pricing.
  const QuantGemmPlan plan = quant_gemm_plan(quant_, gpu_);
  if (c->dense_gemm.in_format) {
    c->dense_gemm.kernel = plan.kernel;
    c->dense_gemm.dequant_min_rows = plan.dequant_min_rows;
  }
  // The routed experts as vLLM's MoE kernel holds them (MXFP4: padded to its tile multiples), its rates (block-scaled
  // FP8: perf/moe_kernels) and the top-k combine.
  c->moe_gemm = fg;
  if (c->experts > 1) {
    const Mxfp4MoeKernel mx = mxfp4_moe_kernel(fmt, quant_.kernels, gpu_);
    ExpertLayout run = expert_layout(c->hidden, c->expert_inter, mx);
    run.matrices = m.mlp_matrices;
    if (moe_expert_time_factor(mx, quant_.kernels, 1) != 1.0) {
      c->moe_small_m_factor = moe_expert_time_factor(mx, quant_.kernels, 1);
      c->moe_small_m_tokens = kTritonSplitKMaxTokens;
    }
    c->expert_run_params = run.params();
    c->expert_run_inter = run.intermediate;
    c->expert_run_hidden = run.hidden;
    c->moe_combine_bytes = moe_combine_bytes_per_token(c->experts_per_token, c->hidden);
    const MoeGemmFactors k =
        moe_gemm_factors(fmt, m.quantization.block_scaled && m.quantization.format == fmt.id, gpu_, mx,
                         quant_.kernels.block_fp8_moe_slow);
    c->moe_gemm.q_c *= k.compute;
    c->moe_gemm.q_bw *= k.bandwidth;
  }
  // The linears other than the routed experts of a block-scaled FP8 checkpoint run vLLM's block-FP8 GEMMs
  // (perf/block_fp8.hpp): slower per kernel than per-tensor FP8's scaled_mm, and their input quantised unfused.
  const bool block_scaled = m.quantization.block_scaled && m.quantization.format == fmt.id;
  const BlockFp8LinearFactors block = block_fp8_linear_factors(fmt, block_scaled, gpu_);
  const GemmPath attn_format = c->dense_gemm;  // MLA's kv_b_proj keeps it (kv_b_gemm below)
  if (c->dense_gemm.in_format && c->dense_gemm.kernel == QuantGemmKernel::native) {
    c->dense_gemm.q_c *= block.compute;
    c->dense_gemm.q_bw *= block.bandwidth;
    c->dense_gemm.extra_fixed_s = block.extra_fixed_s;
    // Per-tensor/channel/token FP8 on Hopper under vLLM before 0.15: a larger fixed cost per call and a slower weight
    // stream than the 16-bit GEMM at decode sizes (perf/hopper_fp8.hpp).
    const Sm90ScaledMmFactors sm90 = sm90_scaled_mm_factors(fmt, block_scaled, gpu_, runtime_, quant_.kernels);
    c->dense_gemm.q_bw *= sm90.bandwidth;
    c->dense_gemm.extra_fixed_s += sm90.extra_fixed_s;
    // FP8 on Ada: vLLM's CUTLASS 2.x sm89 kernel (0.7+) and SGLang's compute at their measured share of the FP8
    // curve's rate (perf/ada_fp8.hpp).
    c->dense_gemm.q_c *= ada_fp8_gemm_compute_factor(fmt, quant_.kernels, gpu_, runtime_);
  }
  // ModelOpt checkpoints that exclude self_attn: attention streams 16-bit weights.
  c->attn_gemm = fmt.attention_16bit ? f16 : c->dense_gemm;
  c->kv_b_gemm = fmt.attention_16bit ? f16 : attn_format;
  // MLA's query and latent projections are GEMMs of their own (DeepseekV2MLAAttention: q_a_proj, kv_a_proj_with_mqa,
  // q_b_proj; q_proj and kv_a_proj_with_mqa without a query LoRA), not one fused qkv_proj.
  if (m.is_mla()) c->qkv_kernels = m.q_lora_rank > 0 ? 3 : 2;
  c->gemm_bw = LogCurve(profile_.gemm_bw_eff_vs_m);
  c->mem_vs_bytes = LogCurve(profile_.mem_bw_vs_bytes);
  c->mem_eff = profile_.mem_bw_efficiency;
  c->gemm_fixed_s = profile_.gemm_fixed_s;
  c->p = profile_.roofline_exponent;
  c->attn_prefill_eff = profile_.attn_prefill_efficiency;
  // vLLM before 0.7 ran FlashAttention-2 on Hopper too (spec::QuantKernels::hopper_flash_attn3): its prefill reaches
  // at most FA2's measured share of the tensor peak, below the Hopper prior's "between FA2 and FA3". Its decode kernel
  // (FA2 split-KV) is not switched: priced so (the vllm-v0.5 path), vLLM's own 0.6.x H100 ShareGPT runs (vllm#8092,
  // tests/engine/test_v0_public_throughput.cpp) read 11-13 % fast, outside the 10 % they are held to, so the FA2
  // decode price on Hopper is examined first (docs/cost-model.md "dstack's 405B FP8 runs").
  const bool hopper_fa2 = !quant_.kernels.hopper_flash_attn3 && gpu_family(gpu_) == GpuFamily::hopper_hbm;
  if (hopper_fa2) c->attn_prefill_eff = std::min(c->attn_prefill_eff, fa2_splitkv::kHopperPrefillEfficiency);
  if (c->indexer_flops_per_pair > 0) {
    // DSA's indexer logits (perf/dsa_indexer.hpp): DeepGEMM's FP8 MQA-logits kernels under vLLM, with the FP32 logits
    // written and read by the top-k; elsewhere priced as fp16 prefill attention (SGLang's NSA backend is not read).
    const bool deepgemm = vllm_deepgemm_indexer(m, gpu_, runtime_);
    c->indexer_rate = deepgemm ? deepgemm_mqa_logits_rate(gpu_) : c->fp16_peak * c->attn_prefill_eff;
    c->indexer_logit_bytes = deepgemm ? kIndexerLogitBytesPerPair : 0.0;
  }
  c->alu_rate = gpu_.fp32_flops / 2.0;
  c->materialised_scores = runtime_traits(runtime_).materialises_prefill_scores;
  c->l2_bytes = static_cast<double>(gpu_.l2_bytes);
  c->dequant_ops_per_weight = fmt.weight_only ? fmt.dequant_alu_ops_per_weight : 0.0;
  c->gemv_ops = fmt.gemv_ops_per_weight;
  c->gemv_ops_per_column = fmt.gemv_ops_per_weight_column;
  c->gemv_max_rows = fmt.gemv_max_rows;
  c->issue_rate = instruction_issue_rate(gpu_);
  c->sm_residency = perf::sm_residency(gpu_);
  c->sm_count = gpu_.sm_count;
  c->sm_clock_hz = perf::sm_clock_hz(gpu_);
  // vLLM V1 prefills a model with attention sinks on its Triton unified kernel below Hopper (no FA2 build with sinks):
  // Q-blocks of BLOCK_M = 16 rows hold 16 / (query heads per KV head) tokens, so each K/V tile read from the L2 serves
  // that many query tokens, and the L2's read rate bounds the kernel (perf/triton_unified_attention.hpp).
  if (vllm_triton_unified_prefill(m, gpu_, runtime_) && c->kv_heads > 0) {
    const int per_kv = static_cast<int>(c->heads / c->kv_heads);
    c->prefill_l2_bytes_per_pair =
        triton_unified_l2_bytes_per_pair(c->kv_heads, c->head_dim, quant_.kv_bytes_per_element(), per_kv);
    c->l2_bandwidth = c->sm_residency.l2_bytes_per_sm_clock * c->sm_count * c->sm_clock_hz;
  }
  // MLA decode is MQA over the latent (vLLM's data-movement-friendly path): one KV "head" of kv_lora + rope elements
  // per token whose first kv_lora serve as V (mla_attention.py: "MQA with QK headdim = Lkv + R, V headdim = Lkv").
  const AttentionShape shape = m.is_mla()
                                   ? AttentionShape{c->heads, 1.0, c->kv_latent, quant_.kv_bytes_per_element(),
                                                    static_cast<double>(m.kv_lora_rank), c->kv_latent}
                                   : AttentionShape{c->heads, c->kv_heads, c->head_dim, quant_.kv_bytes_per_element()};
  const DecodeAttentionBackend backend = choose_decode_backend(gpu_, quant_.kv_dtype, runtime_, m.is_mla(),
                                                               quant_.kernels.hopper_fa3_one_mma_wg,
                                                               quant_.kernels.hopper_flash_mla);
  c->attn_decode_sliding = DecodeAttentionModel(gpu_, profile_, shape, quant_.kv_dtype, backend, c->p);
  c->full_qk_dim = c->prefill_qk_dim;
  c->full_v_dim = c->prefill_v_dim;
  c->full_kv_bytes_per_token_layer = c->kv_bytes_per_token_layer;
  c->full_kv_write_bytes = c->kv_cache_write_bytes;
  if (m.has_full_layer_shape() && !m.is_mla() && !m.has_linear_attention()) {
    // Gemma-4's full-attention layers run their own attention (Gemma4DecoderLayer builds their Gemma4Attention with
    // global_head_dim and, with attention_k_eq_v, num_global_key_value_heads; vLLM caches both K and V for them): each
    // query-key pair costs 2 × heads × (d + d) FLOPs at d = global_head_dim, and each cached token 2 × KV heads × d
    // elements, read by prefill and by the decode kernel. The sliding layers keep head_dim × num_key_value_heads.
    const double hd = m.full_layer_head_dim();
    const int fkv = m.full_layer_kv_heads();
    const double kv_full = fkv >= tp ? static_cast<double>(fkv / tp) : 1.0;  // fewer KV heads than GPUs: replicated
    c->full_qk_dim = hd;
    c->full_v_dim = hd;
    c->full_kv_bytes_per_token_layer = 2.0 * kv_full * hd * quant_.kv_bytes_per_element();
    c->full_kv_write_bytes = c->full_kv_bytes_per_token_layer;
    c->attn_decode = DecodeAttentionModel(gpu_, profile_, AttentionShape{c->heads, kv_full, hd,
                                                                         quant_.kv_bytes_per_element()},
                                          quant_.kv_dtype, backend, c->p);
  } else {
    c->attn_decode = c->attn_decode_sliding;
  }
  c->allreduce = AllReduceModel(gpu_, profile_, tp, runtime_traits(runtime_).allreduce);
  c->vocab_parallel = runtime_traits(runtime_).vocab_parallel;
  c->sampler_bytes_per_logit = runtime_traits(runtime_).sampler_bytes_per_logit;
  c->overhead = EngineOverheadModel(profile_, runtime_, cuda_graphs_, tp * pp, tp);
  c->link_bw = profile_.link_bandwidth > 0 ? profile_.link_bandwidth : 0.6 * gpu_.pcie_bandwidth();
  c->link_latency_s = profile_.link_latency_s;
  // Kernels per layer: qkv, rotary, KV-cache write, o, 2 fused add+norm, gate_up, act, down (+ 2 all-reduces,
  // + router, top-k, align and combine for MoE: perf/moe_kernels); per iteration: embedding, final norm, LM head, sampling, input prep copies.
  // MLA adds its two latent RMSNorms and the kv_b bmm; shared experts their gate_up, act and down.
  c->kernels_per_layer = 9 + (tp > 1 ? 2 : 0) + (m.is_moe() ? kMoeExtraKernelsPerLayer * c->moe_layers / c->layers : 0.0) +
                         (m.is_mla() ? 3 + (c->qkv_kernels - 1) : 0) +
                         (c->shared_params > 0 ? 3.0 * c->moe_layers / c->layers : 0.0);
  c->kernels_per_iter = 8;
  // W8A8 (fp8 / int8 weights and activations): vLLM's apply_fp8_linear / apply_int8_linear (and SGLang, which calls
  // them) quantise every GEMM input in a kernel of its own (scaled_fp8_quant / scaled_int8_quant) before the
  // cutlass_scaled_mm: qkv, o_proj, gate_up and down each read their input in 16 bits and write it in 8. A compiled
  // vLLM V1 fuses the fp8 ones into the RMSNorm / SiLU×mul producing them (which then write 8 bits, not 16) except
  // o_proj's (docs/cost-model.md, "Quantization").
  if (!fmt.weight_only && (c->gemm_dtype == spec::DType::fp8 || c->gemm_dtype == spec::DType::int8)) {
    const double o_in = c->heads * c->prefill_v_dim, produced = 2 * c->hidden + c->act_inter;
    // Eager mode (enforce_eager) runs the model uncompiled: no fusion. A per-tensor dynamic scale is not fused either:
    // the whole input's maximum must be known before any element is quantised.
    const bool tensor_dynamic = fmt.fp8_scales == spec::Fp8Scales::dynamic_tensor;
    // Block-scaled FP8 quantises per token and 128-wide group in a Triton kernel of its own (perf/block_fp8.hpp).
    if (c->gemm_dtype == spec::DType::fp8 && runtime_traits(runtime_).fuses_fp8_input_quant && cuda_graphs_ &&
        !tensor_dynamic && !block.unfused_input_quant) {
      c->act_quant_bytes = o_in * (kActBytes + 1) - produced * (kActBytes - 1);
      c->kernels_per_layer += 1;
    } else {
      c->act_quant_bytes = (produced + o_in) * (kActBytes + 1);
      c->kernels_per_layer += 4;
    }
    if (tensor_dynamic) {
      // scaled_fp8_quant(input, None) -> dynamic_scaled_fp8_quant: torch.zeros for the scale, segmented_max_reduction
      // over the whole input (one more 16-bit read of it), then the quantisation: 2 more kernels per GEMM input.
      c->act_quant_bytes += (produced + o_in) * kActBytes;
      c->kernels_per_layer += 8;
    }
  }
  // The pre-Marlin and unfused-FP8 paths launch kernels of their own per linear layer (quant_gemm.cpp): awq_gemm's
  // split-K sum or the dequantisation before cuBLAS, torch._scaled_mm's three element-wise dequantisation kernels;
  // exllama's small-M kernel is one launch (its reconstruct path's second kernel at > 50 rows is not counted).
  const double legacy_linears =
      (c->attn_gemm.kernel != QuantGemmKernel::native ? 2.0 : 0.0) +
      (c->dense_gemm.kernel != QuantGemmKernel::native
           ? 2.0 * (c->experts > 1 ? (c->dense_layers + (c->shared_params > 0 ? c->moe_layers : 0.0)) / c->layers : 1.0)
           : 0.0);
  if (plan.kernel == QuantGemmKernel::awq_gemm) c->kernels_per_layer += legacy_linears;
  if (plan.kernel == QuantGemmKernel::fp8_unfused_dq)
    c->kernels_per_layer += legacy_linears * quant_kernel::kFp8UnfusedKernels;
  if (!(cpu_offload_bytes >= 0) || !std::isfinite(cpu_offload_bytes))
    throw ConfigError("engine.cpu_offload_gb", "must be >= 0, got " + format_given(cpu_offload_bytes / (1 << 30)));
  if (cpu_offload_bytes > 0) {
    // Each stage copies its offloaded shard in turn; TP ranks copy theirs in parallel over their own links.
    const double per_gpu = std::min(cpu_offload_bytes, c->weights_per_gpu());
    c->offload_bytes = pp * per_gpu;
    c->offload_s = pp * host_transfer_time(per_gpu);
    c->host_bw = host_bandwidth();
  }
  if (!(c->link_bw > 0)) throw ConfigError("profile.link_bandwidth", "must be > 0 for " + gpu_.id);
  c->set_table_flags();
  c->table.reset(std::clamp<std::int64_t>(table_tokens, 0, kTableTokens));  // rows filled as steps need them
  c_ = std::move(c);
}

}  // namespace llmsim::perf
