// Speculative decoding's proposer in GPU memory (memory_plan.hpp ProposerMemory; docs/speculative-decoding.md).
// vLLM loads the drafter on every rank of the target's tensor-parallel group (draft_tensor_parallel_size defaults
// to the target's) beside the model, before profiling, so its weights come out of the KV budget; V1 builds one
// KV-cache config over the target's and the drafter's attention layers (gpu_model_runner.get_kv_cache_spec walks
// every Attention layer of the forward context, the drafter's included), so each block holds both. Also a resolved
// scenario's plan (plan_memory) and its `llmsim memory --json` document.
#include <algorithm>

#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::memory {

ProposerMemory proposer_memory(const spec::ResolvedSpeculation& sp, const spec::Quantization& quant, int tp) {
  ProposerMemory m;
  if (!sp.proposer) return m;
  const auto& p = *sp.proposer;
  const double bytes_per_param = sp.proposer_shares_target_format ? quant.weights.bits_per_weight / 8.0 : 2.0;
  m.weight_bytes_per_gpu = static_cast<double>(sp.proposer_params) * bytes_per_param / tp;
  // KV heads shard over tp (replicated when fewer than the GPUs); MLA's latent is replicated on every rank.
  const double kv_heads = p.num_kv_heads > 0 ? p.num_kv_heads : p.num_heads;
  const double shard = p.is_mla() ? 1.0 : std::max(1.0, kv_heads / tp) / kv_heads;
  m.kv_bytes_per_token_per_gpu = p.kv_bytes_per_token(quant.kv_bytes_per_element()) * shard;
  return m;
}

ProposerMemory proposer_memory(const spec::ResolvedScenario& rs) {
  if (!rs.speculation) return {};
  return proposer_memory(*rs.speculation, rs.quant, rs.scenario.hardware.parallel.tp);
}

MemoryPlan plan_memory(const spec::ResolvedScenario& rs) {
  // Auto plans for what it wanted, so a fitted scenario's plan still says what did not fit.
  const ContextRequest context{rs.max_model_len_auto ? rs.max_model_len_wanted : rs.max_model_len, rs.max_model_len_auto};
  return plan_memory(rs.model, rs.quant, rs.gpu, rs.scenario.hardware.parallel, rs.scenario.engine, context,
                     proposer_memory(rs));
}

// SGLang's token pool is token-granular (server_args.py page_size 1 by default; shared/reference/serving-engines.md,
// docs/engine.md "page size 1 (llmsim keeps block_size)"), and --kv-cache-dtype auto keeps the model's dtype (SGLang's
// docs/backend/server_arguments.md: "kv_cache_dtype: defaults to the dtype").
std::string kv_unit_note(const spec::ResolvedScenario& r) {
  const auto& e = r.scenario.engine;
  if (e.resolved_runtime() != spec::Runtime::sglang) return "";
  std::string note = "blocks of " + std::to_string(e.block_size) +
                     " are llmsim's KV unit: SGLang's token pool allocates by --page-size (1 token unless given)";
  if (r.quant.kv_dtype == spec::DType::fp16)
    note += "; a 16-bit KV cache is SGLang's --kv-cache-dtype auto, the model's dtype (fp16 or bf16, 2 bytes)";
  return note;
}

Json to_json(const spec::ResolvedScenario& r, const MemoryPlan& plan) {
  Json out = to_json(plan);
  const auto& par = r.scenario.hardware.parallel;
  out["model"] = r.model.id;
  out["gpu"] = r.gpu.id;
  out["num_gpus"] = par.gpus();
  out["tp"] = par.tp;
  out["pp"] = par.pp;
  out["quant"] = r.quant.weights.id;
  out["kv_dtype"] = std::string(spec::to_string(r.quant.kv_dtype));
  out["gpu_memory_utilization"] = r.scenario.engine.gpu_memory_utilization;
  out["notes"] = r.notes;
  out["kv_unit_note"] = kv_unit_note(r);
  return out;
}

void fit_context(spec::ResolvedScenario& rs) {
  for (auto& member : rs.fleet) fit_context(member);
  for (auto& pool : rs.disagg_pools) fit_context(pool);
  if (!rs.max_model_len_auto || rs.max_model_len_wanted <= 0) return;
  const MemoryPlan plan = plan_memory(rs);
  if (plan.fits) rs.max_model_len = plan.max_model_len;
  // Requests are cut to the deployment's context once, before routing: it must fit every member and pool.
  for (const auto& part : rs.fleet) rs.max_model_len = std::min(rs.max_model_len, part.max_model_len);
  for (const auto& part : rs.disagg_pools) rs.max_model_len = std::min(rs.max_model_len, part.max_model_len);
}

}  // namespace llmsim::memory
