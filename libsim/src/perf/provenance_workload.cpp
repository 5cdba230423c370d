// The provenance of the workload presets' constants: the named datasets' length distributions
// (spec/dataset_lengths.hpp). They set what a workload sends, not how fast it is served; listed with the cost
// model's constants so that every number the validation report depends on has its source in one table.
#include "provenance_rows.hpp"

#include "llmsim/spec/dataset_lengths.hpp"

namespace llmsim::perf::provenance_rows {

void add_workload_provenance(std::vector<ConstantProvenance>& t) {
  const std::string filters =
      "vLLM benchmarks/benchmark_dataset.py ShareGPTDataset (is_valid_sequence: min_len=4, max_prompt_len=1024, "
      "max_total_len=2048; vllm#35176 makes them flags with these defaults); SGLang python/sglang/bench_serving.py "
      "sample_sharegpt_requests (prompt_len < 4 or output_len < 4, prompt_len > 1024 or prompt + output > 2048 "
      "skipped)";
  t.push_back(c("dataset.sharegpt.min_len", "all", P::engine_code, filters, {},
                static_cast<double>(spec::kShareGptMinLen)));
  t.push_back(c("dataset.sharegpt.max_prompt", "all", P::engine_code, filters, {},
                static_cast<double>(spec::kShareGptMaxPrompt)));
  t.push_back(c("dataset.sharegpt.max_total", "all", P::engine_code, filters, {},
                static_cast<double>(spec::kShareGptMaxTotal)));
  const std::string lmsys = "LMSYS-Chat-1M (Zheng et al. 2023, arXiv:2309.11998) Table 1, ShareGPT row, Llama-2 "
                            "tokenizer: ";
  t.push_back(c("dataset.sharegpt.prompt_sigma", "all", P::public_measurement,
                lmsys + "94.5 +- 626.2 tokens per prompt; a lognormal's sigma^2 = ln(1 + (sd/mean)^2)", {},
                spec::sharegpt_prompt_sigma()));
  t.push_back(c("dataset.sharegpt.reply_sigma", "all", P::public_measurement,
                lmsys + "348.5 +- 269.0 tokens per response; sigma^2 = ln(1 + (sd/mean)^2)", {},
                spec::sharegpt_reply_sigma()));
  const std::string vllm_paper = "Kwon et al. 2023 (vLLM / PagedAttention, arXiv:2309.06180) Fig. 11, ShareGPT, OPT "
                                 "tokenizer: ";
  t.push_back(c("dataset.sharegpt.default_input_mean", "all", P::public_measurement, vllm_paper + "input mean 161.31",
                {}, spec::kShareGptDefaultInputMean));
  t.push_back(c("dataset.sharegpt.default_output_mean", "all", P::public_measurement,
                vllm_paper + "output mean 337.99", {}, spec::kShareGptDefaultOutputMean));
}

}  // namespace llmsim::perf::provenance_rows
