// The cost model on the issue-15 shapes: MoE runs its active parameters (routed top-k, shared experts, dense
// layers), MLA decodes over its latent with the absorbed projections and prefills full heads, sliding-window layers
// read at most their window. Hand counts from the configs; no timings asserted.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;
using test::decode;
using perf::BatchShape;
using perf::CostModel;

namespace {

CostModel on(const std::string& model, const std::string& gpu_id, const std::string& w = "fp16", int tp = 1,
             spec::ModelSpec* edit = nullptr) {
  const auto& cat = spec::Catalog::builtin();
  const auto g = cat.gpu(gpu_id);
  spec::Quantization q;
  q.weights = spec::weight_format(w);
  return CostModel(edit ? *edit : cat.model(model), q, g, perf::default_profile(g), spec::ParallelConfig{tp, 1});
}

double op_value(const perf::StepCost& s, const std::string& name, bool bytes = false) {
  for (const auto& o : s.ops)
    if (o.name == name) return bytes ? o.bytes : o.flops;
  return 0;
}

// FLOPs of the weight GEMMs one decode token runs: 2 per weight it touches.
double linear_flops(const perf::StepCost& s) {
  return op_value(s, "qkv_proj") + op_value(s, "kv_b_proj") + op_value(s, "o_proj") + op_value(s, "mlp") +
         op_value(s, "lm_head");
}

}  // namespace

TEST_CASE("one decode token runs the MoE's active parameters: Qwen3-30B-A3B ~3.3 B, DeepSeek-V3 ~37 B") {
  const auto& cat = spec::Catalog::builtin();
  for (const char* id : {"qwen3-30b-a3b", "deepseek-v3", "mixtral-8x22b"}) {
    INFO(id);
    const auto m = cat.model(id);
    const CostModel cm = on(id, "h200-141gb-sxm", "bf16");
    // 2 FLOPs per active weight; the embedding is a gather, and norms are not GEMMs.
    const double expected = 2.0 * static_cast<double>(m.active_param_count() - m.embedding_params() -
                                                       m.num_layers * m.norm_params_per_layer() - m.hidden_size);
    CHECK(linear_flops(cm.breakdown(decode(1, 1024))) == Approx(expected).epsilon(0.002));
  }
  // Qwen3-30B-A3B reads ~3 B weights per token at batch 1, not its 30 B (the reader before gave every expert the
  // dense 6144 width: 233 B).
  const double qwen = linear_flops(on("qwen3-30b-a3b", "h200-141gb-sxm", "bf16").breakdown(decode(1, 1024))) / 2;
  CHECK(qwen / 1e9 == Approx(3.3 - 0.31).epsilon(0.03));
}

TEST_CASE("MoE weights streamed grow with the experts a batch touches") {
  const CostModel cm = on("qwen3-30b-a3b", "h200-141gb-sxm", "bf16");
  const double one = op_value(cm.breakdown(decode(1, 512)), "mlp", true);
  const double many = op_value(cm.breakdown(decode(64, 512)), "mlp", true);
  // 64 tokens × 8 picks touch 128 × (1 − (120/128)^64) = 126 of 128 experts, against 8 for one token.
  CHECK(many / one == Approx(126.0 / 8).epsilon(0.05));
}

TEST_CASE("MLA decode reads one latent per token and layer; prefill computes full heads") {
  const CostModel cm = on("deepseek-v3", "h200-141gb-sxm", "fp8", 8);
  CHECK(perf::to_string(cm.decode_attention_backend()) == "flash-mla");
  CHECK(perf::to_string(on("deepseek-v3", "a100-80gb-sxm", "fp16", 8).decode_attention_backend()) == "triton-mla");
  // 128 sequences fill the SMs (no split-KV partials): bytes are the latents and the queries/outputs.
  const auto s = cm.breakdown(decode(128, 8192));
  // (8192 cached + 1 new) tokens + writing the new one, 576 bf16 elements each, on all 61 layers; every rank reads
  // the latent whole. Queries/outputs: 16 heads per rank × (576 + 512) × 2 bytes.
  const double latent = 128.0 * 8194 * 576 * 2, qo = 128.0 * 16 * (576 + 512) * 2;
  CHECK(op_value(s, "attention_decode", true) == Approx(61 * (latent + qo)).epsilon(1e-9));
  // MQA over the latent: 16 heads per rank × (576 QK + 512 PV) × 2 FLOPs per attended token and layer.
  CHECK(op_value(s, "attention_decode") == Approx(61.0 * 128 * 8193 * 16 * 2 * (576 + 512)).epsilon(1e-9));
  // The absorbed W_UK / W_UV run once per decode token: kv_b_proj's 512 × 16 × 256 weights per layer, 2 FLOPs each.
  CHECK(op_value(s, "kv_b_proj") == Approx(61.0 * 128 * 2 * 512 * 16 * 256));

  BatchShape p;
  p.add_prefill(2048, 0, true);
  const auto pf = cm.breakdown(p);
  // Prefill: full heads, 2 × 16 × (192 + 128) FLOPs per causal pair, and kv_b up-projects every KV token.
  CHECK(op_value(pf, "attention_prefill") == Approx(61.0 * 2 * 16 * (192 + 128) * p.prefill_attn_pairs));
  CHECK(op_value(pf, "kv_b_proj") == Approx(61.0 * 2 * 2048 * 512 * 16 * 256));
}

