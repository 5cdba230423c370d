// DeepSeek-V3.2's lightning indexer (DSA) as vLLM runs it (docs/cost-model.md, "Sparse attention (DeepSeek-V3.2)"):
// its q·k logits over every cached token on DeepGEMM's FP8 MQA-logits kernels — `fp8_mqa_logits` for a prefill chunk,
// `fp8_paged_mqa_logits` for decode, over the FP8 indexer cache (128 FP8 dims + a 4-byte scale per token) — each
// writing an FP32 logit per scored (query, key) pair that vLLM's `top_k_per_row_prefill` / `_decode` then read to pick
// the index_topk keys. Elsewhere (SGLang, whose NSA backend is not read here) the logits keep the fp16 attention price.
#pragma once

#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/gpu_spec.hpp"
#include "llmsim/spec/model_spec.hpp"

namespace llmsim::perf {

/// Whether the indexer's logits run on DeepGEMM's FP8 kernels: a DSA model (index_head_dim > 0) under a vLLM V1
/// runtime on Hopper or Blackwell, where vLLM's sparse_attn_indexer calls deep_gemm.fp8_mqa_logits and
/// fp8_paged_mqa_logits (DeepGEMM has sm90 and sm100 kernels only; the model runs there on FLASHMLA_SPARSE).
bool vllm_deepgemm_indexer(const spec::ModelSpec& m, const spec::GpuSpec& gpu, spec::Runtime runtime);

/// The logits kernel's rate as a fraction of the card's dense FP8 tensor peak: DeepGEMM's own benchmark
/// (tests/test_attention.py at v2.1.1.post3, `test_mqa_logits`) on a Hopper card reports 1,126 TFLOPS for S = 2048
/// queries over SKV = 16,384 causal keys, 64 heads × 128 (1,004 at 4,096 keys, 1,144 at 32,768), of 1,979 dense FP8
/// (provenance: dsa_indexer.mqa_logits_efficiency). Blackwell has no public figure: the same share (assumed).
inline constexpr double kMqaLogitsEfficiency = 1126.0 / 1979.0;

/// Bytes per scored (query, key) pair beyond the keys: the FP32 logit the kernel writes and top_k_per_row reads once
/// (provenance: dsa_indexer.logit_bytes_per_pair).
inline constexpr double kIndexerLogitBytesPerPair = 4.0 + 4.0;

/// FLOP/s the indexer's logits run at on `gpu` under vLLM's DeepGEMM path: dense FP8 peak × kMqaLogitsEfficiency.
double deepgemm_mqa_logits_rate(const spec::GpuSpec& gpu);

}  // namespace llmsim::perf
