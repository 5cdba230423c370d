// The A100's large-batch decode step, kernel by kernel, against vLLM 0.14.0's own linear and attention layers timed
// under CUDA graphs on an A100 SXM4 80GB (ai-dynamo/aiconfigurator @095f58a, aic-core/src/aiconfigurator_core/systems/
// data/a100_sxm/{gemm,attention}/vllm/0.14.0/*.parquet; bf16). No constant was set from these tables (issue 27,
// docs/cost-model.md "The A100 decode step at 128-512 sequences, kernel by kernel"): they check that the bias llmsim
// shows on A100s at hundreds of running requests (it reads fast) is not in the GEMM or attention prices.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "perf_test_util.hpp"

using namespace llmsim;
using perf::Runtime;

namespace {

// Qwen3-8B's per-layer GEMMs (hidden 4096, intermediate 12288, 32 / 8 heads of 128), us at M rows, from the table's
// rows (m, n, k): qkv (6144, 4096), o (4096, 4096), gate / up (12288, 4096) twice (vLLM merges them into one
// N = 24576 kernel, twice the tiles), down (4096, 12288).
struct A100GemmRow { double m, qkv, o, gate_up_half, down; };

double table_layer_us(const A100GemmRow& r) { return r.qkv + r.o + 2 * r.gate_up_half + r.down; }

double llmsim_layer_us(const perf::CostModel& cm, double m, double layers) {
  const auto b = test::decode(static_cast<std::int64_t>(m), 511);
  return (test::op(cm, b, "qkv_proj") + test::op(cm, b, "o_proj") + test::op(cm, b, "mlp")) / layers * 1e6;
}

const std::vector<A100GemmRow>& a100_gemm_rows() {
  static const std::vector<A100GemmRow> rows = {
      {128, 51.4, 37.4, 87.6, 86.6},   {160, 56.3, 36.3, 103.6, 109.3}, {192, 57.0, 54.3, 103.8, 118.7},
      {256, 56.4, 54.4, 104.1, 120.0}, {384, 92.2, 54.8, 204.1, 161.2}, {512, 103.3, 91.0, 205.3, 217.5}};
  return rows;
}

}  // namespace

TEST_CASE("A100 GEMMs at 128-512 rows are not priced faster than vLLM's own linear layers", "[a100]") {
  const auto cm = test::release_model("qwen3-8b", "a100-80gb-sxm", 1, Runtime::vllm_v1, "vllm==0.14.0");
  const double layers = 36;
  for (const auto& r : a100_gemm_rows()) {
    const double t = llmsim_layer_us(cm, r.m, layers), measured = table_layer_us(r);
    INFO("M = " << r.m << ": llmsim " << t << " us per layer, table " << measured);
    if (r.m <= 192) {
      // The decode batches of the A100 runs that read fast (~110-160 running): the sum agrees within 8 %.
      CHECK(std::fabs(t / measured - 1) < 0.08);
    } else {
      // Whole 256-row tiles reach 0.80-0.92 of 312 TF in the table (cuBLAS), above the 0.735 prior: llmsim is dearer
      // here (+6...+30 %), never cheaper — the direction that rules these kernels out of the fast bias.
      CHECK(t >= measured);
      CHECK(t / measured - 1 < 0.35);
    }
  }
}

TEST_CASE("The A100 decode step's GPU kernels at 128-192 sequences match vLLM's layers timed one by one", "[a100]") {
  // Per layer: the GEMM rows above plus FA2's split-KV decode (kernel_source vllm_flash_attn, 32 / 8 heads of 128,
  // 511 tokens each; batch 128 200.5 us, 256 358.7 us, linear between, as the stream is).
  const auto cm = test::release_model("qwen3-8b", "a100-80gb-sxm", 1, Runtime::vllm_v1, "vllm==0.14.0");
  const double layers = 36;
  for (const auto& r : a100_gemm_rows()) {
    if (r.m > 192) continue;
    const double attn_measured = 200.5 + (358.7 - 200.5) * (r.m - 128) / 128;
    const auto b = test::decode(static_cast<std::int64_t>(r.m), 511);
    const double t = llmsim_layer_us(cm, r.m, layers) + test::op(cm, b, "attention_decode") / layers * 1e6;
    const double measured = table_layer_us(r) + attn_measured;
    INFO(r.m << " sequences x 511 tokens: llmsim " << t << " us per layer, table " << measured);
    CHECK(std::fabs(t / measured - 1) < 0.05);
  }
}
