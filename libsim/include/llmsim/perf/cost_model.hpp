#pragma once
// Layer 3: the time of one engine iteration on a GPU, by a per-op roofline with measured efficiencies.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "llmsim/core/json_view.hpp"
#include "llmsim/perf/batch_shape.hpp"
#include "llmsim/perf/decode_attention.hpp"
#include "llmsim/perf/eager_host.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/deployment.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/gpu_spec.hpp"
#include "llmsim/spec/model_spec.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::spec {
struct ResolvedScenario;
}

namespace llmsim::perf {

/// Expected distinct routed experts a MoE layer runs when each of `tokens` picks `k` of `experts`:
/// E(1 - (1 - k/E)^T). The one rule for the experts' GEMMs (their weights streamed once per touched expert) and for
/// MBU's count of the expert bytes an iteration reads.
inline double experts_touched(double experts, double k, double tokens) {
  return experts * (1.0 - std::pow(1.0 - k / experts, tokens));
}

enum class Bound { compute, memory, communication, overhead };
std::string to_string(Bound b);

/// One operator of the iteration, summed over all layers on the critical path.
struct OpCost {
  std::string name;      ///< "qkv_proj", "lora" (engine.enable_lora), "attention_prefill", "attention_decode", "kv_b_proj" (MLA), "o_proj", "mlp",
                         ///< "lm_head", "norms_rotary_act", "sampling", "tp_allreduce", "pp_transfer", "launch", "cpu"
  double time_s = 0;
  double flops = 0;
  double bytes = 0;
  Bound bound = Bound::memory;
  double peak_fraction = 0;  ///< achieved fraction of the bounding peak (FLOP/s or bytes/s)
};

struct StepCost {
  double time_s = 0;
  Bound bound = Bound::memory;   ///< the largest contributor's class
  double flops = 0, bytes = 0;   ///< per tensor-parallel rank, summed over the ops and all pipeline stages
  std::int64_t tokens = 0;       ///< tokens processed by the iteration (prefill tokens + decode sequences)
  std::vector<OpCost> ops;       ///< filled only by CostModel::breakdown()
};

class CostModel;

/// Consecutive decode-only iterations of the same `decode_seqs` sequences (no prefill, no speculation) whose context
/// grows step by step, as an engine replica runs between admissions and completions: the ops that do not depend on
/// the context are evaluated once, so each time() costs the decode-attention term alone. time(ctx) equals
/// CostModel::iteration_time of BatchShape{decode_seqs, decode_context = ctx} bit for bit (the same values summed in
/// the same order). Holds a pointer to its CostModel, which must outlive it.
class DecodeSteps {
 public:
  double time(std::int64_t decode_context) const {
    if (!attn_ || decode_context < 0) return slow_time(decode_context);
    const auto ctx = static_cast<double>(decode_context);
    if (decode_context >= settled_from_) return time_with(settled_terms_, ctx);  // the split no longer changes
    return time_with(split_terms(ctx, decode_context), ctx);
  }
  /// out[k] = time(first + k · stride) for k in [0, n), bit for bit: a run of decode steps planned at once (stride
  /// >= 0). Once the decode terms no longer follow the context (most batches from the start), the loop holds nothing
  /// but the attention term and the sum.
  void times(std::int64_t first, std::int64_t stride, int n, double* __restrict out) const;
  std::int64_t seqs() const noexcept { return seqs_; }
  /// The context from which time() reads the settled split's terms without the split rule (0 when the split never
  /// follows the context; the int64 maximum until a call finds it settled).
  std::int64_t settled_from() const noexcept { return settled_from_; }
  /// Whether these are the steps of a batch holding a sequence past the CUDA graphs' length
  /// (CostModel::eager_decode_context).
  bool long_context() const noexcept { return max_context_ > 0; }

