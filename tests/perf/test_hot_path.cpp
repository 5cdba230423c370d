// The cost model's hot path (CostModel::iteration_time: the token-only ops from a table, the other ops' times alone)
// must give the very bits of the direct evaluation breakdown() sums, and DecodeSteps (the engine's decode runs) those
// of iteration_time — over every catalogue model and the GPUs, formats, KV dtypes, runtimes, graph modes and parallel
// layouts that change which terms run.
#include <catch2/catch.hpp>

#include <boost/random/uniform_int_distribution.hpp>
#include <cstdint>
#include <limits>

#include "llmsim/core/error.hpp"
#include "llmsim/core/rng.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"

using namespace llmsim;
using perf::BatchShape;
using perf::CostModel;

namespace {

struct Variant {
  const char* gpu;
  const char* weights;
  spec::DType kv;
  spec::Runtime runtime;
  int tp, pp;
  bool graphs;
  double offload_gib;
};

}  // namespace

TEST_CASE("iteration_time gives breakdown()'s bits on every path: table, times only, direct, families") {
  const auto& cat = spec::Catalog::builtin();
  using R = spec::Runtime;
  const Variant variants[] = {
      {"a100-80gb-sxm", "fp16", spec::DType::fp16, R::vllm_v1, 1, 1, true, 0},
      {"a100-80gb-sxm", "awq-int4", spec::DType::fp8, R::vllm_v0, 2, 1, true, 0},
      {"h100-80gb-sxm", "fp8", spec::DType::fp8, R::vllm_v1, 4, 2, true, 0},
      {"rtx4090-24gb", "gguf-q4_k_m", spec::DType::fp16, R::llama_cpp, 1, 1, true, 0},
      {"rtx4090-24gb", "fp16", spec::DType::fp16, R::vllm_v1, 2, 1, false, 4},
      {"rtx3090-24gb", "gptq-int4", spec::DType::int8, R::vllm_v0_paged, 1, 2, true, 0},
      {"l40s-48gb", "fp16", spec::DType::fp16, R::lmdeploy_turbomind, 1, 1, true, 0},
      {"h200-141gb-sxm", "fp16", spec::DType::fp16, R::gpt_fast, 8, 1, true, 0},  // host runs ahead
      {"l4-24gb", "int8", spec::DType::fp8, R::sglang, 1, 1, true, 0},
      {"a10-24gb", "fp16", spec::DType::fp16, R::vllm_v0_sync, 1, 1, true, 0},
  };
  auto rng = rng_stream(3, "hot-path");
  boost::random::uniform_int_distribution<std::int64_t> seqs(1, 600), ctx(1, 40000), chunk(1, 3000), coin(0, 3);
  std::int64_t models = 0, shapes = 0, differ = 0, step_shapes = 0, differ_steps = 0;
  for (const auto& id : cat.model_ids()) {
    for (const auto& v : variants) {
      const auto gpu = cat.gpu(v.gpu);
      spec::Quantization q;
      q.weights = spec::weight_format(v.weights);
      q.kv_dtype = v.kv;
      std::unique_ptr<CostModel> cm;
      try {
        cm = std::make_unique<CostModel>(cat.model(id), q, gpu, perf::default_profile(gpu), spec::ParallelConfig{v.tp, v.pp},
                                         v.graphs, v.offload_gib * 1024 * 1024 * 1024, v.runtime);
      } catch (const ConfigError&) {
        continue;  // tp/pp that do not divide the model, a format the card cannot run
      }
      ++models;
      for (int k = 0; k < 12; ++k) {
        BatchShape b;
        const auto kind = coin(rng);  // 0 decode only, 1 prefill only, 2 mixed, 3 past the table (> 8192 tokens)
        if (kind != 1) {
          b.decode_seqs = kind == 3 ? 6000 + seqs(rng) : seqs(rng);
          b.decode_context = b.decode_seqs * ctx(rng);
        }
        if (kind != 0) {
          const int chunks = kind == 3 ? 4 : 1 + static_cast<int>(coin(rng));
          for (int c = 0; c < chunks; ++c) b.add_prefill(chunk(rng), ctx(rng) * coin(rng), c + 1 == chunks);
        }
        const double fast = cm->iteration_time(b);
        const double direct = cm->breakdown(b).time_s;
        differ += fast != direct;
        ++shapes;
        if (kind == 0 || kind == 3) {  // the engine's decode runs: DecodeSteps over a growing context
          const auto steps = cm->decode_steps(b.decode_seqs);
          const auto planned = cm->decode_steps(b.decode_seqs);  // a run planned at once (its own split cache)
          double run[3];
          planned.times(b.decode_context, b.decode_seqs, 3, run);
          for (int step = 0; step < 3; ++step) {
            BatchShape d;
            d.decode_seqs = b.decode_seqs;
            d.decode_context = b.decode_context + step * b.decode_seqs;
            const double t = cm->iteration_time(d);
            differ_steps += steps.time(d.decode_context) != t;
            differ_steps += run[step] != t;
            ++step_shapes;
          }
        }
      }
      BatchShape one;  // the smallest step
      one.decode_seqs = 1;
      differ += cm->iteration_time(one) != cm->breakdown(one).time_s;
    }
  }
  CHECK(differ == 0);
  CHECK(differ_steps == 0);
  CHECK(step_shapes > 2000);
  CHECK(models > 150);  // most pairs construct: the check is not vacuous
  CHECK(shapes > 1800);
}

