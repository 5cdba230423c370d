// vLLM's fused-MoE layer beyond the two expert GEMMs (issue 27, perf/moe_kernels): the MXFP4 experts as its kernels pad
// them, the top-k combine (moe_sum) and the MoE layer's kernels. Each check is a count read from vLLM's code; the
// sizes asserted are their consequences on catalogue models, not timings fitted to anything.
#include <catch2/catch.hpp>

#include <cmath>
#include <iterator>
#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/moe_kernels.hpp"
#include "llmsim/perf/provenance.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;
using perf::CostModel;

namespace {

spec::QuantKernels kernels_of(const std::string& release) { return spec::quant_kernels_for(release, "test"); }

/// `release` empty: the newest release's kernels (spec::QuantKernels{}).
CostModel moe_cost_model(const std::string& model, const std::string& gpu_id, const std::string& w, int tp,
                         const std::string& release = "vllm==0.11.0") {
  const auto& cat = spec::Catalog::builtin();
  const auto g = cat.gpu(gpu_id);
  spec::Quantization q;
  q.weights = spec::weight_format(w);
  if (!release.empty()) q.kernels = kernels_of(release);
  return CostModel(cat.model(model), q, g, perf::default_profile(g), spec::ParallelConfig{tp, 1});
}

double moe_op_bytes(const CostModel& cm, const perf::BatchShape& b, const std::string& name) {
  for (const auto& o : cm.breakdown(b).ops)
    if (o.name == name) return o.bytes;
  return 0;
}

spec::WeightFormat moe_format_on(const std::string& w, const std::string& gpu_id) {
  return spec::format_for_gpu(spec::weight_format(w), spec::Catalog::builtin().gpu(gpu_id), "quant.weights");
}

}  // namespace

TEST_CASE("MXFP4 experts are padded as vLLM's Marlin and FlashInfer MoE kernels hold them", "[moe]") {
  // gpt-oss: hidden 2880, expert width 2880. Hopper runs FP4 Marlin (weight-only): intermediate per rank to a multiple
  // of 128, hidden to 256.
  const auto& cat = spec::Catalog::builtin();
  REQUIRE(moe_format_on("mxfp4-experts", "h100-80gb-sxm").weight_only);
  const auto marlin = perf::Mxfp4MoeKernel::marlin;
  CHECK(perf::mxfp4_moe_kernel(moe_format_on("mxfp4-experts", "h100-80gb-sxm"), kernels_of("vllm==0.11.0"),
                               cat.gpu("h100-80gb-sxm")) == marlin);
  for (const auto& [tp, inter] : {std::pair{1, 2944.0}, {2, 1536.0}, {4, 768.0}, {8, 384.0}}) {
    INFO("tp " << tp);
    const auto e = perf::expert_layout(2880, 2880.0 / tp, marlin);
    CHECK(e.hidden == 3072);
    CHECK(e.intermediate == inter);
  }
  // gpt-oss-120b at TP 4: 13.8 % more expert bytes (and FLOPs) than its 2880 x 720 shard.
  CHECK(perf::expert_layout(2880, 720, marlin).params() / (3.0 * 2880 * 720) == Approx(3072.0 * 768 / (2880 * 720)));
  CHECK(perf::expert_layout(2880, 720, marlin).params() / (3.0 * 2880 * 720) == Approx(1.1378).epsilon(1e-4));
  // Blackwell's FP4 tensor cores (FlashInfer): both to 256; TP 1 pads the width to 3072 as well.
  REQUIRE_FALSE(moe_format_on("mxfp4-experts", "b200-180gb-sxm").weight_only);
  const auto fi = perf::mxfp4_moe_kernel(moe_format_on("mxfp4-experts", "b200-180gb-sxm"), {}, cat.gpu("b200-180gb-sxm"));
  REQUIRE(fi == perf::Mxfp4MoeKernel::flashinfer);
  CHECK(perf::expert_layout(2880, 2880, fi).intermediate == 3072);
  CHECK(perf::expert_layout(2880, 720, fi).intermediate == 768);
  // Other formats, and aligned shapes, stay as they are (DeepSeek-V3 at TP 8: 7168 x 256; Mixtral's 4096 x 14336).
  for (const char* w : {"fp8", "awq-int4", "bf16"}) {
    const auto f = moe_format_on(w, "h100-80gb-sxm");
    const auto e = perf::expert_layout(2880, 720, perf::mxfp4_moe_kernel(f, {}, cat.gpu("h100-80gb-sxm")));
    CHECK(e.hidden == 2880);
    CHECK(e.intermediate == 720);
  }
  const auto ds = perf::expert_layout(7168, 256, marlin);
  CHECK(ds.hidden == 7168);
  CHECK(ds.intermediate == 256);
}