 private:
  friend class CostModel;
  static constexpr int kAfter = 12;  ///< ops after decode attention (checked against the op table)
  static_assert(kAfter == 12, "sum_after unrolls exactly kAfter adds: write its cases anew with kAfter");
  double slow_time(std::int64_t decode_context) const;
  /// The decode terms of the split at `ctx`, below settled_from_: cached by split, which changes rarely step to step.
  /// The split that reaches its cap (DecodeAttentionModel::split_settled) is the split of every longer context: its
  /// terms are kept as settled_terms_ and time() reads them from the least such context met on, without the split rule.
  const DecodeAttentionModel::SeqTerms& split_terms(double ctx, std::int64_t decode_context) const {
    const double split = attn_->split_for(seqs_d_, ctx);
    if (split != split_) {
      split_terms_ = attn_->terms_for_split(seqs_d_, split);
      split_ = split;
      split_settled_ = attn_->split_settled(seqs_d_, ctx);  // a function of the split alone (is it the cap?)
    }
    if (split_settled_) {  // decode_context < settled_from_ here: settled from this context on
      settled_terms_ = split_terms_;
      settled_from_ = decode_context;
    }
    return split_terms_;
  }
  /// the table path's sum in op order (CostModel::step_time), with the one context-dependent term computed now from the split's `terms`.
  double time_with(const DecodeAttentionModel::SeqTerms& terms, double ctx) const {
    double t = sum_after(before_ + attn_->time_s(terms, seqs_d_, ctx) * attn_layers_);
    if (eager_host_) [[unlikely]] {
      // An eager step whose Python forward runs ahead of the GPU (V0 past its graph length): after_ ends before the
      // launch term, which waits for the host's remainder over the GPU's work summed so far (CostModel's
      // finish_launch), then the CPU's serialized time — the direct path's values in its order.
      t += eager_host_launch_s(launches_, host_s_, t);
      t += cpu_;
    }
    return t < host_floor_ ? host_floor_ : t;
  }
  /// t plus the ops after decode attention, in op order. The ops that take no time are left out (t > 0, and t + 0.0
  /// is t); the others sit at the end of after_, so one jump enters the unrolled adds where they begin.
  double sum_after(double t) const {
    switch (n_after_) {
      case 12: t += after_[0]; [[fallthrough]];
      case 11: t += after_[1]; [[fallthrough]];
      case 10: t += after_[2]; [[fallthrough]];
      case 9: t += after_[3]; [[fallthrough]];
      case 8: t += after_[4]; [[fallthrough]];
      case 7: t += after_[5]; [[fallthrough]];
      case 6: t += after_[6]; [[fallthrough]];
      case 5: t += after_[7]; [[fallthrough]];
      case 4: t += after_[8]; [[fallthrough]];
      case 3: t += after_[9]; [[fallthrough]];
      case 2: t += after_[10]; [[fallthrough]];
      case 1: t += after_[11]; [[fallthrough]];
      default: break;
    }
    return t;
  }
  const CostModel* model_ = nullptr;
  std::int64_t seqs_ = 0;
  double seqs_d_ = 0;
  std::int64_t max_context_ = 0;     ///< the BatchShape::decode_max_context the steps are priced with
  /// Set on the table path of iteration_time; else time() calls iteration_time.
  const DecodeAttentionModel* attn_ = nullptr;
  /// The decode terms from settled_from_ on, where the split no longer follows the context (from 0 when it never
  /// does: the model's per-count table); below it the last split's terms (caches: a DecodeSteps belongs to one caller).
  mutable DecodeAttentionModel::SeqTerms settled_terms_;
  mutable std::int64_t settled_from_ = std::numeric_limits<std::int64_t>::max();
  mutable DecodeAttentionModel::SeqTerms split_terms_;
  mutable double split_ = -1;
  mutable bool split_settled_ = false;  ///< split_ is its cap: settled
  double attn_layers_ = 0;           ///< layers the decode kernel runs in
  double before_ = 0;                ///< the running sum of the ops before decode attention, in op order
  double after_[kAfter] = {};        ///< the ops after it that take time, in op order, at the array's end
  int n_after_ = 0;                  ///< how many of after_ are set
  double host_floor_ = 0;            ///< the host's time under async scheduling (the step's least time), else 0
  /// Eager steps priced from the table (long_context on a runtime whose eager launch term waits for the GPU's work):
  /// the launches' own price, the host's enqueue time (eager_host_launch_s' terms) and the CPU op, added after after_.
  bool eager_host_ = false;
  double launches_ = 0, host_s_ = 0, cpu_ = 0;
};

class CostModel {
 public:
  /// Throws ConfigError when tp/pp do not divide the model, or the quantization needs a tensor path the
  /// GPU lacks and has no fallback. `runtime` picks the attention backends, graph rules, all-reduce and CPU costs
  /// (perf/runtime.hpp).
  /// `table_tokens`: iteration_time's token-only ops (the GEMMs, norms, LM head) are tabulated for 0 .. table_tokens
  /// tokens (at most kMaxTableTokens, the default). Beyond it they are computed per call, with the same values (the
  /// table is filled by the very functions: the same bits). A row is filled on the first step that reads it
  /// (perf/token_table.hpp), so a model pays for the step sizes it prices only.
  static constexpr std::int64_t kMaxTableTokens = 8192;
  CostModel(spec::ModelSpec model, spec::Quantization quant, spec::GpuSpec gpu, HardwareProfile profile,
            spec::ParallelConfig parallel, bool cuda_graphs = true, double cpu_offload_bytes = 0,
            Runtime runtime = Runtime::vllm_v1, std::int64_t table_tokens = kMaxTableTokens);

