// GEMM through cuBLASLt as Linear layers run it: Y[M×N] = X[M×K] · W[N×K]ᵀ, "TN" layout (K contiguous
// in both operands), for fp16 and bf16 (FP32 accumulate, the framework default), int8 (INT32 accumulate,
// sm ≥ 75) and fp8 e4m3 (FP32 accumulate, bf16 output, sm ≥ 89). M sweeps 1…16384 over the K×N shapes
// of the catalogue models. Cold timing: L2 is flushed before each sample, because decode streams weights
// that no earlier kernel left in L2. Of the heuristic's top algorithms the fastest is reported, and the
// heuristic's first choice (what frameworks usually get) beside it.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "common.cuh"

#define LT_CHECK(call)                                                                      \
  do {                                                                                      \
    cublasStatus_t st_ = (call);                                                            \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                     \
      std::fprintf(stderr, "%s:%d: %s failed: status %d\n", __FILE__, __LINE__, #call, (int)st_); \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

namespace {

enum class Kind { fp16, bf16, int8, fp8 };

struct DtypeCase {
  Kind kind;
  const char* name;
  cudaDataType_t ab, cd;
  cublasComputeType_t compute;
  cudaDataType_t scale;
  double ab_bytes, cd_bytes;
  int min_cc;  // major*10+minor
};

template <typename T>
__global__ void fill_kernel(T* p, std::size_t n, std::uint64_t seed, float scale) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = T(calib::hash_uniform(i, seed) * scale);
}
template <>
__global__ void fill_kernel<std::int8_t>(std::int8_t* p, std::size_t n, std::uint64_t seed, float scale) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = static_cast<std::int8_t>(calib::hash_uniform(i, seed) * scale);
}

void fill(const DtypeCase& d, void* p, std::size_t n, std::uint64_t seed, cudaStream_t s) {
  const int blocks = 1024, threads = 256;
  switch (d.kind) {
    case Kind::fp16: fill_kernel<<<blocks, threads, 0, s>>>(static_cast<__half*>(p), n, seed, 1.f); break;
    case Kind::bf16: fill_kernel<<<blocks, threads, 0, s>>>(static_cast<__nv_bfloat16*>(p), n, seed, 1.f); break;
    case Kind::int8: fill_kernel<<<blocks, threads, 0, s>>>(static_cast<std::int8_t*>(p), n, seed, 100.f); break;
    case Kind::fp8: fill_kernel<<<blocks, threads, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n, seed, 1.f); break;
  }
  CALIB_CHECK(cudaGetLastError());
}

struct Shape {
  const char* label;  // which catalogue layer it is
  long long n, k;
};

}  // namespace