TEST_CASE("gpt-oss-120b on H100s streams its padded MXFP4 experts, router and top-k combine, byte for byte", "[moe]") {
  const CostModel cm = moe_cost_model("gpt-oss-120b", "h100-80gb-sxm", "mxfp4-experts", 4);
  // One decode token picks k = 4 of 128 experts in each of 36 layers: 4 padded experts read, one row each.
  const double h = 2880, hp = 3072, ip = 768, k = 4, E = 128, layers = 36;
  const double experts = k * (3 * hp * ip * 4.25 / 8 + 1 * (2 * hp + 3 * ip) * 2);
  const double router = h * E * 2 + 1 * (h + E) * 2;
  const double combine = (k + 1) * h * 2;
  CHECK(moe_op_bytes(cm, test::decode(1, 1024), "mlp") == Approx(layers * (experts + router + combine)).epsilon(1e-9));
}

TEST_CASE("the top-k combine is moe_sum's (k + 1) rows per token; k = 1 has none", "[moe]") {
  CHECK(perf::moe_combine_bytes_per_token(8, 7168) == 9 * 7168 * 2);
  CHECK(perf::moe_combine_bytes_per_token(1, 5120) == 0);
  // Mixtral-8x7B (bf16, k = 2 of 8), one decode token: 2 experts, the router and the combine, in 32 layers.
  const CostModel cm = moe_cost_model("mixtral-8x7b", "h100-80gb-sxm", "bf16", 1);
  const double h = 4096, I = 14336, k = 2, E = 8;
  const double per_layer = k * (3 * h * I * 2 + (2 * h + 3 * I) * 2) + (h * E * 2 + (h + E) * 2) + (k + 1) * h * 2;
  CHECK(moe_op_bytes(cm, test::decode(1, 512), "mlp") == Approx(32 * per_layer).epsilon(1e-9));
  // A 5000-token prefill of gpt-oss-120b at TP 4 moves 5.2 GB through moe_sum: ~1.8 ms at the H100's streaming rate,
  // 4 % of the step.
  const CostModel oss = moe_cost_model("gpt-oss-120b", "h100-80gb-sxm", "mxfp4-experts", 4);
  perf::BatchShape p;
  p.add_prefill(5000, 0, true);
  const double combine = 36.0 * 5000 * 5 * 2880 * 2;
  CHECK(combine / 1e9 == Approx(5.18).epsilon(0.01));
  CHECK(moe_op_bytes(oss, p, "mlp") > combine);
}

TEST_CASE("a MoE layer launches four kernels beside gate_up, activation and down", "[moe]") {
  // Mixtral-8x7B against Mistral-7B: the same 32 layers, heads and TP; the MoE layer adds the router GEMM,
  // topk_softmax, moe_align_block_size and moe_sum, replayed from vLLM V1's decode graph at graph_launch_s each.
  const CostModel moe = moe_cost_model("mixtral-8x7b", "h100-80gb-sxm", "bf16", 1);
  const CostModel dense = moe_cost_model("mistral-7b", "h100-80gb-sxm", "bf16", 1);
  const auto b = test::decode(8, 512);
  const double graph_s = perf::default_profile(test::gpu("h100-80gb-sxm")).graph_launch_s;
  CHECK(test::op(moe, b, "launch") - test::op(dense, b, "launch") ==
        Approx(32 * perf::kMoeExtraKernelsPerLayer * graph_s).epsilon(1e-9));
  CHECK(perf::kMoeExtraKernelsPerLayer == 4);
}

TEST_CASE("the padding and the combine make gpt-oss-120b's TP-4 step on H100s longer, most where experts dominate",
          "[moe]") {
  // Direction and size, not a fit: at batch 16 (51 of 128 experts touched per layer) the experts are ~40 % of the
  // step, so 13.8 % more expert bytes lengthen it by 4-8 %; a 5000-token prefill (compute-bound experts, 5 GB of
  // combine) by 6-12 %.
  const CostModel cm = moe_cost_model("gpt-oss-120b", "h100-80gb-sxm", "mxfp4-experts", 4);
  const auto b = test::decode(16, 5000);
  const double mlp = test::op(cm, b, "mlp"), step = cm.iteration_time(b);
  CHECK(mlp / step > 0.3);
  const double unpadded_share = (mlp - mlp / 1.1378) / step;  // the part of the step the padding adds, at most
  CHECK(unpadded_share > 0.03);
  CHECK(unpadded_share < 0.08);
}

