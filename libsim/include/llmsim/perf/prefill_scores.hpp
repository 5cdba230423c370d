#pragma once
// Prefill attention that materialises its score matrix in device memory (docs/cost-model.md, "Materialised
// prefill scores"): llama.cpp without flash attention (llama-bench's default before -fa) computes KQ with a batched
// cuBLAS GEMM into an fp16 buffer, converts it to fp32, runs soft_max_ext over it, converts it back to fp16 and
// multiplies it by V. Each of those buffers crosses DRAM unless the GPU's L2 still holds it when it is read back.
#include <cstdint>

namespace llmsim::perf {

/// DRAM bytes one layer moves for a materialised score matrix of `scores` elements (heads × query tokens × KV
/// cells) on a GPU with `l2_bytes` of L2. Writes: the GEMM's fp16 output, the fp32 copy, softmax's fp32 output and
/// the fp16 copy for the second GEMM (3 × the fp32 size; L2 is write-back, so every dirty line reaches DRAM once).
/// Reads: each of the four buffers is read once by the next kernel; the part the L2 still holds (the last
/// `l2_bytes` written) is served from it.
double materialised_score_bytes(double scores, double l2_bytes);

}  // namespace llmsim::perf