int main(int argc, char** argv) {
  const cudaDeviceProp prop = calib::open_device("gemm");
  const bool quick = calib::quick_mode(argc, argv);
  const int cc = prop.major * 10 + prop.minor;
  cudaStream_t stream;
  CALIB_CHECK(cudaStreamCreate(&stream));
  cublasLtHandle_t lt;
  LT_CHECK(cublasLtCreate(&lt));
  calib::Line("gemm_library").num("cublaslt_version", static_cast<double>(cublasLtGetVersion())).print();

  const std::vector<DtypeCase> dtypes = {
      {Kind::fp16, "fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2, 2, 70},
      {Kind::bf16, "bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2, 2, 80},
      {Kind::int8, "int8", CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I, 1, 4, 75},
      {Kind::fp8, "fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 1, 2, 89},
  };
  // (N, K) of Llama-3-8B and Llama-3-70B layers at TP 1 (and the 70B MLP at TP 4): QKV, O, gate+up, down.
  std::vector<Shape> shapes = {
      {"llama-3-8b.qkv", 6144, 4096},       {"llama-3-8b.o", 4096, 4096},
      {"llama-3-8b.gate_up", 28672, 4096},  {"llama-3-8b.down", 4096, 14336},
      {"llama-3-70b.qkv", 10240, 8192},     {"llama-3-70b.o", 8192, 8192},
      {"llama-3-70b.gate_up.tp4", 14336, 8192}, {"llama-3-70b.down.tp4", 8192, 7168},
  };
  std::vector<long long> ms = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
  if (quick) {
    shapes.resize(2);
    ms = {1, 16, 256, 4096};
  }
  long long max_n = 0, max_k = 0, max_m = 0;
  for (auto& s : shapes) max_n = std::max(max_n, s.n), max_k = std::max(max_k, s.k);
  for (auto m : ms) max_m = std::max(max_m, m);

  const std::size_t workspace_bytes = 64u << 20;
  void *a = nullptr, *b = nullptr, *c = nullptr, *workspace = nullptr;
  CALIB_CHECK(cudaMalloc(&a, std::size_t(max_n) * max_k * 2));   // weights W (N×K)
  CALIB_CHECK(cudaMalloc(&b, std::size_t(max_m) * max_k * 2));   // activations X (M×K)
  CALIB_CHECK(cudaMalloc(&c, std::size_t(max_m) * max_n * 4));   // output Y (M×N)
  CALIB_CHECK(cudaMalloc(&workspace, workspace_bytes));
  float* scales = nullptr;  // per-tensor fp8 scales (1.0): the scaled path is what FP8 inference runs
  CALIB_CHECK(cudaMalloc(&scales, 4 * sizeof(float)));
  const float ones[4] = {1.f, 1.f, 1.f, 1.f};
  CALIB_CHECK(cudaMemcpy(scales, ones, sizeof ones, cudaMemcpyHostToDevice));
  calib::L2Flush flush(prop);

  for (const auto& d : dtypes) {
    if (cc < d.min_cc) {
      calib::Line("gemm").str("dtype", d.name).boolean("skipped", true).str("reason", "not supported by this SM").print();
      continue;
    }
    fill(d, a, std::size_t(max_n) * max_k, 11, stream);
    fill(d, b, std::size_t(max_m) * max_k, 12, stream);
    for (const auto& sh : shapes) {
      for (long long m : ms) {
        // Column-major view: D(N×M) = op(A)·B with A = W stored K×N (transposed), B = X stored K×M.
        cublasLtMatmulDesc_t op;
        LT_CHECK(cublasLtMatmulDescCreate(&op, d.compute, d.scale));
        cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
        LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
        LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
        if (d.kind == Kind::fp8) {
          LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scales, sizeof scales));
          LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scales, sizeof scales));
        }
        cublasLtMatrixLayout_t la, lb, lc;
        LT_CHECK(cublasLtMatrixLayoutCreate(&la, d.ab, sh.k, sh.n, sh.k));
        LT_CHECK(cublasLtMatrixLayoutCreate(&lb, d.ab, sh.k, m, sh.k));
        LT_CHECK(cublasLtMatrixLayoutCreate(&lc, d.cd, sh.n, m, sh.n));
        cublasLtMatmulPreference_t pref;
        LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
        LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &workspace_bytes, sizeof workspace_bytes));
        cublasLtMatmulHeuristicResult_t heur[4];
        int found = 0;
        cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 4, heur, &found);

        const double flops = 2.0 * m * sh.n * sh.k;
        const double bytes = d.ab_bytes * (double(sh.n) * sh.k + double(m) * sh.k) + d.cd_bytes * double(m) * sh.n;
        if (hs != CUBLAS_STATUS_SUCCESS || found == 0) {
          calib::Line("gemm").str("dtype", d.name).str("shape", sh.label).num("m", m).num("n", sh.n).num("k", sh.k)
              .boolean("skipped", true).str("reason", "cuBLASLt found no algorithm").print();
        } else {
          // int8/int32 use integer alpha/beta; the float ones serve the other types.
          const float alpha_f = 1.f, beta_f = 0.f;
          const std::int32_t alpha_i = 1, beta_i = 0;
          const void* alpha = d.kind == Kind::int8 ? static_cast<const void*>(&alpha_i) : &alpha_f;
          const void* beta = d.kind == Kind::int8 ? static_cast<const void*>(&beta_i) : &beta_f;
          calib::Stats best{}, first{};
          int best_algo = -1;
          const int reps = flops > 1e12 ? 5 : 20;
          for (int i = 0; i < found; ++i) {
            bool ok = true;
            auto run = [&] {
              cublasStatus_t st = cublasLtMatmul(lt, op, alpha, a, la, b, lb, beta, c, lc, c, lc, &heur[i].algo,
                                                 workspace, workspace_bytes, stream);
              ok = ok && st == CUBLAS_STATUS_SUCCESS;
            };
            auto s = calib::time_events(stream, run, 2, reps, reps, 1e9, [&] { flush(stream); });
            if (!ok) continue;
            if (i == 0) first = s;
            if (best_algo < 0 || s.median_us < best.median_us) best = s, best_algo = i;
          }
          if (best_algo < 0) {
            calib::Line("gemm").str("dtype", d.name).str("shape", sh.label).num("m", m).num("n", sh.n).num("k", sh.k)
                .boolean("skipped", true).str("reason", "every cuBLASLt algorithm failed").print();
          } else {
            calib::Line l("gemm");
            l.str("dtype", d.name).str("shape", sh.label).num("m", m).num("n", sh.n).num("k", sh.k)
                .num("flops", flops).num("bytes", bytes).boolean("cold_l2", true)
                .num("algos_tried", found).num("best_algo_index", best_algo)
                .num("default_algo_time_us_median", first.median_us);
            calib::add_stats(l, best)
                .num("achieved_tflops", flops / (best.median_us * 1e-6) / 1e12)
                .num("achieved_gbps", bytes / (best.median_us * 1e-6) / 1e9)
                .print();
          }
        }
        cublasLtMatmulPreferenceDestroy(pref);
        cublasLtMatrixLayoutDestroy(la);
        cublasLtMatrixLayoutDestroy(lb);
        cublasLtMatrixLayoutDestroy(lc);
        cublasLtMatmulDescDestroy(op);
      }
    }
  }
  cublasLtDestroy(lt);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFree(workspace);
  cudaFree(scales);
  return 0;
}
