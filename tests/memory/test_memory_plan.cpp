#include <catch2/catch.hpp>

#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"
#include "memory_test_util.hpp"

using namespace llmsim;
using test::cat;
using test::gb;
using namespace llmsim::spec;
using llmsim::memory::plan_memory;
using llmsim::memory::weight_bytes;

namespace {
Quantization quant(const std::string& w, DType kv = DType::fp16) {
  Quantization q;
  q.weights = weight_format(w);
  q.kv_dtype = kv;
  return q;
}

memory::MemoryPlan plan(const std::string& model, const std::string& gpu, const std::string& w, int tp = 1,
                        int max_model_len = 8192, DType kv = DType::fp16, EngineConfig e = {}) {
  const auto g = cat().gpu(gpu);
  Quantization q = quant(w, kv);
  q.weights = format_for_gpu(q.weights, g);
  return plan_memory(cat().model(model), q, g, ParallelConfig{tp, 1}, e, max_model_len);
}

}  // namespace

TEST_CASE("weight bytes agree with published checkpoint sizes (quantization.md section 3)") {
  const auto m8 = cat().model("llama-3.1-8b");
  const auto m70 = cat().model("llama-3.1-70b");
  CHECK(gb(weight_bytes(m8, weight_format("bf16"))) == Approx(16.06).epsilon(0.005));
  CHECK(gb(weight_bytes(m8, weight_format("awq-int4"))) == Approx(5.73).epsilon(0.01));
  CHECK(gb(weight_bytes(m8, weight_format("fp8"))) == Approx(9.09).epsilon(0.01));
  CHECK(gb(weight_bytes(m8, weight_format("gguf-q8_0"))) == Approx(8.53).epsilon(0.01));
  CHECK(gb(weight_bytes(m8, weight_format("gguf-q4_k_m"))) == Approx(4.91).epsilon(0.01));
  CHECK(gb(weight_bytes(m70, weight_format("awq-int4"))) == Approx(39.77).epsilon(0.005));
  CHECK(gb(weight_bytes(m70, weight_format("gguf-q4_k_m"))) == Approx(42.51).epsilon(0.01));
  CHECK(gb(weight_bytes(m70, weight_format("bf16"))) == Approx(141.1).epsilon(0.005));
  // 70B at 4 bits is ~35 GB before metadata; AWQ's scales/zeros and 16-bit embeddings add the rest.
  CHECK(static_cast<double>(m70.param_count()) * 4 / 8 / 1e9 == Approx(35).epsilon(0.02));
  CHECK(weight_bytes(m70, weight_format("awq-int4")) > weight_bytes(m70, weight_format("nf4")) - 3'000'000'000);
}

TEST_CASE("llama-3.1-8b fp16 on a 4090: fits with a few GB of KV") {
  const auto p = plan("llama-3.1-8b", "rtx4090-24gb", "fp16");
  CHECK(p.fits);
  CHECK(p.reason.empty());
  CHECK(p.kv_bytes_per_token == 131072);
  CHECK(gb(p.per_gpu.weights_bytes) == Approx(16.06).epsilon(0.005));
  CHECK(gb(p.per_gpu.kv_cache_bytes) > 3);
  CHECK(gb(p.per_gpu.kv_cache_bytes) < 8);
  CHECK(p.kv_capacity_tokens == p.kv_capacity_blocks * 16);
  CHECK(p.kv_capacity_tokens * 131072 <= p.per_gpu.kv_cache_bytes);
  // vLLM V1 keeps one null block out of the pool, so the pool holds one block more than the capacity.
  CHECK((p.kv_capacity_blocks + 2) * 16 * 131072 > p.per_gpu.kv_cache_bytes);
  CHECK(p.max_concurrent_seqs == p.kv_capacity_tokens / 8192);
  const auto& g = p.per_gpu;
  // every byte is accounted for
  CHECK(g.weights_bytes + g.kv_cache_bytes + g.activation_bytes + g.runtime_bytes + g.free_bytes ==
        Approx(static_cast<double>(g.total_bytes)).margin(4));
  CHECK(g.comm_buffer_bytes == 0);
}

TEST_CASE("the longest context is the KV pool's, or the model's where the pool holds more") {
  // At the model's full 131k context a 4090 fails, yet tells how long one sequence may be.
  const auto full = plan("llama-3.1-8b", "rtx4090-24gb", "fp16", 1, 131072);
  CHECK_FALSE(full.fits);
  CHECK(full.longest_context_tokens == full.kv_capacity_tokens);
  CHECK(full.longest_context_tokens > 8192);
  CHECK(full.longest_context_tokens < 131072);
  const auto a100 = plan("llama-3.1-8b", "a100-80gb-sxm", "fp16", 1, 131072);
  CHECK(a100.fits);
  CHECK(a100.longest_context_tokens == 131072);
  CHECK(plan("qwen2.5-14b", "rtx4090-24gb", "fp16").longest_context_tokens == 0);  // the weights do not fit
}

TEST_CASE("CPU offload keeps part of the weights in host memory so a larger model fits") {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const auto no = plan("llama-3.1-70b", "rtx4090-24gb", "awq-int4", 1, 4096);
  CHECK_FALSE(no.fits);
  CHECK_THAT(no.reason, Catch::Contains("cpu_offload_gb"));
  EngineConfig e;
  e.cpu_offload_gb = 20;
  const auto yes = plan("llama-3.1-70b", "rtx4090-24gb", "awq-int4", 1, 4096, DType::fp16, e);
  CHECK(yes.fits);
  CHECK(yes.per_gpu.offloaded_weights_bytes == static_cast<std::int64_t>(20 * kGiB));
  CHECK(yes.per_gpu.weights_bytes + yes.per_gpu.offloaded_weights_bytes == Approx(39.77e9).epsilon(0.005));
  e.cpu_offload_gb = 1000;  // more than the weights: all of them, and the GPU holds none
  const auto all = plan("llama-3.1-8b", "rtx4090-24gb", "fp16", 1, 8192, DType::fp16, e);
  CHECK(all.per_gpu.weights_bytes == 0);
  CHECK(all.per_gpu.offloaded_weights_bytes == Approx(16.06e9).epsilon(0.005));
}

TEST_CASE("a 14B model at fp16 does not fit a 24 GB 4090, naming the weights") {
  for (const char* model : {"qwen2.5-14b", "llama-2-13b"}) {
    INFO(model);
    const auto p = plan(model, "rtx4090-24gb", "fp16");
    CHECK_FALSE(p.fits);
    CHECK_THAT(p.reason, Catch::StartsWith("weights need"));
    CHECK_THAT(p.reason, Catch::Contains("short by"));
    CHECK(p.kv_capacity_tokens == 0);
    CHECK(p.max_concurrent_seqs == 0);
  }
  CHECK(gb(plan("qwen2.5-14b", "rtx4090-24gb", "fp16").per_gpu.weights_bytes) == Approx(29.5).epsilon(0.01));
}

TEST_CASE("70B at 4-bit: no on a 4090 24GB, a few GB of KV on the 48GB, room on an A100 80GB") {
  const auto small = plan("llama-3.1-70b", "rtx4090-24gb", "awq-int4");
  CHECK_FALSE(small.fits);
  CHECK_THAT(small.reason, Catch::Contains("weights"));
  const auto modded = plan("llama-3.1-70b", "rtx4090-48gb", "awq-int4");
  CHECK(modded.fits);
  CHECK(gb(modded.per_gpu.kv_cache_bytes) > 1);
  CHECK(gb(modded.per_gpu.kv_cache_bytes) < 8);
  CHECK(modded.max_concurrent_seqs >= 1);  // 8k-token sequences at 320 KiB/token = 2.7 GB each
  CHECK(modded.max_concurrent_seqs <= 3);
  const auto a100 = plan("llama-3.1-70b", "a100-80gb-sxm", "awq-int4");
  CHECK(a100.fits);
  CHECK(gb(a100.per_gpu.kv_cache_bytes) > 25);
  CHECK(a100.max_concurrent_seqs > 10 * modded.max_concurrent_seqs);
}

TEST_CASE("tp 2 over two 4090s halves weights per GPU and adds all-reduce buffers") {
  const auto one = plan("llama-3.1-8b", "rtx4090-24gb", "fp16", 1);
  const auto two = plan("llama-3.1-8b", "rtx4090-24gb", "fp16", 2);
  CHECK(two.fits);
  CHECK(static_cast<double>(two.per_gpu.weights_bytes) ==
        Approx(static_cast<double>(one.per_gpu.weights_bytes) / 2).epsilon(0.001));
  CHECK(two.per_gpu.comm_buffer_bytes > 0);
  CHECK(two.per_gpu.runtime_bytes > one.per_gpu.runtime_bytes);
  CHECK(two.kv_bytes_per_token_per_gpu == one.kv_bytes_per_token_per_gpu / 2);
  CHECK(two.kv_capacity_tokens > 2 * one.kv_capacity_tokens);  // freed weight memory becomes KV
  // qwen2.5-14b fits two 4090s at fp16 though not one
  CHECK(plan("qwen2.5-14b", "rtx4090-24gb", "fp16", 2).fits);
}

TEST_CASE("tp must divide the heads") {
  CHECK_THROWS_WITH(plan("llama-3.1-8b", "rtx4090-24gb", "fp16", 3), Catch::Contains("hardware.tp"));
  // 8 KV heads over tp 16 are replicated (vLLM), 64 query heads divide
  CHECK_NOTHROW(plan("llama-3.1-70b", "a100-80gb-sxm", "fp16", 16));
  // pp need not divide the layers: 32 over 5 stages is vLLM's [6, 6, 7, 7, 6] (spec::pp_stage_layers), planned at
  // its largest stage: between the 8 layers of pp 4 and the 4 of pp 8.
  EngineConfig e;
  auto weights = [&](int pp) {
    return plan_memory(cat().model("llama-3.1-8b"), quant("fp16"), cat().gpu("a100-80gb-sxm"), ParallelConfig{1, pp}, e,
                       8192)
        .per_gpu.weights_bytes;
  };
  CHECK(weights(5) < weights(4));
  CHECK(weights(5) > weights(8));
  CHECK_THROWS_WITH(plan("llama-3.1-8b", "rtx4090-24gb", "fp16", 1, -5), Catch::Contains("max_model_len"));
}

TEST_CASE("knobs move the plan the right way") {
  const auto base = plan("llama-3.1-8b", "a100-80gb-sxm", "fp16");
  const auto fp8kv = plan("llama-3.1-8b", "a100-80gb-sxm", "fp16", 1, 8192, DType::fp8);
  CHECK(static_cast<double>(fp8kv.kv_capacity_tokens) == Approx(2.0 * base.kv_capacity_tokens).epsilon(0.001));
  EngineConfig big;
  big.max_num_batched_tokens = 32768;
  const auto bigger = plan("llama-3.1-8b", "a100-80gb-sxm", "fp16", 1, 8192, DType::fp16, big);
  CHECK(bigger.per_gpu.activation_bytes > base.per_gpu.activation_bytes);
  CHECK(bigger.kv_capacity_tokens < base.kv_capacity_tokens);
  EngineConfig util;
  util.gpu_memory_utilization = 0.5;
  CHECK(plan("llama-3.1-8b", "a100-80gb-sxm", "fp16", 1, 8192, DType::fp16, util).kv_capacity_tokens <
        base.kv_capacity_tokens);
  // the full 128k context: one sequence needs 16 GiB of KV
  const auto longctx = plan("llama-3.1-8b", "rtx4090-24gb", "fp16", 1, 131072);
  CHECK_FALSE(longctx.fits);
  CHECK_THAT(longctx.reason, Catch::Contains("max_model_len 131072"));
  CHECK(plan("llama-3.1-8b", "a100-80gb-sxm", "fp16", 1, 0).max_model_len == 131072);
}

TEST_CASE("MIG slices plan with their share of memory") {
  CHECK_FALSE(plan("llama-3.1-8b", "a100-80gb-sxm:mig-1g.10gb", "fp16").fits);
  CHECK(plan("llama-3.1-8b", "a100-80gb-sxm:mig-3g.40gb", "fp16").fits);
  CHECK(plan("llama-3.1-8b", "a100-80gb-sxm:mig-1g.10gb", "awq-int4").fits);
}

TEST_CASE("MoE weights count every expert") {
  const auto p = plan("mixtral-8x7b", "a100-80gb-sxm", "fp16", 2);
  CHECK(gb(p.per_gpu.weights_bytes) == Approx(46.7 * 2 / 2).epsilon(0.02));
  CHECK(p.fits);
}

TEST_CASE("JSON carries the contract fields") {
  const auto j = memory::to_json(plan("llama-3.1-8b", "rtx4090-24gb", "fp16"));
  for (const char* k : {"fits", "reason", "kv_bytes_per_token", "kv_capacity_tokens", "max_concurrent_seqs", "params"}) {
    CHECK(j.contains(k));
  }
  for (const char* k : {"weights_bytes", "kv_cache_bytes", "activation_bytes", "runtime_bytes", "free_bytes",
                        "total_bytes"}) {
    CHECK(j["per_gpu"].contains(k));
  }
  CHECK(j["kv_bytes_per_token"] == 131072);
}

TEST_CASE("the activation term is vLLM's profiling peak: the larger of the forward and the sampler") {
  // Llama-3.1-8B, 8192 batched tokens, 256 sequences (gpu_model_runner.profile_run): forward = hidden + residual
  // (2·T·h·2) + gate_up and activation (T·3·I·2) = 838,860,800 B; sampler = hidden states still held (T·h·2) +
  // the 256 rows' hidden (R·h·2) + 14 B per logit (bf16 logits, fp32 copy, fp32 probabilities, fp32 exponential
  // draw) = 528,875,520 B. Freed tensors stay cached, so the peak is the larger, not the sum.
  const auto p = plan("llama-3.1-8b", "a100-80gb-sxm", "bf16");
  CHECK(p.per_gpu.activation_bytes == 838'860'800);
  // 1024 sequences: the sampler's 1024 × 128,256 logits (1.84 GB) become the peak.
  EngineConfig e;
  e.max_num_seqs = 1024;
  const auto wide = plan("llama-3.1-8b", "a100-80gb-sxm", "bf16", 1, 8192, DType::fp16, e);
  CHECK(wide.per_gpu.activation_bytes == 67'108'864 + 1024LL * 4096 * 2 + 1024LL * 128256 * 14);
  CHECK(wide.kv_capacity_tokens < p.kv_capacity_tokens);
}

TEST_CASE("tight memory: 70B on four A100 40GB leaves what vLLM's worker leaves") {
  // Per GPU: 35.28 GB of weights; the profiling peak at 8192 tokens 0.62 GB; NCCL's buffers for the profiling
  // run's 134 MB all-reduce, created outside PyTorch over NVLink: 32 channels × 2 neighbours × 16 MiB = 1 GiB
  // (vLLM 0.11 logs 0.95-1.38 GiB of non-torch memory for TP runs). The former plan charged activations and
  // logits together and 0.3 GB of NCCL buffers, and left 2.17 GB of KV cache (26.5k tokens); vLLM sizes the
  // pool from total × util minus all of these.
  const auto p = plan("llama-3.1-70b", "a100-40gb-sxm", "bf16", 4);
  REQUIRE(p.fits);
  CHECK(p.per_gpu.non_torch_bytes == 1LL << 30);
  CHECK(gb(p.per_gpu.activation_bytes) == Approx(0.62).epsilon(0.01));
  // The A100 40GB's CUDA-visible 39.50 GiB (test_visible_memory.cpp) leaves 0.9 x 512 MiB less than its 40 GiB would
  // (1.68 GB then).
  CHECK(gb(p.per_gpu.kv_cache_bytes) > 1.0);
  CHECK(gb(p.per_gpu.kv_cache_bytes) < 1.4);
  CHECK(p.kv_capacity_tokens < 22000);
  // Over PCIe NCCL opens fewer channels: 4 × 2 × 16 MiB.
  CHECK(plan("llama-3.1-8b", "l40s-48gb", "bf16", 2).per_gpu.non_torch_bytes == 128LL << 20);
  // One GPU: no NCCL, only the small non-torch growth single-GPU logs show.
  CHECK(gb(plan("llama-3.1-8b", "a100-80gb-sxm", "bf16").per_gpu.non_torch_bytes) < 0.1);
}

TEST_CASE("V0 charges more to the budget than V1") {
  // vLLM V0 (0.6.x) took its free-memory baseline before the communicators existed and its dummy sampler sorts
  // for top-k/top-p; V1 snapshots after them and skips the sort.
  EngineConfig v0;
  v0.policy = SchedulerPolicy::vllm_v0;
  const auto a = plan("llama-3.1-70b", "a100-40gb-sxm", "bf16", 4);
  const auto b = plan("llama-3.1-70b", "a100-40gb-sxm", "bf16", 4, 8192, DType::fp16, v0);
  CHECK(b.per_gpu.kv_cache_bytes < a.per_gpu.kv_cache_bytes);
}

TEST_CASE("the headroom must hold the CUDA context, communicators and graphs") {
  // V1 refuses to start when total × util exceeds the memory free after the CUDA context (~0.5 GiB).
  EngineConfig e;
  e.gpu_memory_utilization = 0.999;
  const auto refused = plan("llama-3.1-8b", "a100-80gb-sxm", "bf16", 1, 8192, DType::fp16, e);
  CHECK_FALSE(refused.fits);
  CHECK_THAT(refused.reason, Catch::Contains("refuses to start"));
  // Graphs (0.25 GiB + 13 MiB per layer) are captured after the KV cache is sized: a headroom too small for them
  // costs KV room (or an out-of-memory error in vLLM); without graphs the pool is larger.
  e.gpu_memory_utilization = 0.97;
  const auto graphs = plan("llama-3.1-8b", "rtx4090-24gb", "fp16", 1, 8192, DType::fp16, e);
  e.cuda_graphs = false;
  const auto eager = plan("llama-3.1-8b", "rtx4090-24gb", "fp16", 1, 8192, DType::fp16, e);
  CHECK(graphs.per_gpu.cuda_graph_bytes > 0);
  CHECK(eager.per_gpu.cuda_graph_bytes == 0);
  CHECK(eager.per_gpu.kv_cache_bytes > graphs.per_gpu.kv_cache_bytes);
}

TEST_CASE("inline ECC: a GDDR card with ECC on exposes 15/16 of its memory, and the KV cache shrinks by that", "[memory]") {
  // nvidia-smi on an L40S, A40 or L20 with ECC on (as they ship): 46,068 of 49,152 MiB — the check bits live in the
  // DRAM. The L20 has no measured CUDA-visible total in the catalogue (the L40S has: test_visible_memory.cpp), so
  // its plan shows the rule.
  GpuSpec g = cat().gpu("l20-48gb");
  REQUIRE(g.ecc);
  REQUIRE(g.inline_ecc);
  REQUIRE(g.cuda_visible_memory_bytes == 0);
  const auto q = quant("fp16");
  const auto on = plan_memory(cat().model("llama-3.1-8b"), q, g, ParallelConfig{1, 1}, EngineConfig{}, 8192);
  g.ecc = false;  // nvidia-smi -e 0: the whole 48 GiB
  const auto off = plan_memory(cat().model("llama-3.1-8b"), q, g, ParallelConfig{1, 1}, EngineConfig{}, 8192);
  CHECK(on.per_gpu.total_bytes == 48LL * 1024 * 1024 * 1024 / 16 * 15);
  CHECK(std::abs(on.per_gpu.total_bytes / 1048576.0 - 46068) < 16);  // within 16 MiB of what nvidia-smi shows
  CHECK(off.per_gpu.total_bytes == 48LL * 1024 * 1024 * 1024);
  // The KV cache loses gpu_memory_utilization × 3 GiB (weights and runtime do not change).
  CHECK(static_cast<double>(off.kv_capacity_tokens - on.kv_capacity_tokens) * on.kv_bytes_per_token_per_gpu ==
        Approx(0.9 * 3.0 * 1024 * 1024 * 1024).epsilon(0.01));
  // HBM keeps its ECC bits out of band: an A100's plan sees what its driver reports (79.32 GiB), not 15/16 of it.
  const std::int64_t hbm = plan("llama-3.1-8b", "a100-80gb-sxm", "fp16").per_gpu.total_bytes;
  CHECK(hbm == test::cat().gpu("a100-80gb-sxm").usable_memory_bytes());
  CHECK(hbm > 80LL * 1024 * 1024 * 1024 / 16 * 15);
}
