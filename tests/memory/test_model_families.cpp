// Memory plans of the issue-15 families: MLA's latent cache (replicated over tensor parallel), MoE weights by layer
// type, vLLM's hybrid KV-cache groups for sliding-window layers, and checkpoints that fit or are refused.
#include <catch2/catch.hpp>

#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/memory/kv_layout.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"
#include "memory_test_util.hpp"

using namespace llmsim;
using test::cat;
using test::gb;
using namespace llmsim::spec;
using llmsim::memory::kv_layout;
using llmsim::memory::plan_memory;

namespace {
memory::MemoryPlan family_plan(const std::string& model, const std::string& gpu, const std::string& w, int tp,
                               int max_model_len, EngineConfig e = {}) {
  const auto g = cat().gpu(gpu);
  Quantization q;
  q.weights = format_for_gpu(weight_format(w), g);
  return plan_memory(cat().model(model), q, g, ParallelConfig{tp, 1}, e, max_model_len);
}

}  // namespace

TEST_CASE("DeepSeek-V3 fits 8 x H200 in its FP8 checkpoint format, with MLA's latent cache on every rank") {
  const auto p = family_plan("deepseek-v3", "h200-141gb-sxm", "fp8", 8, 32768);
  INFO(p.reason);
  CHECK(p.fits);
  // 671 B at 1 byte over 8 ranks, plus what every rank holds whole: the q_a/kv_a projections (61 × 15.1 M at fp8),
  // the 16-bit routers and norms, and its eighth of the 16-bit embedding and LM head.
  CHECK(gb(p.per_gpu.weights_bytes) == Approx(85.1).epsilon(0.01));
  // The latent (512 + 64) × 61 layers × 2 bytes is not split by tensor parallel (MLAAttentionSpec, one KV head).
  CHECK(p.kv_bytes_per_token == 70272);
  CHECK(p.kv_bytes_per_token_per_gpu == 70272);
  // Its KV pool holds hundreds of thousands of tokens: 49 GB / 70 KB.
  CHECK(p.kv_capacity_tokens > 600000);
  // 8 x H100 (80 GB) cannot hold it: weights alone exceed 0.9 of each card.
  const auto h100 = family_plan("deepseek-v3", "h100-80gb-sxm", "fp8", 8, 32768);
  CHECK_FALSE(h100.fits);
  CHECK_THAT(h100.reason, Catch::Contains("weights need"));
  // GQA keys are sharded instead: Llama-3.3-70B's 8 KV heads over tp 8 -> one per rank.
  CHECK(family_plan("llama-3.3-70b", "h100-80gb-sxm", "fp8", 8, 8192).kv_bytes_per_token_per_gpu == 2.0 * 80 * 1 * 128 * 2);
}

TEST_CASE("Qwen3-30B-A3B in AWQ fits one RTX 4090; in 16-bit it does not") {
  const auto p = family_plan("qwen3-30b-a3b", "rtx4090-24gb", "awq-int4", 1, 8192);
  INFO(p.reason);
  CHECK(p.fits);
  // By hand: quantized linears = 48 layers × (attention 2048 × (4096 + 2 × 512) + 4096 × 2048, and 128 experts of
  // 3 × 2048 × 768) at 4.156 bits; 16-bit = embedding + LM head (2 × 151936 × 2048), routers (48 × 2048 × 128),
  // norms (48 × (2 × 2048 + 2 × 128) + 2048).
  const double linear = 48.0 * (2048.0 * (4096 + 2 * 512) + 4096.0 * 2048 + 128.0 * 3 * 2048 * 768);
  const double sixteen = 2.0 * 151936 * 2048 + 48.0 * 2048 * 128 + 48.0 * (2 * 2048 + 2 * 128) + 2048;
  CHECK(static_cast<double>(p.per_gpu.weights_bytes) ==
        Approx(linear * (4.0 + 16.0 / 128 + 4.0 / 128) / 8 + sixteen * 2).epsilon(1e-6));
  CHECK(p.kv_bytes_per_token_per_gpu == 2.0 * 48 * 4 * 128 * 2);
  CHECK(p.max_concurrent_seqs >= 4);
  const auto fp16 = family_plan("qwen3-30b-a3b", "rtx4090-24gb", "fp16", 1, 8192);
  CHECK_FALSE(fp16.fits);
  CHECK_THAT(fp16.reason, Catch::Contains("weights need 61."));
}