TEST_CASE("issue 27: MLA prefill over a cached context pays vLLM's K assembly, context gather and merge") {
  // DeepSeek-V3 in bf16 at TP 8 (native GEMMs, so kv_b_proj's bytes are its weights and its rows): 16 heads per rank,
  // nope 128 + rope 64 = 192 QK, v 128, latent 512 + 64 = 576, bf16 cache; all 61 layers.
  const CostModel cm = on("deepseek-v3", "h200-141gb-sxm", "fp16", 8);
  const double chunk = 2048, context = 4096, layers = 61;
  BatchShape first, later;
  first.add_prefill(2048, 0, false);
  later.add_prefill(2048, 4096, false);
  const auto a = cm.breakdown(first), b = cm.breakdown(later);
  // kv_b_proj: the GEMM (weights once, each KV token's latent in and 16 × 256 out) and, a kernel of its own, K
  // assembled per head for every KV token: k_nope (16 × 128) and the shared k_pe (64) read, 16 × 192 written.
  const double weights = 512.0 * 16 * 256 * 2, gemm_row = (512.0 + 16 * 256) * 2, k_cat = (16.0 * (128 + 192) + 64) * 2;
  CHECK(op_value(a, "kv_b_proj", true) == Approx(layers * (weights + chunk * (gemm_row + k_cat))).epsilon(1e-9));
  // With context: the context's rows and K besides, and gathering its latents from the paged cache into the bf16
  // workspace (576 elements read and written).
  CHECK(op_value(b, "kv_b_proj", true) - op_value(a, "kv_b_proj", true) ==
        Approx(layers * context * (gemm_row + k_cat + 576.0 * 2 * 2)).epsilon(1e-9));
  // Attention: the context's latents and up-projected K/V read, and the merge of the two passes' outputs (16 × 128
  // bf16) and fp32 LSEs: two read, one written, per chunk token.
  const double kv_read = 576.0 * 2 + 16.0 * (192 + 128) * 2, merge = 3 * chunk * 16 * (128.0 * 2 + 4);
  CHECK(op_value(b, "attention_prefill", true) - op_value(a, "attention_prefill", true) ==
        Approx(layers * (context * kv_read + merge)).epsilon(1e-9));
}

TEST_CASE("sliding-window layers read at most their window") {
  const auto& cat = spec::Catalog::builtin();
  spec::ModelSpec full = cat.model("gemma-2-9b");
  full.sliding_layers = 0;
  const CostModel swa = on("gemma-2-9b", "a100-80gb-sxm");
  const CostModel all = on("gemma-2-9b", "a100-80gb-sxm", "fp16", 1, &full);
  // Inside the 4096-token window nothing changes.
  CHECK(swa.iteration_time(decode(8, 2000)) == Approx(all.iteration_time(decode(8, 2000))));
  // At 8000 tokens the 21 sliding layers read 4096 + 1 per sequence, the 21 full ones 8000 + 1 (+ the new token).
  const double b_swa = op_value(swa.breakdown(decode(8, 8000)), "attention_decode", true);
  const double b_all = op_value(all.breakdown(decode(8, 8000)), "attention_decode", true);
  CHECK(b_swa / b_all == Approx((8002.0 + 4098.0) / (2 * 8002.0)).epsilon(0.01));
  CHECK(swa.iteration_time(decode(8, 8000)) < all.iteration_time(decode(8, 8000)));
  // Prefill of 8000 tokens: a sliding layer's query sees at most 4096 keys.
  BatchShape p;
  p.add_prefill(8000, 0, true);
  const double f_swa = op_value(swa.breakdown(p), "attention_prefill");
  const double f_all = op_value(all.breakdown(p), "attention_prefill");
  // Σ_{j<=8000} min(j, 4096) = 4096 · 4097 / 2 + 3904 · 4096 pairs on the 21 sliding layers.
  const double windowed = 4096.0 * 4097 / 2 + 3904.0 * 4096;
  CHECK(f_swa / f_all == Approx((p.prefill_attn_pairs + windowed) / (2 * p.prefill_attn_pairs)).epsilon(1e-9));
}