TEST_CASE("block-scaled FP8 experts run vLLM's Triton fused MoE at vllm#24700's measured rates", "[moe]") {
  const auto& cat = spec::Catalog::builtin();
  const auto h100 = cat.gpu("h100-80gb-sxm");
  const auto fp8 = moe_format_on("fp8", "h100-80gb-sxm");
  // DeepSeek-R1's checkpoint has weight_block_size [128, 128]: the reader records it.
  REQUIRE(cat.model("deepseek-r1").quantization.block_scaled);
  // vLLM before 0.14.0 (QuantKernels::block_fp8_moe_slow): vllm#24700's reading; from 0.14.0 (and a runtime without a
  // release, SGLang) aiconfigurator's vLLM 0.14.0 tables.
  const auto f = perf::moe_gemm_factors(fp8, true, h100, perf::Mxfp4MoeKernel::none, true);
  CHECK(f.compute == 0.15);
  CHECK(f.bandwidth == 0.75);
  const auto now = perf::moe_gemm_factors(fp8, true, h100);
  CHECK(now.compute == perf::kBlockFp8MoeCompute);
  CHECK(now.bandwidth == perf::kBlockFp8MoeBandwidth);
  CHECK(kernels_of("vllm==0.8.4").block_fp8_moe_slow);
  CHECK(kernels_of("vllm==0.13.0").block_fp8_moe_slow);
  CHECK_FALSE(kernels_of("vllm==0.14.0").block_fp8_moe_slow);
  CHECK_FALSE(spec::QuantKernels{}.block_fp8_moe_slow);
  // Per-tensor FP8 (a bf16 checkpoint quantised on load), other formats, and FP4-capable Blackwell: unchanged.
  CHECK(perf::moe_gemm_factors(fp8, false, h100).compute == 1.0);
  CHECK(perf::moe_gemm_factors(moe_format_on("bf16", "h100-80gb-sxm"), true, h100).bandwidth == 1.0);
  CHECK(perf::moe_gemm_factors(moe_format_on("fp8", "b200-180gb-sxm"), true, cat.gpu("b200-180gb-sxm")).compute == 1.0);
  // On an A100 FP8 runs weight-only (FP8 Marlin MoE): not the Triton FP8 kernel's factors, the Marlin MoE's on Ampere.
  CHECK(perf::moe_gemm_factors(moe_format_on("fp8", "a100-80gb-sxm"), true, cat.gpu("a100-80gb-sxm")).compute ==
        perf::kMarlinMoeAmpereCompute);
}

TEST_CASE("the block-FP8 factors reproduce vllm#24700's H100 kernel times and slow DeepSeek-R1's MoE", "[moe]") {
  // Qwen3-30B-A3B-FP8 (block [128, 128]) TP 1 on an H100: vLLM's benchmark_moe times one fused-MoE call (topk, align,
  // quantisation, both GEMMs, activation, moe_sum; no router GEMM). The cost model's mlp op per layer lands within 20 %
  // at 16 to 4096 tokens (without the factors: 23 to 74 % fast).
  const auto& cat = spec::Catalog::builtin();
  const auto g = cat.gpu("h100-80gb-sxm");
  spec::ModelSpec qwen = cat.model("qwen3-30b-a3b");
  qwen.quantization = spec::CheckpointQuantization{"fp8", "fp8", "FP8 block [128, 128]"};
  qwen.quantization.block_scaled = true;
  spec::Quantization q;
  q.weights = spec::weight_format("fp8");
  q.kernels = kernels_of("vllm==0.10.2");  // #24700's "Main": September 2025, before 0.14.0
  const CostModel cm(qwen, q, g, perf::default_profile(g), spec::ParallelConfig{1, 1});
  for (const auto& [tokens, measured_us] :
       {std::pair{16, 185.40}, {128, 273.72}, {1024, 536.33}, {4096, 1647.57}}) {
    INFO(tokens << " tokens");
    const double per_layer_us = test::op(cm, test::decode(tokens, 1), "mlp") / 48 * 1e6;
    CHECK(per_layer_us / measured_us == Approx(1.0).margin(0.2));
  }
  // DeepSeek-R1 (its checkpoint is block FP8) at TP 8 on H200s: a 2048-token prefill chunk's MoE op (routed experts
  // compute-bound; shared experts, dense layers and the combine unchanged) about twice as long, a 50-sequence decode
  // step's a third longer (its expert stream at 0.75).
  const CostModel ds = moe_cost_model("deepseek-r1", "h200-141gb-sxm", "fp8", 8);
  spec::ModelSpec plain = cat.model("deepseek-r1");
  plain.quantization.block_scaled = false;
  spec::Quantization fp8;
  fp8.weights = spec::weight_format("fp8");
  const auto h200 = cat.gpu("h200-141gb-sxm");
  const CostModel dense_rate(plain, fp8, h200, perf::default_profile(h200), spec::ParallelConfig{8, 1});
  perf::BatchShape chunk;
  chunk.add_prefill(2048, 0, false);
  const double prefill = test::op(ds, chunk, "mlp") / test::op(dense_rate, chunk, "mlp");
  CHECK(prefill > 1.8);
  CHECK(prefill < 2.6);
  const auto step = test::decode(50, 2000);
  const double r = test::op(ds, step, "mlp") / test::op(dense_rate, step, "mlp");
  CHECK(r > 1.25);
  CHECK(r < 1.40);
}

