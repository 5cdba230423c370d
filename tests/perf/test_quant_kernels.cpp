// Quantised kernels by release (issue 27, perf/quant_kernels.hpp): which kernel a release runs for AWQ, GPTQ and FP8
// on which card, and what each path costs against the roofline's own terms (direction and size).
#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <string>

#include "llmsim/core/json_view.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/provenance.hpp"
#include "llmsim/perf/quant_kernels.hpp"
#include "llmsim/spec/quantization.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;
using perf::QuantGemmKernel;

namespace quant_kernels_test {

spec::QuantKernels qk_kernels(const std::string& release) { return spec::quant_kernels_for(release); }

/// Llama-3.1-8B's shapes with `layers` layers and a tiny vocabulary (the LM head out of the way).
spec::ModelSpec qk_llama(int layers) {
  spec::ModelSpec m = spec::Catalog::builtin().model("llama-3.1-8b");
  m.num_layers = layers;
  m.vocab_size = 32;
  return m;
}

perf::CostModel qk_model(const std::string& gpu_id, const std::string& weights, const std::string& release,
                      int layers = 1, perf::Runtime runtime = perf::Runtime::vllm_v0_sync) {
  const auto g = test::gpu(gpu_id);
  spec::Quantization q;
  q.weights = spec::weight_format(weights);
  q.kernels = release.empty() ? spec::QuantKernels{} : qk_kernels(release);
  return perf::CostModel(qk_llama(layers), q, g, perf::default_profile(g), spec::ParallelConfig{}, true, 0,
                         runtime);
}

perf::BatchShape qk_prefill(std::int64_t tokens) {
  perf::BatchShape b;
  b.add_prefill(tokens, 0, true);
  return b;
}

perf::QuantGemmPlan qk_plan(const std::string& gpu_id, const std::string& weights, const std::string& release) {
  spec::Quantization q;
  q.weights = spec::format_for_gpu(spec::weight_format(weights), test::gpu(gpu_id));
  q.kernels = qk_kernels(release);
  return perf::quant_gemm_plan(q, test::gpu(gpu_id));
}

double qk_pnorm(double a, double b, double p) {
  const double m = std::max(a, b);
  return m * std::pow(std::pow(a / m, p) + std::pow(b / m, p), 1.0 / p);
}

}  // namespace quant_kernels_test

using namespace quant_kernels_test;

TEST_CASE("a vLLM release maps to its quantised kernels at the boundaries read from vLLM's history", "[quant]") {
  // Before vllm#2566 (0.3.0) AWQ ran awq_gemm at every M; gptq_marlin by default from 0.4.2 (vllm#3922), awq_marlin
  // from 0.5.3 (vllm#6612); CUTLASS FP8 on Ada in the PyPI wheel from 0.7.0 (vllm#12098).
  const auto v025 = qk_kernels("vllm==0.2.5"), v041 = qk_kernels("vllm==0.4.1"), v042 = qk_kernels("vllm==0.4.2");
  CHECK_FALSE(v025.awq_dequant_large_m);
  CHECK_FALSE(v025.awq_marlin);
  CHECK_FALSE(v025.gptq_marlin);
  CHECK(v041.awq_dequant_large_m);
  CHECK_FALSE(v041.gptq_marlin);
  CHECK(v042.gptq_marlin);
  CHECK_FALSE(qk_kernels("vllm==0.5.2").awq_marlin);
  CHECK(qk_kernels("vllm==0.5.3").awq_marlin);
  CHECK_FALSE(qk_kernels("vllm==0.6.6.post1").ada_fp8_cutlass);
  CHECK(qk_kernels("vllm==0.7.0").ada_fp8_cutlass);
  // No release, a runtime name, other engines: today's kernels.
  CHECK(spec::quant_kernels_for(std::nullopt) == spec::QuantKernels{});
  CHECK(spec::quant_kernels_for(std::string("vllm-v0")) == spec::QuantKernels{});
  CHECK(qk_kernels("sglang==0.3.5") == spec::QuantKernels{});
  CHECK(qk_kernels("vllm==0.13.0") == spec::QuantKernels{});
  // vLLM 0.10.1 has today's GEMM kernels; only gpt-oss's MXFP4 experts ran Marlin on Hopper then (perf/moe_kernels).
  spec::QuantKernels v0101 = qk_kernels("vllm==0.10.1");
  CHECK_FALSE(v0101.mxfp4_hopper_triton);
  v0101.mxfp4_hopper_triton = true;
  CHECK(v0101 == spec::QuantKernels{});
  // A malformed release is the runtime's error, at its path.
  CHECK_THROWS_WITH(spec::quant_kernels_for(std::string("vllm==x"), "engine.runtime"),
                    Catch::Contains("engine.runtime"));
}

