#pragma once
// A replica's configuration (private to the engine): its scheduler policy and limits, and the mechanisms it runs
// (prefix caching, host tier, speculative decoding, disaggregation, vLLM releases' scheduling variants, linear-attention
// state, sliding-window groups, multi-step scheduling), set once by simulation_build.cpp. The replica is replica.hpp's.
#include <cstdint>
#include <memory>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/sglang_admission.hpp"

namespace llmsim::engine::detail {

struct ReplicaConfig {
  spec::SchedulerPolicy policy = spec::SchedulerPolicy::vllm;
  std::int64_t max_num_seqs = 256, max_num_batched_tokens = 8192;
  bool swap = false;
  double block_bytes = 0;  ///< per GPU, for swap transfer times
  bool prefix_caching = false;
  /// A hybrid model's prefix-cache hit granule in blocks (memory::MemoryPlan::hybrid_prefix_block_tokens over
  /// block_size, rounded up): vLLM caches whole blocks of its raised attention block size; 1 otherwise.
  std::int64_t prefix_granule_blocks = 1;
  int hash_block_tokens = 0;  ///< prompt tokens per block hash of a block-hash trace (Seq::chain), else 0
  /// Host KV tier (engine.kv_offload_gb, engine/kv_host_tier.hpp): its blocks (0 = none) and the bytes one block
  /// has on all the replica's GPUs together (for the bytes moved; transfer times use block_bytes, per GPU).
  std::int64_t host_tier_blocks = 0;
  double replica_block_bytes = 0;
  /// Speculative decoding (engine/speculative.hpp): draft tokens each decoder verifies per step (k; 0 = off) and
  /// the expected tokens each emits per step, (1 − α^{k+1}) / (1 − α).
  std::int64_t spec_tokens = 0;
  double spec_expected_tokens = 1;
  /// Disaggregation's prefill pool: a request whose prompt is computed leaves in state handoff (reported with the
  /// finished ones), its KV blocks held until release_handoff().
  bool prefill_only = false;
  /// vLLM V0's asynchronous output processor (perf::first_token_after_next_step): a step's sampled tokens become
  /// request outputs while the next step runs, so a prompt's first token reaches the caller when the engine's next
  /// iteration ends — and so does its last: the stop is found while the next step runs, which has already scheduled
  /// the sequence once more (its extra token computed and dropped; Replica::output_tail()).
  bool first_token_after_next_step = false;
  /// vLLM V1's async scheduling (perf::async_scheduling; perf/async_scheduling.hpp): a step is planned when the step
  /// before it starts, so a request queued while a step runs is first admitted into the step after the next one
  /// (Replica::plan_cutoff_s_). The cost model prices the step's host/GPU overlap.
  bool async_scheduling = false;
  /// vLLM V0 before 0.5.4 (spec::RuntimeForVersion::v0_running_by_arrival): the running list is kept in arrival
  /// order, so a re-admitted or swapped-in victim rejoins at its arrival's place and the tail is the latest arrival.
  bool running_by_arrival = false;
  /// SGLang with the radix cache off and requests that ignore EOS (spec/sglang_admission.hpp): admission by the
  /// walk over the running requests' exact future tokens (schedule_sglang_eos.cpp) instead of new_token_ratio.
  spec::SglangEosAdmission sglang_eos;
  /// vLLM V0 0.5.4-0.5.5 under chunked prefill (spec::v0_prefills_ahead_of_decodes): the running list is V0's walk
  /// order, new prompts ahead of the decodes, and the decoders the token budget no longer covers skip the step
  /// (v0_walk.cpp).
  bool prefills_ahead_of_decodes = false;
  /// vLLM V0's multi-step scheduling (spec/multi_step.hpp; multi_step.cpp): decode steps per scheduler call (1 = off);
  /// whether the client receives each step's tokens as they come (else a window's at its end); and the cost model of a
  /// window's steps after its first (the same GPU work, no per-step scheduling CPU time: set when scheduler_steps > 1).
  /// vLLM V1's linear-attention state (Qwen3-Next, Qwen3.5; memory::MemoryPlan::linear_state_blocks_per_seq): KV
  /// blocks every sequence in the running list holds beside its tokens' — taken when it joins the list, freed when
  /// it leaves — so the pool, not max_num_seqs alone, bounds how many run. 0 = none.
  std::int64_t state_blocks = 0;
  /// vLLM V1's sliding-window groups (kv_window.cpp; 0 = none): pages a block past the window frees (one per sliding
  /// group), and the blocks a decoder keeps in each sliding group (cdiv(window, block_size) + 1).
  std::int64_t window_pages = 0, window_blocks = 0;
  std::int32_t scheduler_steps = 1;
  bool window_streams_steps = true;
  std::shared_ptr<const perf::CostModel> window_cost;
};

}  // namespace llmsim::engine::detail