TEST_CASE("from vLLM 0.14.0 block-FP8 experts run at aiconfigurator's measured H100/H200 rates; 0.8.4 keeps #24700's",
          "[moe]") {
  // aiconfigurator's vLLM 0.14.0 tables (fused_experts, 128 x 128 block scales, balanced routing, CUDA graphs), ms per
  // call: DeepSeek-V3/R1's routed experts at TP 8 and Qwen3-30B-A3B's at TP 1. The routed-expert op per layer (plus the
  // router GEMM, which the table leaves out) lands within 20 % under 0.14.0; under 0.8.4 (vllm#24700's reading) the
  // large-M points read 1.5-2.4x slow, the small-M ones alike.
  const auto& cat = spec::Catalog::builtin();
  const auto layer_ms = [&](spec::ModelSpec m, const std::string& gpu_id, int tp, const std::string& release,
                            std::int64_t tokens) {
    m.shared_expert_intermediate_size = 0;
    m.dense_layers = 0;
    const auto g = cat.gpu(gpu_id);
    spec::Quantization q;
    q.weights = spec::format_for_gpu(spec::weight_format("fp8"), g, "quant.weights");
    q.kernels = kernels_of(release);
    const CostModel cm(m, q, g, perf::default_profile(g), spec::ParallelConfig{tp, 1});
    return test::op(cm, test::decode(tokens, 1), "mlp") / m.moe_layers() * 1e3;
  };
  const spec::ModelSpec ds = cat.model("deepseek-r1");
  spec::ModelSpec qwen = cat.model("qwen3-30b-a3b");
  qwen.quantization = spec::CheckpointQuantization{"fp8", "fp8", "FP8 block [128, 128]"};
  qwen.quantization.block_scaled = true;
  struct Row {
    const spec::ModelSpec* m;
    const char* gpu;
    int tp;
    std::int64_t tokens;
    double measured_ms;
  };
  for (const Row& r : {Row{&ds, "h200-141gb-sxm", 8, 256, 0.4295}, Row{&ds, "h200-141gb-sxm", 8, 2048, 0.7394},
                       Row{&ds, "h200-141gb-sxm", 8, 8192, 2.3282}, Row{&ds, "h100-80gb-sxm", 8, 256, 0.6180},
                       Row{&ds, "h100-80gb-sxm", 8, 8192, 2.4800}, Row{&qwen, "h100-80gb-sxm", 1, 4096, 0.9030},
                       Row{&qwen, "h100-80gb-sxm", 1, 16384, 3.2790}}) {
    INFO(r.m->id << " on " << r.gpu << ", TP " << r.tp << ", " << r.tokens << " tokens");
    const double now = layer_ms(*r.m, r.gpu, r.tp, "vllm==0.14.0", r.tokens);
    CHECK(now / r.measured_ms == Approx(1.0).margin(0.2));
    const double before = layer_ms(*r.m, r.gpu, r.tp, "vllm==0.8.4", r.tokens);
    if (r.tokens >= 2048) {
      CHECK(before / now > 1.5);
      CHECK(before / now < 2.45);  // at most the compute factors' ratio, 0.36 / 0.15
    } else {
      CHECK(before / now == Approx(1.0).margin(0.25));
    }
  }
}

TEST_CASE("the block-FP8 MoE factors have their provenances with the values in use", "[moe][provenance]") {
  test::check_public_measurements({{"moe.block_fp8_compute_factor", perf::kBlockFp8MoeCompute},
                                   {"moe.block_fp8_bandwidth_factor", perf::kBlockFp8MoeBandwidth},
                                   {"moe.block_fp8_slow_compute_factor", perf::kBlockFp8MoeSlowCompute},
                                   {"moe.block_fp8_slow_bandwidth_factor", perf::kBlockFp8MoeSlowBandwidth}});
}

TEST_CASE("gpt-oss's MXFP4 experts run the kernel of the release: Marlin through 0.11, Triton's matmul_ogs from 0.12",
          "[moe]") {
  const auto& cat = spec::Catalog::builtin();
  const auto kernel = [&](const std::string& release, const std::string& gpu) {
    const spec::QuantKernels k = release.empty() ? spec::QuantKernels{} : kernels_of(release);
    return perf::mxfp4_moe_kernel(moe_format_on("mxfp4-experts", gpu), k, cat.gpu(gpu));
  };
  using K = perf::Mxfp4MoeKernel;
  // Hopper: FP4 Marlin while triton_kernels did not import (Ray 2.51's vLLM 0.11.0 among them), matmul_ogs once the
  // wheel bundles it (0.12.0, vllm#28788); a scenario without a release prices the newest.
  for (const char* r : {"vllm==0.10.2", "vllm==0.11.0", "vllm==0.11.2"}) CHECK(kernel(r, "h100-80gb-sxm") == K::marlin);
  for (const char* r : {"vllm==0.12.0", "vllm==0.13.0", ""}) CHECK(kernel(r, "h100-80gb-sxm") == K::triton);
  CHECK(kernel("vllm==0.12.0", "h200-141gb-sxm") == K::triton);
  // Ampere and Ada (sm < 90) run Marlin in every release; Blackwell's FP4 tensor cores run FlashInfer.
  for (const char* g : {"a100-80gb-sxm", "l40s-48gb"}) CHECK(kernel("vllm==0.13.0", g) == K::marlin);
  CHECK(kernel("vllm==0.11.0", "b200-180gb-sxm") == K::flashinfer);
  // Split-K at small M: 0.12.x only (vllm#30528 set split_k = 1, first released in 0.13.0).
  CHECK(kernels_of("vllm==0.12.0").mxfp4_triton_split_k);
  CHECK_FALSE(kernels_of("vllm==0.13.0").mxfp4_triton_split_k);
  CHECK_FALSE(kernels_of("vllm==0.11.0").mxfp4_triton_split_k);
  CHECK_FALSE(spec::QuantKernels{}.mxfp4_triton_split_k);
  CHECK(perf::to_string(K::triton) == "triton_matmul_ogs");
  // matmul_ogs's layout pads the width to 64 and leaves hidden alone: gpt-oss-120b at TP 4 holds 2880 x 768.
  const auto t = perf::expert_layout(2880, 720, K::triton);
  CHECK(t.hidden == 2880);
  CHECK(t.intermediate == 768);
  CHECK(perf::expert_layout(2880, 2880, K::triton).intermediate == 2880);
}

