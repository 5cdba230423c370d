// Static-batch latency (vLLM benchmark_latency / SGLang bench_one_batch shape): prefill packing and chunking,
// decode context growth, derived throughputs, and bad input.
#include <catch2/catch.hpp>

#include <tuple>

#include "llmsim/analysis/static_batch.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"

using namespace llmsim;

namespace {

perf::CostModel llama8b_on_a100() {
  const auto gpu = spec::Catalog::builtin().gpu("a100-80gb-sxm");
  spec::Quantization q;
  q.weights = spec::weight_format("bf16");
  return perf::CostModel(spec::Catalog::builtin().model("llama-3.1-8b"), q, gpu, perf::default_profile(gpu),
                         spec::ParallelConfig{1, 1});
}

perf::BatchShape prompts(int n, std::int64_t len) {
  perf::BatchShape s;
  for (int i = 0; i < n; ++i) s.add_prefill(len, 0, true);
  return s;
}

perf::BatchShape decodes(std::int64_t seqs, std::int64_t context) {
  perf::BatchShape s;
  s.decode_seqs = seqs;
  s.decode_context = seqs * context;
  return s;
}

}  // namespace

TEST_CASE("a static batch is one prefill then out-1 decode steps with growing context", "[analysis][static_batch]") {
  const auto cm = llama8b_on_a100();
  const auto t = analysis::static_batch(cm, 8, 512, 64);
  CHECK(t.prefill_iterations == 1);
  CHECK(t.prefill_s == cm.iteration_time(prompts(8, 512)));
  REQUIRE(t.decode_step_s.size() == 63);
  // Step k (1-based) attends to the prompt plus the k-1 tokens generated before it.
  CHECK(t.decode_step_s.front() == cm.iteration_time(decodes(8, 512)));
  CHECK(t.decode_step_s.back() == cm.iteration_time(decodes(8, 512 + 62)));
  double sum = 0;
  for (double s : t.decode_step_s) sum += s;
  CHECK(t.decode_s == Approx(sum).epsilon(1e-12));
  CHECK(t.total_s() == Approx(t.prefill_s + sum).epsilon(1e-12));
  CHECK(t.output_tokens_per_s() == Approx(8.0 * 64 / t.total_s()));
  // More cached context never makes a decode step cheaper, and 63 steps cost more than the prefill of 8x512
  // tokens on a memory-bound decode (physics, not a fitted number).
  for (std::size_t k = 1; k < t.decode_step_s.size(); ++k) CHECK(t.decode_step_s[k] >= t.decode_step_s[k - 1]);
  CHECK(t.median_decode_step_s() >= t.decode_step_s.front());
  CHECK(t.median_decode_step_s() <= t.decode_step_s.back());
  CHECK(t.decode_s > t.prefill_s);
}

TEST_CASE("one output token means no decode step", "[analysis][static_batch]") {
  const auto cm = llama8b_on_a100();
  const auto t = analysis::static_batch(cm, 2, 100, 1);
  CHECK(t.decode_step_s.empty());
  CHECK(t.decode_s == 0);
  CHECK(t.median_decode_step_s() == 0);
  CHECK(t.total_s() == t.prefill_s);
  CHECK(t.total_s() > 0);
}

TEST_CASE("a prefill budget packs whole prompts per iteration and chunks longer ones", "[analysis][static_batch]") {
  const auto cm = llama8b_on_a100();
  analysis::StaticBatchOptions o;
  o.max_batched_tokens = 250;  // two 100-token prompts per iteration
  const auto packed = analysis::static_batch(cm, 5, 100, 2, o);
  CHECK(packed.prefill_iterations == 3);
  CHECK(packed.prefill_s == Approx(2 * cm.iteration_time(prompts(2, 100)) + cm.iteration_time(prompts(1, 100))));
  // Packing costs fixed per-iteration overheads: three iterations are slower than one with all five prompts.
  CHECK(packed.prefill_s > analysis::static_batch(cm, 5, 100, 2).prefill_s);

  o.max_batched_tokens = 300;  // a 1000-token prompt becomes chunks of 300, 300, 300, 100
  const auto chunked = analysis::static_batch(cm, 2, 1000, 2, o);
  CHECK(chunked.prefill_iterations == 8);
  double one = 0;
  for (std::int64_t before : {0, 300, 600, 900}) {
    perf::BatchShape s;
    s.add_prefill(before == 900 ? 100 : 300, before, before == 900);
    one += cm.iteration_time(s);
  }
  CHECK(chunked.prefill_s == Approx(2 * one));
}

