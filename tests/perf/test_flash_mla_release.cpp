// MLA decode by release (issue 27, branch r1moe27): DeepSeek published FlashMLA on 2025-02-24, four days after vLLM
// 0.7.3; vllm#13747 integrated it for the 0.7.4 nightlies (dstack's 0.7.4.dev181 ran it) and 0.8.0. vLLM 0.7.1-0.7.3
// decode an MLA model with their Triton MLA kernel on Hopper as elsewhere (spec/runtime_version.cpp).
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/decode_attention.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;
using perf::DecodeAttentionBackend;

namespace {

/// DeepSeek-R1 with its block-FP8 weights at TP 8 on `gpu_id`, vLLM V0 with the kernels of `release`.
perf::CostModel r1_under(const std::string& gpu_id, const std::string& release) {
  const auto& cat = spec::Catalog::builtin();
  const auto g = cat.gpu(gpu_id);
  spec::Quantization q;
  q.weights = spec::format_for_gpu(spec::weight_format("fp8"), g, "quant.weights");
  q.kernels = spec::quant_kernels_for(release);
  return perf::CostModel(cat.model("deepseek-r1"), q, g, perf::default_profile(g), spec::ParallelConfig{8, 1}, true, 0,
                         perf::Runtime::vllm_v0);
}

}  // namespace

TEST_CASE("MLA decodes with Triton MLA on Hopper before FlashMLA existed (vLLM 0.7.1-0.7.3), FlashMLA from 0.7.4",
          "[decode_attention][mla]") {
  CHECK(r1_under("h200-141gb-sxm", "vllm==0.7.3").decode_attention_backend() == DecodeAttentionBackend::triton_mla);
  CHECK(r1_under("h200-141gb-sxm", "vllm==0.7.1").decode_attention_backend() == DecodeAttentionBackend::triton_mla);
  // dstack's nightly (VLLM_ATTENTION_BACKEND=FLASHMLA) and the releases after it.
  CHECK(r1_under("h200-141gb-sxm", "vllm==0.7.4.dev181+gf35f8e22").decode_attention_backend() ==
        DecodeAttentionBackend::flash_mla);
  CHECK(r1_under("h200-141gb-sxm", "vllm==0.8.4").decode_attention_backend() == DecodeAttentionBackend::flash_mla);
  // No release pinned (a runtime name): today's kernels.
  CHECK(r1_under("h100-80gb-sxm", "vllm-v0").decode_attention_backend() == DecodeAttentionBackend::flash_mla);
  // Not Hopper: Triton MLA in every release.
  CHECK(r1_under("a100-80gb-sxm", "vllm==0.8.4").decode_attention_backend() == DecodeAttentionBackend::triton_mla);
  // The selector itself.
  const auto& h200 = spec::Catalog::builtin().gpu("h200-141gb-sxm");
  CHECK(perf::choose_decode_backend(h200, spec::DType::bf16, perf::Runtime::vllm_v0, true, true, false) ==
        DecodeAttentionBackend::triton_mla);
  CHECK(perf::choose_decode_backend(h200, spec::DType::bf16, perf::Runtime::vllm_v0, true, true, true) ==
        DecodeAttentionBackend::flash_mla);
}

TEST_CASE("a 0.7.3 DeepSeek-R1 decode step differs from 0.7.4's in its attention op alone, and is slower",
          "[decode_attention][mla]") {
  // 8 x H200, 32 and 100 sequences at ~3,500 tokens (vllm#13747's offline run decodes 100 of 3,000-4,000): the Triton
  // kernel runs the packed FlashAttention parameters (13 GB/s per CTA on Hopper) where FlashMLA streams 22.7 GB/s per
  // CTA (its README's 3000 GB/s on an H800). Every other op is the same bits.
  const auto triton = r1_under("h200-141gb-sxm", "vllm==0.7.3");
  const auto flash = r1_under("h200-141gb-sxm", "vllm==0.7.4");
  for (const int seqs : {32, 100}) {
    INFO(seqs << " sequences");
    const auto step = test::decode(seqs, 3500);
    const double attn_t = test::op(triton, step, "attention_decode"), attn_f = test::op(flash, step, "attention_decode");
    CHECK(attn_t > 1.2 * attn_f);
    for (const char* other : {"qkv_proj", "kv_b_proj", "o_proj", "mlp", "tp_allreduce", "launch", "cpu"})
      CHECK(test::op(triton, step, other) == test::op(flash, step, other));
    CHECK(triton.iteration_time(step) - flash.iteration_time(step) == Approx(attn_t - attn_f).epsilon(1e-9));
  }
}
