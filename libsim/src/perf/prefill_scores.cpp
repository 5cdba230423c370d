// Materialised prefill scores (llama.cpp without flash attention); sources in docs/cost-model.md.
#include "llmsim/perf/prefill_scores.hpp"

#include <algorithm>

namespace llmsim::perf {

double materialised_score_bytes(double scores, double l2_bytes) {
  if (!(scores > 0)) return 0;
  const double f32 = 4.0 * scores, f16 = 2.0 * scores;
  const double l2 = std::max(0.0, l2_bytes);
  auto read_back = [&](double buffer) { return std::max(0.0, buffer - l2); };
  // ggml_cuda_mul_mat_batched_cublas (GGML_PREC_DEFAULT): KQ -> fp16 buffer, to_fp32 -> kq (fp32);
  // soft_max_ext: kq -> kq (fp32); ggml_cuda_mul_mat_batched_cublas for KQV: kq -> fp16 copy, GEMM reads it.
  const double writes = f16 + f32 + f32 + f16;
  const double reads = read_back(f16) + read_back(f32) + read_back(f32) + read_back(f16);
  return writes + reads;
}

}  // namespace llmsim::perf
