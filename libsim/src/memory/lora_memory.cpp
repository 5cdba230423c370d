// vLLM's LoRA buffers on the GPU (vllm/lora/layers/base_linear.py, column_parallel_linear.py,
// row_parallel_linear.py, fused_moe.py; LoRAConfig in vllm/config/lora.py, 0.11). LoRAModelManager wraps every
// supported linear of the model when the worker loads it, and each wrapper's create_lora_weights allocates
//   lora_a_stacked: n_slices × (max_loras, 1, max_lora_rank, input_size)
//   lora_b_stacked: n_slices × (max_loras, 1, output_slice, max_lora_rank)
// zeros in lora_dtype ("auto" = the model dtype). Packed modules keep one slice per checkpoint module: qkv_proj
// three (q, k, v: MergedQKVParallelLinearWithLoRA), gate_up_proj two (MergedColumnParallelLinearWithLoRA). A
// column-parallel linear's input is whole and its output sharded over tp; a row-parallel one's (o_proj, down_proj)
// input is sharded (input_size_per_partition) and its output whole. These slots exist from start-up, loaded or
// not, so they are charged before the profiling run like the weights.
//
// Check (computed from those shapes, as the docs say): one slot of rank 16 on Llama-3-8B at tp 1 is
// 32 × 1,310,720 = 41,943,040 parameters, the count PEFT prints for a rank-16 adapter on all seven linears of that
// model ("trainable params: 41,943,040"): 83.9 MB in bf16.
//
// Left out: the embedding and LM-head LoRA wrappers (VocabParallelEmbeddingWithLoRA / LogitsProcessorWithLoRA:
// vocab × rank per slot, ~4 MB at rank 16 for a 128K vocabulary, and gone with lora_extra_vocab_size after 0.11),
// fully_sharded_loras, the punica wrapper's index tensors (a few int64 per batched token) and the profiling run's
// fp32 shrink buffers (tokens × rank × slices); linear-attention mixers (Qwen3-Next's gated DeltaNet) get no LoRA
// here, their MLPs do. Adapters kept in host memory (max_cpu_loras) and swapped in are not modelled.
#include "llmsim/memory/lora_memory.hpp"

#include <algorithm>

namespace llmsim::memory {

namespace {
constexpr double kLoraBytesPerElement = 2.0;  // lora_dtype "auto": the model's fp16/bf16
}  // namespace

LoraLayerLinears lora_linears(const spec::ModelSpec& m, int tp_size) {
  const double h = m.hidden_size, tp = tp_size;
  // A column-parallel linear of input `in` and output slices summing to `out`: A whole, B sharded over tp.
  auto column = [&](double in, double out, int slices) { return LoraLinear{in, out / tp, slices}; };
  // A row-parallel linear: input (and A) sharded, output (and B) whole.
  auto row = [&](double in, double out) { return LoraLinear{in / tp, out, 1}; };
  LoraLayerLinears l;
  if (m.is_mla()) {
    // DeepseekV2MLAAttention: fused_qkv_a_proj (two slices, replicated), q_b_proj and kv_b_proj (column), o_proj (row);
    // without q_lora_rank, q_proj is a column-parallel linear of the hidden size and kv_a_proj_with_mqa replicated.
    const double heads = m.num_heads, qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    const double kv_a = static_cast<double>(m.kv_lora_rank) + m.qk_rope_head_dim;
    if (m.q_lora_rank > 0) {
      l.attention.push_back(LoraLinear{h, m.q_lora_rank + kv_a, 2});
      l.attention.push_back(column(m.q_lora_rank, heads * qk, 1));
    } else {
      l.attention.push_back(column(h, heads * qk, 1));
      l.attention.push_back(LoraLinear{h, kv_a, 1});
    }
    l.attention.push_back(column(m.kv_lora_rank, heads * (m.qk_nope_head_dim + m.v_head_dim), 1));
    l.attention.push_back(row(heads * m.v_head_dim, h));
  } else {
    const double hd = m.head_dim, q = static_cast<double>(m.num_heads) * hd;
    // K and V are replicated when tp exceeds the KV heads: each rank's B slice is one head.
    const double kv_per_rank = std::max(1.0, static_cast<double>(m.num_kv_heads) / tp) * hd;
    l.attention.push_back(LoraLinear{h, q / tp + 2 * kv_per_rank, 3});  // qkv_proj: q, k, v
    l.attention.push_back(row(q, h));                                     // o_proj
  }
  l.dense_mlp = {column(h, 2.0 * m.intermediate_size, 2), row(m.intermediate_size, h)};
  if (m.is_moe()) {
    // FusedMoEWithLoRA: w13 (gate and up) and w2 per expert, sharded over tp as the experts' weights are; the shared
    // experts are a dense MLP of their own.
    const double ie = m.expert_intermediate_size();
    l.expert = {column(h, 2 * ie, 2), row(ie, h)};
    if (m.shared_expert_intermediate_size > 0)
      l.shared_mlp = {column(h, 2.0 * m.shared_expert_intermediate_size, 2), row(m.shared_expert_intermediate_size, h)};
  }
  return l;
}

double lora_params(const std::vector<LoraLinear>& linears, int rank) {
  double per_rank = 0;
  for (const LoraLinear& x : linears) per_rank += x.slices * x.in + x.out;
  return rank * per_rank;
}

double lora_slot_bytes_per_gpu(const spec::ModelSpec& m, const spec::ParallelConfig& par, int rank) {
  const LoraLayerLinears l = lora_linears(m, par.tp);
  const double attention = lora_params(l.attention, rank), dense_mlp = lora_params(l.dense_mlp, rank);
  const double moe_mlp =
      m.is_moe() ? m.num_experts * lora_params(l.expert, rank) + lora_params(l.shared_mlp, rank) : 0.0;
  // The most loaded stage: as many MoE layers as the model has, up to the stage's layers (memory_plan.cpp's rule),
  // and its share of the attention layers.
  const int stage = spec::largest_pp_stage(m.num_layers, par);  // vLLM's split: its largest stage
  const int moe = std::min(stage, m.moe_layers());
  const double attention_layers = static_cast<double>(m.attention_layers()) * stage / m.num_layers;
  const double params = attention_layers * attention + moe * moe_mlp + (stage - moe) * dense_mlp;
  return params * kLoraBytesPerElement;
}

double lora_bytes_per_gpu(const spec::ModelSpec& model, const spec::ParallelConfig& parallel,
                          const spec::EngineConfig& engine) {
  if (!engine.enable_lora) return 0;
  return engine.max_loras * lora_slot_bytes_per_gpu(model, parallel, engine.max_lora_rank);
}

}  // namespace llmsim::memory
