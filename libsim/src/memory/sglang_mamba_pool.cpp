// SGLang's Mamba state pool; the rules are quoted in sglang_mamba_pool.hpp and spec/engine_config.hpp (spec::sglang).
#include "sglang_mamba_pool.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "linear_state.hpp"
#include "llmsim/spec/runtime_version.hpp"

namespace llmsim::memory::detail {

namespace {
// Mamba2CacheParams.mamba_cache_per_req: the conv window in the model dtype (CONV_DTYPE bfloat16), the temporal
// state in mamba_ssm_dtype (float32 by default; a checkpoint that names its own: ModelSpec::linear_ssm_state_bytes),
// times the layers this rank holds; both sharded by heads over tp.
double state_bytes_per_slot(const spec::ModelSpec& m, const spec::ParallelConfig& par) {
  const auto conv = static_cast<double>(m.linear_conv_state_elements_per_layer());
  const double ssm = static_cast<double>(m.linear_state_elements_per_layer()) - conv;
  const double ssm_bytes = m.linear_ssm_state_bytes > 0 ? m.linear_ssm_state_bytes : spec::sglang::kMambaSsmStateBytes;
  return (conv * 2.0 + ssm * ssm_bytes) * largest_stage_linear_layers(m, par) / par.tp;
}
}  // namespace

bool sglang_hybrid_radix_cache(const spec::ModelSpec& model, const spec::EngineConfig& engine) {
  return engine.prefix_caching() &&
         !spec::sglang_release_without_hybrid_radix_cache(engine.runtime_release, model.linear_mamba2);
}

SglangMambaPool sglang_mamba_pool(const spec::ModelSpec& model, const spec::ParallelConfig& parallel,
                                  const spec::EngineConfig& engine, double rest_bytes) {
  SglangMambaPool pool;
  if (!model.has_linear_attention()) return pool;
  pool.bytes_per_slot = state_bytes_per_slot(model, parallel);
  if (!(pool.bytes_per_slot > 0)) return pool;
  const std::int64_t asked = std::max(1, engine.max_num_seqs);
  if (sglang_hybrid_radix_cache(model, engine)) {
    // mamba_state_memory + full_kv_cache_memory == rest, mamba_state_memory / full_kv_cache_memory == r.
    const double r = spec::sglang::kMambaFullMemoryRatio;
    pool.ratio = r;
    pool.slots = static_cast<std::int64_t>(std::floor(std::max(0.0, rest_bytes) * r / (1 + r) / pool.bytes_per_slot));
    pool.running_cap = std::min(asked, pool.slots / spec::sglang::kMambaSlotsPerRunningRequest);
  } else {
    pool.slots = asked;
    pool.running_cap = asked;
  }
  pool.bytes = static_cast<double>(pool.slots) * pool.bytes_per_slot;
  return pool;
}

void record_sglang_mamba_pool(MemoryPlan& plan, const SglangMambaPool& pool, const spec::EngineConfig& engine) {
  plan.linear_state_slots = pool.slots;
  plan.linear_state_memory_ratio = pool.ratio;
  plan.max_running_requests = pool.slots > 0 || pool.ratio > 0 ? pool.running_cap : engine.max_num_seqs;
}

std::string sglang_mamba_pool_refusal(const SglangMambaPool& pool, double rest_bytes) {
  if (!(pool.ratio > 0) || pool.running_cap >= 1 || !(rest_bytes > 0)) return "";
  char mb[32];
  std::snprintf(mb, sizeof mb, "%.1f", pool.bytes_per_slot / 1e6);
  return "SGLang's Mamba pool holds " + std::to_string(pool.slots) + " state slots (" + mb +
         " MB each) in its share of the memory left after the weights, fewer than the " +
         std::to_string(spec::sglang::kMambaSlotsPerRunningRequest) +
         " one running request needs with the radix cache (max_running_requests would be 0); raise "
         "--mem-fraction-static or pass --disable-radix-cache";
}

}  // namespace llmsim::memory::detail