TEST_CASE("the kernel plan by release x card x format", "[quant]") {
  CHECK(qk_plan("a100-80gb-sxm", "awq-int4", "vllm==0.6.0").kernel == QuantGemmKernel::native);
  const auto awq041 = qk_plan("rtx3090-24gb", "awq-int4", "vllm==0.4.1");
  CHECK(awq041.kernel == QuantGemmKernel::awq_gemm);
  CHECK(awq041.dequant_min_rows == 256);
  CHECK(std::isinf(qk_plan("a100-40gb-sxm", "awq-int4-g64", "vllm==0.2.5").dequant_min_rows));
  const auto gptq = qk_plan("a100-40gb-sxm", "gptq-int4", "vllm==0.2.5");
  CHECK(gptq.kernel == QuantGemmKernel::exllama);
  CHECK(gptq.dequant_min_rows == 51);
  CHECK(qk_plan("a100-40gb-sxm", "gptq-int4", "vllm==0.4.2").kernel == QuantGemmKernel::native);
  // FP8 on Ada before 0.7.0: per-channel/per-token scales take torch._scaled_mm's unfused path; per-tensor scales the
  // fused _scaled_mm (priced as the native W8A8 path), and Hopper always has CUTLASS.
  CHECK(qk_plan("l40s-48gb", "fp8-dynamic", "vllm==0.5.5").kernel == QuantGemmKernel::fp8_unfused_dq);
  CHECK(qk_plan("rtx4090-24gb", "fp8-dynamic", "vllm==0.6.3").kernel == QuantGemmKernel::fp8_unfused_dq);
  CHECK(qk_plan("l40s-48gb", "fp8", "vllm==0.5.5").kernel == QuantGemmKernel::native);
  CHECK(qk_plan("l40s-48gb", "fp8-online", "vllm==0.5.5").kernel == QuantGemmKernel::native);
  CHECK(qk_plan("l40s-48gb", "fp8-dynamic", "vllm==0.7.0").kernel == QuantGemmKernel::native);
  CHECK(qk_plan("h100-80gb-sxm", "fp8-dynamic", "vllm==0.5.5").kernel == QuantGemmKernel::native);
  CHECK(qk_plan("rtx5090-32gb", "fp8-dynamic", "vllm==0.5.5").kernel == QuantGemmKernel::native);  // sm_120, not Ada
  // fp8 on an A100 runs weight-only FP8-Marlin: none of this applies.
  CHECK(qk_plan("a100-80gb-sxm", "fp8-dynamic", "vllm==0.5.5").kernel == QuantGemmKernel::native);
  // Marlin needs compute capability 8.0 (a BF16 tensor path): a Turing-class card keeps awq_gemm in any release.
  spec::GpuSpec turing = test::gpu("a10-24gb");
  turing.id = "turing-like";
  turing.bf16_flops = 0;
  spec::Quantization q;
  q.weights = spec::weight_format("awq-int4");
  CHECK(perf::quant_gemm_plan(q, turing).kernel == QuantGemmKernel::awq_gemm);
  q.weights = spec::weight_format("gptq-int4");
  CHECK(perf::quant_gemm_plan(q, turing).kernel == QuantGemmKernel::exllama);
}

