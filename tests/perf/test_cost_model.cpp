// Physics of the roofline cost model: hand-counted FLOPs/bytes, DESIGN.md bounds, scaling shapes, quantization,
// parallelism and bad inputs.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "llmsim/core/error.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"
#include "llmsim/spec/scenario.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;
using test::decode;
using test::gpu;
using perf::BatchShape;
using perf::CostModel;

namespace {

// Llama-3.1-8B by hand (config.json): the numbers the hand counts below use.
spec::ModelSpec llama8b(int layers = 32) {
  spec::ModelSpec m;
  m.id = "llama-3.1-8b-by-hand";
  m.hidden_size = 4096;
  m.num_layers = layers;
  m.num_heads = 32;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.intermediate_size = 14336;
  m.vocab_size = 128256;
  m.max_position_embeddings = 131072;
  return m;
}

spec::Quantization quant(const std::string& w, spec::DType kv = spec::DType::fp16) {
  spec::Quantization q;
  q.weights = spec::weight_format(w);
  q.kv_dtype = kv;
  return q;
}

CostModel model_on(const std::string& gpu_id, const std::string& w = "fp16", int tp = 1, int pp = 1,
                   const spec::ModelSpec& m = llama8b()) {
  const auto g = gpu(gpu_id);
  return CostModel(m, quant(w), g, perf::default_profile(g), spec::ParallelConfig{tp, pp});
}

BatchShape prefill(std::int64_t tokens, std::int64_t context = 0) {
  BatchShape b;
  b.add_prefill(tokens, context, true);
  return b;
}

const perf::OpCost* find_op(const perf::StepCost& s, const std::string& name) {
  for (const auto& o : s.ops)
    if (o.name == name) return &o;
  return nullptr;
}

double op_time(const perf::StepCost& s, const std::string& name) {
  const auto* o = find_op(s, name);
  return o ? o->time_s : 0.0;
}

}  // namespace

TEST_CASE("FLOPs and bytes per op match hand counts for llama-3.1-8b") {
  const CostModel cm = model_on("a100-80gb-sxm");
  const double M = 7;  // decode batch of 7 at context 100
  const auto s = cm.breakdown(decode(7, 100));
  const double L = 32, h = 4096, I = 14336, V = 128256;
  // q (32 heads) + k, v (8 KV heads) of 128 dims: 4096 x 6144 weights per layer.
  const double qkv = h * (32 + 2 * 8) * 128;
  REQUIRE(qkv == 25165824.0);
  const auto* q = find_op(s, "qkv_proj");
  REQUIRE(q);
  CHECK(q->flops == Approx(2 * M * qkv * L));
  CHECK(q->bytes == Approx(L * (2 * qkv + M * (h + 6144) * 2)));
  const auto* o = find_op(s, "o_proj");
  CHECK(o->flops == Approx(2 * M * h * h * L));
  const auto* mlp = find_op(s, "mlp");
  CHECK(mlp->flops == Approx(2 * M * 3 * h * I * L));
  CHECK(mlp->bytes == Approx(L * (2 * 3 * h * I + M * (2 * h + 3 * I) * 2)));
  const auto* lm = find_op(s, "lm_head");
  CHECK(lm->flops == Approx(2 * M * V * h));
  // Decode attention reads K and V of every cached token (+ the new one): 2 x 8 heads x 128 x 2 B per layer.
  const auto* att = find_op(s, "attention_decode");
  const double kv_layer = 2 * 8 * 128 * 2.0;
  CHECK(att->bytes == Approx(L * ((7 * 100 + 7) * kv_layer + 7 * (2 * 4096 * 2 + kv_layer))));
  CHECK(att->flops == Approx(L * 4 * 707.0 * 128 * 32));
  // Streamed weights per step: 15.01 GB (quantization.md §3, "Bytes streamed per decode step", BF16).
  CHECK(cm.weight_bytes_per_gpu() / 1e9 == Approx(15.01).epsilon(0.002));
}

