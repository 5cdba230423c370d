#include "llmsim/memory/memory_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine_memory.hpp"
#include "llmsim/core/error.hpp"

namespace llmsim::memory {

namespace {
using i64 = std::int64_t;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

struct Shape {
  int layers = 0;         // layers on the most loaded pipeline stage
  int kv_heads_gpu = 0;   // KV heads held by one GPU (replicated when tp > num_kv_heads)
  bool has_embed = true;  // this stage holds the embedding table
  bool has_head = true;   // and the LM head + final norm
};

Shape stage_shape(const spec::ModelSpec& m, const spec::ParallelConfig& par) {
  Shape s;
  s.layers = m.num_layers / par.pp;
  s.kv_heads_gpu = std::max(1, m.num_kv_heads / par.tp);
  return s;
}

// Bytes of one decoder layer's weights on one GPU (tp shards, quantized linears, 16-bit biases/norms/router).
double layer_weight_bytes(const spec::ModelSpec& m, const spec::WeightFormat& f, int tp, int kv_heads_gpu) {
  const double h = m.hidden_size, hd = m.head_dim;
  const double q = static_cast<double>(m.num_heads) * hd / tp;
  const double kv = static_cast<double>(kv_heads_gpu) * hd;
  const double attn_linear = h * q + 2 * h * kv + q * h;
  const double experts = m.is_moe() ? m.num_experts : 1;
  const double mlp_linear = experts * 3 * h * (static_cast<double>(m.intermediate_size) / tp);
  double sixteen_bit = 2 * h;                  // the two RMSNorms, replicated
  if (m.attention_bias) sixteen_bit += q + 2 * kv;
  if (m.is_moe()) sixteen_bit += h * m.num_experts;  // the router stays 16-bit (quantization.md §2)
  return (attn_linear + mlp_linear) * f.bits_per_weight / 8 + sixteen_bit * 2;
}

double embed_bytes(const spec::ModelSpec& m, const spec::WeightFormat& f, int tp) {
  const double bits = f.quantize_embeddings ? f.bits_per_weight : 16;
  return static_cast<double>(m.embedding_params()) * bits / 8 / tp;  // vocab-parallel under TP
}

double head_bytes(const spec::ModelSpec& m, const spec::WeightFormat& f, int tp) {
  return static_cast<double>(m.lm_head_params()) * f.lm_head_bits / 8 / tp + 2.0 * m.hidden_size;  // + final norm
}

double gpu_weight_bytes(const spec::ModelSpec& m, const spec::WeightFormat& f, const spec::ParallelConfig& par) {
  const Shape s = stage_shape(m, par);
  const double layers = s.layers * layer_weight_bytes(m, f, par.tp, s.kv_heads_gpu);
  const double e = embed_bytes(m, f, par.tp), hd = head_bytes(m, f, par.tp);
  // With pp > 1 the first stage holds the embeddings and the last the LM head; report the heavier one.
  return par.pp == 1 ? layers + e + hd : layers + std::max(e, hd);
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
  if (model.num_heads % par.tp != 0) {
    p.add("hardware.tp", "must divide the model's num_attention_heads (" + std::to_string(model.num_heads) +
                             "), got " + std::to_string(par.tp));
  } else if (model.num_kv_heads % par.tp != 0 && par.tp % model.num_kv_heads != 0) {
    p.add("hardware.tp", "must divide the model's num_key_value_heads (" + std::to_string(model.num_kv_heads) +
                             ") or be a multiple of it, got " + std::to_string(par.tp));
  }
  if (model.intermediate_size % par.tp != 0) {
    p.add("hardware.tp", "must divide the model's intermediate_size (" + std::to_string(model.intermediate_size) +
                             "), got " + std::to_string(par.tp));
  }
  if (model.num_layers % par.pp != 0) {
    p.add("hardware.pp", "must divide the model's num_hidden_layers (" + std::to_string(model.num_layers) +
                             "), got " + std::to_string(par.pp));
  }
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

MemoryPlan plan_memory(const spec::ModelSpec& model, const spec::Quantization& quant, const spec::GpuSpec& gpu,
                       const spec::ParallelConfig& parallel, const spec::EngineConfig& engine, int max_model_len) {
  check_inputs(model, gpu, parallel, engine, max_model_len);
  MemoryPlan plan;
  plan.params = model.param_count();
  plan.max_model_len = max_model_len > 0 ? max_model_len : model.max_position_embeddings;
  const Shape s = stage_shape(model, parallel);
  plan.kv_bytes_per_token = model.kv_bytes_per_token(quant.kv_bytes_per_element());
  plan.kv_bytes_per_token_per_gpu = 2.0 * s.layers * s.kv_heads_gpu * model.head_dim * quant.kv_bytes_per_element();

  // vLLM's worker (V1 gpu_worker.determine_available_memory; V0 worker.determine_num_available_blocks): KV bytes =
  // total × gpu_memory_utilization − (weights + activation peak of the profiling run + memory allocated outside
  // PyTorch meanwhile); CUDA context, communicators (V1) and CUDA graphs live in the remaining headroom.
  const double total = static_cast<double>(gpu.memory_bytes);
  const double budget = std::floor(total * engine.gpu_memory_utilization);
  const double shard = gpu_weight_bytes(model, quant.weights, parallel);
  const double offloaded = std::min(shard, engine.cpu_offload_gb * kGiB);
  const double weights = shard - offloaded;
  const i64 tokens = engine.max_num_batched_tokens;
  const bool multi_gpu = parallel.tp > 1 || parallel.pp > 1;
  const detail::EngineMemory em = detail::engine_memory(model, gpu, parallel, engine);
  const double act = em.activation;
  const double comm = em.non_torch * (multi_gpu ? 1.0 : 0.0) + em.comm_init;
  const double in_budget_runtime = em.in_budget() - act;
  const double headroom_runtime = em.in_headroom();
  const double runtime = in_budget_runtime + headroom_runtime;
  const double headroom = total - budget;
  // What the context and graphs do not find in the headroom comes out of the KV pool.
  const double deficit = std::max(0.0, headroom_runtime - headroom);
  const double kv_pool = budget - weights - act - in_budget_runtime - deficit;

  auto& pg = plan.per_gpu;
  pg.total_bytes = gpu.memory_bytes;
  pg.weights_bytes = static_cast<i64>(std::llround(weights));
  pg.offloaded_weights_bytes = static_cast<i64>(std::llround(offloaded));
  pg.activation_bytes = static_cast<i64>(std::llround(act));
  pg.runtime_bytes = static_cast<i64>(std::llround(runtime));
  pg.comm_buffer_bytes = static_cast<i64>(std::llround(comm));
  pg.cuda_context_bytes = static_cast<i64>(std::llround(em.context));
  pg.cuda_graph_bytes = static_cast<i64>(std::llround(em.cuda_graphs));
  pg.non_torch_bytes = static_cast<i64>(std::llround(em.non_torch));
  pg.requested_bytes = static_cast<i64>(std::llround(budget));
  pg.free_bytes = static_cast<i64>(std::llround(std::max(0.0, headroom - headroom_runtime)));

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
    plan.reason = "weights need " + gb(weights) + per_gpu_note + (offloaded > 0 ? " beside the offloaded " + gb(offloaded) : "") +
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
  if (kv_pool <= 0) {
    plan.reason = "runtime (CUDA context, CUDA graphs" + std::string(multi_gpu ? ", NCCL buffers" : "") +
                  ") needs " + gb(runtime) + " beside " + gb(weights) + " of weights and " + gb(act) +
                  " of activations" + per_gpu_note + "; nothing is left for the KV cache (short by " + gb(-kv_pool) + ")";
    return plan;
  }
  const double block_bytes = plan.kv_bytes_per_token_per_gpu * engine.block_size;
  // V1's block pool keeps one null block that no request can use (vllm/v1/core/block_pool.py).
  const i64 blocks = std::max<i64>(0, static_cast<i64>(std::floor(kv_pool / block_bytes)) - (em.v0 ? 0 : 1));
  const i64 blocks_per_seq = (plan.max_model_len + engine.block_size - 1) / engine.block_size;
  const i64 tokens_cap = blocks * engine.block_size;
  plan.longest_context_tokens = std::min<i64>(tokens_cap, model.max_position_embeddings);
  if (blocks < blocks_per_seq) {
    // vLLM refuses to start when one max_model_len sequence does not fit the KV cache.
    plan.reason = "KV cache of " + gb(kv_pool) + per_gpu_note + " holds " + std::to_string(tokens_cap) +
                  " tokens, fewer than one sequence of max_model_len " + std::to_string(plan.max_model_len) +
                  " (short by " + gb(static_cast<double>(blocks_per_seq) * block_bytes - kv_pool) +
                  "); lower max_model_len";
    pg.kv_cache_bytes = static_cast<i64>(std::llround(kv_pool));
    plan.kv_capacity_blocks = blocks;
    plan.kv_capacity_tokens = tokens_cap;
    return plan;
  }
  plan.fits = true;
  pg.kv_cache_bytes = static_cast<i64>(std::llround(kv_pool));
  plan.kv_capacity_blocks = blocks;
  plan.kv_capacity_tokens = tokens_cap;
  plan.max_concurrent_seqs = blocks / blocks_per_seq;
  return plan;
}

Json to_json(const MemoryPlan& plan) {
  const auto& g = plan.per_gpu;
  return Json{{"fits", plan.fits},
              {"reason", plan.reason},
              {"params", plan.params},
              {"kv_bytes_per_token", plan.kv_bytes_per_token},
              {"kv_bytes_per_token_per_gpu", plan.kv_bytes_per_token_per_gpu},
              {"kv_capacity_tokens", plan.kv_capacity_tokens},
              {"kv_capacity_blocks", plan.kv_capacity_blocks},
              {"max_concurrent_seqs", plan.max_concurrent_seqs},
              {"longest_context_tokens", plan.longest_context_tokens},
              {"max_model_len", plan.max_model_len},
              {"per_gpu",
               {{"total_bytes", g.total_bytes},
                {"weights_bytes", g.weights_bytes},
                {"offloaded_weights_bytes", g.offloaded_weights_bytes},
                {"kv_cache_bytes", g.kv_cache_bytes},
                {"activation_bytes", g.activation_bytes},
                {"runtime_bytes", g.runtime_bytes},
                {"comm_buffer_bytes", g.comm_buffer_bytes},
                {"cuda_context_bytes", g.cuda_context_bytes},
                {"cuda_graph_bytes", g.cuda_graph_bytes},
                {"non_torch_bytes", g.non_torch_bytes},
                {"requested_bytes", g.requested_bytes},
                {"free_bytes", g.free_bytes}}}};
}

}  // namespace llmsim::memory
