// A bigger step never costs less (issue 29/27): the step time is non-decreasing in prefill tokens and in decode
// batch size, for every catalogue card × a few models × weight formats × TP. The only steps in the curve are the
// documented switches (docs/cost-model.md, "Monotone step cost"). The graph-size cliffs go up (vLLM V1 runs batches of
// more than 512 tokens eagerly, V0 and SGLang decode batches above 256 / 160 sequences, paying eager launches from
// there); two engine rules may step down: the all-reduce leaving vLLM's custom kernel for NCCL at 8 MiB (at TP 4,
// where vllm#24111 measures the two-stage kernel slower than NCCL; TP 6-8 rise there: test_collective.cpp), and the
// decode-attention kernel's split-KV count, picked by batch size.
#include <catch2/catch.hpp>

#include <cstdint>
#include <sstream>
#include <string>

#include "llmsim/core/error.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/gemm_tiles.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"
#include "perf_test_util.hpp"

using namespace llmsim;

namespace {

/// The batch of one prefill chunk of n tokens, or (decode) n sequences decoding at 512 cached tokens each.
perf::BatchShape monotone_batch(std::int64_t n, bool decode) {
  if (decode) return test::decode(n, 512);
  perf::BatchShape b;
  b.add_prefill(n, 0, true);
  return b;
}

/// The first place where one more token (or sequence) makes the step cheaper other than at a documented switch, as
/// text; empty when none. A drop is documented when every op that got cheaper is (a) the TP all-reduce whose message
/// reaches vLLM's custom all-reduce max_size (8 MiB: NCCL from there, perf/collective.cpp) or (b) decode attention,
/// whose split-KV count the engine picks by batch size (perf/decode_attention.cpp).
std::string first_undocumented_drop(const perf::CostModel& cm, std::int64_t hi, bool decode) {
  const double msg_per_token = static_cast<double>(cm.model().hidden_size) * 2.0;
  double prev = 0;
  for (std::int64_t n = 1; n <= hi; ++n) {
    const double t = cm.iteration_time(monotone_batch(n, decode));
    if (t < prev) {
      const auto a = cm.breakdown(monotone_batch(n - 1, decode)).ops;
      const auto b = cm.breakdown(monotone_batch(n, decode)).ops;
      const bool crosses = (n - 1) * msg_per_token < 8.0 * test::MiB && n * msg_per_token >= 8.0 * test::MiB;
      for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
        if (!(b[i].time_s < a[i].time_s)) continue;
        if (b[i].name == "tp_allreduce" && crosses) continue;
        if (b[i].name == "attention_decode" && decode) continue;
        std::ostringstream s;
        s << (decode ? "decode seqs " : "prefill tokens ") << n - 1 << " -> " << n << ": " << prev * 1e3 << " -> "
          << t * 1e3 << " ms (" << b[i].name << " " << a[i].time_s * 1e3 << " -> " << b[i].time_s * 1e3 << " ms)";
        return s.str();
      }
    }
    prev = t;
  }
  return {};
}

}  // namespace

TEST_CASE("the GEMM wave term as a time is non-decreasing in M, and equal to the wave factor at whole row tiles",
          "[perf][gemm_tiles][monotone]") {
  for (double sms : {46.0, 58.0, 108.0, 128.0, 132.0, 148.0, 170.0}) {
    for (double n : {1024.0, 4096.0, 6144.0, 14336.0, 28672.0, 57344.0, 128256.0 / 4}) {
      double prev = 0;
      for (double m = 1; m <= 8192; ++m) {
        const double t = m * perf::gemm_wave_penalty(m, n, sms);
        INFO("sms " << sms << " n " << n << " m " << m);
        REQUIRE(t >= prev);
        prev = t;
        if (static_cast<std::int64_t>(m) % 128 == 0)
          REQUIRE(perf::gemm_wave_penalty(m, n, sms) == Approx(1.0 / perf::gemm_wave_factor(m, n, sms)));
      }
    }
  }
  // 496 and 512 rows run the same 4 row tiles: 496 costs no more than 512 and more than 384 (3 row tiles).
  const double t384 = 384 * perf::gemm_wave_penalty(384, 4096, 132);
  const double t496 = 496 * perf::gemm_wave_penalty(496, 4096, 132);
  const double t512 = 512 * perf::gemm_wave_penalty(512, 4096, 132);
  CHECK(t384 < t496);
  CHECK(t496 < t512);
}

TEST_CASE("a bigger step never costs less: every card, models, formats, TP, prefill tokens and decode batch",
          "[perf][monotone]") {
  const auto& cat = spec::Catalog::builtin();
  int checked = 0;
  for (const std::string& gpu_id : cat.gpu_ids()) {
    const spec::GpuSpec g = cat.gpu(gpu_id);
    for (const char* model_id : {"llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b"}) {
      for (const char* w : {"fp16", "fp8", "awq-int4"}) {
        for (int tp : {1, 4}) {
          spec::Quantization q;
          try {
            q.weights = spec::format_for_gpu(spec::weight_format(w), g, "quant.weights");
          } catch (const ConfigError&) {
            continue;  // the card runs neither the format nor a fallback
          }
          q.kv_dtype = spec::DType::fp16;
          const perf::CostModel cm(cat.model(model_id), q, g, perf::default_profile(g), spec::ParallelConfig{tp, 1});
          INFO(gpu_id << " " << model_id << " " << w << " tp" << tp);
          CHECK(first_undocumented_drop(cm, 8192, false).empty());
          CHECK(first_undocumented_drop(cm, 1024, true).empty());
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 100);
}

TEST_CASE("the attack round's pairs: 8B H100 384 -> 400 tokens and 70B 4xH100 496 -> 511 cost more, not less",
          "[perf][monotone]") {
  const auto& cat = spec::Catalog::builtin();
  const auto g = cat.gpu("h100-80gb-sxm");
  spec::Quantization q;
  q.weights = spec::weight_format("fp16");
  const auto prefill = [](const perf::CostModel& cm, std::int64_t n) {
    perf::BatchShape b;
    b.add_prefill(n, 0, true);
    return cm.iteration_time(b);
  };
  const perf::CostModel m8(cat.model("llama-3.1-8b"), q, g, perf::default_profile(g), spec::ParallelConfig{1, 1});
  CHECK(prefill(m8, 400) > prefill(m8, 384));
  const perf::CostModel m70(cat.model("llama-3.1-70b"), q, g, perf::default_profile(g), spec::ParallelConfig{4, 1});
  CHECK(prefill(m70, 511) > prefill(m70, 496));
  // At 512 tokens the all-reduce message reaches 8 MiB and leaves the custom kernel for NCCL (a documented switch);
  // every GEMM there still costs more than at 496.
  const auto batch = [](std::int64_t n) {
    perf::BatchShape b;
    b.add_prefill(n, 0, true);
    return b;
  };
  for (const char* name : {"qkv_proj", "o_proj", "mlp"}) {
    INFO(name);
    CHECK(test::op(m70, batch(512), name) > test::op(m70, batch(496), name));
  }
}