TEST_CASE("sliding-window layers: vLLM's KV-cache groups, padding and what one sequence holds") {
  const auto g3 = cat().model("gemma-3-27b");
  const auto l = kv_layout(g3, ParallelConfig{1, 1}, 2.0, true);
  // 62 layers = 10 full + 52 sliding: groups of 10 layers (the smaller type), the sliding type padded to 6 groups.
  CHECK(l.group_size == 10);
  CHECK(l.full_groups == 1);
  CHECK(l.sliding_groups == 6);
  CHECK(l.window == 1024);
  CHECK(l.bytes_per_token_layer == 2.0 * 16 * 128 * 2);
  // Inside the window every group holds every token: 70 layer-pages per 62 layers (vLLM warns of the padding).
  CHECK(l.bytes_per_token_all_groups() == 70 * l.bytes_per_token_layer);
  // A 32k sequence: 2048 blocks in the full group; each sliding group keeps window − 1 + the 8192-token chunk
  // (577 blocks), as vLLM's SlidingWindowSpec.max_memory_usage_bytes counts.
  CHECK(l.blocks_for(32768, 16, 8192) == 2048 + 6 * 577);
  CHECK(l.blocks_for(512, 16, 8192) == 7 * 32);
  // Against full KV in every layer (V0, or --disable-hybrid-kv-cache-manager): 62 layers × 2048 blocks per layer.
  const auto full = kv_layout(g3, ParallelConfig{1, 1}, 2.0, false);
  CHECK(full.groups() == 1);
  CHECK(full.group_size == 62);
  CHECK(static_cast<double>(l.blocks_for(32768, 16, 8192)) * l.group_size <
        0.45 * static_cast<double>(full.blocks_for(32768, 16, 8192)) * full.group_size);

  // Gemma-2: 21 + 21 layers -> two groups of 21, no padding.
  const auto g2 = kv_layout(cat().model("gemma-2-9b"), ParallelConfig{1, 1}, 2.0, true);
  CHECK(g2.group_size == 21);
  CHECK(g2.full_groups == 1);
  CHECK(g2.sliding_groups == 1);
  // Mistral-7B v0.1: every layer slides -> one group that keeps only the window.
  const auto mi = kv_layout(cat().model("mistral-7b"), ParallelConfig{1, 1}, 2.0, true);
  CHECK(mi.groups() == 1);
  CHECK(mi.full_groups == 0);
  CHECK(mi.blocks_for(32768, 16, 8192) == (4095 + 8192 + 15) / 16 + 1);
}

TEST_CASE("the memory plan counts sliding windows as vLLM's V1 does, and V0 in full") {
  EngineConfig v1;
  EngineConfig v0;
  v0.policy = SchedulerPolicy::vllm_v0;
  const auto a = family_plan("gemma-3-27b", "h200-141gb-sxm", "fp16", 1, 32768, v1);
  const auto b = family_plan("gemma-3-27b", "h200-141gb-sxm", "fp16", 1, 32768, v0);
  INFO(a.reason << " / " << b.reason);
  REQUIRE(a.fits);
  CHECK(a.kv_sliding_window == 1024);
  CHECK(a.kv_cache_groups == 7);
  CHECK(b.kv_sliding_window == 0);
  CHECK(b.kv_cache_groups == 1);
  // Concurrency of 32k-token sequences: the window saves 57% of the per-sequence KV (5510 × 10 against 2048 × 62
  // layer-pages), so V1 holds about twice the sequences V0 does on the same pool.
  CHECK(static_cast<double>(a.max_concurrent_seqs) >= 1.9 * std::max<std::int64_t>(1, b.max_concurrent_seqs));
  // vLLM's "GPU KV cache size" counts every group per token (padding included): fewer tokens than 62 layers would.
  CHECK(a.kv_bytes_per_token_per_gpu == 70.0 * 8192);
  CHECK(b.kv_bytes_per_token_per_gpu == 62.0 * 8192);
}

