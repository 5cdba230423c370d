// vLLM's LoRA adapter slots in the memory plan (memory/lora_memory.cpp): their bytes from vLLM's buffer shapes,
// taken from the KV pool, and the engine fields' checks.
#include <catch2/catch.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/memory/lora_memory.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"
#include "memory_test_util.hpp"

using namespace llmsim;
using test::cat;

namespace {
memory::MemoryPlan lora_plan(const spec::EngineConfig& e, int tp = 1, const char* gpu = "a100-80gb-sxm") {
  const auto g = cat().gpu(gpu);
  spec::Quantization q;
  q.weights = spec::format_for_gpu(spec::weight_format("bf16"), g);
  return memory::plan_memory(cat().model("llama-3.1-8b"), q, g, spec::ParallelConfig{tp, 1}, e, 8192);
}

spec::EngineConfig with_lora(int slots, int rank) {
  spec::EngineConfig e;
  e.enable_lora = true;
  e.max_loras = slots;
  e.max_lora_rank = rank;
  return e;
}
}  // namespace

TEST_CASE("one LoRA slot of rank 16 on Llama-3-8B holds the 41,943,040 parameters PEFT counts for that adapter") {
  // Per layer at tp 1: qkv A 3 x 16 x 4096, B 16 x (4096 + 2 x 1024); o A 16 x 4096, B 4096 x 16; gate_up A 2 x 16 x
  // 4096, B 16 x 2 x 14336; down A 16 x 14336, B 4096 x 16 = 1,310,720; x 32 layers, in bf16.
  const auto m = cat().model("llama-3.1-8b");
  CHECK(memory::lora_slot_bytes_per_gpu(m, spec::ParallelConfig{1, 1}, 16) == 41943040.0 * 2);
  // Under tp 2 (not fully sharded): column layers keep A whole and shard B, row layers shard A and keep B whole.
  CHECK(memory::lora_slot_bytes_per_gpu(m, spec::ParallelConfig{2, 1}, 16) == 884736.0 * 32 * 2);
  // Linear in the rank; max_loras slots of it, none when LoRA is off.
  CHECK(memory::lora_slot_bytes_per_gpu(m, spec::ParallelConfig{1, 1}, 64) == 4 * 41943040.0 * 2);
  CHECK(memory::lora_bytes_per_gpu(m, spec::ParallelConfig{1, 1}, with_lora(4, 64)) == 16 * 41943040.0 * 2);
  spec::EngineConfig off = with_lora(4, 64);
  off.enable_lora = false;
  CHECK(memory::lora_bytes_per_gpu(m, spec::ParallelConfig{1, 1}, off) == 0);
}

TEST_CASE("the LoRA slots come out of the KV pool and show as their own line") {
  const auto base = lora_plan(spec::EngineConfig{});
  const auto lora = lora_plan(with_lora(8, 64));
  REQUIRE(base.fits);
  REQUIRE(lora.fits);
  CHECK(base.per_gpu.lora_bytes == 0);
  CHECK(lora.per_gpu.lora_bytes == 8 * 4 * 41943040LL * 2);  // 2.68 GB
  CHECK(lora.per_gpu.weights_bytes == base.per_gpu.weights_bytes);  // the model's own weights are unchanged
  CHECK(lora.per_gpu.kv_cache_bytes == Approx(base.per_gpu.kv_cache_bytes - lora.per_gpu.lora_bytes).margin(2));
  CHECK(lora.kv_capacity_tokens < base.kv_capacity_tokens);
  CHECK(memory::to_json(lora)["per_gpu"]["lora_bytes"] == lora.per_gpu.lora_bytes);
  // Slots that no longer fit beside the weights are named in the reason.
  const auto full = lora_plan(with_lora(64, 512), 1, "rtx4090-24gb");
  CHECK_FALSE(full.fits);
  CHECK_THAT(full.reason, Catch::Contains("of them the LoRA slots: max_loras 64 x rank 512"));
}

TEST_CASE("LoRA engine fields are checked with vLLM's bounds") {
  auto bad = [](const spec::EngineConfig& e, const std::string& field) {
    try {
      e.validate("engine");
      FAIL("accepted " << field);
    } catch (const ConfigError& err) {
      CHECK_THAT(err.what(), Catch::Contains("engine." + field));
    }
  };
  bad(with_lora(1, 12), "max_lora_rank");  // not one of vLLM's MaxLoRARanks
  bad(with_lora(0, 16), "max_loras");
  for (const int rank : {1, 8, 16, 32, 64, 128, 256, 320, 512}) CHECK_NOTHROW(with_lora(2, rank).validate("engine"));
}