TEST_CASE("decode_run_s sums decode steps from a starting context", "[analysis][static_batch]") {
  const auto cm = llama8b_on_a100();
  const double run = analysis::decode_run_s(cm, 1, 0, 3);
  CHECK(run == Approx(cm.iteration_time(decodes(1, 0)) + cm.iteration_time(decodes(1, 1)) +
                      cm.iteration_time(decodes(1, 2))));
  // The same steps as a static batch's decode phase.
  const auto t = analysis::static_batch(cm, 4, 300, 11);
  CHECK(analysis::decode_run_s(cm, 4, 300, 10) == Approx(t.decode_s).epsilon(1e-12));
}

// static_batch and decode_run_s plan their decode steps with the engine's CostModel::decode_steps (the GEMMs priced
// once per batch, each step its attention term), not one iteration_time per step: every step must still be
// iteration_time's value, bit for bit, on every runtime's cost model, for small and large batches (past the table of
// token counts, decode_steps falls back to iteration_time) and long outputs (the decode split changes with the context).
TEST_CASE("static batch decode steps are iteration_time's, bit for bit", "[analysis][static_batch]") {
  const auto gpu = spec::Catalog::builtin().gpu("h100-80gb-sxm");
  spec::Quantization q;
  q.weights = spec::weight_format("bf16");
  for (const auto rt : {spec::Runtime::vllm_v1, spec::Runtime::vllm_v0_sync, spec::Runtime::sglang}) {
    const perf::CostModel cm(spec::Catalog::builtin().model("llama-3.1-8b"), q, gpu, perf::default_profile(gpu),
                             spec::ParallelConfig{1, 1}, true, 0, rt);
    for (const auto& [b, in, out] : {std::tuple<std::int64_t, std::int64_t, std::int64_t>{1, 128, 2048},
                                     {16, 1024, 256}, {64, 4096, 64}, {700, 200, 40}}) {
      INFO("runtime " << spec::to_string(rt) << ", batch " << b << ", input " << in << ", output " << out);
      const auto t = analysis::static_batch(cm, b, in, out);
      REQUIRE(t.decode_step_s.size() == static_cast<std::size_t>(out - 1));
      double sum = 0;
      int differ = 0;
      for (std::int64_t k = 1; k < out; ++k) {
        const double s = cm.iteration_time(decodes(b, in + k - 1));
        differ += t.decode_step_s[static_cast<std::size_t>(k - 1)] != s;
        sum += s;
      }
      CHECK(differ == 0);
      CHECK(t.decode_s == sum);  // summed in the same order
      CHECK(analysis::decode_run_s(cm, b, in, out - 1) == sum);
      // A run fit prices a static batch with a table of token counts only up to the batch (CostModel's
      // table_tokens; BenchPredictor): the prefill beyond it priced directly, the same bits.
      const perf::CostModel small(spec::Catalog::builtin().model("llama-3.1-8b"), q, gpu, perf::default_profile(gpu),
                                  spec::ParallelConfig{1, 1}, true, 0, rt, b);
      const auto s = analysis::static_batch(small, b, in, out);
      CHECK(s.prefill_s == t.prefill_s);
      CHECK(s.decode_step_s == t.decode_step_s);
      CHECK(s.decode_s == t.decode_s);
    }
  }
}

TEST_CASE("static batch rejects bad sizes naming the field", "[analysis][static_batch]") {
  const auto cm = llama8b_on_a100();
  auto message = [&](std::int64_t b, std::int64_t in, std::int64_t out, std::int64_t budget) -> std::string {
    try {
      analysis::static_batch(cm, b, in, out, analysis::StaticBatchOptions{budget});
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  CHECK_THAT(message(0, 10, 10, 0), Catch::Contains("batch: must be >= 1, got 0"));
  CHECK_THAT(message(1, -5, 10, 0), Catch::Contains("input_tokens: must be >= 1, got -5"));
  CHECK_THAT(message(1, 10, 0, 0), Catch::Contains("output_tokens: must be >= 1, got 0"));
  CHECK_THAT(message(1, 10, 10, -1), Catch::Contains("max_batched_tokens"));
  CHECK_THAT(message(1, 3'000'000'000LL, 10, 0), Catch::Contains("2^31"));
  CHECK_THROWS_AS(analysis::decode_run_s(cm, 1, -1, 3), ConfigError);
  CHECK_THROWS_AS(analysis::decode_run_s(cm, 1, 0, 0), ConfigError);
}