TEST_CASE("vLLM 0.12's split-K matmul_ogs makes gpt-oss-120b's small batches vllm#27523's 35 % slower; 0.13 does not",
          "[moe]") {
  // vllm#27523: `vllm bench latency` of gpt-oss-120b, TP 1, batch 8, 32 in / 128 out on SM90: Marlin 1.17 s, Triton
  // 1.58 s. The factor is solved so that the batch-8 decode step (the 127 decode steps are 99 % of that run) keeps
  // that ratio; the other terms are the layouts' own.
  const CostModel marlin = moe_cost_model("gpt-oss-120b", "h100-80gb-sxm", "mxfp4-experts", 1, "vllm==0.11.0");
  const CostModel split = moe_cost_model("gpt-oss-120b", "h100-80gb-sxm", "mxfp4-experts", 1, "vllm==0.12.0");
  const CostModel fixed = moe_cost_model("gpt-oss-120b", "h100-80gb-sxm", "mxfp4-experts", 1, "vllm==0.13.0");
  const auto b8 = test::decode(8, 96);
  CHECK(split.iteration_time(b8) / marlin.iteration_time(b8) == Approx(1.58 / 1.17).epsilon(0.01));
  // 0.13's matmul_ogs without split-K: the Marlin rates on its smaller layout (2880 x 2880 against 3072 x 2944).
  CHECK(fixed.iteration_time(b8) < marlin.iteration_time(b8));
  CHECK(fixed.iteration_time(b8) > 0.9 * marlin.iteration_time(b8));
  // From 32 tokens split_k is 1 in both releases: the same step.
  for (std::int64_t n : {32, 64, 256}) {
    INFO("decode batch " << n);
    CHECK(split.iteration_time(test::decode(n, 96)) == Approx(fixed.iteration_time(test::decode(n, 96))));
  }
  CHECK(perf::moe_expert_time_factor(perf::Mxfp4MoeKernel::marlin, kernels_of("vllm==0.12.0"), 8) == 1.0);
}

namespace {

/// A MoE of routed experts only (no shared experts, dense layers or expert biases) of the given shape, on gpt-oss-120b's
/// frame: the mlp op divided by the layers is then one fused-MoE call plus the router GEMM.
spec::ModelSpec routed_moe_shape(int hidden, int expert_width, int experts, int top_k) {
  spec::ModelSpec m = spec::Catalog::builtin().model("gpt-oss-120b");
  m.hidden_size = hidden;
  m.moe_intermediate_size = expert_width;
  m.num_experts = experts;
  m.experts_per_token = top_k;
  m.moe_bias_params = 0;
  m.shared_expert_intermediate_size = 0;
  m.dense_layers = 0;
  return m;
}

double marlin_moe_layer_ms(const spec::ModelSpec& m, const std::string& gpu_id, int tp, std::int64_t tokens) {
  const auto g = spec::Catalog::builtin().gpu(gpu_id);
  spec::Quantization q;
  q.weights = spec::format_for_gpu(spec::weight_format("gptq-int4"), g, "quant.weights");
  q.kernels = kernels_of("vllm==0.14.0");
  const CostModel cm(m, q, g, perf::default_profile(g), spec::ParallelConfig{tp, 1});
  return test::op(cm, test::decode(tokens, 1), "mlp") / m.moe_layers() * 1e3;
}

}  // namespace