TEST_CASE("batch-1 decode is memory-bound and no faster than weights / bandwidth (DESIGN.md)") {
  // 44 Llama-3.1-8B-shaped layers: 20.2 GB of fp16 weights, DESIGN.md's "20 GB" example.
  const auto m = llama8b(44);
  for (const auto& [id, bw, floor_ms] :
       {std::tuple{"rtx4090-24gb", 1008e9, 19.8}, std::tuple{"a100-80gb-sxm", 2039e9, 9.8}}) {
    const CostModel cm = model_on(id, "fp16", 1, 1, m);
    const double weights = cm.weight_bytes_per_gpu();
    CHECK(weights / 1e9 == Approx(20.24).epsilon(0.01));
    const auto s = cm.breakdown(decode(1, 512));
    INFO(id << ": " << s.time_s * 1e3 << " ms");
    CHECK(s.bound == perf::Bound::memory);
    CHECK(s.time_s * 1e3 >= floor_ms);
    CHECK(s.time_s >= weights / bw);
    // ...but not absurdly slower: a vLLM-class engine reaches >= 50% of peak bandwidth at batch 1.
    CHECK(s.time_s <= weights / (0.5 * bw));
  }
}

TEST_CASE("A100-SXM vs 4090 batch-1 decode ratio follows their bandwidth ratio") {
  const auto a = model_on("a100-80gb-sxm").breakdown(decode(1, 512));
  const auto r = model_on("rtx4090-24gb").breakdown(decode(1, 512));
  const double bw_ratio = 2039.0 / 1008.0;
  double gpu_a = 0, gpu_r = 0;  // GPU time: everything but the per-step launch and CPU overheads
  for (const auto& o : a.ops) gpu_a += o.bound == perf::Bound::overhead ? 0 : o.time_s;
  for (const auto& o : r.ops) gpu_r += o.bound == perf::Bound::overhead ? 0 : o.time_s;
  const double gpu_ratio = gpu_r / gpu_a, total_ratio = r.time_s / a.time_s;
  INFO("GPU-time ratio " << gpu_ratio << ", total " << total_ratio << ", bandwidth " << bw_ratio);
  // GDDR streams at a higher fraction of its peak than HBM (B1/B3), so the ratio sits a little below 2.02.
  CHECK(gpu_ratio == Approx(bw_ratio).epsilon(0.2));
  CHECK(gpu_ratio < bw_ratio);
  // Fixed per-step overheads (same on both) compress the end-to-end ratio further, but it stays > 1.4.
  CHECK(total_ratio > 1.4);
  CHECK(total_ratio < gpu_ratio);
}

TEST_CASE("long prefill is compute-bound") {
  const CostModel cm = model_on("a100-80gb-sxm");
  const auto s = cm.breakdown(prefill(8192));
  CHECK(s.bound == perf::Bound::compute);
  CHECK(find_op(s, "mlp")->bound == perf::Bound::compute);
  CHECK(find_op(s, "attention_prefill")->bound == perf::Bound::compute);
  // Achieved MLP throughput is a defensible fraction of the 312 TF peak (Vidur large-M: 70-75%).
  CHECK(find_op(s, "mlp")->peak_fraction > 0.6);
  CHECK(find_op(s, "mlp")->peak_fraction < 0.8);
  // Short prefill is still memory-bound.
  CHECK(cm.breakdown(prefill(16)).bound == perf::Bound::memory);
}

TEST_CASE("decode time is sub-linear in batch until the ridge, then linear") {
  const CostModel cm = model_on("a100-80gb-sxm");
  auto t = [&](std::int64_t b) { return cm.iteration_time(decode(b, 16)); };
  CHECK(t(8) < 1.15 * t(1));     // weights dominate: 8x the tokens for a few % more time
  CHECK(t(64) < 1.6 * t(1));
  for (std::int64_t b = 1; b < 8192; b *= 2) CHECK(t(2 * b) > t(b));  // monotone
  // Past the ridge (~153 FLOP/B on A100 -> M of a few hundred), doubling the batch nearly doubles the time.
  CHECK(t(8192) / t(4096) > 1.8);
  CHECK(t(8192) / t(4096) < 2.05);
  // Time per token falls until the ridge and then flattens.
  CHECK(t(256) / 256 < t(16) / 16 / 5);
  CHECK((t(8192) / 8192) / (t(4096) / 4096) > 0.9);
}