TEST_CASE("issue 30: Qwen3-Next's KV room per token counts its 12 attention layers; its state is pool blocks under V1") {
  const auto g = cat().gpu("h200-141gb-sxm");
  Quantization q;
  q.weights = format_for_gpu(weight_format("fp8"), g);
  EngineConfig e;
  e.max_num_seqs = 64;
  const ModelSpec next = cat().model("qwen3-next-80b-a3b");
  const auto p = plan_memory(next, q, g, ParallelConfig{1, 1}, e, 32768);
  REQUIRE(p.fits);
  // The same model with every layer an attention layer: four times the KV per token.
  ModelSpec dense = next;
  dense.linear_attention_layers = 0;
  const auto d = plan_memory(dense, q, g, ParallelConfig{1, 1}, e, 32768);
  CHECK(p.kv_bytes_per_token_per_gpu == Approx(12.0 * 2 * 2 * 256 * 2));
  CHECK(d.kv_bytes_per_token_per_gpu == Approx(4 * p.kv_bytes_per_token_per_gpu));
  // 36 layers × (3 × 8192 + 32 × 128 × 128) elements × 2 bytes ≈ 39.5 MB per sequence; vLLM V1 pads each layer's
  // state to the attention page at a block size raised to a multiple of 16 tokens (2 KV heads × 256 × 2 × 2 B =
  // 2 KiB per token and layer: 32 KiB steps, 1,097,728 B -> 34 steps, 1.5 % more).
  const double layer = (3 * 8192 + 32 * 128 * 128) * 2.0, state = 36 * layer;
  const double page = std::ceil(layer / 32768) * 32768;
  CHECK(p.linear_state_bytes_per_seq_per_gpu == Approx(36 * page));
  // V1 reserves nothing for max_num_seqs: the state is blocks of the pool (llmsim's: 16 tokens × 12 layers × 2 KiB),
  // charged per running sequence.
  CHECK(p.per_gpu.linear_state_bytes == 0);
  CHECK(p.linear_state_blocks_per_seq == static_cast<std::int64_t>(std::ceil(36 * page / (12.0 * 2048 * 16))));
  CHECK(p.linear_state_seqs_fit == p.kv_capacity_blocks / p.linear_state_blocks_per_seq);
  // vLLM's blocks: a page per layer of a 12-layer group (3 mamba groups per request).
  CHECK(p.mamba_cache_blocks == static_cast<std::int64_t>(std::floor(p.per_gpu.kv_cache_bytes / (12.0 * page))));
  // One sequence of 32,768 tokens holds its KV blocks and its state: what "concurrent sequences" divides by.
  CHECK(p.max_concurrent_seqs == p.kv_capacity_blocks / (32768 / 16 + p.linear_state_blocks_per_seq));
  // More running sequences no longer shrink the pool by their states (only max_num_seqs' sampler rows and graphs).
  e.max_num_seqs = 512;
  const auto more = plan_memory(next, q, g, ParallelConfig{1, 1}, e, 32768);
  const double states_in_tokens = 448 * state / p.kv_bytes_per_token_per_gpu;
  CHECK(static_cast<double>(p.kv_capacity_tokens - more.kv_capacity_tokens) < 0.1 * states_in_tokens);
  // Under tensor parallel the state is split by heads.
  const auto tp2 = plan_memory(next, q, g, ParallelConfig{2, 1}, EngineConfig{}, 32768);
  CHECK(tp2.linear_state_bytes_per_seq_per_gpu == Approx(36 * std::ceil(layer / 2 / 16384) * 16384));
  // vLLM V0 (MambaCacheManager) allocated max_num_seqs states up front: reserved from the pool.
  EngineConfig v0;
  v0.max_num_seqs = 64;
  v0.policy = SchedulerPolicy::vllm_v0;
  v0.runtime = Runtime::vllm_v0;
  const auto old = plan_memory(next, q, g, ParallelConfig{1, 1}, v0, 32768);
  CHECK(old.per_gpu.linear_state_bytes == Approx(64 * state).margin(1));
  CHECK(old.linear_state_blocks_per_seq == 0);
}