  /// Seconds for one iteration of `batch` (hot path: O(1), no allocation). 0 for an empty batch.
  /// ConfigError (path "batch.<field>") for negative or inconsistent batch fields.
  double iteration_time(const BatchShape& batch) const;
  /// The same, with the proposer's part of it in `*proposer_s` (0 unless batch.spec_tokens > 0 and a proposer is
  /// set): for the draft's share of GPU time.
  double iteration_time(const BatchShape& batch, double* proposer_s) const;
  /// Decode-only steps of `decode_seqs` sequences at any context (DecodeSteps): the engine's hot path between
  /// admissions and completions. decode_seqs >= 1, no speculation. `long_context`: one of the sequences holds at
  /// least eager_decode_context() tokens (then > 0), so the steps run without their CUDA graph.
  DecodeSteps decode_steps(std::int64_t decode_seqs, bool long_context = false) const;
  /// The cached tokens from which one decode sequence makes a decode-only step run eagerly (vLLM V0's
  /// max_seq_len_to_capture; perf/engine_overhead.hpp); 0 when no length does.
  std::int64_t eager_decode_context() const noexcept;
  /// The same time with its per-op breakdown (for `llmsim step`).
  StepCost breakdown(const BatchShape& batch) const;
  /// Speculative decoding's GPU proposer (a draft model, an EAGLE head or MTP module as a one-layer model), whose
  /// passes a batch with spec_tokens > 0 adds (perf/speculative.hpp); nullptr (the default) = none, as for n-gram
  /// proposals made on the CPU. Give it without_cpu_overhead(): the engine's step CPU time is the target's.
  void set_proposer(std::shared_ptr<const CostModel> proposer) { proposer_ = std::move(proposer); }
  const CostModel* proposer() const noexcept { return proposer_.get(); }
  /// A copy whose per-step CPU (scheduling, input preparation, output) time overlaps the GPU's work: vLLM V1's async
  /// scheduling (perf/async_scheduling.hpp). A step then takes max(GPU work, host time) instead of their sum.
  CostModel with_async_scheduling(bool on = true) const;
  bool async_scheduling() const noexcept;
  /// A step launched by an idle engine: no step runs before it to hide its host time behind, so it takes the GPU's
  /// work plus the host's even under async scheduling — the same bits as iteration_time of this model without
  /// with_async_scheduling (iteration_time otherwise). O(1) in the batch, as iteration_time. `proposer_s` as
  /// iteration_time's.
  double serial_time(const BatchShape& batch, double* proposer_s) const;
  /// A copy that charges no per-step CPU (scheduling) time: for a proposer running inside the target's step.
  CostModel without_cpu_overhead() const;
  /// A copy whose per-step CPU time grows by `extra_s` per sequence in the batch: host work that serving adds to each
  /// engine step (perf/served_step_host.hpp). ConfigError unless `extra_s` is finite and >= 0.
  CostModel with_host_per_seq_s(double extra_s) const;
  /// A copy whose decode-only CUDA graphs replay decode batches of up to `n` sequences, larger ones eagerly (SGLang's
  /// cuda_graph_max_bs; make_cost_model applies the scenario's). ConfigError at engine.cuda_graph_max_bs for n < 1.
  CostModel with_max_graph_batch(int n) const;
  /// A copy that runs vLLM's LoRA kernels (engine.enable_lora; perf/lora_kernels.hpp) for `slots` adapter slots
  /// (max_loras) padded to `rank` (max_lora_rank), of which a step's requests use `adapters` (workload.lora_adapters,
  /// at most `slots`): a shrink and an expand per wrapped linear and layer in every step, on the general path and on
  /// decode_steps' alike; O(1) in the batch. ConfigError at engine.max_loras / engine.max_lora_rank /
  /// workload.lora_adapters for values below 1 or adapters above the slots.
  CostModel with_lora(int slots, int rank, int adapters) const;
  /// Seconds to move `bytes` between host and one GPU (swap-out/in of KV blocks).
  double host_transfer_time(double bytes) const;