TEST_CASE("vLLM's Marlin MoE kernel on Hopper computes at aiconfigurator's measured H100 rate", "[moe]") {
  // aiconfigurator's H100 SXM table of vLLM 0.14.0's fused_marlin_moe (GPTQ int4, balanced routing, CUDA graphs), ms
  // per call. Large M is compute-bound: the cost model's 4-bit Marlin rate (the dense IST-DASLab kernel's) made these
  // 1.7-1.9x too fast; with the Hopper factor each lands within 20 % (median 6 % over the six fitted shapes).
  struct Row {
    int hidden, width, experts, k, tp;
    std::int64_t tokens;
    double measured_ms;
  };
  for (const Row& r : {Row{3072, 1536, 256, 8, 2, 4096, 2.0088}, Row{3072, 1536, 256, 8, 2, 8192, 3.8566},
                       Row{3072, 1536, 256, 8, 2, 16384, 7.5921}, Row{7168, 2048, 256, 8, 8, 4096, 1.9562},
                       Row{7168, 2048, 256, 8, 8, 16384, 7.4258}, Row{2048, 768, 128, 8, 1, 8192, 2.7674},
                       Row{4096, 14336, 8, 2, 8, 8192, 2.6829}}) {
    INFO(r.hidden << " x " << r.width << ", E " << r.experts << " top " << r.k << ", TP " << r.tp << ", " << r.tokens
                  << " tokens");
    const double ms = marlin_moe_layer_ms(routed_moe_shape(r.hidden, r.width, r.experts, r.k), "h100-80gb-sxm", r.tp,
                                          r.tokens);
    CHECK(ms / r.measured_ms == Approx(1.0).margin(0.2));
  }
  // At decode sizes the kernel streams its weights as dense Marlin does: 8 tokens within 25 % of the table (0.114 ms;
  // its balanced routing touches 64 experts where random routing touches 57), and the factor moves it by < 3 %.
  const auto proxy = routed_moe_shape(3072, 1536, 256, 8);
  CHECK(marlin_moe_layer_ms(proxy, "h100-80gb-sxm", 2, 8) / 0.1140 == Approx(1.0).margin(0.25));
  // The factor: Hopper's Marlin MoE (GPTQ/AWQ int4, NVFP4 and MXFP4 on FP4 Marlin) only.
  const auto& cat = spec::Catalog::builtin();
  const auto h100 = cat.gpu("h100-80gb-sxm");
  using K = perf::Mxfp4MoeKernel;
  for (const char* w : {"gptq-int4", "awq-int4", "nvfp4"}) {
    INFO(w);
    // FP4 Marlin (NVFP4 here) computes at the int4 kernel's rate times its own measured factor (next test case).
    const double fp4 = std::string(w) == "nvfp4" ? perf::kFp4MarlinMoeCompute : 1.0;
    CHECK(perf::moe_gemm_factors(moe_format_on(w, "h100-80gb-sxm"), false, h100).compute ==
          perf::kMarlinMoeHopperCompute * fp4);
    CHECK(perf::moe_gemm_factors(moe_format_on(w, "h200-141gb-sxm"), false, cat.gpu("h200-141gb-sxm")).compute ==
          perf::kMarlinMoeHopperCompute * fp4);
    // Ampere takes its own measured factor for the int4 kernel, FP4 Marlin its FP4 factor on top; Ada is not measured:
    // unchanged.
    CHECK(perf::moe_gemm_factors(moe_format_on(w, "a100-80gb-sxm"), false, cat.gpu("a100-80gb-sxm")).compute ==
          perf::kMarlinMoeAmpereCompute * fp4);
    CHECK(perf::moe_gemm_factors(moe_format_on(w, "l40s-48gb"), false, cat.gpu("l40s-48gb")).compute == 1.0);
  }
  const auto mx = moe_format_on("mxfp4-experts", "h100-80gb-sxm");
  CHECK(perf::moe_gemm_factors(mx, false, h100, K::marlin).compute ==
        perf::kMarlinMoeHopperCompute * perf::kFp4MarlinMoeCompute);
  CHECK(perf::moe_gemm_factors(mx, false, h100, K::triton).compute == 1.0);  // matmul_ogs (wgmma): not this kernel
  // 16-bit and FP8 experts run the Triton fused MoE, int8 weight-only is not 4-bit Marlin: unchanged.
  for (const char* w : {"bf16", "fp8"}) CHECK(perf::moe_gemm_factors(moe_format_on(w, "h100-80gb-sxm"), false, h100).compute == 1.0);
}

TEST_CASE("Hopper's Marlin MoE rate lengthens gpt-oss-120b's TP-4 prefill under vLLM 0.11, not its decode steps",
          "[moe]") {
  // Ray 2.51's vLLM 0.11.0 runs gpt-oss's experts on FP4 Marlin on H100s (see above): a 5000-token prefill's MoE op
  // now runs at the measured kernel's rate, the int4 Marlin MoE's times FP4 Marlin's own factor (about 2.25x as long;
  // 1.8x with the int4 rate alone), the step 1.35-1.8x; a 64-sequence decode step's experts stream their weights as
  // before (< 12 %). 0.13's matmul_ogs keeps the old rate (no public large-M figure).
  const CostModel v011 = moe_cost_model("gpt-oss-120b", "h100-80gb-sxm", "mxfp4-experts", 4, "vllm==0.11.0");
  const CostModel v013 = moe_cost_model("gpt-oss-120b", "h100-80gb-sxm", "mxfp4-experts", 4, "vllm==0.13.0");
  perf::BatchShape prefill;
  prefill.add_prefill(5000, 0, true);
  const double moe = test::op(v011, prefill, "mlp") / test::op(v013, prefill, "mlp");
  CHECK(moe > 1.9);
  CHECK(moe < 2.6);
  const double step = v011.iteration_time(prefill) / v013.iteration_time(prefill);
  CHECK(step > 1.35);
  CHECK(step < 1.8);
  const auto d64 = test::decode(64, 5000);
  CHECK(test::op(v011, d64, "mlp") / test::op(v013, d64, "mlp") == Approx(1.0).margin(0.12));
}