TEST_CASE("pre-Marlin AWQ at >= 256 tokens costs a dequantisation pass plus the fp16 GEMM", "[quant]") {
  // One layer of Llama-3.1-8B, a 512-token prefill: vLLM 0.4.1's awq.py writes the whole fp16 weight
  // (awq_dequantize) and runs torch.matmul; llmsim's MLP = the fp16 model's MLP + that pass, to the rounding.
  const std::string id = "a100-80gb-sxm";
  const auto g = test::gpu(id);
  const auto prof = perf::default_profile(g);
  const double params = 3.0 * 4096 * 14336;
  const double bpw = spec::weight_format("awq-int4").bits_per_weight / 8;
  const double dq = params * (bpw + 2);
  const double t_stream = dq / (g.memory_bandwidth * prof.mem_bw_efficiency * prof.mem_bw_vs_bytes.at(dq));
  const double t_alu = params * perf::quant_kernel::kAwqDequantOpsPerWeight / (g.fp32_flops / 2);
  const double pass = 2 * prof.gemm_fixed_s + qk_pnorm(t_stream, t_alu, prof.roofline_exponent);
  const double fp16 = test::op(qk_model(id, "fp16", ""), qk_prefill(512), "mlp");
  const double awq041 = test::op(qk_model(id, "awq-int4", "vllm==0.4.1"), qk_prefill(512), "mlp");
  CHECK(awq041 - fp16 == Approx(pass).epsilon(1e-9));
  // Size: the 2.52 bytes per weight the pass streams are ~30 % of the 512-token fp16 GEMM on an A100.
  CHECK(pass / fp16 > 0.15);
  CHECK(pass / fp16 < 0.6);
  // At 255 tokens it still runs awq_gemm (as 0.2.5 does at any M), from 256 the dequantisation path; 0.6 runs
  // awq_marlin at any M.
  const auto m041 = qk_model(id, "awq-int4", "vllm==0.4.1"), m025 = qk_model(id, "awq-int4", "vllm==0.2.5");
  CHECK(test::op(m041, qk_prefill(255), "mlp") == test::op(m025, qk_prefill(255), "mlp"));
  CHECK(test::op(m041, qk_prefill(256), "mlp") != test::op(m025, qk_prefill(256), "mlp"));
  // The authors switched paths where they measured them about equal; llmsim's two prices at the switch are within
  // 1.5x of each other on the A100 (awq_gemm the dearer: its 16 re-dequantisations and 8 partial outputs).
  const double at_switch = test::op(m041, qk_prefill(255), "mlp") / test::op(m041, qk_prefill(256), "mlp");
  INFO("awq_gemm at 255 tokens / dequant + fp16 at 256: " << at_switch);
  CHECK(at_switch > 1.0 / 1.5);
  CHECK(at_switch < 1.5);
  CHECK(test::op(qk_model(id, "awq-int4", "vllm==0.6.0"), qk_prefill(512), "mlp") ==
        test::op(qk_model(id, "awq-int4", ""), qk_prefill(512), "mlp"));
  // vLLM 0.2.5 had no dequantisation path: awq_gemm at 512 tokens, 32 tiles of re-dequantised weights.
  const double awq025 = test::op(qk_model(id, "awq-int4", "vllm==0.2.5"), qk_prefill(512), "mlp");
  CHECK(awq025 > awq041);
}