TEST_CASE("issue 30: gpt-oss's MXFP4 checkpoint keeps attention and embeddings 16-bit; ModelOpt NVFP4 at 4.5 bits") {
  const ModelSpec m = cat().model("gpt-oss-120b");
  const double experts = 36.0 * 128 * 3 * 2880 * 2880;
  const auto mx = memory::weight_bytes(m, weight_format("mxfp4-experts"));
  const auto bf = memory::weight_bytes(m, weight_format("bf16"));
  // Only the routed experts shrink, from 16 to 4.25 bits per weight.
  CHECK(static_cast<double>(bf - mx) == Approx(experts * (2 - 4.25 / 8)).epsilon(0.001));
  // The published checkpoint is 65.2 GB of safetensors (openai/gpt-oss-120b: 60.8 GiB).
  CHECK(static_cast<double>(mx) / 1e9 == Approx(65.2).epsilon(0.03));
  // An FP8 / NVFP4 ModelOpt Llama-3.1-70B: 8 and 4.5 bits per decoder weight, not 16.
  const ModelSpec l = cat().model("llama-3.1-70b");
  const double w16 = static_cast<double>(memory::weight_bytes(l, weight_format("bf16")));
  CHECK(static_cast<double>(memory::weight_bytes(l, weight_format("nvfp4"))) / w16 == Approx(0.3).epsilon(0.05));
}

TEST_CASE("issue 30: a format that keeps attention 16-bit plans attention at 2 bytes and the MLPs in the format") {
  const ModelSpec l = cat().model("llama-3.1-70b");
  const double attn = 80.0 * (8192.0 * 8192 * 2 + 2 * 8192.0 * 1024);  // q, o, k, v per layer
  const auto all = memory::weight_bytes(l, weight_format("nvfp4"));
  const auto kept = memory::weight_bytes(l, weight_format("nvfp4+attn16"));
  CHECK(static_cast<double>(kept - all) == Approx(attn * (2 - 4.5 / 8)).epsilon(0.001));
}

TEST_CASE("Gemma-4 31B: full layers' smaller KV pages hold twice the tokens, and vLLM's V slot is in the weights") {
  const ModelSpec& m = cat().model("gemma-4-31b");
  // 50 sliding layers of 2 × 16 × 256 and 10 full ones of 2 × 4 × 512, 16-bit.
  const auto layout = kv_layout(m, ParallelConfig{1, 1}, 2.0, true);
  CHECK(layout.bytes_per_token_layer == 16384);  // the sliding layers' page sets the page size
  CHECK(layout.full_block_scale == 2);           // unify_kv_cache_spec_page_size: full blocks of 2 × block_size
  CHECK(layout.sliding_block_scale == 1);
  CHECK(layout.group_size == 10);
  CHECK(layout.full_groups == 1);
  CHECK(layout.sliding_groups == 5);
  // 32768 tokens: 1024 full blocks of 32 tokens; each sliding group keeps window − 1 + chunk tokens + 1 block.
  CHECK(layout.blocks_for(32768, 16, 2048) == 1024 + 5 * (192 + 1));
  // Context bytes: the full layers hold every token, the sliding ones their window.
  CHECK(memory::kv_bytes_of_context(m, 2.0, 32768) == Approx(10 * 8192.0 * 32768 + 50 * 16384.0 * 1024));
  // The weights vLLM loads: the checkpoint plus the V slot of the k_eq_v layers, 16-bit.
  const double w = static_cast<double>(memory::weight_bytes(m, weight_format("fp16")));
  CHECK(w == Approx(2.0 * static_cast<double>(m.param_count() + m.duplicated_v_params())).epsilon(0.001));
  const auto p = family_plan("gemma-4-31b", "h200-141gb-sxm", "fp16", 1, 32768);
  INFO(p.reason);
  CHECK(p.fits);
  CHECK(p.kv_bytes_per_token == Approx(50 * 16384.0 + 10 * 8192.0));
}