TEST_CASE("issue 30: gpt-oss's MXFP4 experts stream 4.25 bits, its BF16 attention 16; FP4 Marlin on an H100") {
  const CostModel mx = on("gpt-oss-120b", "h100-80gb-sxm", "mxfp4-experts");
  const CostModel bf = on("gpt-oss-120b", "h100-80gb-sxm", "bf16");
  const auto s_mx = mx.breakdown(decode(1, 1024)), s_bf = bf.breakdown(decode(1, 1024));
  // Attention projections read the same 16-bit weights either way; the experts a fourth as many bytes and a bit.
  CHECK(op_value(s_mx, "qkv_proj", true) == Approx(op_value(s_bf, "qkv_proj", true)));
  CHECK(op_value(s_mx, "o_proj", true) == Approx(op_value(s_bf, "o_proj", true)));
  CHECK(op_value(s_mx, "mlp", true) < 0.3 * op_value(s_bf, "mlp", true));
  // Resident weights: the experts at 4.25 bits, the rest at 16 (the memory plan's count).
  const auto m = spec::Catalog::builtin().model("gpt-oss-120b");
  const double experts = 36.0 * 128 * 3 * 2880 * 2880;
  CHECK(bf.weight_bytes_per_gpu() - mx.weight_bytes_per_gpu() == Approx(experts * (2 - 4.25 / 8)).epsilon(0.001));
}

TEST_CASE("issue 30: Qwen3-Next decode reads KV on its 12 attention layers and each sequence's state on 36") {
  const auto m = spec::Catalog::builtin().model("qwen3-next-80b-a3b");
  const CostModel cm = on("qwen3-next-80b-a3b", "h200-141gb-sxm", "bf16");
  const int seqs = 32, context = 4096;
  const auto s = cm.breakdown(decode(seqs, context));
  const double kv = 12.0 * seqs * (context + 1) * 2 * 2 * 256 * 2;  // K and V of 2 KV heads × 256, BF16
  const double state = 36.0 * 2 * seqs * static_cast<double>(m.linear_state_elements_per_layer()) * 2;  // read + write
  CHECK(op_value(s, "attention_decode", true) == Approx(kv + state).epsilon(0.05));
  // The state does not grow with the context: doubling it adds the attention layers' KV only.
  const auto longer = cm.breakdown(decode(seqs, 2 * context));
  CHECK(op_value(longer, "attention_decode", true) - op_value(s, "attention_decode", true) ==
        Approx(kv).epsilon(0.05));
  // The projections run every layer's weights once: 2 FLOPs per active linear parameter (as the other families).
  const double expected = 2.0 * static_cast<double>(m.active_param_count() - m.embedding_params() -
                                                    m.num_layers * m.norm_params_per_layer() - m.hidden_size);
  CHECK(linear_flops(cm.breakdown(decode(1, 1024))) == Approx(expected).epsilon(0.01));
}

TEST_CASE("issue 30: DeepSeek-V3.2 decodes over its indexer's top 2048 tokens, plus the indexer's scan") {
  const CostModel v3 = on("deepseek-v3", "h200-141gb-sxm", "fp8", 8);
  const CostModel v32 = on("deepseek-v3.2", "h200-141gb-sxm", "fp8", 8);
  // Inside 2048 tokens vLLM's sparse kernel (perf/sparse_mla.hpp) reads the latents V3's dense one does (1,152 bytes
  // each), beside its 16 heads' queries and outputs padded to 64 and each token's new latent; the indexer adds its
  // 132-byte keys and the FP32 logit per key that DeepGEMM writes and the top-k reads (perf/dsa_indexer.hpp).
  const auto short_v32 = v32.breakdown(decode(16, 1024));
  const double indexer = 61.0 * 16 * 1024 * (132 + 8);
  CHECK(op_value(short_v32, "attention_decode", true) ==
        Approx(61.0 * 16 * (64 * (576 + 512) * 2 + 1152 + 1024 * 1152) + indexer).epsilon(1e-9));
  // At 32k tokens V3 reads 32k latents per sequence, V3.2 2048 of them and 32k indexer keys.
  const auto long_v3 = v3.breakdown(decode(16, 32768)), long_v32 = v32.breakdown(decode(16, 32768));
  CHECK(op_value(long_v32, "attention_decode", true) < 0.25 * op_value(long_v3, "attention_decode", true));
  CHECK(op_value(long_v32, "attention_decode", true) > 61.0 * 16 * 32768 * 132);
}