TEST_CASE("DecodeSteps follows iteration_time as the context grows through split changes, small batches included") {
  // Small batches split the KV by context (the split changes as it grows): DecodeSteps caches the terms per split.
  const auto& cat = spec::Catalog::builtin();
  std::int64_t steps = 0, differ = 0;
  for (const char* gpu : {"a100-80gb-sxm", "h100-80gb-sxm", "rtx4090-24gb"}) {
    for (const char* model : {"llama-3.1-8b", "qwen2.5-7b", "llama-3.1-70b"}) {
      const auto g = cat.gpu(gpu);
      std::unique_ptr<CostModel> cm;
      try {
        cm = std::make_unique<CostModel>(cat.model(model), spec::Quantization{}, g, perf::default_profile(g),
                                         spec::ParallelConfig{1, 1});
      } catch (const ConfigError&) {
        continue;  // does not fit the card's parallel layout
      }
      for (const std::int64_t n : {1, 2, 3, 5, 8, 13, 21, 64, 200}) {
        auto ds = cm->decode_steps(n);
        for (std::int64_t ctx = 0; ctx < 300000; ctx += n * 97 + 1) {  // one decode run's growing context, strided
          BatchShape b;
          b.decode_seqs = n;
          b.decode_context = ctx;
          differ += ds.time(ctx) != cm->iteration_time(b);
          ++steps;
        }
      }
    }
  }
  CHECK(differ == 0);
  CHECK(steps > 20000);
}

TEST_CASE("DecodeSteps::times plans a run with time()'s bits, through the split changes of every attention backend") {
  // The engine plans up to 16 steps at once; times() skips the split rule once the split can no longer change
  // (split_settled). Runs start everywhere from an empty cache up, on small batches whose split follows the context.
  const auto& cat = spec::Catalog::builtin();
  using R = spec::Runtime;
  std::int64_t steps = 0, differ = 0;
  for (const R runtime : {R::vllm_v1, R::vllm_v0_paged, R::lmdeploy_turbomind, R::sglang}) {
    for (const char* gpu : {"a100-80gb-sxm", "rtx4090-24gb", "h100-80gb-sxm"}) {
      const auto g = cat.gpu(gpu);
      for (const char* model : {"llama-3.1-8b", "qwen2.5-7b"}) {
        const CostModel cm(cat.model(model), spec::Quantization{}, g, perf::default_profile(g), spec::ParallelConfig{1, 1},
                           true, 0, runtime);
        for (const std::int64_t n : {1, 2, 3, 6, 17, 40, 130}) {
          for (std::int64_t ctx = 0; ctx < 200000; ctx += n * 211 + 5) {
            const auto planner = cm.decode_steps(n);
            double run[16];
            planner.times(ctx, n, 16, run);
            for (int k = 0; k < 16; ++k) {
              BatchShape b;
              b.decode_seqs = n;
              b.decode_context = ctx + k * n;
              differ += run[k] != cm.iteration_time(b);
              ++steps;
            }
          }
        }
      }
    }
  }
  CHECK(differ == 0);
  CHECK(steps > 50000);
}