TEST_CASE("awq-int4 batch-1 decode is faster than fp16 but less than 4x") {
  for (const char* id : {"rtx4090-24gb", "a100-80gb-sxm", "h100-80gb-sxm"}) {
    const double fp16 = model_on(id, "fp16").iteration_time(decode(1, 1024));
    const double awq = model_on(id, "awq-int4").iteration_time(decode(1, 1024));
    INFO(id << ": fp16 " << fp16 * 1e3 << " ms, awq " << awq * 1e3 << " ms, speed-up " << fp16 / awq);
    CHECK(awq < fp16 / 1.4);
    CHECK(awq > fp16 / 4.0);
  }
  // In a long prefill W4A16 cannot win (dequantisation on the fp16 rate; quantization.md §5.2).
  const double p16 = model_on("a100-80gb-sxm", "fp16").iteration_time(prefill(4096));
  const double p4 = model_on("a100-80gb-sxm", "awq-int4").iteration_time(prefill(4096));
  CHECK(p4 > p16);
}

TEST_CASE("tp=2 on two 4090s: under 2x speed-up and a visible all-reduce") {
  const CostModel one = model_on("rtx4090-24gb", "fp16", 1);
  const CostModel two = model_on("rtx4090-24gb", "fp16", 2);
  for (const auto& b : {decode(1, 512), decode(32, 512), prefill(2048)}) {
    const auto s1 = one.breakdown(b), s2 = two.breakdown(b);
    const double speedup = s1.time_s / s2.time_s;
    const double comm = op_time(s2, "tp_allreduce");
    INFO("speed-up " << speedup << ", all-reduce " << comm * 1e3 << " ms of " << s2.time_s * 1e3);
    CHECK(speedup < 2.0);
    CHECK(speedup > 0.8);
    CHECK(comm > 0.03 * s2.time_s);
    CHECK(op_time(s1, "tp_allreduce") == 0);
  }
  // NVLink on A100 SXM makes the same all-reduce far cheaper than host-staged PCIe on 4090s.
  const auto a = model_on("a100-80gb-sxm", "fp16", 2).breakdown(prefill(2048));
  const auto r = two.breakdown(prefill(2048));
  CHECK(op_time(a, "tp_allreduce") < op_time(r, "tp_allreduce") / 5);
}

TEST_CASE("CPU weight offload copies the offloaded shard over PCIe in every iteration") {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const auto g = gpu("rtx4090-24gb");
  auto with_offload = [&](double gib, int pp = 1) {
    return CostModel(llama8b(), quant("fp16"), g, perf::default_profile(g), spec::ParallelConfig{1, pp}, true, gib * kGiB);
  };
  const CostModel none = with_offload(0), four = with_offload(4);
  for (const auto& b : {decode(1, 512), decode(64, 512), prefill(2048)}) {
    const auto s = four.breakdown(b);
    // Exactly one host copy of 4 GiB added to every iteration, at ~0.85 of PCIe 4.0 x16 (~27 GB/s).
    CHECK(op_time(s, "weight_offload") == Approx(none.host_transfer_time(4 * kGiB)).epsilon(1e-12));
    CHECK(op_time(s, "weight_offload") > 4 * kGiB / 32e9);
    CHECK(op_time(s, "weight_offload") < 4 * kGiB / 20e9);
    CHECK(four.iteration_time(b) == Approx(none.iteration_time(b) + op_time(s, "weight_offload")).epsilon(1e-12));
  }
  CHECK(find_op(none.breakdown(decode(1, 512)), "weight_offload") == nullptr);
  // More than the weights offloads all of them, no more; two stages each copy their own half in turn.
  const double all = none.weight_bytes_per_gpu();
  CHECK(op_time(with_offload(1000).breakdown(decode(1, 512)), "weight_offload") ==
        Approx(none.host_transfer_time(all)).epsilon(1e-12));
  CHECK(op_time(with_offload(4, 2).breakdown(decode(1, 512)), "weight_offload") ==
        Approx(2 * none.host_transfer_time(4 * kGiB)).epsilon(1e-12));
  CHECK_THROWS_WITH(with_offload(-1), Catch::Contains("engine.cpu_offload_gb"));
}

