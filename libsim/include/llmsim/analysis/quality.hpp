#pragma once
// What quantization does to a model's answers — which llmsim does NOT model. A cited table of published
// accuracy/perplexity deltas per format and model size, so that wherever a quantized option wins on cost, the
// decision shows what the literature measured and that llmsim's numbers say nothing about quality.
#include <optional>
#include <string>
#include <vector>

namespace llmsim::analysis {

/// One published measurement of a quantized model against its 16-bit original.
struct QualityDelta {
  std::string format;     ///< llmsim weight format id ("awq-int4", "gptq-int4", "int8", "w8a8", "fp8", "gguf-q4_k_m", ...)
  std::string model;      ///< the model measured ("Llama-2-70B")
  double params_b = 0;    ///< its size, billions of parameters
  std::string metric;     ///< "WikiText-2 perplexity (lower is better)", "Open LLM Leaderboard v1 average (higher is better)"
  double baseline = 0;    ///< the 16-bit model's score (0 when the source gives only the delta)
  double quantized = 0;   ///< the quantized model's score (0 when the source gives only the delta)
  double delta = 0;       ///< quantized − baseline, in the metric's units
  std::string source;     ///< where it was published
  /// "WikiText-2 PPL +0.09 (5.47 → 5.60) on Llama-2-7B, AWQ paper": one line for tables.
  std::string text() const;
};

/// The whole table, in a stable order (format, then model size).
const std::vector<QualityDelta>& quality_deltas();

/// True for formats storing weights in about 4 bits (AWQ, GPTQ, NF4, GGUF Q4_K_M, NVFP4, MXFP4 and their
/// experts-only variants: under 5 stored bits per weight in spec::weight_format): the ones whose quality cost a cost
/// comparison must show when they win. vLLM's names are accepted ("awq"); an unknown name is not 4-bit.
bool is_4bit(const std::string& format);

/// The published measurement for `format` nearest in size to a model of `params` parameters (log-distance); nullopt
/// for 16-bit formats and formats with no entry.
std::optional<QualityDelta> nearest_quality_delta(const std::string& format, double params);

/// The caveat shown beside a quantized option: "quality not modelled; published: <nearest entry>" (or "quality not
/// modelled; no published delta in llmsim's table" for a quantized format without one); "" for 16-bit formats.
std::string quality_caveat(const std::string& format, double params);

}  // namespace llmsim::analysis
