// vLLM's LoRA kernels in the cost model (perf/lora_kernels.hpp, op "lora"): priced on both step paths — the general
// step (iteration_time, breakdown) and the engine's decode runs (DecodeSteps) — with the size and direction the
// mechanism gives: rank, adapters in the step, decode vs prefill, and the memory plan's shapes.
#include <catch2/catch.hpp>

#include <memory>

#include "llmsim/core/error.hpp"
#include "llmsim/memory/lora_memory.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/lora_kernels.hpp"
#include "llmsim/perf/provenance.hpp"
#include "llmsim/spec/catalog.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;
using perf::BatchShape;
using perf::CostModel;

namespace {

CostModel lora_base_model(const char* model, const char* gpu, int tp = 1, bool graphs = true,
                          spec::Runtime runtime = spec::Runtime::vllm_v1) {
  const auto& cat = spec::Catalog::builtin();
  const auto g = cat.gpu(gpu);
  return CostModel(cat.model(model), spec::Quantization{}, g, perf::default_profile(g), spec::ParallelConfig{tp, 1},
                   graphs, 0, runtime);
}

BatchShape lora_prefill(std::int64_t tokens) {
  BatchShape b;
  b.add_prefill(tokens, 0, true);
  return b;
}

}  // namespace

TEST_CASE("LoRA's kernels are charged by the general step and by DecodeSteps alike, with their bits", "[lora]") {
  // A decode-only step through both paths: DecodeSteps (the engine's decode runs) must give iteration_time's bits and
  // iteration_time breakdown()'s, whose "lora" op is there and costs time. Were either path to leave the op out, the
  // two would differ by it (the reverted first attempt: 13.80 against 15.05 ms).
  struct V {
    const char* model;
    const char* gpu;
    int tp;
    bool graphs;
    spec::Runtime runtime;
  };
  const V variants[] = {{"llama-3.1-8b", "h100-80gb-sxm", 1, true, spec::Runtime::vllm_v1},
                        {"llama-3.1-8b", "a100-80gb-sxm", 1, false, spec::Runtime::vllm_v1},
                        {"qwen2.5-7b", "rtx4090-24gb", 1, true, spec::Runtime::vllm_v0},
                        {"llama-3.1-70b", "h100-80gb-sxm", 4, true, spec::Runtime::vllm_v1}};
  std::int64_t checked = 0;
  for (const auto& v : variants) {
    INFO(v.model << " on " << v.gpu << " tp " << v.tp << (v.graphs ? "" : " eager"));
    const CostModel plain = lora_base_model(v.model, v.gpu, v.tp, v.graphs, v.runtime);
    const CostModel lora = plain.with_lora(8, 16, 4);
    for (const std::int64_t n : {1, 3, 8, 64, 256, 9000}) {  // 9000: past the token table (the direct path)
      const auto steps = lora.decode_steps(n);
      const auto plain_steps = plain.decode_steps(n);
      for (const std::int64_t ctx : {n * 100, n * 2000}) {
        const BatchShape b = test::decode(n, ctx / n);
        const double t = lora.iteration_time(b);
        CHECK(steps.time(b.decode_context) == t);
        CHECK(lora.breakdown(b).time_s == t);
        const double op = test::op(lora, b, "lora");
        CHECK(op > 0);
        CHECK(steps.time(b.decode_context) > plain_steps.time(b.decode_context) + 0.5 * op);
        CHECK(test::op(plain, b, "lora") == 0);
        ++checked;
      }
    }
    // A mixed step and a prefill on the general path: the op is there too.
    BatchShape mixed = test::decode(32, 1000);
    mixed.add_prefill(2048, 0, true);
    CHECK(lora.iteration_time(mixed) == lora.breakdown(mixed).time_s);
    CHECK(test::op(lora, mixed, "lora") > 0);
    CHECK(lora.iteration_time(mixed) > plain.iteration_time(mixed));
  }
  CHECK(checked == 48);
}