TEST_CASE("Gemma-4 E2B: only the 15 layers that own a cache hold KV; the per-layer table and towers are weights") {
  const ModelSpec& m = cat().model("gemma-4-e2b");
  // Layers 0-14 own their cache (12 sliding of 2 × 1 × 256, 3 full of 2 × 1 × 512); the 20 KV-shared ones read
  // layers 13 and 14's (vLLM gives them no cache spec of their own).
  const auto layout = kv_layout(m, ParallelConfig{1, 1}, 2.0, true);
  CHECK(layout.layers == 15);
  CHECK(layout.bytes_per_token_layer == 2048);  // the full layers' page sets the page size
  CHECK(layout.sliding_block_scale == 2);
  CHECK(layout.group_size == 3);
  CHECK(layout.full_groups == 1);
  CHECK(layout.sliding_groups == 4);
  CHECK(memory::kv_bytes_of_context(m, 2.0, 32768) == Approx(3 * 2048.0 * 32768 + 12 * 1024.0 * 512));
  // Everything vLLM loads is on the GPU in 16 bits: the text model, the per-layer embedding table (a
  // VocabParallelEmbedding), the double-wide MLPs, and the vision and audio towers.
  const double w = static_cast<double>(memory::weight_bytes(m, weight_format("fp16")));
  CHECK(w == Approx(2.0 * static_cast<double>(m.param_count())).epsilon(0.001));
  // A 4-bit format quantizes the linears, not the tables or the towers: at least the 2.35 B-entry table stays 16-bit.
  const double w4 = static_cast<double>(memory::weight_bytes(m, weight_format("awq")));
  CHECK(w4 > 2.0 * static_cast<double>(m.per_layer_embedding_params() + m.embedding_params() + m.audio_params));
  CHECK(w4 < 0.75 * w);
}

TEST_CASE("issue 30: Qwen3.5-27B holds an FP32 DeltaNet state per running sequence; GLM-5 and MiniMax-M2.5 plans fit") {
  EngineConfig e;
  e.max_num_seqs = 64;
  const auto p = family_plan("qwen3.5-27b", "h200-141gb-sxm", "bf16", 1, 32768, e);
  REQUIRE(p.fits);
  CHECK(p.kv_bytes_per_token_per_gpu == Approx(16.0 * 2 * 4 * 256 * 2));  // the 16 attention layers only
  // 48 layers × (the BF16 conv window + the FP32 recurrent state): 153.9 MB per running sequence, each layer's state
  // padded to a whole attention page of 16-token multiples (4 KiB per token and layer: 64 KiB steps).
  const double layer = 3.0 * (2 * 16 * 128 + 48 * 128) * 2 + 48.0 * 128 * 128 * 4;
  const double page = std::ceil(layer / 65536) * 65536;
  CHECK(p.linear_state_bytes_per_seq_per_gpu == Approx(48 * page));
  CHECK(p.linear_state_bytes_per_seq_per_gpu < 1.02 * 48 * layer);
  CHECK(p.per_gpu.linear_state_bytes == 0);
  // Under tensor parallel the state is split by heads (16 key, 48 value heads).
  const auto tp4 = family_plan("qwen3.5-27b", "h100-80gb-sxm", "bf16", 4, 32768, e);
  CHECK(tp4.linear_state_bytes_per_seq_per_gpu == Approx(48 * std::ceil(layer / 4 / 16384) * 16384));
  // GLM-5 in FP8 on 8 × H200 (744 B parameters, ~750 GB): the MLA latent and the indexer's keys on every rank.
  const auto glm = family_plan("glm-5", "h200-141gb-sxm", "fp8", 8, 32768);
  CHECK(glm.fits);
  CHECK(glm.kv_bytes_per_token_per_gpu == Approx(78.0 * (576 * 2 + 132)));
  // MiniMax-M2.5's FP8 checkpoint (229 GB) on 4 × H200: 2 of its 8 KV heads per rank.
  const auto mm = family_plan("minimax-m2.5", "h200-141gb-sxm", "fp8", 4, 32768);
  CHECK(mm.fits);
  CHECK(mm.kv_bytes_per_token_per_gpu == Approx(62.0 * 2 * 2 * 128 * 2));
}