TEST_CASE("pipeline parallel with one batch in flight: stages in sequence plus transfers") {
  const auto s1 = model_on("a100-80gb-sxm", "fp16", 1, 1).breakdown(decode(8, 256));
  const auto s2 = model_on("a100-80gb-sxm", "fp16", 1, 2).breakdown(decode(8, 256));
  CHECK(op_time(s2, "pp_transfer") > 0);
  CHECK(s2.time_s > s1.time_s);
  CHECK(s2.time_s < s1.time_s * 1.1);
}

TEST_CASE("MIG slices scale bandwidth and compute") {
  const auto full = gpu("a100-80gb-sxm");
  const auto slice = full.mig_slice("mig-3g.40gb");  // 3/7 compute, 4/8 bandwidth
  const CostModel f(llama8b(), quant("fp16"), full, perf::default_profile(full), {});
  const CostModel s(llama8b(), quant("fp16"), slice, perf::default_profile(slice), {});
  const auto df = f.breakdown(decode(1, 512)), ds = s.breakdown(decode(1, 512));
  CHECK(op_time(ds, "mlp") / op_time(df, "mlp") == Approx(2.0).epsilon(0.05));
  const auto pf = f.breakdown(prefill(4096)), ps = s.breakdown(prefill(4096));
  CHECK(op_time(ps, "mlp") / op_time(pf, "mlp") == Approx(7.0 / 3).epsilon(0.05));
}

TEST_CASE("MoE touches the expected number of distinct experts") {
  const auto mix = spec::Catalog::builtin().model("mixtral-8x7b");
  const auto g = gpu("h100-80gb-sxm");
  const CostModel cm(mix, quant("fp16"), g, perf::default_profile(g), {});
  const double expert_bytes = 3.0 * 4096 * 14336 * 2 * 32;  // one expert, all layers
  // One token picks 2 of 8: E(1-(1-k/E)^T) = 8(1 - 0.75) = 2 experts.
  const double b1 = find_op(cm.breakdown(decode(1, 100)), "mlp")->bytes;
  CHECK(b1 / expert_bytes == Approx(2.0).epsilon(0.01));
  // 64 tokens touch all 8 (8(1 - 0.75^64) = 8.0).
  const double b64 = find_op(cm.breakdown(decode(64, 100)), "mlp")->bytes;
  CHECK(b64 / expert_bytes == Approx(8.0).epsilon(0.02));
}

TEST_CASE("quantized KV cache halves the attention bytes") {
  const auto g = gpu("a100-80gb-sxm");
  const CostModel f16(llama8b(), quant("fp16", spec::DType::fp16), g, perf::default_profile(g), {});
  const CostModel f8(llama8b(), quant("fp16", spec::DType::fp8), g, perf::default_profile(g), {});
  const double a = find_op(f16.breakdown(decode(64, 4096)), "attention_decode")->bytes;
  const double b = find_op(f8.breakdown(decode(64, 4096)), "attention_decode")->bytes;
  CHECK(b / a == Approx(0.5).epsilon(0.01));
}

TEST_CASE("tensor paths: fp8 falls back on A100, W8A8 uses int8 where present") {
  CHECK(model_on("a100-80gb-sxm", "fp8").gemm_dtype() == spec::DType::fp16);
  CHECK(model_on("h100-80gb-sxm", "fp8").gemm_dtype() == spec::DType::fp8);
  CHECK(model_on("a100-80gb-sxm", "w8a8").gemm_dtype() == spec::DType::int8);
  // FP8 W8A8 on H100 prefills faster than fp16 (2x tensor rate; TRT-LLM 1.4-1.5x, quantization.md §5.2).
  const double p16 = model_on("h100-80gb-sxm", "fp16").iteration_time(prefill(4096));
  const double p8 = model_on("h100-80gb-sxm", "fp8").iteration_time(prefill(4096));
  CHECK(p16 / p8 > 1.3);
  CHECK(p16 / p8 < 2.0);
  // A format whose only path is fp8 cannot run on an A100.
  auto fmt = spec::weight_format("fp8");
  fmt.fallback_compute_dtype = spec::DType::fp8;
  spec::Quantization q;
  q.weights = fmt;
  const auto a100 = gpu("a100-80gb-sxm");
  CHECK_THROWS_AS(CostModel(llama8b(), q, a100, perf::default_profile(a100), {}), ConfigError);
}