TEST_CASE("issue 30: Gemma-4's full-attention layers attend at their own shape (512-wide heads, their KV heads)") {
  // gemma-4-31b: 50 sliding layers of 16 KV heads × 256 (window 1024) and 10 full layers of 32 query heads × 512
  // over num_global_key_value_heads = 4 KV heads (attention_k_eq_v; vLLM caches K and V for them). `flat` is the
  // former pricing (the full layers' core at the sliding shape); `wide` a Gemma-4 without k_eq_v, whose full layers
  // keep all 16 KV heads at 512 (Gemma4DecoderLayer), as E2B/E4B do.
  const auto& cat = spec::Catalog::builtin();
  spec::ModelSpec flat = cat.model("gemma-4-31b"), wide = flat;
  flat.full_head_dim = 0;
  flat.full_kv_heads = 0;
  flat.full_k_eq_v = false;
  wide.full_k_eq_v = false;
  wide.full_kv_heads = 0;
  const CostModel own = on("gemma-4-31b", "h100-80gb-sxm", "bf16");
  const CostModel at_flat = on("gemma-4-31b", "h100-80gb-sxm", "bf16", 1, &flat);
  const CostModel at_wide = on("gemma-4-31b", "h100-80gb-sxm", "bf16", 1, &wide);
  // Decode of 8 sequences at 100k tokens: each full layer reads every cached token's K and V (+ the new token's),
  // 2 × KV heads × d × 2 bytes: 8192 bytes at the own shape, 16384 at the sliding shape, 32768 without k_eq_v. The
  // sliding layers read their window alike in all three, so the differences are the full layers' alone.
  const int seqs = 8;
  const double context = 100000, tokens = seqs * (context + 1) + seqs, full = 10;
  const auto s_own = own.breakdown(decode(seqs, 100000)), s_flat = at_flat.breakdown(decode(seqs, 100000)),
             s_wide = at_wide.breakdown(decode(seqs, 100000));
  const auto bytes = [](const perf::StepCost& s) { return op_value(s, "attention_decode", true); };
  CHECK(bytes(s_flat) - bytes(s_own) == Approx(full * tokens * (16384 - 8192)).epsilon(0.01));
  CHECK(bytes(s_wide) - bytes(s_flat) == Approx(full * tokens * (32768 - 16384)).epsilon(0.01));
  // FLOPs: 2 × (QK^T + PV) × 32 heads × d per query-key pair: twice the sliding shape's at d = 512, whatever the KV
  // heads.
  const double pairs = seqs * (context + 1);
  CHECK(op_value(s_own, "attention_decode") - op_value(s_flat, "attention_decode") ==
        Approx(full * 2 * pairs * 32 * 512).epsilon(1e-6));
  CHECK(op_value(s_wide, "attention_decode") == Approx(op_value(s_own, "attention_decode")).epsilon(1e-9));
  // Decode is memory-bound (8 FLOPs per byte at the own shape), so the step follows the bytes: with k_eq_v's 4 KV
  // heads the long-context step is cheaper than the sliding shape priced it; a Gemma-4 without k_eq_v costs more.
  CHECK(own.iteration_time(decode(seqs, 100000)) < at_flat.iteration_time(decode(seqs, 100000)));
  CHECK(at_wide.iteration_time(decode(seqs, 100000)) > at_flat.iteration_time(decode(seqs, 100000)));
  // The full layers' attention time scales with their bytes (1 : 2 : 4), so the step's increments keep that ratio.
  const auto attn_t = [](const perf::StepCost& s) {
    for (const auto& o : s.ops)
      if (o.name == "attention_decode") return o.time_s;
    return 0.0;
  };
  CHECK((attn_t(s_wide) - attn_t(s_flat)) / (attn_t(s_flat) - attn_t(s_own)) == Approx(2.0).epsilon(0.02));
  // The bytes follow the tokens read, not a per-batch term: 16 sequences read twice what 8 do.
  CHECK(bytes(own.breakdown(decode(16, 100000))) == Approx(2 * bytes(s_own)).epsilon(0.01));
  // Prefill of 8000 tokens: the full layers' pairs cost 2 × 32 × (512 + 512) FLOPs, twice the sliding shape's.
  BatchShape p;
  p.add_prefill(8000, 0, true);
  CHECK(op_value(own.breakdown(p), "attention_prefill") - op_value(at_flat.breakdown(p), "attention_prefill") ==
        Approx(full * 2 * 32 * 512 * p.prefill_attn_pairs).epsilon(1e-9));
  CHECK(own.iteration_time(p) > at_flat.iteration_time(p));
}

