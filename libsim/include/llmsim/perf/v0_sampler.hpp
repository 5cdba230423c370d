#pragma once
// The GPU passes of vLLM V0's sampler over the logits (issue 27; docs/cost-model.md "Per-op formulas", sampling). V0's
// `Sampler.forward` (vllm/model_executor/layers/sampler.py, the 0.6-0.10 file: penalties from layers/utils.py, the
// FlashInfer top-k/top-p path) runs the same passes whatever the request asks for: the logits are cast to fp32
// (`logits.to(torch.float)`) and divided in place by the temperatures (`logits.div_(...)`, 1.0 for greedy rows),
// then `torch.softmax` and `torch.log_softmax` each write a full fp32 copy, and the greedy rows are sampled by
// `torch.argmax(logprobs[long_sample_indices], dim=-1)`, whose advanced index first copies the selected rows. Only
// the logprob ranks (`_get_ranks`) are skipped when no request asks for logprobs (`largest_num_logprobs == -1`).
// Every other runtime keeps the cost model's default of 8 bytes per logit (fp32 logits written and read once; V1's and
// SGLang's samplers were not re-examined here, and vLLM 0.2-0.5's samplers, some of which also ranked the sampled token
// over the vocabulary on every step, are not re-priced).
#include "llmsim/perf/runtime.hpp"

namespace llmsim::perf::v0_sampler {

/// Bytes moved per logit by each pass of V0's greedy path (reads + writes, bf16 logits from the LM head, fp32 after
/// the cast), each pass counted once over the tensor (a kernel that re-reads its row, as PyTorch's softmax over a
/// 32k-152k vocabulary does for its max and sum, is counted once: a lower bound).
inline constexpr double kCastBytes = 2 + 4;         ///< logits.to(torch.float): bf16 read, fp32 written
inline constexpr double kTemperatureBytes = 4 + 4;  ///< logits.div_(temperatures): fp32 read and written in place
inline constexpr double kSoftmaxBytes = 4 + 4;      ///< probs = torch.softmax(logits, dtype=float)
inline constexpr double kLogSoftmaxBytes = 4 + 4;   ///< logprobs = torch.log_softmax(logits, dtype=float)
inline constexpr double kGatherBytes = 4 + 4;       ///< logprobs[long_sample_indices]: the greedy rows copied
inline constexpr double kArgmaxBytes = 4;           ///< torch.argmax(..., dim=-1): read once
/// Their sum: 42 bytes per logit, against the default 8 (RuntimeTraits::sampler_bytes_per_logit).
inline constexpr double kBytesPerLogit =
    kCastBytes + kTemperatureBytes + kSoftmaxBytes + kLogSoftmaxBytes + kGatherBytes + kArgmaxBytes;

}  // namespace llmsim::perf::v0_sampler