TEST_CASE("bad inputs give ConfigErrors naming the field") {
  const CostModel cm = model_on("a100-80gb-sxm");
  BatchShape b = decode(1, 10);
  b.decode_seqs = -1;
  CHECK_THROWS_WITH(cm.iteration_time(b), Catch::Contains("batch.decode_seqs") && Catch::Contains("-1"));
  BatchShape c = prefill(10);
  c.prefill_last_chunks = 2;
  CHECK_THROWS_WITH(cm.breakdown(c), Catch::Contains("batch.prefill_last_chunks"));
  CHECK_THROWS_WITH(model_on("a100-80gb-sxm", "fp16", 3), Catch::Contains("hardware.tp") && Catch::Contains("3"));
  CHECK_THROWS_WITH(model_on("a100-80gb-sxm", "fp16", 1, 64), Catch::Contains("hardware.pp"));
  CHECK(cm.iteration_time(BatchShape{}) == 0);
  CHECK_THROWS_AS(cm.host_transfer_time(-5), ConfigError);
  CHECK(cm.host_transfer_time(26e9) == Approx(1.0).epsilon(0.2));  // ~26 GB/s host link (B5)
}

TEST_CASE("profiles: JSON round trip, validation, loading and the scenario's GPU check") {
  const auto g = gpu("rtx4090-24gb");
  const auto p = perf::default_profile(g);
  const Json j = perf::to_json(p);
  const auto back = perf::profile_from_json(JsonView(j, "profile"));
  CHECK(perf::to_json(back) == j);

  Json bad = j;
  bad["mem_bw_efficiency"] = -0.3;
  CHECK_THROWS_WITH(perf::profile_from_json(JsonView(bad, "p")), Catch::Contains("p.mem_bw_efficiency"));
  Json unknown = j;
  unknown["bandwith"] = 1;
  CHECK_THROWS_WITH(perf::profile_from_json(JsonView(unknown, "p")), Catch::Contains("bandwith"));
  Json curve = j;
  curve["gemm_bw_eff_vs_m"] = Json{{"x", {1, 1}}, {"y", {0.5, 0.6}}};
  CHECK_THROWS_WITH(perf::profile_from_json(JsonView(curve, "p")), Catch::Contains("increasing"));

  // A calibrated profile file overrides the default and must describe the scenario's GPU.
  const auto dir = std::filesystem::temp_directory_path() / "llmsim-perf-test";
  std::filesystem::create_directories(dir);
  const auto file = (dir / "rtx4090.json").string();
  {
    Json partial = {{"gpu_id", "rtx4090-24gb"}, {"gemm_bw_eff_vs_m", 0.5}, {"source", "test"}};
    std::ofstream(file) << partial.dump();
  }
  spec::ResolvedScenario rs;
  rs.model = llama8b();
  rs.gpu = g;
  rs.quant = quant("fp16");
  rs.scenario.hardware.gpu = g.id;
  const double t_default = perf::make_cost_model(rs).iteration_time(decode(1, 100));
  rs.scenario.hardware.gpu_profile = file;
  const CostModel calibrated = perf::make_cost_model(rs);
  CHECK(calibrated.profile().source == "test");
  CHECK(calibrated.iteration_time(decode(1, 100)) > 1.4 * t_default);  // 0.5 instead of 0.85 of bandwidth
  rs.gpu = gpu("a100-80gb-sxm");
  CHECK_THROWS_WITH(perf::make_cost_model(rs), Catch::Contains("hardware.gpu_profile") && Catch::Contains("rtx4090"));
  CHECK_THROWS_AS(perf::load_profile((dir / "missing.json").string()), ConfigError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("iteration_time equals the breakdown's total and carries sums only") {
  const CostModel cm = model_on("h100-80gb-sxm", "fp16", 2);
  BatchShape b;
  for (int i = 0; i < 3; ++i) b.add_prefill(512, 1024 * i, i == 2);
  for (int i = 0; i < 100; ++i) b.add_decode(100 + 37 * i);
  const auto s = cm.breakdown(b);
  CHECK(cm.iteration_time(b) == Approx(s.time_s).epsilon(1e-12));
  double sum = 0;
  for (const auto& o : s.ops) sum += o.time_s;
  CHECK(sum == Approx(s.time_s));
  // A million decoding sequences cost the same to evaluate (sums) and give a finite, positive time.
  const double big = cm.iteration_time(decode(1000000, 1000));
  CHECK(std::isfinite(big));
  CHECK(big > s.time_s);
  const Json j = perf::to_json(s);
  CHECK(j["time_ms"].get<double>() == Approx(s.time_s * 1e3));
  CHECK(j["ops"].size() == s.ops.size());
  CHECK(j["tokens_per_s"].get<double>() == Approx(b.tokens() / s.time_s));
}

TEST_CASE("fixed per-iteration costs follow the engine: vLLM V1 below V0, eager above both") {
  const auto g = gpu("h100-80gb-sxm");
  auto with = [&](perf::EngineGeneration e, bool graphs) {
    return CostModel(llama8b(), quant("bf16"), g, perf::default_profile(g), spec::ParallelConfig{}, graphs, 0, e);
  };
  const auto v1 = with(perf::EngineGeneration::vllm_v1, true), v0 = with(perf::EngineGeneration::vllm_v0, true);
  const auto eager = with(perf::EngineGeneration::vllm_v1, false);
  // Batch-1 decode: V1's persistent batch and incremental input preparation take ~1 ms off V0's ~2 ms
  // (vllm#17866, #42131; V0: RFC #6854, #10634): the 8B step gets ~1 ms shorter.
  const auto one = decode(1, 512);
  CHECK(v0.iteration_time(one) - v1.iteration_time(one) == Approx(1e-3).margin(2e-4));
  CHECK(op_time(v1.breakdown(one), "cpu") == Approx(1.004e-3).epsilon(0.01));
  // Without CUDA graphs every kernel launches eagerly (2.5 vs 1.3 us per kernel).
  CHECK(op_time(eager.breakdown(one), "launch") > 1.8 * op_time(v1.breakdown(one), "launch"));
  // A mixed batch of 64 decodes and a 256-token chunk: V1 replays piecewise graphs (attention eager), V0 runs it
  // eagerly; above 512 tokens V1 runs eagerly too.
  BatchShape mixed = decode(64, 512);
  mixed.add_prefill(256, 0, true);
  const double l1 = op_time(v1.breakdown(mixed), "launch"), l0 = op_time(v0.breakdown(mixed), "launch");
  CHECK(l1 < 0.7 * l0);
  CHECK(l1 > op_time(v1.breakdown(decode(64, 512)), "launch"));
  BatchShape big = decode(64, 512);
  big.add_prefill(2048, 0, true);
  CHECK(op_time(v1.breakdown(big), "launch") == Approx(op_time(v0.breakdown(big), "launch")));
  // The scenario's policy picks the engine.
  CHECK(perf::engine_generation(spec::SchedulerPolicy::vllm_v0) == perf::EngineGeneration::vllm_v0);
  CHECK(perf::engine_generation(spec::SchedulerPolicy::vllm) == perf::EngineGeneration::vllm_v1);
}

TEST_CASE("Marlin 4-bit decode: dequantisation costs CUDA-core time where FP32 is scarce against bandwidth") {
  // One large weight-streaming GEMM at M = 1 (the Marlin README's benchmark shape class): 4-bit vs fp16 speed-up.
  // Ideal 16/4.156 = 3.85. Measured: 3.12 on an A100 (vllm#2497 bench.py), "essentially ideal" on an A10
  // (IST-DASLab/marlin README); the 4090 has 4x the A100's FP32 rate per byte of bandwidth.
  auto speedup = [](const std::string& id) {
    spec::ModelSpec m = llama8b(1);
    m.hidden_size = 8192;
    m.intermediate_size = 28672;
    m.num_heads = 64;
    m.vocab_size = 32;  // keep the LM head out of the way
    const auto g = gpu(id);
    const CostModel f16(m, quant("fp16"), g, perf::default_profile(g), spec::ParallelConfig{});
    const CostModel awq(m, quant("awq-int4"), g, perf::default_profile(g), spec::ParallelConfig{});
    return op_time(f16.breakdown(decode(1, 16)), "mlp") / op_time(awq.breakdown(decode(1, 16)), "mlp");
  };
  INFO("A100 " << speedup("a100-80gb-sxm") << ", A10 " << speedup("a10-24gb") << ", 4090 " << speedup("rtx4090-24gb"));
  CHECK(speedup("a100-80gb-sxm") == Approx(3.12).epsilon(0.05));
  CHECK(speedup("a10-24gb") > 3.6);
  CHECK(speedup("rtx4090-24gb") > 3.6);
  CHECK(speedup("h100-80gb-sxm") > speedup("a100-80gb-sxm"));
}

TEST_CASE("GGUF decode GEMV: llama.cpp's mul_mat_vec_q is bound by instruction issue where bandwidth is high") {
  // The instruction counts come from the kernel's code (spec/quantization.cpp), the issue rate from the SM count and
  // clock; nothing here is taken from a measured llama.cpp speed.
  auto mlp = [](const std::string& id, const std::string& q, std::int64_t seqs = 1) {
    spec::ModelSpec m = llama8b(1);
    m.vocab_size = 32;  // keep the LM head out of the way
    const auto g = gpu(id);
    const CostModel cm(m, quant(q), g, perf::default_profile(g), spec::ParallelConfig{});
    return op_time(cm.breakdown(decode(seqs, 16)), "mlp");
  };
  // Issue rate: FP32 FLOP/s on GA100 (64 FP32 lanes per SM), half of it on GA10x/AD10x/GH100 (128 lanes).
  CHECK(perf::instruction_issue_rate(gpu("a100-80gb-sxm")) == Approx(19.5e12));
  CHECK(perf::instruction_issue_rate(gpu("rtx4090-24gb")) == Approx(82.6e12 / 2));
  // The stream alone (q_bw = 1) would make Q4_K_M's MLP 16/4.80 = 3.33x faster than fp16 on every card, less the
  // same fixed kernel costs. On the 4090 the issue slots (41 T/s for 1 TB/s) hide under the stream; on the A100
  // (19.5 T/s for 2 TB/s) they take ~85 % of the stream's time and the smooth roofline of the two is ~1.3x the
  // stream; the 3090 (17.8 T/s for 0.94 TB/s) sits between them. Without the term all three ratios are within 7 %.
  const double r4090 = mlp("rtx4090-24gb", "fp16") / mlp("rtx4090-24gb", "gguf-q4_k_m");
  const double ra100 = mlp("a100-80gb-sxm", "fp16") / mlp("a100-80gb-sxm", "gguf-q4_k_m");
  const double r3090 = mlp("rtx3090-24gb", "fp16") / mlp("rtx3090-24gb", "gguf-q4_k_m");
  INFO("Q4_K_M over fp16 at batch 1: 4090 " << r4090 << ", 3090 " << r3090 << ", A100 " << ra100);
  CHECK(r4090 > 0.9 * 16 / 4.80);
  CHECK(ra100 < 0.8 * r4090);
  CHECK(r3090 < 0.97 * r4090);
  CHECK(r3090 > ra100);
  // The per-column dot products grow with M up to the kernel's 8 columns; beyond, the GEMM path (no issue term).
  const double t1 = mlp("a100-80gb-sxm", "gguf-q4_k_m", 1), t8 = mlp("a100-80gb-sxm", "gguf-q4_k_m", 8);
  CHECK(t8 > 2.0 * t1);
  CHECK(mlp("a100-80gb-sxm", "gguf-q4_k_m", 16) < t8);
  // Formats without the kernel are untouched: AWQ (Marlin) has no issue term.
  CHECK(spec::weight_format("awq-int4").gemv_max_rows == 0);
}

TEST_CASE("W8A8 quantises each GEMM input: its own kernels (SGLang, vLLM V0, int8), fused by a compiled vLLM V1") {
  // Llama-3.1-8B by hand on an H100, 32 decoders. Unfused: the inputs of qkv, o_proj, gate_up and down,
  // T·(2h + H·d + I) elements per layer, read in 16 bits and written in 8 by four more kernels per layer.
  const auto b = decode(32, 1024);
  const auto h100 = gpu("h100-80gb-sxm");
  const auto step = [&](const std::string& w, perf::Runtime r, bool graphs = true) {
    return CostModel(llama8b(), quant(w), h100, perf::default_profile(h100), {}, graphs, 0, r).breakdown(b);
  };
  const auto delta = [&](const perf::StepCost& s, const perf::StepCost& base, const std::string& name, bool bytes) {
    return bytes ? find_op(s, name)->bytes - find_op(base, name)->bytes : op_time(s, name) - op_time(base, name);
  };
  const double produced = 2 * 4096 + 14336, o_in = 32 * 128, tokens_layers = 32.0 * 32;
  struct Case { const char* w; perf::Runtime r; bool graphs; double bytes, kernels; };
  for (const Case& c : {Case{"fp8", perf::Runtime::sglang, true, (produced + o_in) * 3, 4},
                        Case{"fp8", perf::Runtime::vllm_v0, true, (produced + o_in) * 3, 4},
                        Case{"w8a8", perf::Runtime::vllm_v1, true, (produced + o_in) * 3, 4},  // scaled_int8_quant
                        Case{"fp8", perf::Runtime::vllm_v1, false, (produced + o_in) * 3, 4},  // eager: uncompiled
                        // Compiled V1: the RMSNorms and SiLU×mul write 8 bits; o_proj's input alone is quantised.
                        Case{"fp8", perf::Runtime::vllm_v1, true, o_in * 3 - produced, 1}}) {
    CAPTURE(c.w, perf::to_string(c.r), c.graphs);
    const auto s = step(c.w, c.r, c.graphs), base = step("fp16", c.r, c.graphs);
    CHECK(delta(s, base, "norms_rotary_act", true) == Approx(tokens_layers * c.bytes).epsilon(1e-12));
    // Launch: c.kernels more per layer (decode: 9 + attention per layer, 8 per step), each at the runtime's cost.
    const double launch_ratio = op_time(s, "launch") / op_time(base, "launch");
    CHECK(launch_ratio == Approx((32 * (9 + 1 + c.kernels) + 8) / (32.0 * (9 + 1) + 8)).epsilon(1e-9));
  }
  // fp8 on an A100 runs weight-only (W8A16 Marlin): nothing to quantise.
  const auto a100 = model_on("a100-80gb-sxm", "fp8").breakdown(b);
  CHECK(find_op(a100, "norms_rotary_act")->bytes == find_op(model_on("a100-80gb-sxm").breakdown(b), "norms_rotary_act")->bytes);

  // Size: SGLang's Llama-3.1-70B FP8 decode at TP 8 on H100s (sglang#2087's run: 32 sequences, ~1.1k context) spends
  // 3-6 % of its step quantising activations; llmsim's step was 9.6 % short of the measured one without it.
  const auto m70 = spec::Catalog::builtin().model("llama-3.1-70b");
  const auto step70 = [&](const std::string& w) {
    return CostModel(m70, quant(w, spec::DType::bf16), h100, perf::default_profile(h100), spec::ParallelConfig{8, 1},
                     true, 0, perf::Runtime::sglang)
        .breakdown(decode(32, 1152));
  };
  const auto s8 = step70("fp8"), s16 = step70("fp16");
  const double added = delta(s8, s16, "norms_rotary_act", false) + delta(s8, s16, "launch", false);
  CHECK(added / s8.time_s > 0.03);
  CHECK(added / s8.time_s < 0.06);
}
