#include "llmsim/analysis/quality.hpp"

#include "llmsim/spec/quantization.hpp"
#include "llmsim/core/error.hpp"

#include <cmath>
#include <cstdio>

namespace llmsim::analysis {

namespace {

constexpr const char* kPpl = "WikiText-2 perplexity";          // lower is better
constexpr const char* kOpenLlm = "Open LLM Leaderboard v1 average";  // higher is better

std::vector<QualityDelta> make_table() {
  // Published measurements only, each with its source; deltas are quantized − 16-bit as published.
  return {
      // AWQ paper (Lin et al., MLSys 2024, arXiv 2306.00978), INT4 group 128, WikiText-2 perplexity of Llama-2
      // (as reproduced in github.com/dwithchenna/llm-quantization).
      {"awq-int4", "Llama-2-7B", 6.7, kPpl, 5.47, 5.60, 0.13, "AWQ paper, arXiv 2306.00978"},
      {"awq-int4", "Llama-2-13B", 13.0, kPpl, 4.88, 4.97, 0.09, "AWQ paper, arXiv 2306.00978"},
      {"awq-int4", "Llama-2-70B", 69.0, kPpl, 3.32, 3.41, 0.09, "AWQ paper, arXiv 2306.00978"},
      // GPTQ W4A16 (group 128) model cards of Neural Magic, Open LLM Leaderboard v1 average.
      {"gptq-int4", "Llama-3.1-8B-Instruct", 8.0, kOpenLlm, 69.32, 67.57, -1.75,
       "huggingface.co/neuralmagic/Meta-Llama-3.1-8B-Instruct-quantized.w4a16"},
      {"gptq-int4", "Llama-3.1-70B-Instruct", 70.6, kOpenLlm, 78.67, 78.54, -0.13,
       "huggingface.co/neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w4a16"},
      // INT8 weight-only (W8A16) and W8A8 model cards, Open LLM Leaderboard v1 average.
      {"int8", "Llama-3-8B-Instruct", 8.0, kOpenLlm, 68.54, 68.69, 0.15,
       "huggingface.co/RedHatAI/Meta-Llama-3-8B-Instruct-quantized.w8a16"},
      {"w8a8", "Llama-3.1-8B", 8.0, kOpenLlm, 63.03, 62.71, -0.32,
       "huggingface.co/neuralmagic/Meta-Llama-3.1-8B-quantized.w8a8"},
      // FP8 (weights and activations) model cards, Open LLM Leaderboard v1 average.
      {"fp8", "Llama-3.1-8B-Instruct", 8.0, kOpenLlm, 73.79, 73.44, -0.35,
       "huggingface.co/neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8"},
      {"fp8", "Llama-3.1-405B-Instruct", 405.0, kOpenLlm, 78.67, 78.69, 0.02,
       "huggingface.co/neuralmagic/Meta-Llama-3.1-405B-Instruct-FP8-dynamic"},
      // llama.cpp GGUF k-quants: `llama-quantize --help` (tools/quantize/quantize.cpp, deltas only, Llama-3-8B) and
      // the Llama 2 70B scorechart of examples/perplexity/README.md (commit ffe88a36).
      {"gguf-q4_k_m", "Llama-3-8B", 8.0, kPpl, 0, 0, 0.1754, "llama.cpp tools/quantize/quantize.cpp"},
      {"gguf-q4_k_m", "Llama-2-70B", 69.0, kPpl, 3.4313, 3.4725, 0.0412,
       "llama.cpp examples/perplexity/README.md (Llama 2 70B scorechart)"},
      {"gguf-q8_0", "Llama-3-8B", 8.0, kPpl, 0, 0, 0.0026, "llama.cpp tools/quantize/quantize.cpp"},
  };
}

std::string number(double v, int decimals, bool sign = false) {
  char buf[32];
  std::snprintf(buf, sizeof buf, sign ? "%+.*f" : "%.*f", decimals, v);
  return buf;
}

}  // namespace

std::string QualityDelta::text() const {
  const int d = std::abs(delta) < 0.01 ? 4 : 2;
  std::string s = metric + " " + number(delta, d, true);
  if (baseline != 0 || quantized != 0) s += " (" + number(baseline, d) + " -> " + number(quantized, d) + ")";
  return s + " on " + model + " [" + source + "]";
}

const std::vector<QualityDelta>& quality_deltas() {
  static const std::vector<QualityDelta> table = make_table();
  return table;
}

bool is_4bit(const std::string& format) {
  // From the format's own stored bits (spec/quantization), so a format added there (NVFP4, MXFP4, their experts-only
  // variants, a group-size variant) is judged without a list here. A name that is not a format is not 4-bit.
  try {
    return spec::weight_format(spec::canonical_weight_format_id(format)).bits_per_weight < 5;
  } catch (const ConfigError&) {
    return false;
  }
}

std::optional<QualityDelta> nearest_quality_delta(const std::string& format, double params) {
  std::optional<QualityDelta> best;
  double best_distance = 0;
  for (const auto& q : quality_deltas()) {
    if (q.format != format) continue;
    const double distance = params > 0 ? std::abs(std::log(q.params_b * 1e9 / params)) : 0;
    if (!best || distance < best_distance) best = q, best_distance = distance;
  }
  return best;
}

std::string quality_caveat(const std::string& format, double params) {
  if (format == "fp16" || format == "bf16") return "";
  const auto q = nearest_quality_delta(format, params);
  return "quality not modelled by llmsim; " +
         (q ? "published: " + q->text() : std::string("no published delta for ") + format + " in llmsim's table");
}

}  // namespace llmsim::analysis
