#pragma once
// The latency of one static batch: B identical requests of `input_tokens` prompt tokens that arrive together,
// are prefilled, and then decode `output_tokens` tokens in lock step until they all finish. This is what
// vLLM's benchmark_latency, SGLang's bench_one_batch, LMDeploy's profile_generation and llama.cpp's llama-bench
// time, and what `make validate` compares with their published numbers (docs/trust.md).
#include <cstdint>
#include <vector>

#include "llmsim/perf/cost_model.hpp"

namespace llmsim::analysis {

struct StaticBatchOptions {
  /// Token budget of one prefill iteration (vLLM's max_num_batched_tokens without chunked prefill): whole
  /// prompts are packed into an iteration while they fit; a prompt longer than the budget is split into
  /// budget-sized chunks of its own. 0 = every prompt in one iteration (SGLang bench_one_batch, V0 when
  /// B × input fits the budget).
  std::int64_t max_batched_tokens = 0;
};

/// Seconds of each phase, from the cost model's iteration times.
struct StaticBatchTiming {
  std::int64_t batch = 0, input_tokens = 0, output_tokens = 0;
  std::int64_t prefill_iterations = 0;  ///< iterations before the first decode
  double prefill_s = 0;                 ///< all prefill iterations (the prompts' first tokens come out of them)
  double decode_s = 0;                  ///< the output_tokens − 1 decode iterations
  /// Decode iteration times, first to last (context input_tokens .. input_tokens + output_tokens − 2).
  std::vector<double> decode_step_s;
  double total_s() const noexcept { return prefill_s + decode_s; }
  /// batch × output_tokens / total_s(): LMDeploy's and gpt-fast's "output tokens/s".
  double output_tokens_per_s() const noexcept;
  /// Median of decode_step_s (SGLang's "Decode. median latency"); 0 when output_tokens == 1.
  double median_decode_step_s() const;
};

/// Times a static batch on `model`: prefill iterations as StaticBatchOptions describes (prompts in order,
/// context growing across one prompt's chunks), then output_tokens − 1 decode iterations of all `batch`
/// sequences, iteration k (1-based) attending to input_tokens + k − 1 cached tokens. Prefill-first, as vLLM
/// V0 and static engines run it: no decode joins a prefill iteration. O(batch + output_tokens); allocates.
/// ConfigError naming "batch", "input_tokens", "output_tokens" or "max_batched_tokens" when one is < 1 (< 0
/// for the budget), or when the sequence would not fit in 2^31 tokens.
StaticBatchTiming static_batch(const perf::CostModel& model, std::int64_t batch, std::int64_t input_tokens,
                               std::int64_t output_tokens, const StaticBatchOptions& options = {});

/// Seconds of `steps` decode iterations of `batch` sequences whose cached context starts at `context` tokens
/// and grows by one per iteration (llama-bench's tg test: context 0, 1, ..., steps − 1). ConfigError when
/// batch < 1, steps < 1 or context < 0.
double decode_run_s(const perf::CostModel& model, std::int64_t batch, std::int64_t context, std::int64_t steps);

}  // namespace llmsim::analysis
