#pragma once
// Named benchmark datasets as joint prompt/output length distributions (workload.dataset): "sharegpt", the
// ShareGPT conversations as vLLM's benchmark_serving (`vllm bench serve --dataset-name sharegpt`) and SGLang's
// bench_serving sample them. The corpus text and each model's tokenizer are not here, so a request's lengths are
// drawn from the dataset's published length distribution, conditioned on the means the user (or a result file's
// token totals) states and cut by the benchmark client's filters. docs/engine.md "Dataset workloads".
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "llmsim/core/error.hpp"
#include "llmsim/core/rng.hpp"

namespace llmsim::spec {

/// The datasets workload.dataset names.
inline const std::vector<std::string> kDatasets{"sharegpt"};

// ---- ShareGPT as the benchmark clients sample it ----
// The filters (vLLM benchmarks/benchmark_dataset.py ShareGPTDataset / is_valid_sequence, its min_len=4,
// max_prompt_len=1024, max_total_len=2048 made flags by vllm#35176 with the same defaults; SGLang
// bench_serving.py sample_sharegpt_requests: the same three bounds): a conversation is kept when its prompt and
// its reply have at least 4 tokens, the prompt at most 1024 and prompt + reply at most 2048.
inline constexpr std::int64_t kShareGptMinLen = 4;
inline constexpr std::int64_t kShareGptMaxPrompt = 1024;
inline constexpr std::int64_t kShareGptMaxTotal = 2048;
// The shape: lognormal prompt and reply lengths whose sigma of ln(x) reproduces the dataset's published spread.
// LMSYS-Chat-1M (Zheng et al. 2023, arXiv:2309.11998), Table 1, ShareGPT row (Llama-2 tokenizer): 94.5 ± 626.2
// tokens per prompt, 348.5 ± 269.0 per response; a lognormal of coefficient of variation v has
// sigma^2 = ln(1 + v^2). Prompt and reply are drawn independently (no published correlation), then filtered together.
inline constexpr double kShareGptPromptMean = 94.5, kShareGptPromptStd = 626.2;
inline constexpr double kShareGptReplyMean = 348.5, kShareGptReplyStd = 269.0;
/// sigma of ln(prompt tokens) and ln(reply tokens) from the moments above.
double sharegpt_prompt_sigma();
double sharegpt_reply_sigma();
// The means a ShareGPT workload takes when none are given: the vLLM paper's (Kwon et al. 2023, arXiv:2309.06180,
// Fig. 11: ShareGPT input mean 161.31, output mean 337.99 tokens, OPT tokenizer). Token counts depend on the
// tokenizer: give the means your model's tokenizer measures (a result file's totals / completed).
inline constexpr double kShareGptDefaultInputMean = 161.31;
inline constexpr double kShareGptDefaultOutputMean = 337.99;

/// workload.dataset: a named dataset and the mean lengths it is conditioned on (0 = the dataset's default).
struct DatasetSpec {
  std::string name = "sharegpt";
  double input_mean = 0;   ///< mean prompt tokens of the requests sent (after the client's filters); 0 = default
  double output_mean = 0;  ///< mean output tokens; 0 = default
  double effective_input_mean() const noexcept { return input_mean > 0 ? input_mean : kShareGptDefaultInputMean; }
  double effective_output_mean() const noexcept { return output_mean > 0 ? output_mean : kShareGptDefaultOutputMean; }
};

/// The dataset's joint length distribution, fitted so its means (after the filters) are the spec's: the lognormals'
/// locations are solved for (their sigmas are the dataset's), on integer lengths (a lognormal rounded to the
/// nearest token). Fits are cached by (mean in, mean out): building one for a known pair is a map lookup.
class DatasetLengths {
 public:
  /// ConfigError at `path` (".name", ".input_mean", ".output_mean") for an unknown dataset or means the filtered
  /// distribution cannot reach (a prompt mean outside (4, 1024), ...), naming the reachable range.
  DatasetLengths(const DatasetSpec& spec, const std::string& path);
  /// One request's (prompt, output) tokens, from two uniform draws of `rng` (inverse CDFs; deterministic).
  std::pair<std::int64_t, std::int64_t> sample(RandomEngine& rng) const;
  /// The request at quantiles u_in (of the prompt's marginal) and u_out (of the output given the prompt), both in
  /// [0, 1): what sample() draws, for stratified draws.
  std::pair<std::int64_t, std::int64_t> at(double u_in, double u_out) const;
  double input_mean() const noexcept;
  double output_mean() const noexcept;
  double input_stddev() const noexcept;
  double output_stddev() const noexcept;
  /// The lognormals' medians before the filters (exp of their locations), for the docs and the notes.
  double input_median() const noexcept;
  double output_median() const noexcept;
  struct Fit;

 private:
  std::shared_ptr<const Fit> fit_;
};

struct Workload;
struct TenantClass;
/// A class whose lengths come from `d`: its dataset set, and input_tokens / output_tokens the fitted marginals as
/// normal distributions (mean, sd, bounded by the filters) for what reads a class's nominal lengths (sizing hints,
/// the context check). ConfigError as DatasetLengths.
void apply_dataset(TenantClass& c, const DatasetSpec& d, const std::string& path);
/// Workload::validate's checks of workload.dataset: its values (the fit) and the forms it combines with.
void check_dataset(const Workload& w, const std::string& path, Problems& p);

/// "ShareGPT lengths (prompt mean 302, sd 272; output mean 196, sd 140; filters 4..1024 / total <= 2048)".
std::string describe(const DatasetLengths& d);

}  // namespace llmsim::spec
