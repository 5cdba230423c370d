// The cost model on Nemotron-H / Nemotron-3 (issue 30): Mamba-2 layers read and write each sequence's state per
// decode step and run the SSD chunked scan in prefill; attention and KV only on the '*' layers; relu² MLPs and MoEs
// on their own layers. Hand counts from the configs and the cost forms docs/cost-model.md states; no timings asserted.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;
using perf::BatchShape;
using perf::CostModel;

namespace {

CostModel nemotron_cost(const std::string& model, const std::string& gpu_id, int tp = 1) {
  const auto& cat = spec::Catalog::builtin();
  const auto g = cat.gpu(gpu_id);
  spec::Quantization q;
  q.weights = spec::weight_format("bf16");
  return CostModel(cat.model(model), q, g, perf::default_profile(g), spec::ParallelConfig{tp, 1});
}

double nemotron_op(const perf::StepCost& s, const std::string& name, bool bytes = false) {
  for (const auto& o : s.ops)
    if (o.name == name) return bytes ? o.bytes : o.flops;
  return 0;
}

// 2 FLOPs per linear weight a decode token runs (embedding gather and norms excluded).
double nemotron_expected_linear(const spec::ModelSpec& m) {
  return 2.0 * static_cast<double>(m.active_param_count() - m.embedding_params() -
                                   m.num_layers * m.norm_params_per_layer() - m.hidden_size);
}

BatchShape nemotron_prompt(std::int64_t tokens) {
  BatchShape b;
  b.add_prefill(tokens, 0, true);
  return b;
}

double nemotron_linear_flops(const perf::StepCost& s) {
  return nemotron_op(s, "qkv_proj") + nemotron_op(s, "o_proj") + nemotron_op(s, "mlp") + nemotron_op(s, "lm_head");
}

}  // namespace

TEST_CASE("issue 30: Nemotron-3-Nano decodes KV on its 6 attention layers and each sequence's Mamba state on 23") {
  const auto m = spec::Catalog::builtin().model("nemotron-3-nano-30b-a3b");
  const CostModel cm = nemotron_cost("nemotron-3-nano-30b-a3b", "h100-80gb-sxm");
  const int seqs = 32, context = 4096;
  const auto s = cm.breakdown(test::decode(seqs, context));
  const double kv = 6.0 * seqs * (context + 1) * 2 * 2 * 128 * 2;  // K and V of 2 KV heads × 128, BF16
  // Read and written once per step and layer: the conv window (3 × 6144) in BF16, the 64 × 64 × 128 SSM state in FP32.
  const double per_layer = 3.0 * 6144 * 2 + 64.0 * 64 * 128 * 4;
  CHECK(nemotron_op(s, "attention_decode", true) == Approx(kv + 23.0 * 2 * seqs * per_layer).epsilon(0.05));
  // The state does not grow with the context: doubling it adds the attention layers' KV only.
  const auto longer = cm.breakdown(test::decode(seqs, 2 * context));
  CHECK(nemotron_op(longer, "attention_decode", true) - nemotron_op(s, "attention_decode", true) ==
        Approx(kv).epsilon(0.05));
  // The Mamba projections, the 6 attention layers' and the MoE's active experts (relu²: up and down) once each.
  CHECK(nemotron_linear_flops(cm.breakdown(test::decode(1, 1024))) == Approx(nemotron_expected_linear(m)).epsilon(0.01));
}

TEST_CASE("issue 30: Nemotron-H-56B prefill runs the SSD chunked scan on 54 layers, attention on 10") {
  const auto m = spec::Catalog::builtin().model("nemotron-h-56b");
  const CostModel cm = nemotron_cost("nemotron-h-56b", "h100-80gb-sxm", 2);
  // Decode: the dense relu² MLPs run on their 54 layers only, the projections on the 64 mixer layers; each of the
  // two ranks runs half of every weight.
  CHECK(nemotron_linear_flops(cm.breakdown(test::decode(1, 1024))) ==
        Approx(nemotron_expected_linear(m) / 2).epsilon(0.01));
  // Prefill of one 4096-token prompt: on each Mamba layer (128 of 256 heads and 4 of 8 groups per rank at tp 2),
  // per token 2·Q·groups·state (C·Bᵀ) + 2·Q·heads·head_dim (its product with x) + 4·heads·head_dim·state (chunk
  // state, output) + 2·kernel·conv channels, Q = chunk_size 128.
  const double tokens = 4096, q = 128, heads = 128, groups = 4, p = 64, n = 256;
  const double conv = (heads * p + 2 * groups * n) * 2 * 4;
  const double scan = tokens * (2 * q * groups * n + 2 * q * heads * p + 4 * heads * p * n + conv);
  const auto one = cm.breakdown(nemotron_prompt(4096));
  const auto two = cm.breakdown(nemotron_prompt(8192));
  // Attention's FLOPs grow with the square of the prompt, the scan's linearly: 2 × the prompt, ~2 × the scan and
  // ~4 × the attention (32 heads per rank, 128 + 128 per pair, causal pairs T²/2, 10 layers).
  const double attn = 10 * 2.0 * 32 * 256 * tokens * tokens / 2;
  CHECK(nemotron_op(one, "attention_prefill") == Approx(54 * scan + attn).epsilon(0.02));
  CHECK(nemotron_op(two, "attention_prefill") == Approx(54 * 2 * scan + 4 * attn).epsilon(0.02));
  CHECK(two.time_s > one.time_s);
}
