// vLLM's 16-bit decode below Hopper (perf/decode_attention.hpp, choose_decode_backend): FlashAttention-2's split-KV
// kernel, which the fork's FA2 API forces for every paged cache, checked against vLLM 0.14.0's own attention layer
// timed on an A100 SXM. Sources in the comments and docs/cost-model.md ("FA2's split-KV kernel").
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "llmsim/perf/decode_attention.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;
using perf::DecodeAttentionBackend;
using perf::EngineGeneration;

namespace {

struct AicA100Point { double q, kv, b, tokens, us; };

double aic_a100_us(const AicA100Point& p, DecodeAttentionBackend backend) {
  const auto g = test::gpu("a100-80gb-sxm");
  const perf::DecodeAttentionModel m(g, perf::default_profile(g), perf::AttentionShape{p.q, p.kv, 128, 2.0},
                                     spec::DType::bf16, backend, 2.0);
  return m.per_layer(p.b, p.b * (p.tokens - 1)).time_s * 1e6;
}

double aic_a100_median_abs(std::vector<double> v) {
  for (double& x : v) x = std::fabs(x);
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

TEST_CASE("vLLM decodes a 16-bit cache with FA2's split-KV kernel below Hopper, V0 and V1 alike", "[mha]") {
  using spec::DType;
  // vllm-project/flash-attention csrc/flash_attn/flash_api.cpp: mha_varlen_fwd (V1's call) packs a KV head's query
  // heads at decode (seqlenq_ngroups_swapped), sets the split heuristic and ends in run_mha_fwd(params, stream,
  // /*force_split_kernel=*/paged_KV); mha_fwd_kvcache (V0's decode call) forces the same kernel for a paged cache.
  for (const char* id : {"a100-80gb-sxm", "a100-40gb-pcie", "a10-24gb", "rtx3090-24gb", "rtx4090-24gb"}) {
    INFO(id);
    for (auto e : {EngineGeneration::vllm_v1, EngineGeneration::vllm_v0, EngineGeneration::vllm_v0_sync})
      CHECK(perf::choose_decode_backend(test::gpu(id), DType::bf16, e) == DecodeAttentionBackend::flash_attn2_splitkv);
    // Other runtimes and an 8-bit cache keep their kernels.
    CHECK(perf::choose_decode_backend(test::gpu(id), DType::bf16, EngineGeneration::sglang) ==
          DecodeAttentionBackend::flashinfer);
    CHECK(perf::choose_decode_backend(test::gpu(id), DType::fp8, EngineGeneration::vllm_v0) ==
          DecodeAttentionBackend::paged_unpacked);
  }
  // Hopper keeps FA3.
  CHECK(perf::choose_decode_backend(test::gpu("h100-80gb-sxm"), DType::bf16, EngineGeneration::vllm_v1) ==
        DecodeAttentionBackend::flash_attn3_1wg);
}

TEST_CASE("FA2's split-KV decode on an A100 matches vLLM 0.14.0's attention layer timed by aiconfigurator (no constant "
          "set from it)", "[mha]") {
  // ai-dynamo/aiconfigurator aic-core/src/aiconfigurator_core/systems/data/a100_sxm/attention/vllm/0.14.0/
  // generation_attention_perf.parquet (device "NVIDIA A100-SXM4-80GB", kernel_source vllm_flash_attn, paged bf16
  // cache): query heads, KV heads, sequences, tokens each (the table's step; isl 1), us per layer.
  const std::vector<AicA100Point> long_ctx = {
      {8, 8, 64, 511, 99.5},     {8, 8, 64, 1023, 179.8},   {8, 8, 128, 511, 187.7},   {8, 8, 128, 1023, 325.4},
      {8, 8, 256, 511, 357.1},   {8, 8, 256, 1023, 632.1},  {8, 8, 512, 511, 693.5},   {8, 8, 512, 1023, 1239.7},
      {32, 8, 64, 511, 109.9},   {32, 8, 64, 1023, 192.7},  {32, 8, 128, 511, 200.5},  {32, 8, 128, 1023, 343.1},
      {32, 8, 256, 511, 358.7},  {64, 8, 64, 511, 113.1},   {64, 8, 64, 1023, 195.8},  {64, 8, 128, 511, 200.2},
      {64, 8, 128, 1023, 351.2}};
  std::vector<double> err;
  for (const auto& p : long_ctx) {
    const double t = aic_a100_us(p, DecodeAttentionBackend::flash_attn2_splitkv);
    INFO(p.q << "/" << p.kv << " heads, " << p.b << " x " << p.tokens << ": " << t << " us, measured " << p.us);
    err.push_back(t / p.us - 1);
    CHECK(std::fabs(err.back()) < 0.15);
  }
  INFO("median |error| " << 100 * aic_a100_median_abs(err) << " %");
  CHECK(aic_a100_median_abs(err) < 0.08);

  // Where the kernels differ: many short sequences. FA2's split kernel keeps 2 CTAs per SM on sm80 (80 KiB of shared
  // memory each, fa2_splitkv_ctas_per_sm), so a grid of thousands of CTAs pays half the waves of fixed cost that one
  // CTA per SM (the `flash_attn` price, used for vLLM on Ampere before) charges; measured 0.07-0.24 ms.
  const std::vector<AicA100Point> short_ctx = {{32, 8, 128, 127, 68.1}, {32, 8, 256, 127, 118.9},
                                               {32, 8, 512, 127, 213.6}, {64, 8, 128, 127, 78.7},
                                               {64, 8, 256, 127, 132.3}, {64, 8, 512, 127, 243.9}};
  std::vector<double> split_err, one_err;
  for (const auto& p : short_ctx) {
    split_err.push_back(aic_a100_us(p, DecodeAttentionBackend::flash_attn2_splitkv) / p.us - 1);
    one_err.push_back(aic_a100_us(p, DecodeAttentionBackend::flash_attn) / p.us - 1);
    INFO(p.q << "/" << p.kv << " heads, " << p.b << " x " << p.tokens << ": split-KV " << 100 * split_err.back()
              << " %, one CTA per SM " << 100 * one_err.back() << " %");
    CHECK(split_err.back() < 0.25);
    CHECK(split_err.back() > -0.15);
  }
  INFO("median |error| split-KV " << 100 * aic_a100_median_abs(split_err) << " %, one CTA per SM "
                                  << 100 * aic_a100_median_abs(one_err) << " %");
  CHECK(aic_a100_median_abs(split_err) < 0.15);
  CHECK(aic_a100_median_abs(one_err) > 0.30);  // the old price: the effect's size
}
