// The serving runtime as a modelled dimension (perf/runtime.hpp, docs/cost-model.md "Runtimes"): names, the fixed
// per-step costs, CUDA-graph rules, the all-reduce and TurboMind's decode attention — each in direction and size.
#include <catch2/catch.hpp>

#include <string>
#include <utility>

#include "llmsim/core/error.hpp"
#include "llmsim/perf/collective.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/decode_attention.hpp"
#include "llmsim/perf/engine_overhead.hpp"
#include "llmsim/perf/prefill_scores.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;
using test::decode;
using test::gpu;
using test::KiB;
using test::op;
using perf::Runtime;

namespace {

perf::CostModel runtime_cost(const std::string& model, const std::string& gpu_id, Runtime r, int tp = 1,
                     bool graphs = true, const spec::QuantKernels& kernels = {}) {
  const auto g = gpu(gpu_id);
  spec::Quantization q;
  q.weights = spec::weight_format("fp16");
  q.kernels = kernels;
  return perf::CostModel(spec::Catalog::builtin().model(model), q, g, perf::default_profile(g),
                         spec::ParallelConfig{tp, 1}, graphs, 0, r);
}

}  // namespace

TEST_CASE("runtime names: every one parses back, an unknown one is refused listing them, the default is vLLM V1") {
  for (const auto& name : spec::runtime_names()) CHECK(spec::to_string(spec::parse_runtime(name)) == name);
  CHECK(spec::runtime_names().size() == 8);
  try {
    spec::parse_runtime("vllm-v9");
    FAIL("no ConfigError");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("engine.runtime") && Catch::Contains("vllm-v9") &&
                             Catch::Contains("lmdeploy-turbomind"));
  }
  spec::EngineConfig e;
  CHECK(perf::runtime_of(e) == Runtime::vllm_v1);
  e.policy = spec::SchedulerPolicy::vllm_v0;
  CHECK(perf::runtime_of(e) == Runtime::vllm_v0);
  e.runtime = Runtime::sglang;  // an explicit runtime wins over the policy's default
  CHECK(perf::runtime_of(e) == Runtime::sglang);
}

TEST_CASE("vLLM before 0.6 processes every sequence's output between steps: +0.1 ms per sequence (RFC #6913)") {
  // vLLM 0.6.0 (the asynchronous output processor, #7049) against 0.5: 0.6.x's decode attention keeps FA3's
  // two-warp-group price on Hopper (docs/cost-model.md "Runtimes by version").
  const auto v0 = runtime_cost("llama-3.1-8b", "h100-80gb-sxm", Runtime::vllm_v0, 1, true,
                               spec::quant_kernels_for(std::string("vllm==0.6.0")));
  const auto v05 = runtime_cost("llama-3.1-8b", "h100-80gb-sxm", Runtime::vllm_v0_sync);
  // #6913: _process_model_outputs took 0.2 ms at batch 1 and 3.4 ms at batch 32 — 0.1 ms per sequence.
  CHECK(op(v05, decode(1, 512), "cpu") - op(v0, decode(1, 512), "cpu") == Approx(0.1e-3));
  CHECK(op(v05, decode(32, 512), "cpu") - op(v0, decode(32, 512), "cpu") == Approx(3.2e-3));
  // The kernels are the same but decode attention (0.4.3-0.5.x ran FA2's split-KV kernel, 2 CTAs per SM: 640 CTAs
  // stream at the cap on an H100, docs/cost-model.md) and the sampler (0.6-0.10's passes over the logits,
  // perf/v0_sampler.hpp; 0.5's keep the default): the rest of an 80-sequence step's difference is that CPU time (8 ms).
  const auto b = decode(80, 512);
  const double attn = op(v05, b, "attention_decode") - op(v0, b, "attention_decode");
  const double samp = op(v05, b, "sampling") - op(v0, b, "sampling");
  CHECK(attn < 0);
  CHECK(samp < 0);
  CHECK(v05.iteration_time(b) - v0.iteration_time(b) == Approx(8e-3 + attn + samp));
}

