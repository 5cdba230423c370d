// Speed of the cost model's hot path: CostModel::iteration_time calls per second for batches of 1 ... 1M
// sequences (it takes sums, so the cost must not grow with the batch), and breakdown() for comparison.
#include <chrono>
#include <cstdio>
#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"

namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double calls_per_s(F&& f, double& sink) {
  // Run for ~0.3 s after a short warm-up; report the rate.
  for (int i = 0; i < 1000; ++i) sink += f(i);
  long n = 0;
  const auto t0 = Clock::now();
  double elapsed = 0;
  while (elapsed < 0.3) {
    for (int i = 0; i < 10000; ++i) sink += f(i);
    n += 10000;
    elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  return n / elapsed;
}

}  // namespace

int main() {
  using namespace llmsim;
  const auto& cat = spec::Catalog::builtin();
  struct Case { const char* model; const char* gpu; const char* quant; int tp; };
  const Case cases[] = {{"llama-3.1-8b", "a100-80gb-sxm", "fp16", 1},
                        {"llama-3.1-70b", "h100-80gb-sxm", "fp8", 4},
                        {"mixtral-8x7b", "rtx4090-24gb", "awq-int4", 2},
                        // MLA + shared experts + dense layers; sliding-window layers (extra terms per iteration)
                        {"deepseek-v3", "h200-141gb-sxm", "fp8", 8},
                        {"gemma-3-27b", "h100-80gb-sxm", "fp16", 1}};
  double sink = 0;
  std::printf("bench_cost_model: CostModel::iteration_time / breakdown calls per second\n");
  std::printf("%-14s %-14s %-9s %3s %10s %16s %16s\n", "model", "gpu", "quant", "tp", "decode_seqs", "iter_time/s",
              "breakdown/s");
  for (const auto& c : cases) {
    const auto gpu = cat.gpu(c.gpu);
    spec::Quantization q;
    q.weights = spec::weight_format(c.quant);
    const perf::CostModel cm(cat.model(c.model), q, gpu, perf::default_profile(gpu), spec::ParallelConfig{c.tp, 1});
    for (long seqs : {1L, 64L, 1024L, 1000000L}) {
      perf::BatchShape b;
      b.add_prefill(512, 1024, true);
      b.decode_seqs = seqs;
      b.decode_context = seqs * 700;
      const double fast = calls_per_s(
          [&](int i) {
            perf::BatchShape x = b;
            x.decode_context += i;  // vary the input so nothing is hoisted
            return cm.iteration_time(x);
          },
          sink);
      const double slow = calls_per_s([&](int i) { return cm.breakdown(b).time_s + i * 0.0; }, sink);
      std::printf("%-14s %-14s %-9s %3d %10ld %16.0f %16.0f\n", c.model, c.gpu, c.quant, c.tp, seqs, fast, slow);
    }
  }
  std::printf("(checksum %g)\n", sink);
  return 0;
}
