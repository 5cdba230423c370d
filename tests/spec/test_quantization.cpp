#include <catch2/catch.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"

using namespace llmsim;
using namespace llmsim::spec;

TEST_CASE("weight formats carry their real bits per weight") {
  CHECK(weight_format_ids().size() == 20);  // + nvfp4, nvfp4-a16, mxfp4, mxfp4-experts, nvfp4-experts (issue 30), fp8-dynamic/-online
  // The FP8 scale schemes share the bytes and tensor path; they differ in the kernels vLLM runs (perf/quant_kernels).
  CHECK(weight_format("fp8-dynamic").bits_per_weight == 8);
  CHECK(weight_format("fp8-dynamic").compute_dtype == DType::fp8);
  CHECK(weight_format("fp8-dynamic").fp8_scales == Fp8Scales::dynamic_token);
  CHECK(weight_format("fp8-online").fp8_scales == Fp8Scales::dynamic_tensor);
  CHECK(weight_format("fp8").fp8_scales == Fp8Scales::static_tensor);
  CHECK(weight_format("awq-int4-g64").method == QuantMethod::awq);
  CHECK(weight_format("gptq-int4").method == QuantMethod::gptq);
  CHECK(weight_format("w4a16").method == QuantMethod::other);
  CHECK(weight_format("fp16").bits_per_weight == 16);
  CHECK(weight_format("awq-int4").bits_per_weight == Approx(4.156).epsilon(0.001));
  CHECK(weight_format("awq-int4").group_size == 128);
  CHECK(weight_format("gptq-int4").bits_per_weight == Approx(4.16));
  CHECK(weight_format("nf4").bits_per_weight == Approx(4.5));
  CHECK(weight_format("gguf-q8_0").bits_per_weight == Approx(8.5));
  CHECK(weight_format("gguf-q4_k_m").lm_head_bits == Approx(6.5625));
  CHECK(weight_format("w8a8").compute_dtype == DType::int8);
  CHECK_FALSE(weight_format("awq-int4").quantize_embeddings);
  CHECK(weight_format("gguf-q4_k_m").quantize_embeddings);
  CHECK(weight_format("AWQ-INT4").id == "awq-int4");
}

TEST_CASE("unknown format and KV dtype list the valid ones") {
  CHECK_THROWS_WITH(weight_format("awq_int4"), Catch::Contains("did you mean 'awq-int4'"));
  CHECK_THROWS_WITH(weight_format("int3", "--quant"), Catch::StartsWith("--quant"));
  CHECK(parse_kv_dtype("fp8") == DType::fp8);
  CHECK(parse_kv_dtype("auto") == DType::fp16);
  CHECK(bytes_per_element(parse_kv_dtype("int4")) == 0.5);
  CHECK_THROWS_WITH(parse_kv_dtype("fp4"), Catch::Contains("quant.kv_cache"));
}

TEST_CASE("fp8 on a GPU without fp8 falls back to W8A16") {
  const auto& cat = Catalog::builtin();
  const auto on_a100 = format_for_gpu(weight_format("fp8"), cat.gpu("a100-80gb-sxm"));
  CHECK(on_a100.compute_dtype == DType::fp16);
  CHECK(on_a100.weight_only);
  CHECK(on_a100.bits_per_weight == 8.0);
  const auto on_h100 = format_for_gpu(weight_format("fp8"), cat.gpu("h100-80gb-sxm"));
  CHECK(on_h100.compute_dtype == DType::fp8);
  CHECK_FALSE(on_h100.weight_only);
  CHECK(format_for_gpu(weight_format("fp8"), cat.gpu("rtx4090-24gb")).compute_dtype == DType::fp8);
  CHECK(format_for_gpu(weight_format("w8a8"), cat.gpu("a100-80gb-sxm")).compute_dtype == DType::int8);
}