TEST_CASE("LoRA's time grows with the rank and with the adapters a step reads, up to its sequences", "[lora]") {
  const CostModel plain = lora_base_model("llama-3.1-8b", "h100-80gb-sxm");
  auto lora_op = [&](int rank, int adapters, const BatchShape& b) {
    return test::op(plain.with_lora(8, rank, adapters), b, "lora");
  };
  const BatchShape one = test::decode(1, 1000), many = test::decode(64, 1000), prompt = lora_prefill(4096);
  // Rank: 64 moves four times the adapter and buffer bytes of 16; at decode the kernels' fixed time dominates, in a
  // prefill the tokens' input and output traffic (rank-free) does, until the rank's FLOPs and buffer grow (256).
  CHECK(lora_op(64, 1, many) > lora_op(16, 1, many));
  CHECK(lora_op(64, 1, prompt) > lora_op(16, 1, prompt));
  CHECK(lora_op(256, 1, prompt) > 1.2 * lora_op(16, 1, prompt));
  // Adapters: a step of one sequence reads one adapter however many the requests use; 64 sequences read eight.
  CHECK(lora_op(16, 8, one) == lora_op(16, 1, one));
  CHECK(lora_op(64, 8, many) > lora_op(64, 1, many));
  const double adapter_s = memory::lora_slot_bytes_per_gpu(plain.model(), {1, 1}, 64) /
                           (plain.gpu().memory_bandwidth * plain.profile().mem_bw_efficiency);
  // Seven more adapters of rank 64 (each as many bytes as its slot in the memory plan) at about the HBM rate.
  CHECK(lora_op(64, 8, many) - lora_op(64, 1, many) == Approx(7 * adapter_s).epsilon(0.35));
  // At decode the op is the kernels' fixed time: 2 kernels x 4 linears x 32 layers x 10 us = 2.56 ms, plus bytes.
  CHECK(lora_op(16, 1, one) == Approx(256 * perf::kLoraKernelFixedS).epsilon(0.05));
  // Its share of a small decode step is above its share of a long prefill (the base GEMMs grow with the tokens as the
  // LoRA kernels' traffic does, but the fixed time is paid once per step). H100: 2.6 of 10.8 ms, 13 of 115 ms.
  const CostModel lora = plain.with_lora(1, 16, 1);
  const double decode_share = lora_op(16, 1, one) / lora.iteration_time(one);
  const double prefill_share = lora_op(16, 1, prompt) / lora.iteration_time(prompt);
  INFO("decode share " << decode_share << ", prefill share " << prefill_share);
  CHECK(decode_share > 0.2);
  CHECK(decode_share < 0.5);
  CHECK(prefill_share < 0.75 * decode_share);
  CHECK(prefill_share > 0.01);
}

TEST_CASE("the LoRA kernels' shapes are the memory plan's: one adapter's bytes are its slot's", "[lora]") {
  const auto& cat = spec::Catalog::builtin();
  for (const char* id : {"llama-3.1-8b", "qwen2.5-7b", "llama-3.1-70b"}) {
    for (const int tp : {1, 2, 4}) {
      for (const int rank : {8, 16, 64, 256}) {
        const auto t = perf::lora_step_terms(cat.model(id), tp, rank);
        INFO(id << " tp " << tp << " rank " << rank);
        CHECK(t.adapter_bytes == Approx(memory::lora_slot_bytes_per_gpu(cat.model(id), {tp, 1}, rank)).epsilon(1e-12));
        CHECK(t.kernels == 8.0 * cat.model(id).num_layers);  // qkv, o, gate_up, down: a shrink and an expand each
        CHECK(t.launches == 1.5 * t.kernels);                // and the shrink buffer's zeroing
        // vLLM V0 launches them per packed slice: qkv 3, o 1, gate_up 2, down 1.
        const auto v0 = perf::lora_step_terms(cat.model(id), tp, rank, true);
        CHECK(v0.kernels == 14.0 * cat.model(id).num_layers);
        CHECK(v0.adapter_bytes == t.adapter_bytes);
        CHECK(v0.bytes_per_token == t.bytes_per_token);
      }
    }
  }
  // The cost model picks V0's per-slice launches by runtime: 14 kernels a layer at batch 1 instead of V1's 8.
  const CostModel v1 = lora_base_model("llama-3.1-8b", "a100-80gb-sxm").with_lora(1, 16, 1);
  const CostModel v0 = lora_base_model("llama-3.1-8b", "a100-80gb-sxm", 1, true, spec::Runtime::vllm_v0).with_lora(1, 16, 1);
  const BatchShape one = test::decode(1, 500);
  CHECK(test::op(v0, one, "lora") - test::op(v1, one, "lora") == Approx(6 * 32 * perf::kLoraKernelFixedS).epsilon(1e-6));
  // Llama-3-8B at rank 16, tp 1: PEFT's 41,943,040 parameters in bf16 (memory/lora_memory.cpp's check).
  CHECK(perf::lora_step_terms(cat.model("llama-3.1-8b"), 1, 16).adapter_bytes == 41943040.0 * 2);
}

TEST_CASE("with_lora refuses what vLLM would not run, naming the field", "[lora]") {
  const CostModel plain = lora_base_model("llama-3.1-8b", "a100-80gb-sxm");
  CHECK_THROWS_WITH(plain.with_lora(0, 16, 1), Catch::Contains("engine.max_loras"));
  CHECK_THROWS_WITH(plain.with_lora(4, 0, 1), Catch::Contains("engine.max_lora_rank"));
  CHECK_THROWS_WITH(plain.with_lora(4, 16, 5), Catch::Contains("workload.lora_adapters") && Catch::Contains("got 5"));
  CHECK_THROWS_WITH(plain.with_lora(4, 16, 0), Catch::Contains("workload.lora_adapters"));
  // The kernel constant has its source in the provenance table.
  bool found = false;
  for (const auto& e : perf::constant_provenance())
    if (e.field == "lora.kernel_fixed_s") {
      found = true;
      CHECK(e.value == perf::kLoraKernelFixedS);
      CHECK(e.looked_at.empty());
      CHECK_THAT(e.source, Catch::Contains("vllm#32425"));
    }
  CHECK(found);
}