TEST_CASE("vLLM 0.5's output step is the engine process's Python: the same 0.1 ms per sequence at any TP, model or "
          "context") {
  // benchmark_latency's LLM.generate and the OpenAI server both run LLMEngine.step -> _process_model_outputs in the
  // engine's process after the sampled tokens are back on the host (docs/cost-model.md, "vLLM before 0.6"): one
  // price per sequence, not scaled by the world size or the model. (The detokenizer's per-step copy of a sequence's
  // token list, prompt + output, grows with the context: a few us per sequence at these lengths, not modelled.)
  for (const auto& [model, tp] : {std::pair<std::string, int>{"llama-2-7b", 1}, {"llama-3.1-70b", 4}}) {
    const auto v0 = runtime_cost(model, "h100-80gb-sxm", Runtime::vllm_v0, tp);
    const auto v05 = runtime_cost(model, "h100-80gb-sxm", Runtime::vllm_v0_sync, tp);
    for (const int context : {128, 4096}) {
      CAPTURE(model, tp, context);
      CHECK(op(v05, decode(64, context), "cpu") - op(v0, decode(64, context), "cpu") == Approx(6.4e-3));
    }
  }
}

TEST_CASE("a host that runs ahead hides eager launches behind the GPU's work, unless the GPU's work is shorter") {
  const auto g = gpu("a100-80gb-sxm");
  const auto p = perf::default_profile(g);
  const perf::EngineOverheadModel tm(p, Runtime::lmdeploy_turbomind, true);
  const perf::EngineOverheadModel v1_eager(p, Runtime::vllm_v1, false);
  REQUIRE(tm.launch_depends_on_gpu());
  const double kernels = 300;
  // Python's loop waits for every launch: 300 eager kernels cost 300 × kernel_launch_s whatever the GPU does.
  CHECK(v1_eager.launch_s(kernels, 32, 1, true, 10e-3) == Approx(kernels * p.kernel_launch_s));
  // TurboMind's C++ thread enqueues ahead: with 10 ms of GPU work only the GPU's own gap per kernel shows ...
  CHECK(tm.launch_s(kernels, 32, 1, true, 10e-3) == Approx(kernels * p.graph_launch_s));
  // ... and with 0.1 ms of GPU work the host's enqueue time is what is left over.
  CHECK(tm.launch_s(kernels, 32, 1, true, 0.1e-3) == Approx(kernels * p.kernel_launch_s - 0.1e-3));
  // TurboMind's step loop: 30 us + 1 us per sequence on the critical path, against V1's 1 ms + 4 us.
  CHECK(tm.cpu_s(16) == Approx(46e-6));
}

TEST_CASE("LMDeploy TurboMind and gpt-fast: a batch-1 step without the Python engine's millisecond") {
  const auto v1 = runtime_cost("llama-2-7b", "a100-80gb-sxm", Runtime::vllm_v1);
  const auto tm = runtime_cost("llama-2-7b", "a100-80gb-sxm", Runtime::lmdeploy_turbomind);
  const auto gf = runtime_cost("llama-2-7b", "a100-80gb-sxm", Runtime::gpt_fast);
  const auto one = decode(1, 128);
  // TurboMind launches every kernel eagerly, yet pays only the GPU's gap per kernel; its CPU time is 31 us.
  CHECK(op(tm, one, "launch") == Approx(op(v1, one, "launch")).epsilon(1e-9));  // V1 replays a full graph here
  CHECK(op(tm, one, "cpu") == Approx(31e-6));
  CHECK(op(gf, one, "cpu") == 0);
  // The batch-1 step: ~1 ms shorter than vLLM V1's (its 1.004 ms of CPU time), on a ~7 ms step.
  const double saved = v1.iteration_time(one) - gf.iteration_time(one);
  CHECK(saved == Approx(1.004e-3).epsilon(0.01));
  // gpt-fast's compiled step is one graph at any decode batch; vLLM V0 runs above 256 sequences eagerly.
  const auto v0 = runtime_cost("llama-2-7b", "a100-80gb-sxm", Runtime::vllm_v0);
  CHECK(op(gf, decode(300, 128), "launch") < 0.6 * op(v0, decode(300, 128), "launch"));
}

