#include "llmsim/analysis/static_batch.hpp"

#include <algorithm>
#include <limits>

#include "llmsim/core/error.hpp"

namespace llmsim::analysis {

namespace {
constexpr std::int64_t kMaxTokens = std::numeric_limits<std::int32_t>::max();

/// out[j] = the time of the decode step in which each of `batch` sequences holds context + j cached tokens, j in
/// [0, n): the engine's decode steps, graphed while the context is under the runtime's graph length (vLLM V0's
/// max_seq_len_to_capture, CostModel::eager_decode_context) and eager from the step it reaches it.
void decode_steps_from(const perf::CostModel& model, std::int64_t batch, std::int64_t context, std::int64_t n,
                       double* out) {
  const std::int64_t limit = model.eager_decode_context();
  const std::int64_t graphed = limit > 0 ? std::clamp<std::int64_t>(limit - context, 0, n) : n;
  if (graphed > 0) model.decode_steps(batch).times(batch * context, batch, static_cast<int>(graphed), out);
  if (graphed < n)
    model.decode_steps(batch, true).times(batch * (context + graphed), batch, static_cast<int>(n - graphed),
                                          out + graphed);
}
}  // namespace

double StaticBatchTiming::output_tokens_per_s() const noexcept {
  const double t = total_s();
  return t > 0 ? static_cast<double>(batch * output_tokens) / t : 0.0;
}

double StaticBatchTiming::median_decode_step_s() const {
  if (decode_step_s.empty()) return 0.0;
  std::vector<double> v = decode_step_s;
  const std::size_t n = v.size(), mid = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  if (n % 2) return v[mid];
  const double upper = v[mid];
  return 0.5 * (upper + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)));
}

StaticBatchTiming static_batch(const perf::CostModel& model, std::int64_t batch, std::int64_t input_tokens,
                               std::int64_t output_tokens, const StaticBatchOptions& options) {
  Problems p;
  if (batch < 1) p.add("batch", "must be >= 1, got " + std::to_string(batch));
  if (input_tokens < 1) p.add("input_tokens", "must be >= 1, got " + std::to_string(input_tokens));
  if (output_tokens < 1) p.add("output_tokens", "must be >= 1, got " + std::to_string(output_tokens));
  if (options.max_batched_tokens < 0)
    p.add("max_batched_tokens", "must be >= 0 (0 = no limit), got " + std::to_string(options.max_batched_tokens));
  if (input_tokens > 0 && output_tokens > 0 && input_tokens + output_tokens > kMaxTokens)
    p.add("input_tokens", "input + output must fit in 2^31 tokens, got " + std::to_string(input_tokens) + " + " +
                              std::to_string(output_tokens));
  if (batch > kMaxTokens) p.add("batch", "must be < 2^31, got " + std::to_string(batch));
  p.throw_if_any();

  StaticBatchTiming t;
  t.batch = batch;
  t.input_tokens = input_tokens;
  t.output_tokens = output_tokens;

  // Prefill: pack whole prompts into iterations of at most `budget` tokens; all full iterations have the
  // same shape, so each distinct shape is timed once.
  const std::int64_t budget = options.max_batched_tokens > 0 ? options.max_batched_tokens : batch * input_tokens;
  auto prompts = [&](std::int64_t n) {
    perf::BatchShape s;
    for (std::int64_t i = 0; i < n; ++i) s.add_prefill(input_tokens, 0, true);
    return s;
  };
  if (input_tokens <= budget) {
    const std::int64_t per_step = std::min(batch, budget / input_tokens);  // >= 1
    const std::int64_t full = batch / per_step, rest = batch % per_step;
    t.prefill_s = static_cast<double>(full) * model.iteration_time(prompts(per_step));
    if (rest > 0) t.prefill_s += model.iteration_time(prompts(rest));
    t.prefill_iterations = full + (rest > 0 ? 1 : 0);
  } else {
    // Each prompt alone, in budget-sized chunks attending to its earlier chunks.
    double one = 0;
    std::int64_t chunks = 0;
    for (std::int64_t before = 0; before < input_tokens; before += budget, ++chunks) {
      const std::int64_t chunk = std::min(budget, input_tokens - before);
      perf::BatchShape s;
      s.add_prefill(chunk, before, before + chunk >= input_tokens);
      one += model.iteration_time(s);
    }
    t.prefill_s = static_cast<double>(batch) * one;
    t.prefill_iterations = batch * chunks;
  }

  // Decode: all sequences step together; iteration k attends to input + k − 1 cached tokens. Planned at once with
  // the engine's decode steps (CostModel::decode_steps): the ops that do not follow the context (the GEMMs, most of
  // a step's pricing) are priced once, each step adds its attention term; iteration_time's values bit for bit
  // (tests/analysis/test_static_batch.cpp), at a fraction of its cost (a run fit prices each batch thousands of times).
  if (output_tokens > 1) {
    t.decode_step_s.resize(static_cast<std::size_t>(output_tokens - 1));
    decode_steps_from(model, batch, input_tokens, output_tokens - 1, t.decode_step_s.data());
    for (const double s : t.decode_step_s) t.decode_s += s;
  }
  return t;
}

double decode_run_s(const perf::CostModel& model, std::int64_t batch, std::int64_t context, std::int64_t steps) {
  Problems p;
  if (batch < 1) p.add("batch", "must be >= 1, got " + std::to_string(batch));
  if (context < 0) p.add("context", "must be >= 0, got " + std::to_string(context));
  if (steps < 1) p.add("steps", "must be >= 1, got " + std::to_string(steps));
  if (context > kMaxTokens || steps > kMaxTokens || batch > kMaxTokens)
    p.add("steps", "batch, context and steps must each be < 2^31");
  p.throw_if_any();
  // As static_batch's decode: the engine's decode steps, iteration_time's values bit for bit.
  std::vector<double> step(static_cast<std::size_t>(steps));
  decode_steps_from(model, batch, context, steps, step.data());
  double s = 0;
  for (const double x : step) s += x;
  return s;
}

}  // namespace llmsim::analysis
