#include <catch2/catch.hpp>

#include <algorithm>

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
  CHECK(cat.gpu_ids().size() == 23);  // 14 + issue 30's nine
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
  // + the sixteen of issue 30 (gpt-oss, Llama-4, Kimi-K2, ..., GLM-4.7-Flash, Kimi-K2.5, Gemma-4) and its six of 2026
  // (Qwen3.5 27B / 35B-A3B / 122B-A10B / 397B-A17B, GLM-5, MiniMax-M2.5), and Nemotron-H-56B and Nemotron-3-Nano
  CHECK(cat.model_ids().size() == 52);
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

TEST_CASE("the cards buyers compare now (issue 30) load with their datasheet numbers") {
  const auto& cat = Catalog::builtin();
  constexpr double GiB = 1024.0 * 1024 * 1024;
  for (const char* id : {"h20-96gb", "l20-48gb", "rtxpro6000-96gb", "rtxpro6000-server-96gb", "b200-180gb-sxm",
                         "gb200-186gb", "rtx4090d-24gb", "rtx5090d-32gb", "rtx5090d-v2-24gb"}) {
    INFO(id);
    const GpuSpec g = cat.gpu(id);
    CHECK(g.id == id);
    CHECK(g.price_is_placeholder);  // every rental price is a placeholder to override
    CHECK(g.price_per_hour > 0);
    CHECK(g.source.size() > 200);   // each number cited
    CHECK(g.bf16_flops == g.fp16_flops);
    CHECK(g.fp8_flops >= g.fp16_flops);  // FP8 at least the 16-bit rate wherever it exists
    CHECK(g.tdp_watts > 0);
    CHECK(g.l2_bytes > 0);
    if (g.purchase_price > 0) CHECK(g.purchase_price_is_placeholder);  // China list prices converted from CNY
  }
  // H20: 96 GB HBM3 at 4.0 TB/s, faster memory than an H100 SXM, but 15 % of its tensor peak.
  const auto h20 = cat.gpu("h20-96gb"), h100 = cat.gpu("h100-80gb-sxm");
  CHECK(h20.memory_bytes == static_cast<std::int64_t>(96 * GiB));
  CHECK(h20.memory_bandwidth == Approx(4000e9));
  CHECK(h20.bf16_flops == Approx(148e12));
  CHECK(h20.fp8_flops == Approx(296e12));
  CHECK(h20.bf16_flops / h100.bf16_flops == Approx(0.15).margin(0.01));
  CHECK(h20.fp4_flops == 0);
  CHECK(h20.nvlink_bandwidth == Approx(450e9));
  CHECK(h20.mig_profiles.size() == 6);
  CHECK(cat.gpu("h20-96gb:mig-1g.12gb").memory_bytes == h20.memory_bytes / 8);
  // L20: an L40S's memory system with a third of its compute; inline ECC hides 1/16 of the 48 GB.
  const auto l20 = cat.gpu("l20-48gb"), l40s = cat.gpu("l40s-48gb");
  CHECK(l20.memory_bandwidth == l40s.memory_bandwidth);
  CHECK(l20.fp16_flops == Approx(119.5e12));
  CHECK(l20.fp16_flops / l40s.fp16_flops == Approx(0.33).margin(0.01));
  CHECK(l20.usable_memory_bytes() == l20.memory_bytes / 16 * 15);
  CHECK(l20.mig_profiles.empty());
  // RTX PRO 6000 Blackwell: 96 GB GDDR7, full-rate FP32 accumulate (a pro SKU), FP4, MIG on a GDDR card; the
  // Server Edition's memory runs slower.
  const auto pro = cat.gpu("rtxpro6000-96gb"), pro_s = cat.gpu("rtxpro6000-server-96gb"), g5090 = cat.gpu("rtx5090-32gb");
  CHECK(pro.memory_bytes == static_cast<std::int64_t>(96 * GiB));
  CHECK(pro.memory_bandwidth == Approx(1792e9));
  CHECK(pro_s.memory_bandwidth == Approx(1597e9));
  CHECK(pro.bf16_flops == Approx(503.8e12));
  CHECK(pro.bf16_flops > 2 * g5090.bf16_flops);  // GeForce halves the FP32-accumulate rate, the PRO does not
  CHECK(pro.fp4_flops == Approx(2000e12));
  CHECK(pro.usable_memory_bytes() == pro.memory_bytes);  // nvidia-smi 97,887 MiB: ECC not inline
  CHECK(pro.sm_count == 188);
  const auto slice = cat.gpu("rtxpro6000-96gb:mig-1g.24gb");
  CHECK(slice.memory_bytes == pro.memory_bytes / 4);
  CHECK(slice.compute_fraction == Approx(0.25));
  CHECK(slice.fp4_flops == Approx(pro.fp4_flops / 4));  // MIG scales the FP4 peak with the other tensor peaks
  // B200 / GB200: HBM3e, FP4 = 2 × FP8 = 4 × BF16, NVLink 5 at 900 GB/s per direction.
  const auto b200 = cat.gpu("b200-180gb-sxm"), gb200 = cat.gpu("gb200-186gb");
  CHECK(b200.memory_bytes == static_cast<std::int64_t>(180 * GiB));
  CHECK(b200.memory_bandwidth == Approx(7700e9));
  CHECK(b200.bf16_flops == Approx(2250e12));
  CHECK(b200.fp8_flops == Approx(4500e12));
  CHECK(b200.fp4_flops == Approx(9000e12));
  CHECK(b200.sm_count == 148);
  CHECK(b200.nvlink_bandwidth == Approx(900e9));
  CHECK(b200.tdp_watts == 1000);
  CHECK(cat.gpu("b200-180gb-sxm:mig-1g.23gb").memory_bytes == b200.memory_bytes / 8);
  CHECK(gb200.fp4_flops == Approx(10000e12));  // the GB200's GPUs run faster than an HGX B200's
  CHECK(gb200.memory_bytes > b200.memory_bytes);
  // China-market GeForce: the 4090 D keeps the 4090's memory and loses 14 of 128 SMs; the 5090 D keeps the 5090's
  // die, memory and FP32, with every tensor path capped to 2375/3352 AI TOPS; the V2 loses a quarter of the bus.
  const auto d4 = cat.gpu("rtx4090d-24gb"), g4090 = cat.gpu("rtx4090-24gb");
  CHECK(d4.memory_bandwidth == g4090.memory_bandwidth);
  CHECK(d4.sm_count == 114);
  CHECK(d4.fp16_flops == Approx(g4090.fp16_flops * 114 / 128).epsilon(0.001));
  CHECK(d4.tdp_watts == 425);
  CHECK_FALSE(d4.p2p);
  const auto d5 = cat.gpu("rtx5090d-32gb"), d5v2 = cat.gpu("rtx5090d-v2-24gb");
  CHECK(d5.memory_bandwidth == g5090.memory_bandwidth);
  CHECK(d5.fp32_flops == g5090.fp32_flops);
  CHECK(d5.fp4_flops == Approx(2375e12 / 2).epsilon(0.001));
  CHECK(d5.fp16_flops / g5090.fp16_flops == Approx(2375.0 / 3352).epsilon(0.002));
  CHECK(d5v2.memory_bandwidth == Approx(1344e9));
  CHECK(d5v2.memory_bytes == static_cast<std::int64_t>(24 * GiB));
  // The 5090 itself now carries its FP4 rate; pre-Blackwell cards have none.
  CHECK(g5090.fp4_flops == Approx(1676e12));
  for (const char* id : {"rtx4090-24gb", "a100-80gb-sxm", "h100-80gb-sxm", "h200-141gb-sxm", "l40s-48gb"})
    CHECK(cat.gpu(id).fp4_flops == 0);
}