TEST_CASE("pre-Marlin AWQ decode: awq_gemm re-dequantises the weights every 16 rows and sums 8 split-K parts",
          "[quant]") {
  // On an A100 (9.75 T FP32 lanes/s against 2 TB/s) the per-tile dequantisation outgrows the weight stream: at
  // 64 sequences awq_gemm's MLP is well above awq_marlin's (one 64-row block); at one sequence less so (the stream
  // dominates both; awq_gemm adds its sum kernel, 2.5 against 2.25 instructions per weight, and its down projection's
  // 256 CTAs stream at their bytes in flight, perf/quant_latency.hpp).
  const std::string id = "a100-80gb-sxm";
  const auto legacy = qk_model(id, "awq-int4", "vllm==0.4.1"), marlin = qk_model(id, "awq-int4", "vllm==0.5.3");
  const double r1 = test::op(legacy, test::decode(1, 512), "mlp") / test::op(marlin, test::decode(1, 512), "mlp");
  const double r64 = test::op(legacy, test::decode(64, 512), "mlp") / test::op(marlin, test::decode(64, 512), "mlp");
  INFO("awq_gemm / awq_marlin MLP: 1 seq " << r1 << ", 64 seqs " << r64);
  CHECK(r1 > 1.0);
  CHECK(r1 < 1.5);
  CHECK(r64 > 1.3);
  CHECK(r64 > r1);
  // Every 16 rows add a tile: 17 sequences cost more than 16 (Marlin's 64-row blocks do not move there).
  CHECK(test::op(legacy, test::decode(17, 512), "mlp") > test::op(legacy, test::decode(16, 512), "mlp") * 1.02);
  // The sum kernel and the dequantisation pass are launches of their own: one per linear layer.
  const auto l = qk_model(id, "awq-int4", "vllm==0.4.1", 32, perf::Runtime::vllm_v0_sync);
  const auto n = qk_model(id, "awq-int4", "vllm==0.5.3", 32, perf::Runtime::vllm_v0_sync);
  const auto eager = qk_prefill(64);  // V0 replays no graph for a prefill: every kernel is launched
  CHECK(test::op(l, eager, "launch") / test::op(n, eager, "launch") == Approx((32.0 * 14 + 8) / (32.0 * 10 + 8)));
}

TEST_CASE("pre-Marlin GPTQ: exllama's CUDA-core kernel to 50 rows, reconstruct + cuBLAS above", "[quant]") {
  const std::string id = "a100-40gb-sxm";
  const auto legacy = qk_model(id, "gptq-int4", "vllm==0.2.5"), marlin = qk_model(id, "gptq-int4", "vllm==0.4.2");
  // Batch 1: the weight stream bounds both (exllama's ~2.3 instructions per weight issue at 19.5 T/s).
  const double r1 = test::op(legacy, test::decode(1, 512), "mlp") / test::op(marlin, test::decode(1, 512), "mlp");
  CHECK(r1 > 0.8);
  CHECK(r1 < 1.3);
  // The dot products run on CUDA cores, 1.125 instructions per weight and row: at 48 rows several times Marlin's.
  const double t48 = test::op(legacy, test::decode(48, 512), "mlp");
  CHECK(t48 / test::op(marlin, test::decode(48, 512), "mlp") > 2.0);
  // Above 50 rows the reconstruct path takes over: the fp16 weight written and read back, no CUDA-core GEMM. The
  // kernel authors put the switch where the two cost about the same; so does llmsim (within 2x either way).
  const double t51 = test::op(legacy, test::decode(51, 512), "mlp");
  CHECK(t51 / t48 > 0.5);
  CHECK(t51 / t48 < 2.0);
  const double fp16_51 = test::op(qk_model(id, "fp16", ""), test::decode(51, 512), "mlp");
  CHECK(t51 > fp16_51);
}