  const spec::ModelSpec& model() const noexcept { return model_; }
  const spec::GpuSpec& gpu() const noexcept { return gpu_; }
  const HardwareProfile& profile() const noexcept { return profile_; }
  const spec::ParallelConfig& parallel() const noexcept { return parallel_; }
  const spec::Quantization& quant() const noexcept { return quant_; }
  /// The tensor-core dtype the GEMMs run on (after any fallback, e.g. fp8 -> fp16 on an A100).
  spec::DType gemm_dtype() const noexcept;
  /// Weight bytes one GPU streams per iteration for a batch that touches every expert (linears + LM head).
  double weight_bytes_per_gpu() const noexcept;
  /// The share of a MoE model's routed experts an iteration of `tokens` tokens runs (experts_touched / E); 0 for a
  /// dense model.
  double routed_expert_share(double tokens) const noexcept;
  Runtime runtime() const noexcept { return runtime_; }
  Runtime engine() const noexcept { return runtime_; }  ///< former name of runtime()
  /// The decode-attention backend the engine runs for this GPU and KV dtype.
  DecodeAttentionBackend decode_attention_backend() const noexcept;

 private:
  spec::ModelSpec model_;
  spec::Quantization quant_;
  spec::GpuSpec gpu_;
  HardwareProfile profile_;
  spec::ParallelConfig parallel_;
  bool cuda_graphs_;
  Runtime runtime_;
  double host_bandwidth() const;  ///< host<->device copies: the profile's, else 0.85 of the PCIe rate
  // Precomputed per-iteration constants (weight bytes per GPU, per-token FLOPs, ...) live in the .cpp's
  // Constants struct to keep this header light.
  struct Constants;
  std::shared_ptr<const Constants> c_;
  std::shared_ptr<const CostModel> proposer_;
  double proposer_time(const BatchShape& batch) const;  ///< speculative step's proposer passes (0 without one)
  /// iteration_time (Serial = false) and serial_time (true): the one choice of path, in cost_model.cpp.
  template <bool Serial>
  double step_time(const BatchShape& batch, double* proposer_s) const;
};

/// Checks a batch shape: negative counts, prefill tokens without chunks, more last chunks than chunks, ...
/// ConfigError with path "batch.<field>".
void validate(const BatchShape& batch);

/// The vLLM generation a scheduler policy runs on when engine.runtime is unset: "vllm-v0" → V0, else V1.
Runtime engine_generation(spec::SchedulerPolicy policy);

/// The cost model of a resolved scenario (with speculative decoding's proposer when engine.speculative is set):
/// hardware.gpu_profile when set (ConfigError when the file's gpu_id
/// is neither the scenario's GPU nor, for a MIG slice, its parent card), else default_profile(gpu).
CostModel make_cost_model(const spec::ResolvedScenario& scenario);

/// JSON of `llmsim step --json`: time_ms, bound, flops, bytes, tokens, tokens_per_s, ops[{name, time_ms,
/// flops, bytes, bound, peak_fraction}].
Json to_json(const StepCost& s);

}  // namespace llmsim::perf
