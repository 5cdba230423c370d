// Private to perf: the vocabulary of one engine iteration's ops (their names and order), one op's totals (Raw), the
// two places iteration formulas write them (every field, or the times alone) and the hot path's validity test.
// Included by cost_model_ops.hpp, whose formulas fill them.
#pragma once

#include <array>
#include <cstdint>
#include <limits>

#include "llmsim/perf/cost_model.hpp"

namespace llmsim::perf::cost_detail {

// kLora sits before kAttnDecode: DecodeSteps keeps every op before decode attention as one running sum, so an op
// added here changes neither its kAfter nor the unrolled sum_after.
enum Op : int {
  kQkv, kLora, kAttnPrefill, kAttnDecode, kKvB, kOProj, kMlp, kNorms, kLmHead, kSampling, kAllReduce, kPpTransfer, kOffload,
  kLaunch, kCpu, kProposer, kNumOps
};
inline constexpr std::array<const char*, kNumOps> kOpNames = {
    "qkv_proj", "lora", "attention_prefill", "attention_decode", "kv_b_proj", "o_proj", "mlp", "norms_rotary_act",
    "lm_head", "sampling", "tp_allreduce", "pp_transfer", "weight_offload", "launch", "cpu", "proposer"};

/// One op's totals for the iteration (all layers); a plain struct so evaluation allocates nothing.
struct Raw {
  double time_s = 0, flops = 0, bytes = 0, peak_fraction = 0;
  Bound bound = Bound::memory;
};
using RawOps = std::array<Raw, kNumOps>;

/// Where the batch ops are written: every field of RawOps (breakdown(), the direct path) ...
struct AllFields {
  static constexpr bool kAllFields = true;
  RawOps& ops;
  void set(int op, const Raw& r) { ops[static_cast<std::size_t>(op)] = r; }
  void set_time(int op, double t, Bound b) {
    ops[static_cast<std::size_t>(op)].time_s = t;
    ops[static_cast<std::size_t>(op)].bound = b;
  }
  double& time(int op) { return ops[static_cast<std::size_t>(op)].time_s; }
};
/// ... or the times alone (iteration_time's fast path): 120 bytes to clear instead of 600, and the FLOPs, bytes and
/// fractions of the Raw values handed to set() are dead, so the inlined formulas never compute them.
struct TimesOnly {
  static constexpr bool kAllFields = false;
  std::array<double, kNumOps> t{};
  void set(int op, const Raw& r) { t[static_cast<std::size_t>(op)] = r.time_s; }
  void set_time(int op, double v, Bound) { t[static_cast<std::size_t>(op)] = v; }
  double& time(int op) { return t[static_cast<std::size_t>(op)]; }
};

inline constexpr double kActBytes = 2.0;  // fp16/bf16 activations

/// Batches of up to this many tokens read the token-only ops from a table (see CostModel::Constants::table).
/// 8192 is vLLM's default max_num_batched_tokens; larger batches take the direct (bit-identical) path. The
/// table's rows are filled on first use (token_table.hpp): a simulation pays for the step sizes it runs.
inline constexpr std::int64_t kTableTokens = CostModel::kMaxTableTokens;

/// The same conditions validate() rejects, as branch-free comparisons: the hot path calls the (allocating,
/// message-building) validate() only when one of them holds.
inline bool maybe_invalid(const BatchShape& b) {
  return (b.prefill_seqs < 0) | (b.prefill_tokens < 0) | !(b.prefill_attn_pairs >= 0) |
         !(b.prefill_attn_pairs <= std::numeric_limits<double>::max()) | (b.prefill_kv_tokens < 0) |
         (b.prefill_last_chunks < 0) | (b.decode_seqs < 0) | (b.decode_context < 0) | (b.spec_tokens < 0) |
         (b.decode_max_context < 0) | (b.decode_max_context > b.decode_context) |
         ((b.prefill_tokens > 0) & (b.prefill_seqs == 0)) | (b.prefill_seqs > b.prefill_tokens) |
         (b.prefill_last_chunks > b.prefill_seqs) | (b.prefill_kv_tokens < b.prefill_tokens);
}

}  // namespace llmsim::perf::cost_detail