TEST_CASE("DecodeSteps skips the split rule from the context where the split settles, in any order of calls") {
  // FA2's split-KV decode on an A100 under vLLM V1 (2 CTAs per SM: the split rule fills 0.8 x 216 slots): 16 sequences
  // x 8 KV heads = 128 CTAs split by the context, yet floor(216 / 128) = 1 is the cap, reached from the first step
  // (bench_engine's 16-sequence case: settled from context 0, the split rule never runs); 4 sequences (32 CTAs) split
  // 6 ways once each holds > 5 x 128 tokens, settled from the least such context met.
  const auto& cat = spec::Catalog::builtin();
  const auto g = cat.gpu("a100-80gb-sxm");
  const CostModel cm(cat.model("llama-3.1-8b"), spec::Quantization{}, g, perf::default_profile(g),
                     spec::ParallelConfig{1, 1});
  REQUIRE(cm.decode_attention_backend() == perf::DecodeAttentionBackend::flash_attn2_splitkv);
  const auto at = [&](std::int64_t n, std::int64_t ctx) {
    BatchShape b;
    b.decode_seqs = n;
    b.decode_context = ctx;
    return cm.iteration_time(b);
  };
  constexpr auto never = std::numeric_limits<std::int64_t>::max();
  const auto sixteen = cm.decode_steps(16);
  CHECK(sixteen.settled_from() == 0);
  CHECK(sixteen.time(16 * 300) == at(16, 16 * 300));
  CHECK(sixteen.time(0) == at(16, 0));
  const auto four = cm.decode_steps(4);
  CHECK(four.time(4 * 100) == at(4, 4 * 100));  // 1 split: not yet settled
  CHECK(four.settled_from() == never);
  CHECK(four.time(4 * 5000) == at(4, 4 * 5000));  // 6 splits, the cap
  CHECK(four.settled_from() == 4 * 5000);
  CHECK(four.time(4 * 100) == at(4, 4 * 100));  // back below: the split's cache holds 1 split again...
  CHECK(four.time(4 * 6000) == at(4, 4 * 6000));  // ...and the settled terms are still the 6 splits'
  CHECK(four.time(4 * 700) == at(4, 4 * 700));    // 6 splits, lower than settled_from: found settled again
  CHECK(four.settled_from() == 4 * 700);
  CHECK(four.time(4 * 650) == at(4, 4 * 650));  // the same 6 splits lower still: settled from there
  CHECK(four.settled_from() == 4 * 650);
  CHECK(four.time(4 * 9000) == at(4, 4 * 9000));
  // Contexts in a random order, on every backend's split rule (V1's FA2 and FA3, V0's PagedAttention, TurboMind).
  using R = spec::Runtime;
  auto rng = rng_stream(47, "split-order");
  boost::random::uniform_int_distribution<std::int64_t> tokens(0, 9000);
  std::int64_t steps = 0, differ = 0;
  for (const R runtime : {R::vllm_v1, R::vllm_v0_paged, R::lmdeploy_turbomind})
    for (const char* gpu : {"a100-80gb-sxm", "h100-80gb-sxm", "rtx4090-24gb"}) {
      const auto gg = cat.gpu(gpu);
      const CostModel m(cat.model("llama-3.1-8b"), spec::Quantization{}, gg, perf::default_profile(gg),
                        spec::ParallelConfig{1, 1}, true, 0, runtime);
      for (const std::int64_t n : {1, 2, 4, 7, 16}) {
        const auto ds = m.decode_steps(n);
        for (int k = 0; k < 200; ++k) {
          BatchShape b;
          b.decode_seqs = n;
          b.decode_context = n * tokens(rng);
          differ += ds.time(b.decode_context) != m.iteration_time(b);
          ++steps;
        }
      }
    }
  CHECK(differ == 0);
  CHECK(steps == 3 * 3 * 5 * 200);
}