TEST_CASE("issue 30: Gemma-4 E2B runs its double-wide MLPs and per-layer-input linears, not its per-layer table") {
  const auto m = spec::Catalog::builtin().model("gemma-4-e2b");
  const CostModel cm = on("gemma-4-e2b", "l4-24gb", "bf16");
  // One decode token runs 2 FLOPs per linear weight of the "effective" model: the attention (averaged over both
  // shapes), the MLPs (20 of them double-wide), the per-layer gate and projection and per_layer_model_projection,
  // the tied LM head. The 2.35 B-entry per-layer table is looked up, not multiplied. (The norms left in the count,
  // q/k norms and the PLE norms, are under 0.01 %.)
  const double linear = static_cast<double>(m.active_param_count() - m.embedding_params() -
                                            m.num_layers * m.norm_params_per_layer() - m.hidden_size) +
                        static_cast<double>(m.embedding_params());  // the LM head (tied) is a GEMM
  CHECK(linear_flops(cm.breakdown(decode(1, 1024))) == Approx(2.0 * linear).epsilon(0.002));
  // Without the double-wide layers the MLP FLOPs fall by 20 layers × 3 × 1536 × 6144 × 2.
  spec::ModelSpec narrow = m;
  narrow.double_wide_mlp_layers = 0;
  const CostModel cn = on("gemma-4-e2b", "l4-24gb", "bf16", 1, &narrow);
  CHECK(op_value(cm.breakdown(decode(1, 1024)), "mlp") - op_value(cn.breakdown(decode(1, 1024)), "mlp") ==
        Approx(2.0 * 20 * 3 * 1536 * 6144).epsilon(1e-6));
}

TEST_CASE("issue 30: Qwen3.5's decode reads its FP32 DeltaNet state on 48 layers; GLM-5 and MiniMax-M2.5 steps run") {
  const auto m = spec::Catalog::builtin().model("qwen3.5-27b");
  const CostModel cm = on("qwen3.5-27b", "h200-141gb-sxm", "bf16");
  const int seqs = 16, context = 4096;
  const auto s = cm.breakdown(decode(seqs, context));
  const double kv = 16.0 * seqs * (context + 1) * 2 * 4 * 256 * 2;  // K and V of 4 KV heads × 256, BF16
  // Read and written once per layer: the conv window in BF16, the 48 × 128 × 128 recurrent state in FP32.
  const double per_layer = 3.0 * (2 * 16 * 128 + 48 * 128) * 2 + 48.0 * 128 * 128 * 4;
  CHECK(op_value(s, "attention_decode", true) == Approx(kv + 48.0 * 2 * seqs * per_layer).epsilon(0.05));
  // The projections run every layer's weights once (the vision tower never runs for text).
  const double expected = 2.0 * static_cast<double>(m.active_param_count() - m.embedding_params() -
                                                    m.num_layers * m.norm_params_per_layer() - m.hidden_size);
  CHECK(linear_flops(cm.breakdown(decode(1, 1024))) == Approx(expected).epsilon(0.01));
  // MiniMax-M2.5 (a MoE on every layer, no shared expert) decodes its active parameters, as the MoE families do.
  const auto mm = spec::Catalog::builtin().model("minimax-m2.5");
  const CostModel mc = on("minimax-m2.5", "h200-141gb-sxm", "fp8");
  const double mm_active = 2.0 * static_cast<double>(mm.active_param_count() - mm.embedding_params() -
                                                     mm.num_layers * mm.norm_params_per_layer() - mm.hidden_size);
  CHECK(linear_flops(mc.breakdown(decode(1, 1024))) == Approx(mm_active).epsilon(0.01));
  // GLM-5 runs as DeepSeek-V3.2 does: the MLA over the indexer's top 2048, the indexer's scan of every token.
  const CostModel gc = on("glm-5", "h200-141gb-sxm", "fp8", 8);
  const auto g = gc.breakdown(decode(8, 16384));
  CHECK(g.time_s > 0);
  CHECK(op_value(g, "attention_decode", true) > 0);
}
