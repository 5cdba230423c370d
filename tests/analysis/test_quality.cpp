// The quantization-quality table llmsim quotes (it does not model quality): internally consistent, and the caveat
// picks the measurement nearest in model size.
#include <catch2/catch.hpp>

#include <cmath>

#include "llmsim/analysis/quality.hpp"
#include "llmsim/spec/quantization.hpp"

using namespace llmsim;

TEST_CASE("every published delta is consistent with its scores and names a known format", "[analysis][quality]") {
  const auto& ids = spec::weight_format_ids();
  REQUIRE_FALSE(analysis::quality_deltas().empty());
  for (const auto& q : analysis::quality_deltas()) {
    INFO(q.format << " " << q.model);
    CHECK(std::find(ids.begin(), ids.end(), q.format) != ids.end());
    CHECK_FALSE(q.source.empty());
    CHECK(q.params_b > 0);
    if (q.baseline != 0 && q.quantized != 0) CHECK(q.delta == Approx(q.quantized - q.baseline).margin(1e-9));
  }
}

TEST_CASE("the caveat quotes the nearest model size, and says when there is none", "[analysis][quality]") {
  const auto small = analysis::nearest_quality_delta("awq-int4", 8.0e9);
  REQUIRE(small);
  CHECK(small->model == "Llama-2-7B");
  const auto big = analysis::nearest_quality_delta("awq-int4", 70.6e9);
  REQUIRE(big);
  CHECK(big->model == "Llama-2-70B");
  CHECK_THAT(analysis::quality_caveat("awq-int4", 8.0e9),
             Catch::StartsWith("quality not modelled by llmsim; published: WikiText-2 perplexity +0.13 (5.47 -> 5.60) "
                               "on Llama-2-7B"));
  CHECK(analysis::quality_caveat("fp16", 8.0e9).empty());
  CHECK_THAT(analysis::quality_caveat("nf4", 8.0e9), Catch::Contains("no published delta for nf4"));
  CHECK(analysis::is_4bit("awq-int4"));
  CHECK(analysis::is_4bit("gguf-q4_k_m"));
  CHECK_FALSE(analysis::is_4bit("fp8"));
  // From the format's stored bits, not a list: the FP4 formats, their experts-only variants, a group-size variant
  // and vLLM's names are 4-bit; 8-bit GGUF, 16-bit and a name that is no format are not.
  for (const char* f : {"nvfp4", "nvfp4-a16", "nvfp4-experts", "mxfp4", "mxfp4-experts", "nf4", "gptq-int4", "awq-int4-g32", "awq"})
    CHECK(analysis::is_4bit(f));
  for (const char* f : {"gguf-q8_0", "int8", "w8a8", "bf16", "fp16", "no-such-format"}) CHECK_FALSE(analysis::is_4bit(f));
}