TEST_CASE("the runtime's all-reduce: LMDeploy's NCCL where vLLM runs its custom kernel") {
  const auto g = gpu("a100-80gb-sxm");
  const auto p = perf::default_profile(g);
  const perf::AllReduceModel vllm(g, p, 4), nccl(g, p, 4, perf::AllReduceImpl::nccl);
  // A decode step's all-reduce (16 tokens × 4096 × 2 B = 128 KiB): one-shot custom kernel vs NCCL's LL ring,
  // 6.6 us + 6 steps × 2.7 us on Ampere NVLink (nccl-tests, docs/cost-model.md).
  CHECK(vllm.algorithm(128 * KiB) == perf::AllReduceAlgorithm::custom_one_shot);
  CHECK(nccl.algorithm(128 * KiB) == perf::AllReduceAlgorithm::nccl_ring);
  CHECK(nccl.time_s(128 * KiB) > 2 * vllm.time_s(128 * KiB));
  // So a TP-4 70B decode step costs TurboMind more communication than vLLM: 2 × 80 + 1 all-reduces of 16 × 8192 × 2 B.
  const auto v = runtime_cost("llama-2-70b", "a100-80gb-sxm", Runtime::vllm_v1, 4);
  const auto t = runtime_cost("llama-2-70b", "a100-80gb-sxm", Runtime::lmdeploy_turbomind, 4);
  const double extra = op(t, decode(16, 512), "tp_allreduce") - op(v, decode(16, 512), "tp_allreduce");
  CHECK(extra == Approx(161 * (nccl.time_s(256 * KiB) - vllm.time_s(256 * KiB))).epsilon(0.05));
  CHECK(extra > 2e-3);
}

TEST_CASE("TurboMind's decoder attention: shared memory sets resident CTAs, and its split-K rule") {
  // 5 stages of 32 × 128 fp16 K/V tiles (40 KiB) + per head a 1024-entry fp32 score row and Q/O (4.8 KiB) + 1 KiB:
  // one head per CTA = 46.9 KB → 3 per SM on an A100 (164 KiB), 2 on a 4090 (100 KiB), 4 on an H100 (228 KiB).
  CHECK(perf::turbomind_ctas_per_sm(gpu("a100-80gb-sxm"), 1) == 3);
  CHECK(perf::turbomind_ctas_per_sm(gpu("rtx4090-24gb"), 1) == 2);
  CHECK(perf::turbomind_ctas_per_sm(gpu("h100-80gb-sxm"), 1) == 4);
  CHECK(perf::turbomind_ctas_per_sm(gpu("rtx4090-24gb"), 4) == 1);
  // split_k = min(ceil(16 / batch), ceil(context / 1024)), the context counting the new token: batch 1 at 4000
  // cached tokens splits 4 ways, at 4096 five, batch 16 not at all.
  const auto g = gpu("a100-80gb-sxm");
  const perf::DecodeAttentionModel k(g, perf::default_profile(g), perf::AttentionShape{32, 32, 128, 2},
                                     spec::DType::fp16, perf::DecodeAttentionBackend::turbomind, 2.0);
  CHECK(k.per_layer(1, 4000).splits == 4);
  CHECK(k.per_layer(1, 4000).ctas == 32 * 4);
  CHECK(k.per_layer(1, 4096).splits == 5);
  CHECK(k.per_layer(16, 16 * 4096).splits == 1);
  CHECK(k.per_layer(1, 512).splits == 1);
  // Llama-2-7B is MHA: each KV head is read by one CTA, so the bytes are the cache's.
  CHECK(k.per_layer(16, 16 * 1024).bytes == Approx(16 * 1024 * 32 * 128 * 2 * 2.0).epsilon(0.01));
}