TEST_CASE("vLLM's Marlin MoE kernel on an A100 computes at aiconfigurator's measured rate, FP8 experts too", "[moe]") {
  // aiconfigurator's A100 SXM table of SGLang 0.5.10's Marlin MoE (int4, balanced routing), ms per call. At 2048-16384
  // tokens the dense-Marlin rate made these 12-26 % fast; with the Ampere factor each lands within 12 %.
  struct Row {
    int hidden, width, experts, k, tp;
    std::int64_t tokens;
    double measured_ms;
  };
  for (const Row& r : {Row{3072, 1536, 256, 8, 2, 2048, 1.7615}, Row{3072, 1536, 256, 8, 2, 16384, 13.8893},
                       Row{2048, 768, 128, 8, 1, 4096, 2.4265}, Row{2048, 768, 128, 8, 1, 16384, 9.6995},
                       Row{4096, 1536, 128, 8, 1, 8192, 17.3711}, Row{4096, 1536, 128, 8, 1, 16384, 35.1624}}) {
    INFO(r.hidden << " x " << r.width << ", E " << r.experts << " top " << r.k << ", TP " << r.tp << ", " << r.tokens
                  << " tokens");
    const double ms = marlin_moe_layer_ms(routed_moe_shape(r.hidden, r.width, r.experts, r.k), "a100-80gb-sxm", r.tp,
                                          r.tokens);
    CHECK(ms / r.measured_ms == Approx(1.0).margin(0.12));
  }
  // Decode sizes stream weights: 8 tokens within 15 % of the table (0.1803 ms for DeepSeek-like 3072 x 1536 at TP 2).
  CHECK(marlin_moe_layer_ms(routed_moe_shape(3072, 1536, 256, 8), "a100-80gb-sxm", 2, 8) / 0.1803 ==
        Approx(1.0).margin(0.15));
  // Which formats: vLLM's Fp8MoEMethod runs an FP8 checkpoint's experts on fused_marlin_moe below capability 8.9
  // (block-scaled or per-tensor), as GPTQ/AWQ int4's; FP4 Marlin (MXFP4, NVFP4) runs the same kernel at the FP4
  // factor on top; Hopper's FP8 and bf16 are not moved.
  const auto& cat = spec::Catalog::builtin();
  const auto g = cat.gpu("a100-80gb-sxm");
  for (const bool block : {true, false}) {
    CHECK(perf::moe_gemm_factors(moe_format_on("fp8", "a100-80gb-sxm"), block, g).compute ==
          perf::kMarlinMoeAmpereCompute);
  }
  CHECK(perf::moe_gemm_factors(moe_format_on("gptq-int4", "a100-80gb-sxm"), false, g).compute ==
        perf::kMarlinMoeAmpereCompute);
  CHECK(perf::moe_gemm_factors(moe_format_on("bf16", "a100-80gb-sxm"), false, g).compute == 1.0);
  CHECK(perf::moe_gemm_factors(moe_format_on("mxfp4-experts", "a100-80gb-sxm"), false, g, perf::Mxfp4MoeKernel::marlin)
            .compute == perf::kMarlinMoeAmpereCompute * perf::kFp4MarlinMoeCompute);
  CHECK(perf::moe_gemm_factors(moe_format_on("nvfp4", "a100-80gb-sxm"), false, g).compute ==
        perf::kMarlinMoeAmpereCompute * perf::kFp4MarlinMoeCompute);
  CHECK(perf::moe_gemm_factors(moe_format_on("fp8", "h100-80gb-sxm"), true, cat.gpu("h100-80gb-sxm")).compute !=
        perf::kMarlinMoeAmpereCompute);
}

TEST_CASE("vLLM's bf16 Triton fused MoE on an A100 at a tuned shape is priced as measured, with no routing term",
          "[moe]") {
  // aiconfigurator's A100 SXM table of vLLM 0.14.0's bf16 fused_moe (Qwen3-235B-A22B's experts at TP 8: E 128, N 192,
  // a shape vLLM ships a tuned A100 config for; power-law routing), ms per call. Its SGLang 0.5.10 table of the same
  // Triton kernel times balanced and power-law routing within 4 % (median) at 256-16384 tokens: one grid runs every
  // expert's token blocks, so skew is no max-loaded-expert term. No factor: each size within 20 %, where a blanket
  // Ampere rate from the untuned shapes (1.5-2.9x at 16384 tokens) would put 16384 tokens ~1.4x over.
  const auto m = routed_moe_shape(4096, 1536, 128, 8);
  const auto g = spec::Catalog::builtin().gpu("a100-80gb-sxm");
  spec::Quantization q;
  q.weights = spec::format_for_gpu(spec::weight_format("bf16"), g, "quant.weights");
  q.kernels = kernels_of("vllm==0.14.0");
  const CostModel cm(m, q, g, perf::default_profile(g), spec::ParallelConfig{8, 1});
  struct Row {
    std::int64_t tokens;
    double measured_ms;
  };
  for (const Row& r : {Row{8, 0.1638}, Row{32, 0.3327}, Row{128, 0.4135}, Row{1024, 0.5624}, Row{4096, 1.3910},
                       Row{16384, 4.7590}}) {
    INFO(r.tokens << " tokens");
    const double ms = test::op(cm, test::decode(r.tokens, 1), "mlp") / m.moe_layers() * 1e3;
    CHECK(ms / r.measured_ms == Approx(1.0).margin(0.2));
  }
  CHECK(perf::moe_gemm_factors(moe_format_on("bf16", "a100-80gb-sxm"), false, g).compute == 1.0);
}

