#include <catch2/catch.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"

using namespace llmsim;
using namespace llmsim::spec;

TEST_CASE("builtin catalogue ships the GPUs and models of issue 2") {
  const auto& cat = Catalog::builtin();
  for (const char* id : {"rtx4090-24gb", "rtx4090-48gb", "rtx3090-24gb", "rtx5090-32gb", "l4-24gb", "a10-24gb",
                         "l40s-48gb", "a100-40gb-pcie", "a100-80gb-pcie", "a100-80gb-sxm", "h100-80gb-pcie",
                         "h100-80gb-sxm", "h200-141gb-sxm"}) {
    INFO(id);
    const GpuSpec g = cat.gpu(id);
    CHECK(g.id == id);
    CHECK(g.price_is_placeholder);
    CHECK(g.price_per_hour > 0);
    CHECK_FALSE(g.source.empty());
  }
  CHECK(cat.gpu_ids().size() == 14);
  for (const char* id : {"llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3.1-8b", "llama-3.1-70b", "mistral-7b",
                         "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-72b", "mixtral-8x7b",
                         // issue 15: the models people deploy now
                         "llama-3.2-1b", "llama-3.2-3b", "llama-3.3-70b", "qwen3-8b", "qwen3-14b", "qwen3-32b",
                         "qwen3-30b-a3b", "qwen3-235b-a22b", "deepseek-v3", "deepseek-r1", "mistral-7b-v0.3",
                         "mistral-small-24b", "mixtral-8x22b", "gemma-2-9b", "gemma-2-27b", "gemma-3-12b",
                         "gemma-3-27b"}) {
    INFO(id);
    CHECK(cat.model(id).id == id);
  }
  CHECK(cat.model_ids().size() == 38);  // + the ten of issue 30 (gpt-oss, Llama-4, Kimi-K2, ...)
}

TEST_CASE("GPU figures follow the datasheet table") {
  const auto& cat = Catalog::builtin();
  const auto g4090 = cat.gpu("rtx4090-24gb");
  const auto g4090_48 = cat.gpu("rtx4090-48gb");
  CHECK(g4090.memory_bandwidth == Approx(1008e9));
  CHECK(g4090_48.memory_bandwidth == g4090.memory_bandwidth);  // same 384-bit bus
  CHECK(g4090_48.memory_bytes == 2 * g4090.memory_bytes);
  CHECK(g4090.fp16_flops == Approx(165.2e12));  // GeForce FP32-accumulate rate
  CHECK_FALSE(g4090.p2p);
  CHECK(g4090.mig_profiles.empty());
  CHECK(cat.gpu("a100-80gb-sxm").memory_bandwidth == Approx(2039e9));
  CHECK(cat.gpu("a100-80gb-pcie").memory_bandwidth == Approx(1935e9));
  CHECK(cat.gpu("a100-80gb-sxm").fp8_flops == 0);  // Ampere has no FP8
  CHECK(cat.gpu("h100-80gb-sxm").tensor_peak(DType::fp8) == Approx(1979e12));
  CHECK(cat.gpu("a100-80gb-sxm").pcie_bandwidth() == Approx(31.5e9).epsilon(0.01));
  // DESIGN.md: 20 GB of weights per decode step bound by bandwidth.
  CHECK(20e9 / g4090.memory_bandwidth * 1e3 == Approx(19.8).epsilon(0.01));
  CHECK(20e9 / cat.gpu("a100-80gb-sxm").memory_bandwidth * 1e3 == Approx(9.8).epsilon(0.01));
}

TEST_CASE("MIG slices scale memory, compute and bandwidth") {
  const auto& cat = Catalog::builtin();
  const auto full = cat.gpu("a100-80gb-sxm");
  const auto s = cat.gpu("a100-80gb-sxm:mig-3g.40gb");
  CHECK(s.id == "a100-80gb-sxm:mig-3g.40gb");
  CHECK(s.memory_bytes == full.memory_bytes / 2);
  CHECK(s.memory_bandwidth == Approx(full.memory_bandwidth / 2));
  CHECK(s.fp16_flops == Approx(full.fp16_flops * 3 / 7));
  CHECK(s.compute_fraction == Approx(3.0 / 7));
  CHECK(s.bandwidth_fraction == Approx(0.5));
  CHECK(cat.gpu("a100-80gb-sxm:mig-1g.10gb").memory_bytes == full.memory_bytes / 8);
  CHECK(cat.gpu("h200-141gb-sxm:mig-7g.141gb").compute_fraction == Approx(1.0));
  CHECK(cat.gpu("a100-40gb-pcie:mig-1g.5gb").memory_bytes == cat.gpu("a100-40gb-pcie").memory_bytes / 8);
  try {
    cat.gpu("a100-80gb-sxm:mig-3g.20gb");
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.path() == "hardware.gpu");
    CHECK_THAT(e.what(), Catch::Contains("mig-3g.40gb"));
  }
  CHECK_THROWS_AS(cat.gpu("rtx4090-24gb:mig-1g.10gb"), ConfigError);
}

TEST_CASE("unknown ids list close matches") {
  const auto& cat = Catalog::builtin();
  try {
    cat.gpu("rtx4090");
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("did you mean 'rtx4090-24gb'"));
  }
  try {
    cat.model("llama-3-8b", "model");
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.path() == "model");
    CHECK_THAT(e.what(), Catch::Contains("llama-3.1-8b"));
  }
  CHECK_THROWS_AS(cat.model("/nonexistent/config.json"), ConfigError);
}

TEST_CASE("GPU spec JSON round-trips and rejects bad values") {
  const auto g = Catalog::builtin().gpu("h100-80gb-sxm");
  const Json j = to_json(g);
  const GpuSpec back = gpu_spec_from_json(JsonView(j, "gpu"));
  CHECK(back.memory_bytes == g.memory_bytes);
  CHECK(back.fp8_flops == Approx(g.fp8_flops));
  CHECK(back.mig_profiles.size() == g.mig_profiles.size());
  Json bad = j;
  bad["memory_bandwidth_gb_per_s"] = -1;
  CHECK_THROWS_WITH(gpu_spec_from_json(JsonView(bad, "gpu")), Catch::Contains("gpu.memory_bandwidth"));
  bad = j;
  bad["colour"] = "green";
  CHECK_THROWS_WITH(gpu_spec_from_json(JsonView(bad, "gpu")), Catch::Contains("gpu.colour"));
  // The dense FP4 peak (issue 30): tensor_tflops.fp4, TFLOP/s; absent = 0 (no FP4 tensor path), negative refused.
  CHECK(g.fp4_flops == 0);  // Hopper has no FP4 tensor cores
  Json fp4 = j;
  fp4["tensor_tflops"]["fp4"] = 9000;
  CHECK(gpu_spec_from_json(JsonView(fp4, "gpu")).fp4_flops == Approx(9000e12));
  CHECK(to_json(gpu_spec_from_json(JsonView(fp4, "gpu")))["tensor_tflops"]["fp4"].get<double>() == Approx(9000));
  fp4["tensor_tflops"].erase("fp4");
  CHECK(gpu_spec_from_json(JsonView(fp4, "gpu")).fp4_flops == 0);
  fp4["tensor_tflops"]["fp4"] = -1;
  CHECK_THROWS_WITH(gpu_spec_from_json(JsonView(fp4, "gpu")), Catch::Contains("gpu.tensor_tflops.fp4"));
  GpuSpec neg = g;
  neg.fp4_flops = -1;
  CHECK_THROWS_WITH(neg.validate("gpu"), Catch::Contains("gpu.fp4_flops"));
}