TEST_CASE("the China-market cards sit under the US export cap their datasheets were cut to, their base cards above it") {
  // US export rule (15 CFR 774, ECCN 3A090, Oct 2023): total processing performance TPP = 2 x MacTOPS x bit length,
  // i.e. the dense tensor TOPS of a path x its operand width, for the card's highest path; 4800 or more is controlled.
  // H20, L20, RTX 4090 D and 5090 D exist because their base parts exceed it: each entry's peaks, from its cited
  // source, must land under it, and the 4090's and 5090's over it (a number mistyped past the cap fails here).
  const auto tpp = [](const GpuSpec& g) {
    return std::max({g.fp16_flops * 16, g.bf16_flops * 16, g.fp8_flops * 8, g.int8_ops * 8, g.int4_ops * 4,
                     g.fp4_flops * 4}) / 1e12;
  };
  const auto& cat = Catalog::builtin();
  for (const char* id : {"h20-96gb", "l20-48gb", "rtx4090d-24gb", "rtx5090d-32gb", "rtx5090d-v2-24gb"}) {
    INFO(id);
    CHECK(tpp(cat.gpu(id)) < 4800);
  }
  CHECK(tpp(cat.gpu("rtx4090-24gb")) > 4800);
  CHECK(tpp(cat.gpu("rtx5090-32gb")) > 4800);
  CHECK(tpp(cat.gpu("h100-80gb-sxm")) > 4800);
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