TEST_CASE("FP8 on Ada before vLLM 0.7: torch._scaled_mm's unfused dequantisation adds fp32 passes over the outputs",
          "[quant]") {
  // Per output element: 2 more bytes written by the GEMM (fp32), then 8 + 8 + 6 bytes through three element-wise
  // kernels. Llama-3.1-8B's outputs per token and layer: qkv 6144, o 4096, gate_up 28672, down 4096.
  const std::string id = "l40s-48gb";
  const auto old = qk_model(id, "fp8-dynamic", "vllm==0.5.5"), cutlass = qk_model(id, "fp8-dynamic", "vllm==0.7.0");
  const auto b = qk_prefill(512);
  const auto bytes = [&](const perf::CostModel& cm, const char* name) {
    for (const auto& o : cm.breakdown(b).ops)
      if (o.name == std::string(name)) return o.bytes;
    return 0.0;
  };
  CHECK(bytes(old, "qkv_proj") - bytes(cutlass, "qkv_proj") == Approx(512.0 * 6144 * 24).epsilon(1e-9));
  CHECK(bytes(old, "mlp") - bytes(cutlass, "mlp") == Approx(512.0 * (28672 + 4096) * 24).epsilon(1e-9));
  // Size: on the L40S the passes add ~50-100 % to a 512-token step's linear layers.
  const double lin_old = test::op(old, b, "qkv_proj") + test::op(old, b, "o_proj") + test::op(old, b, "mlp");
  const double lin_new =
      test::op(cutlass, b, "qkv_proj") + test::op(cutlass, b, "o_proj") + test::op(cutlass, b, "mlp");
  INFO("linears at 512 tokens: " << lin_old * 1e3 << " ms vs " << lin_new * 1e3 << " ms");
  CHECK(lin_old / lin_new > 1.3);
  CHECK(lin_old / lin_new < 2.5);
  // Static per-tensor FP8 runs the fused _scaled_mm: the same as CUTLASS's price.
  CHECK(test::op(qk_model(id, "fp8", "vllm==0.5.5"), b, "mlp") ==
        test::op(qk_model(id, "fp8", "vllm==0.7.0"), b, "mlp"));
}

TEST_CASE("FP8 with a dynamic per-tensor activation scale reads every GEMM input once more", "[quant]") {
  // dynamic_scaled_fp8_quant: zero the scale, a max-reduction over the whole input, then the quantisation: one more
  // 16-bit read of the inputs of qkv, o_proj, gate_up and down (2h + H·d + I per token and layer) and 2 kernels each,
  // on every runtime (a compiled V1 does not fuse a per-tensor dynamic quantisation into the norm).
  const std::string id = "h100-80gb-sxm";
  const double per_token_layer = (2.0 * 4096 + 14336 + 32 * 128) * 2;
  for (const auto r : {perf::Runtime::vllm_v0, perf::Runtime::vllm_v1}) {
    CAPTURE(perf::to_string(r));
    const auto online = qk_model(id, "fp8-online", "", 32, r), fixed = qk_model(id, "fp8", "", 32, r);
    const auto b = test::decode(32, 1024);
    double d = 0;
    for (const auto& o : online.breakdown(b).ops)
      if (o.name == "norms_rotary_act") d += o.bytes;
    for (const auto& o : fixed.breakdown(b).ops)
      if (o.name == "norms_rotary_act") d -= o.bytes;
    if (r == perf::Runtime::vllm_v0) CHECK(d == Approx(32.0 * 32 * per_token_layer).epsilon(1e-9));
    CHECK(online.iteration_time(b) > fixed.iteration_time(b));
  }
  // Per-token dynamic scales (one CTA per token reads its row twice, the second time from cache) cost what static
  // ones do where CUTLASS runs.
  const auto b = test::decode(32, 1024);
  CHECK(qk_model(id, "fp8-dynamic", "vllm==0.6.3").iteration_time(b) ==
        qk_model(id, "fp8", "vllm==0.6.3").iteration_time(b));
}

