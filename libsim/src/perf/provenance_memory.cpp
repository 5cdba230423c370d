// The provenance of the memory plan's engine constants that are not a kernel's or a scheduler's: SGLang's Mamba state
// pool for hybrid models (memory/sglang_mamba_pool.hpp; spec::sglang's kMaxMambaCacheSize and neighbours).
#include "provenance_rows.hpp"

#include "llmsim/spec/engine_config.hpp"

namespace llmsim::perf::provenance_rows {

void add_memory_pool_provenance(std::vector<ConstantProvenance>& t) {
  const std::string mr = "sgl-project/sglang python/sglang/srt/model_executor/model_runner.py (0.5.4-0.5.8 line; later "
                         "model_runner_kv_cache_mixin.py) ";
  t.push_back(c("memory.sglang_mamba.max_mamba_cache_size", "sglang", P::engine_code,
                mr + "handle_max_mamba_cache: with disable_radix_cache, max_mamba_cache_size = max_running_requests, "
                     "or 512 when unset (before sglang#11214 the same in init for every hybrid GDN model, its radix "
                     "cache forced off); init_memory_pool caps max_num_reqs at it (ratio 1)",
                {}, static_cast<double>(spec::sglang::kMaxMambaCacheSize)));
  t.push_back(c("memory.sglang_mamba.full_memory_ratio", "sglang", P::engine_code,
                mr + "handle_max_mamba_cache with the radix cache: mamba_state_memory = rest x r / (1 + r), r = "
                     "server_args.mamba_full_memory_ratio; 0.9 from sglang#11679 (\"Increase default "
                     "mamba_full_memory_ratio to 0.9\", opened 2025-10-15), 0.2 before it since sglang#11214 (merged "
                     "2025-10-13): both after 0.5.3, taken as first released together in 0.5.4",
                {}, spec::sglang::kMambaFullMemoryRatio));
  t.push_back(c("memory.sglang_mamba.slots_per_running_request", "sglang", P::engine_code,
                mr + "MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO = 3: init_memory_pool sets max_num_reqs = "
                     "min(max_num_reqs, max_mamba_cache_size // 3) with the radix cache (no_buffer strategy; "
                     "extra_buffer adds MAMBA_CACHE_V2_ADDITIONAL_RATIO_OVERLAP = 2, not modelled)",
                {}, static_cast<double>(spec::sglang::kMambaSlotsPerRunningRequest)));
  t.push_back(c("memory.sglang_mamba.ssm_state_bytes", "sglang", P::engine_code,
                "sgl-project/sglang python/sglang/srt/configs/mamba_utils.py Mamba2CacheParams.mamba_cache_per_req: "
                "conv window in CONV_DTYPE bfloat16, temporal state in SGLANG_MAMBA_SSM_DTYPE, which server_args sets "
                "from mamba_ssm_dtype (default \"float32\"; later releases read a checkpoint's own mamba_ssm_dtype "
                "first)",
                {}, spec::sglang::kMambaSsmStateBytes));
}

}  // namespace llmsim::perf::provenance_rows