TEST_CASE("the Marlin MoE factor has its provenance with the value in use", "[moe][provenance]") {
  test::check_public_measurements({{"moe.marlin_hopper_compute_factor", perf::kMarlinMoeHopperCompute},
                                   {"moe.marlin_ampere_compute_factor", perf::kMarlinMoeAmpereCompute},
                                   {"moe.fp4_marlin_compute_factor", perf::kFp4MarlinMoeCompute}});
}

TEST_CASE("the MXFP4 backend's constants have provenances with the values in use", "[moe][provenance]") {
  const auto value_of = [](const std::string& field) -> double {
    for (const auto& x : perf::constant_provenance())
      if (x.field == field && x.value) return *x.value;
    return -1;
  };
  CHECK(value_of("moe.mxfp4_triton_padding") == 64);
  CHECK(value_of("moe.triton_split_k_max_tokens") == perf::kTritonSplitKMaxTokens);
  CHECK(value_of("moe.triton_split_k_expert_factor") == perf::kTritonSplitKExpertFactor);
  for (const auto& x : perf::constant_provenance())
    if (x.field.rfind("moe.triton", 0) == 0 || x.field == "moe.mxfp4_triton_padding") CHECK(x.looked_at.empty());
}


namespace {

/// One MoE layer's routed-expert op on one H100 (TP 1) in ms: `w` under `release`'s kernels.
double h100_moe_layer_ms(const spec::ModelSpec& m, const char* w, const char* release, std::int64_t tokens) {
  const auto g = spec::Catalog::builtin().gpu("h100-80gb-sxm");
  spec::Quantization q;
  q.weights = spec::format_for_gpu(spec::weight_format(w), g, "quant.weights");
  q.kernels = kernels_of(release);
  const CostModel cm(m, q, g, perf::default_profile(g), spec::ParallelConfig{1, 1});
  return test::op(cm, test::decode(tokens, 1), "mlp") / m.moe_layers() * 1e3;
}

}  // namespace

TEST_CASE("FP4 Marlin MoE computes slower than the int4 Marlin MoE of the same release, as aiconfigurator times them",
          "[moe]") {
  // aiconfigurator's H100 SXM tables of vLLM 0.24.0 (systems/data/h100_sxm/moe/vllm/0.24.0/moe_perf.parquet, balanced
  // routing, TP 1, ms per call) time the Marlin MoE kernel with FP4 weights (w4a16_mxfp4, compressed-tensors MXFP4 on
  // Marlin: 3584 x 3072, E 896, top 16) and with int4 weights (int4_wo: 7168 x 2048, E 384, top 8). Each over this cost
  // model's time for its own shape (which carries the shapes, the routing and the int4 kernel's fitted rate), the FP4
  // kernel reads ~1.25x slower than the int4 one at 2048-16384 tokens; with kFp4MarlinMoeCompute the two agree within
  // 6 % (geometric mean), where the rule before (FP4 Marlin at the int4 rate) left them 1.2x apart.
  struct Row {
    std::int64_t tokens;
    double fp4_ms, int4_ms;
  };
  const Row rows[] = {{2048, 11.282, 5.754},  {3072, 15.146, 7.883},  {4096, 28.943, 15.141}, {6144, 29.429, 15.587},
                      {8192, 47.013, 23.124}, {12288, 60.079, 31.058}, {16384, 75.413, 46.617}};
  const auto fp4 = routed_moe_shape(3584, 3072, 896, 16);
  const auto int4 = routed_moe_shape(7168, 2048, 384, 8);
  double log_sum = 0;
  for (const Row& r : rows) {
    const double fp4_ratio = r.fp4_ms / h100_moe_layer_ms(fp4, "mxfp4-experts", "vllm==0.11.0", r.tokens);
    const double int4_ratio = r.int4_ms / h100_moe_layer_ms(int4, "gptq-int4", "vllm==0.14.0", r.tokens);
    INFO(r.tokens << " tokens: FP4 measured/llmsim " << fp4_ratio << ", int4 " << int4_ratio);
    CHECK(fp4_ratio == Approx(1.0).margin(0.25));
    CHECK(fp4_ratio / int4_ratio == Approx(1.0).margin(0.2));
    log_sum += std::log(fp4_ratio / int4_ratio);
  }
  CHECK(std::exp(log_sum / std::size(rows)) == Approx(1.0).margin(0.06));
  // Decode sizes stream the weights, FP4 and int4 alike (the factor is on the compute rate only): 32-512 tokens stay
  // within 15 % of the FP4 table.
  for (const Row& r : {Row{32, 2.430, 0}, Row{256, 5.822, 0}, Row{512, 6.454, 0}}) {
    INFO(r.tokens << " tokens");
    CHECK(r.fp4_ms / h100_moe_layer_ms(fp4, "mxfp4-experts", "vllm==0.11.0", r.tokens) == Approx(1.0).margin(0.15));
  }
}