TEST_CASE("checkpoints map to their FP8 scale scheme", "[quant]") {
  std::vector<std::string> notes;
  const auto ct = spec::checkpoint_quantization(
      JsonView(Json::parse(R"({"quant_method": "compressed-tensors",
        "config_groups": {"group_0": {"targets": ["Linear"],
        "weights": {"num_bits": 8, "type": "float", "strategy": "channel", "dynamic": false},
        "input_activations": {"num_bits": 8, "type": "float", "strategy": "token", "dynamic": true}}}})"),
               "quantization_config"),
      notes);
  CHECK(ct.format == "fp8-dynamic");
  CHECK(spec::checkpoint_quantization(JsonView(Json::parse(R"({"quant_method": "fbgemm_fp8"})"), "q"), notes).format ==
        "fp8-dynamic");
  CHECK(spec::checkpoint_quantization(
            JsonView(Json::parse(R"({"quant_method": "fp8", "activation_scheme": "static"})"), "q"), notes)
            .format == "fp8");
  CHECK(spec::checkpoint_quantization(
            JsonView(Json::parse(R"({"quant_method": "fp8", "activation_scheme": "dynamic"})"), "q"), notes)
            .format == "fp8-online");
  // Block-wise FP8 (DeepSeek, Qwen3 FP8) keeps the plain format: its own kernels, not modelled here.
  CHECK(spec::checkpoint_quantization(JsonView(Json::parse(R"({"quant_method": "fp8", "activation_scheme": "dynamic",
                                               "weight_block_size": [128, 128]})"),
                                               "q"),
                                      notes)
            .format == "fp8");
  CHECK(spec::canonical_weight_format_id("fbgemm_fp8") == "fp8-dynamic");
  // Meta's Llama-3.1-405B-FP8: modules_to_not_convert lists every layer's self_attn projections, the first and last
  // layers' MLPs and lm_head; vLLM's FBGEMMFp8Config skips them, so attention stays bf16.
  Json meta = {{"quant_method", "fbgemm_fp8"}, {"activation_scale_ub", 1200.0}, {"modules_to_not_convert", Json::array()}};
  for (int l = 0; l < 126; ++l)
    for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"})
      meta["modules_to_not_convert"].push_back("model.layers." + std::to_string(l) + ".self_attn." + p);
  for (int l : {0, 125})
    for (const char* p : {"gate_proj", "up_proj", "down_proj"})
      meta["modules_to_not_convert"].push_back("model.layers." + std::to_string(l) + ".mlp." + p);
  meta["modules_to_not_convert"].push_back("lm_head");
  notes.clear();
  const auto q405 = spec::checkpoint_quantization(JsonView(meta, "quantization_config"), notes);
  CHECK(q405.format == "fp8-dynamic+attn16");
  CHECK(spec::weight_format(q405.format).attention_16bit);
  CHECK(spec::weight_format(q405.format).fp8_scales == spec::Fp8Scales::dynamic_token);
  REQUIRE(notes.size() == 2);
  CHECK_THAT(notes[0], Catch::Contains("6 MLP projections"));
}

TEST_CASE("the quantised kernels' constants have provenances with the values in use", "[quant][provenance]") {
  namespace qk = perf::quant_kernel;
  const std::pair<const char*, double> used[] = {
      {"quant_kernel.awq_tile_rows", qk::kAwqTileRows},
      {"quant_kernel.awq_split_k", qk::kAwqSplitK},
      {"quant_kernel.awq_ops_per_weight", qk::kAwqOpsPerWeight},
      {"quant_kernel.awq_dequant_min_rows", qk::kAwqDequantMinRows},
      {"quant_kernel.awq_dequant_ops_per_weight", qk::kAwqDequantOpsPerWeight},
      {"quant_kernel.exllama_block_rows", qk::kExllamaBlockRows},
      {"quant_kernel.exllama_max_rows", qk::kExllamaMaxRows},
      {"quant_kernel.exllama_ops_per_weight", qk::kExllamaOpsPerWeight},
      {"quant_kernel.exllama_ops_per_weight_row", qk::kExllamaOpsPerWeightRow},
      {"quant_kernel.exllama_reconstruct_ops_per_weight", qk::kExllamaReconstructOpsPerWeight},
      {"quant_kernel.fp8_unfused_extra_out_bytes", qk::kFp8UnfusedExtraGemmOutBytes},
      {"quant_kernel.fp8_unfused_kernels", qk::kFp8UnfusedKernels}};
  for (const auto& [field, value] : used) {
    INFO(field);
    const perf::ConstantProvenance* e = nullptr;
    for (const auto& x : perf::constant_provenance())
      if (x.field == field) e = &x;
    REQUIRE(e != nullptr);
    CHECK(e->kind == perf::Provenance::engine_code);
    REQUIRE(e->value);
    CHECK(*e->value == value);
  }
}
