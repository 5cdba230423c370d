// The padded MXFP4 experts are resident (issue 27): vLLM's Mxfp4MoEMethod.create_weights allocates gpt-oss's w13/w2
// at the shape its kernel needs (memory/expert_layout), so the padding comes out of the KV cache, by release and card.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/memory/expert_layout.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "memory_test_util.hpp"

using namespace llmsim;
using test::cat;

namespace {
memory::MemoryPlan padded_expert_plan(const std::string& model, const std::string& gpu, const std::string& w, int tp,
                                      const std::string& release) {
  const auto g = cat().gpu(gpu);
  spec::Quantization q;
  q.weights = spec::weight_format(w);
  q.kernels = spec::quant_kernels_for(release, "test");
  spec::EngineConfig e;
  e.max_num_batched_tokens = 8192;
  e.max_num_seqs = 1024;
  return memory::plan_memory(cat().model(model), q, g, spec::ParallelConfig{tp, 1}, e, 32768);
}
// Routed-expert parameters of gpt-oss-120b per GPU at the given per-rank shape: 36 layers x 128 experts x 3.
double gpt_oss_120b_expert_params(double hidden, double inter) { return 36.0 * 128 * 3 * hidden * inter; }
}  // namespace

TEST_CASE("gpt-oss-120b's padded MXFP4 experts are resident: Marlin's 3072 x 2944 at TP 1 costs 5.5 GB of KV cache",
          "[memory][moe]") {
  const double bytes_per_param = 4.25 / 8;  // MXFP4: 4 bits + an 8-bit scale per 32
  const auto checkpoint = static_cast<double>(
      memory::weight_bytes(cat().model("gpt-oss-120b"), spec::weight_format("mxfp4-experts")));
  // vLLM 0.11.0 on an H100 and on an A100: FP4 Marlin (n % 256, k % 128): hidden 2880 -> 3072, width 2880 -> 2944.
  for (const char* gpu : {"h100-80gb-sxm", "a100-80gb-sxm"}) {
    const auto p = padded_expert_plan("gpt-oss-120b", gpu, "mxfp4-experts", 1, "vllm==0.11.0");
    const double pad = (gpt_oss_120b_expert_params(3072, 2944) - gpt_oss_120b_expert_params(2880, 2880)) *
                       bytes_per_param;
    CHECK(pad / 1e9 == Approx(5.505).epsilon(0.001));
    CHECK(static_cast<double>(p.per_gpu.weights_bytes) - checkpoint == Approx(pad).epsilon(1e-6));
  }
  // vllm#23278 (2025-08-20, an H100 on FP4 Marlin, TP 1): "Model loading took 65.9651 GiB"; the checkpoint's shape
  // alone is 60.8 GiB.
  const auto logged = padded_expert_plan("gpt-oss-120b", "h100-80gb-sxm", "mxfp4-experts", 1, "vllm==0.10.1");
  CHECK(static_cast<double>(logged.per_gpu.weights_bytes) / (1024.0 * 1024 * 1024) == Approx(65.9651).epsilon(0.005));
  CHECK(checkpoint / (1024.0 * 1024 * 1024) < 61.0);
  // vllm#23278's thread (2025-09-18): on one H100 "gpt-oss-120b does not run 128k ... --max-model-len 100000 works".
  // The padded experts leave a pool below 131,072 tokens; the checkpoint's shape (llmsim's plan before, and still its
  // plan for matmul_ogs at TP 1, whose extra ~3.6 GiB in vllm#33155's 0.14.1 log is not modelled) left room for all.
  CHECK(logged.longest_context_tokens < 131072);
  const auto unpadded_pool = padded_expert_plan("gpt-oss-120b", "h100-80gb-sxm", "mxfp4-experts", 1, "vllm==0.13.0");
  CHECK(unpadded_pool.longest_context_tokens == 131072);
  // The pool pays for it byte for byte: the 0.11.0 plan's KV cache is the 0.13.0 plan's (matmul_ogs on Hopper pads the
  // width to 64, and 2880 is 45 x 64: nothing) less the padding.
  const auto marlin = padded_expert_plan("gpt-oss-120b", "h100-80gb-sxm", "mxfp4-experts", 1, "vllm==0.11.0");
  const auto triton = padded_expert_plan("gpt-oss-120b", "h100-80gb-sxm", "mxfp4-experts", 1, "vllm==0.13.0");
  CHECK(static_cast<double>(triton.per_gpu.weights_bytes) == Approx(checkpoint).epsilon(1e-9));
  CHECK(static_cast<double>(triton.per_gpu.kv_cache_bytes - marlin.per_gpu.kv_cache_bytes) ==
        Approx(static_cast<double>(marlin.per_gpu.weights_bytes - triton.per_gpu.weights_bytes)).epsilon(1e-6));
  CHECK(marlin.per_gpu.kv_cache_bytes < 0.65 * static_cast<double>(triton.per_gpu.kv_cache_bytes));
}

TEST_CASE("the expert padding follows the kernel per TP rank, and leaves other formats alone", "[memory][moe]") {
  // TP 2 on an A100 (Marlin in every release): each rank holds 3072 x 1536 of the 2880 x 1440 it would.
  const auto a100 = padded_expert_plan("gpt-oss-120b", "a100-80gb-sxm", "mxfp4-experts", 2, "vllm==0.13.0");
  const auto unpadded = padded_expert_plan("gpt-oss-120b", "h100-80gb-sxm", "mxfp4-experts", 2, "vllm==0.13.0");
  // Triton at TP 2 pads 1440 -> 1472 (a multiple of 64), hidden unchanged.
  const double triton_pad = (gpt_oss_120b_expert_params(2880, 1472) - gpt_oss_120b_expert_params(2880, 1440)) * 4.25 / 8;
  const double marlin_pad = (gpt_oss_120b_expert_params(3072, 1536) - gpt_oss_120b_expert_params(2880, 1440)) * 4.25 / 8;
  CHECK(static_cast<double>(a100.per_gpu.weights_bytes - unpadded.per_gpu.weights_bytes) ==
        Approx(marlin_pad - triton_pad).epsilon(1e-6));
  // A 16-bit MoE checkpoint (Mixtral) is held at its own shape: the plan's weights are the checkpoint's.
  const auto mixtral = padded_expert_plan("mixtral-8x7b", "h100-80gb-sxm", "bf16", 1, "vllm==0.11.0");
  CHECK(mixtral.per_gpu.weights_bytes == memory::weight_bytes(cat().model("mixtral-8x7b"), spec::weight_format("bf16")));
}