TEST_CASE("issue 29: Qwen3.5-27B on one H200 at vLLM's default 1,024 sequences plans under V1; the pool bounds them") {
  // vLLM V1 takes each running request's DeltaNet state from the KV pool (MambaSpec blocks) and reserves nothing for
  // max_num_seqs: the "lower max_num_seqs" refusal was V0's MambaCacheManager, not V1's.
  EngineConfig e;
  e.max_num_seqs = 1024;
  e.max_num_batched_tokens = 8192;
  const auto p = family_plan("qwen3.5-27b", "h200-141gb-sxm", "bf16", 1, 32768, e);
  REQUIRE(p.fits);
  INFO(p.reason);
  // Fewer states fit than max_num_seqs asks for: the scheduler's admission is what bounds the running set.
  CHECK(p.linear_state_seqs_fit > 100);
  CHECK(p.linear_state_seqs_fit < 1024);
  CHECK(p.linear_state_seqs_fit ==
        p.kv_capacity_blocks / static_cast<std::int64_t>(std::ceil(p.linear_state_bytes_per_seq_per_gpu / (16.0 * 4096 * 16))));
  // vLLM's startup check: max_num_seqs may not exceed its Mamba cache blocks (a page in each of 16 layers).
  CHECK(p.mamba_cache_blocks >= 1024);
  // V0 reserved the 1,024 states (158 GB): refused, as MambaCacheManager's allocation would fail there.
  EngineConfig v0 = e;
  v0.policy = SchedulerPolicy::vllm_v0;
  v0.runtime = Runtime::vllm_v0;
  const auto old = family_plan("qwen3.5-27b", "h200-141gb-sxm", "bf16", 1, 32768, v0);
  CHECK_FALSE(old.fits);
  CHECK_THAT(old.reason, Catch::Contains("lower max_num_seqs"));
}

TEST_CASE("issue 29: vLLM V1 refuses max_num_seqs above its Mamba cache blocks when CUDA graphs are on") {
  // vllm#38270 (gpu_model_runner._check_and_update_cudagraph_mode): "max_num_seqs (N) exceeds available Mamba cache
  // blocks (M)". Qwen3.5-27B on an H100: ~24 GB of pool, 16 layers × 3.2 MB per vLLM block -> a few hundred blocks.
  EngineConfig e;
  e.max_num_seqs = 1024;
  const auto p = family_plan("qwen3.5-27b", "h100-80gb-sxm", "bf16", 1, 32768, e);
  REQUIRE_FALSE(p.fits);
  CHECK(p.mamba_cache_blocks > 0);
  CHECK(p.mamba_cache_blocks < 1024);
  CHECK_THAT(p.reason, Catch::Contains("max_num_seqs (1024) exceeds available Mamba cache blocks (" +
                                       std::to_string(p.mamba_cache_blocks) + ")"));
  // At that many sequences it starts; eager mode (no FULL decode graphs) has no such check.
  e.max_num_seqs = p.mamba_cache_blocks;
  CHECK(family_plan("qwen3.5-27b", "h100-80gb-sxm", "bf16", 1, 32768, e).fits);
  e.max_num_seqs = 1024;
  e.cuda_graphs = false;
  CHECK(family_plan("qwen3.5-27b", "h100-80gb-sxm", "bf16", 1, 32768, e).fits);
}