TEST_CASE("llama.cpp's prefill without flash attention moves its score matrix through DRAM", "[perf][runtime]") {
  // perf/prefill_scores.hpp: fp16 GEMM output, fp32 copy, softmax output, fp16 copy: 12 bytes written per score;
  // each read back from DRAM only beyond what the L2 still holds (up to 12 more bytes per score).
  CHECK(perf::materialised_score_bytes(0, 72e6) == 0);
  CHECK(perf::materialised_score_bytes(1e6, 72e6) == Approx(12e6));          // 4 MB fp32: the L2 serves the reads
  CHECK(perf::materialised_score_bytes(1e9, 0) == Approx(24e9));             // no L2: every read from DRAM
  CHECK(perf::materialised_score_bytes(1e9, 72e6) == Approx(24e9 - 4 * 72e6));

  // A 512-token ubatch after 7680 cached tokens (llama-bench pp8192's last ubatch), Llama-3.1-8B on a 4090:
  // 32 heads × 512 × 8192 scores per layer = 537 MB fp32, far beyond the 72 MB L2.
  perf::BatchShape b;
  b.prefill_seqs = 1;
  b.prefill_tokens = 512;
  b.prefill_kv_tokens = 8192;
  b.prefill_attn_pairs = 512.0 * 7680 + 512.0 * 513 / 2;
  b.prefill_last_chunks = 0;
  const auto lc = runtime_cost("llama-3.1-8b", "rtx4090-24gb", Runtime::llama_cpp);
  const auto fa = runtime_cost("llama-3.1-8b", "rtx4090-24gb", Runtime::gpt_fast);
  const double scores = 32.0 * 512 * 8192;
  const double score_s = 32 * perf::materialised_score_bytes(scores, 72.0 * 1024 * 1024) / 1008e9;
  // Direction and size: llama.cpp pays at least the score traffic at the datasheet bandwidth (~0.8 s per layer
  // stack here), a fused kernel a small fraction of it.
  CHECK(op(lc, b, "attention_prefill") > score_s);
  CHECK(op(lc, b, "attention_prefill") < 1.5 * score_s);
  CHECK(op(fa, b, "attention_prefill") < 0.3 * op(lc, b, "attention_prefill"));
  // A first ubatch of 512 (17 MB of fp16 scores per layer) stays in L2: only the write-backs, a few % of the step.
  perf::BatchShape first = b;
  first.prefill_kv_tokens = 512;
  first.prefill_attn_pairs = 512.0 * 513 / 2;
  CHECK(op(lc, first, "attention_prefill") < 0.1 * lc.iteration_time(first));
}

TEST_CASE("vLLM V1 with more than one GPU pickles every step's inputs to its workers and the output back",
          "[perf][runtime]") {
  // MultiprocExecutor (TP/PP > 1): calibration/host/executor_pickle.py's round trip of 0.8.4's SchedulerOutput and
  // ModelRunnerOutput, 8 us + 2.7 us per scheduled sequence on the CPU's serialized time; UniProcExecutor at TP 1
  // pickles nothing. One writer and parallel readers: the same at TP 2 and TP 8.
  const auto cpu_ms = [](int tp, std::int64_t seqs, Runtime r) {
    return op(runtime_cost("llama-3.1-70b", "h100-80gb-sxm", r, tp), decode(seqs, 1000), "cpu") * 1e3;
  };
  const double one = cpu_ms(1, 1, Runtime::vllm_v1), big = cpu_ms(1, 256, Runtime::vllm_v1);
  CHECK(cpu_ms(2, 1, Runtime::vllm_v1) - one == Approx(0.008 + 0.0027).epsilon(1e-6));
  CHECK(cpu_ms(8, 256, Runtime::vllm_v1) - big == Approx(0.008 + 256 * 0.0027).epsilon(1e-6));
  CHECK(cpu_ms(8, 256, Runtime::vllm_v1) == cpu_ms(2, 256, Runtime::vllm_v1));
  // At 256 sequences it is 0.7 ms a step, 36 % of V1's own 2 ms of host time there; other runtimes: unchanged.
  CHECK((cpu_ms(8, 256, Runtime::vllm_v1) - big) / big > 0.3);
  CHECK(cpu_ms(8, 256, Runtime::vllm_v0) == cpu_ms(1, 256, Runtime::vllm_v0));
  CHECK(cpu_ms(4, 32, Runtime::sglang) == cpu_ms(1, 32, Runtime::sglang));
}
