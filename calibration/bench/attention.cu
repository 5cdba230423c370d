// Attention kernels.
// * Decode over a paged KV cache (our own simple kernel): one CTA per (KV split, KV head, sequence), four
//   warps stride over the split's tokens through the block table, each lane owns head_dim/32 dimensions,
//   online softmax per query head of the GQA group; a second kernel merges the splits. Physical pages are
//   a random permutation, as in a long-running server. Checked against the CPU reference
//   (paged_attention_ref.hpp) before anything is timed. Metric: (K+V+Q+O bytes) / time, as FlashInfer.
// * Prefill: the unfused path (QKᵀ and PV as cuBLAS strided-batched GEMMs, a causal softmax kernel between)
//   — a lower bound on what FlashAttention-class kernels reach; device_run.sh adds PyTorch SDPA for that.
#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <cmath>
#include <numeric>
#include <random>

#include "common.cuh"
#include "paged_attention_ref.hpp"

namespace {

constexpr int kHeadDim = 128;
constexpr int kWarps = 4;
constexpr std::uint64_t kSeedQ = 101, kSeedK = 102, kSeedV = 103;

__global__ void fill_half(__half* p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = __float2half(calib::hash_uniform(i, seed));
}

// Partials: [batch][heads][splits] of (m, l) and [batch][heads][splits][kHeadDim] of acc.
template <int GROUP>
__global__ void __launch_bounds__(kWarps * 32)
paged_decode_split(const __half* __restrict__ q, const __half* __restrict__ k_cache, const __half* __restrict__ v_cache,
                   const int* __restrict__ block_table, const int* __restrict__ context_lens, int heads, int kv_heads,
                   int page_size, int max_pages, int num_splits, float* __restrict__ part_ml,
                   float* __restrict__ part_acc) {
  constexpr int kPerLane = kHeadDim / 32;
  const int split = blockIdx.x, kvh = blockIdx.y, seq = blockIdx.z;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int ctx = context_lens[seq];
  const int tps = (ctx + num_splits - 1) / num_splits;
  const int begin = min(ctx, split * tps), end = min(ctx, (split + 1) * tps);
  const float scale = rsqrtf(float(kHeadDim));

  float qr[GROUP][kPerLane], acc[GROUP][kPerLane], m[GROUP], l[GROUP];
  for (int g = 0; g < GROUP; ++g) {
    const std::size_t base = (std::size_t(seq) * heads + kvh * GROUP + g) * kHeadDim + lane * kPerLane;
    for (int i = 0; i < kPerLane; ++i) {
      qr[g][i] = __half2float(q[base + i]) * scale;
      acc[g][i] = 0.f;
    }
    m[g] = -INFINITY;
    l[g] = 0.f;
  }
  const int* table = block_table + std::size_t(seq) * max_pages;
  for (int t = begin + warp; t < end; t += kWarps) {
    const int page = table[t / page_size];
    const std::size_t row = ((std::size_t(page) * page_size + t % page_size) * kv_heads + kvh) * kHeadDim + lane * kPerLane;
    // 8-byte loads: a warp reads one 256-byte K row and one V row, fully coalesced.
    const uint2 kraw = *reinterpret_cast<const uint2*>(k_cache + row);
    const uint2 vraw = *reinterpret_cast<const uint2*>(v_cache + row);
    const float2 k01 = __half22float2(*reinterpret_cast<const __half2*>(&kraw.x));
    const float2 k23 = __half22float2(*reinterpret_cast<const __half2*>(&kraw.y));
    const float2 v01 = __half22float2(*reinterpret_cast<const __half2*>(&vraw.x));
    const float2 v23 = __half22float2(*reinterpret_cast<const __half2*>(&vraw.y));
    const float kv[4] = {k01.x, k01.y, k23.x, k23.y}, vv[4] = {v01.x, v01.y, v23.x, v23.y};
#pragma unroll
    for (int g = 0; g < GROUP; ++g) {
      float s = 0.f;
#pragma unroll
      for (int i = 0; i < kPerLane; ++i) s += qr[g][i] * kv[i];
#pragma unroll
      for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
      const float m_new = fmaxf(m[g], s);
      const float corr = __expf(m[g] - m_new);
      const float w = __expf(s - m_new);
      l[g] = l[g] * corr + w;
#pragma unroll
      for (int i = 0; i < kPerLane; ++i) acc[g][i] = acc[g][i] * corr + w * vv[i];
      m[g] = m_new;
    }
  }
  // Merge the four warps through shared memory, then write this split's partial.
  __shared__ float s_m[kWarps][GROUP], s_l[kWarps][GROUP], s_acc[kWarps][GROUP][kHeadDim];
  for (int g = 0; g < GROUP; ++g) {
    if (lane == 0) s_m[warp][g] = m[g], s_l[warp][g] = l[g];
    for (int i = 0; i < kPerLane; ++i) s_acc[warp][g][lane * kPerLane + i] = acc[g][i];
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < GROUP * kHeadDim; idx += blockDim.x) {
    const int g = idx / kHeadDim, d = idx % kHeadDim;
    float mm = -INFINITY;
    for (int w = 0; w < kWarps; ++w)
      if (s_l[w][g] > 0.f) mm = fmaxf(mm, s_m[w][g]);
    float ll = 0.f, aa = 0.f;
    for (int w = 0; w < kWarps; ++w) {
      if (s_l[w][g] <= 0.f) continue;
      const float f = __expf(s_m[w][g] - mm);
      ll += s_l[w][g] * f;
      aa += s_acc[w][g][d] * f;
    }
    const std::size_t p = (std::size_t(seq) * heads + kvh * GROUP + g) * num_splits + split;
    part_acc[p * kHeadDim + d] = aa;
    if (d == 0) part_ml[2 * p] = mm, part_ml[2 * p + 1] = ll;
  }
}

__global__ void merge_splits(const float* __restrict__ part_ml, const float* __restrict__ part_acc, int heads,
                             int num_splits, float* __restrict__ out) {
  const int h = blockIdx.x, seq = blockIdx.y, d = threadIdx.x;
  const std::size_t p0 = (std::size_t(seq) * heads + h) * num_splits;
  float mm = -INFINITY;
  for (int s = 0; s < num_splits; ++s)
    if (part_ml[2 * (p0 + s) + 1] > 0.f) mm = fmaxf(mm, part_ml[2 * (p0 + s)]);
  float ll = 0.f, aa = 0.f;
  for (int s = 0; s < num_splits; ++s) {
    const float l = part_ml[2 * (p0 + s) + 1];
    if (l <= 0.f) continue;
    const float f = __expf(part_ml[2 * (p0 + s)] - mm);
    ll += l * f;
    aa += part_acc[(p0 + s) * kHeadDim + d] * f;
  }
  out[(std::size_t(seq) * heads + h) * kHeadDim + d] = ll > 0.f ? aa / ll : 0.f;
}

struct DecodeCase {
  int batch, context, heads, kv_heads, page_size;
  bool mixed = false;  // context lengths uniform in [1, context] instead of all equal
};

/// Runs one decode configuration; checks against the CPU reference when `check_seqs` > 0. Returns false
/// when it did not fit in memory.
bool run_decode(const cudaDeviceProp& prop, cudaStream_t stream, const DecodeCase& c, int check_seqs, bool time_it) {
  calib::PagedShape s;
  s.heads = c.heads;
  s.kv_heads = c.kv_heads;
  s.head_dim = kHeadDim;
  s.page_size = c.page_size;
  s.max_pages_per_seq = (c.context + c.page_size - 1) / c.page_size;
  const int group = c.heads / c.kv_heads;

  std::mt19937_64 rng(static_cast<std::uint64_t>(c.batch) * 7919 + c.context);
  std::vector<int> ctx(c.batch, c.context);
  if (c.mixed)
    for (auto& x : ctx) x = 1 + static_cast<int>(rng() % static_cast<std::uint64_t>(c.context));
  const std::size_t pages = std::size_t(c.batch) * s.max_pages_per_seq;
  const std::size_t cache_elems = pages * c.page_size * c.kv_heads * kHeadDim;
  std::size_t free_b = 0, total_b = 0;
  CALIB_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (2 * cache_elems * sizeof(__half) > free_b / 2) return false;

  // Random physical page for every logical page.
  std::vector<int> perm(pages);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  // Enough CTAs to fill the GPU (≈4 per SM), but at least 128 tokens per split.
  const int ctas = c.batch * c.kv_heads;
  int splits = std::max(1, (4 * prop.multiProcessorCount + ctas - 1) / ctas);
  splits = std::min(splits, std::max(1, c.context / 128));

  __half *q, *k, *v;
  int *table, *lens;
  float *ml, *acc, *out;
  const std::size_t q_elems = std::size_t(c.batch) * c.heads * kHeadDim;
  CALIB_CHECK(cudaMalloc(&q, q_elems * sizeof(__half)));
  CALIB_CHECK(cudaMalloc(&k, cache_elems * sizeof(__half)));
  CALIB_CHECK(cudaMalloc(&v, cache_elems * sizeof(__half)));
  CALIB_CHECK(cudaMalloc(&table, pages * sizeof(int)));
  CALIB_CHECK(cudaMalloc(&lens, c.batch * sizeof(int)));
  CALIB_CHECK(cudaMalloc(&ml, 2 * q_elems / kHeadDim * splits * sizeof(float)));
  CALIB_CHECK(cudaMalloc(&acc, q_elems * splits * sizeof(float)));
  CALIB_CHECK(cudaMalloc(&out, q_elems * sizeof(float)));
  fill_half<<<1024, 256, 0, stream>>>(q, q_elems, kSeedQ);
  fill_half<<<4096, 256, 0, stream>>>(k, cache_elems, kSeedK);
  fill_half<<<4096, 256, 0, stream>>>(v, cache_elems, kSeedV);
  CALIB_CHECK(cudaMemcpyAsync(table, perm.data(), pages * sizeof(int), cudaMemcpyHostToDevice, stream));
  CALIB_CHECK(cudaMemcpyAsync(lens, ctx.data(), c.batch * sizeof(int), cudaMemcpyHostToDevice, stream));

  auto run = [&] {
    const dim3 grid(splits, c.kv_heads, c.batch);
    switch (group) {
      case 1: paged_decode_split<1><<<grid, kWarps * 32, 0, stream>>>(q, k, v, table, lens, c.heads, c.kv_heads, c.page_size, s.max_pages_per_seq, splits, ml, acc); break;
      case 2: paged_decode_split<2><<<grid, kWarps * 32, 0, stream>>>(q, k, v, table, lens, c.heads, c.kv_heads, c.page_size, s.max_pages_per_seq, splits, ml, acc); break;
      case 4: paged_decode_split<4><<<grid, kWarps * 32, 0, stream>>>(q, k, v, table, lens, c.heads, c.kv_heads, c.page_size, s.max_pages_per_seq, splits, ml, acc); break;
      case 8: paged_decode_split<8><<<grid, kWarps * 32, 0, stream>>>(q, k, v, table, lens, c.heads, c.kv_heads, c.page_size, s.max_pages_per_seq, splits, ml, acc); break;
      default: std::fprintf(stderr, "attention: GQA group %d not compiled\n", group); std::exit(1);
    }
    merge_splits<<<dim3(c.heads, c.batch), kHeadDim, 0, stream>>>(ml, acc, c.heads, splits, out);
  };
  run();
  CALIB_CHECK(cudaGetLastError());
  CALIB_CHECK(cudaStreamSynchronize(stream));

  if (check_seqs > 0) {
    const int nb = std::min(check_seqs, c.batch);
    std::vector<float> got(q_elems), want(std::size_t(nb) * c.heads * kHeadDim);
    CALIB_CHECK(cudaMemcpy(got.data(), out, q_elems * sizeof(float), cudaMemcpyDeviceToHost));
    // The reference regenerates inputs from the same hash, rounded to half as on the device.
    auto gen = [](std::uint64_t seed) {
      return [seed](std::size_t i) { return __half2float(__float2half(calib::hash_uniform(i, seed))); };
    };
    calib::naive_decode_attention(s, nb, perm.data(), ctx.data(), gen(kSeedQ), gen(kSeedK), gen(kSeedV), want.data());
    double max_err = 0;
    for (std::size_t i = 0; i < want.size(); ++i) max_err = std::max(max_err, double(std::fabs(got[i] - want[i])));
    const bool ok = max_err < 2e-3;
    calib::Line("attn_decode_check")
        .num("batch", c.batch).num("context", c.context).num("heads", c.heads).num("kv_heads", c.kv_heads)
        .num("page_size", c.page_size).num("splits", splits).num("checked_seqs", nb)
        .num("max_abs_err", max_err).boolean("ok", ok).print();
    if (!ok) {
      std::fprintf(stderr, "attention: paged decode kernel disagrees with the CPU reference (max abs err %g)\n", max_err);
      std::exit(1);
    }
  }
  if (time_it) {
    calib::L2Flush flush(prop);
    const auto st = calib::time_events(stream, run, 3, 10, 50, 100, [&] { flush(stream); });
    CALIB_CHECK(cudaGetLastError());
    double tokens = 0;
    for (int x : ctx) tokens += x;
    const double kv_bytes = tokens * c.kv_heads * kHeadDim * 2.0 * sizeof(__half);
    const double bytes = kv_bytes + q_elems * (sizeof(__half) + sizeof(float));
    calib::Line l("attn_decode");
    l.str("impl", "llmsim_paged_split").str("kv_dtype", "fp16")
        .num("batch", c.batch).num("context", c.context).num("mean_context", tokens / c.batch)
        .boolean("mixed_lengths", c.mixed).num("heads", c.heads).num("kv_heads", c.kv_heads)
        .num("head_dim", kHeadDim).num("page_size", c.page_size).num("splits", splits)
        .num("bytes", bytes).boolean("cold_l2", true);
    calib::add_stats(l, st).num("achieved_gbps", bytes / (st.median_us * 1e-6) / 1e9).print();
  }
  cudaFree(q); cudaFree(k); cudaFree(v); cudaFree(table); cudaFree(lens); cudaFree(ml); cudaFree(acc); cudaFree(out);
  return true;
}

__global__ void causal_softmax(__half* p, int seq, float scale) {
  // One block per (query row, head); p rows are [head][q][k] with k contiguous.
  const int qi = blockIdx.x, h = blockIdx.y;
  __half* row = p + (std::size_t(h) * seq + qi) * seq;
  __shared__ float red[32];
  float mx = -INFINITY;
  for (int kk = threadIdx.x; kk <= qi; kk += blockDim.x) mx = fmaxf(mx, __half2float(row[kk]) * scale);
  for (int off = 16; off > 0; off /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = mx;
  __syncthreads();
  mx = -INFINITY;
  for (int w = 0; w < int(blockDim.x / 32); ++w) mx = fmaxf(mx, red[w]);
  __syncthreads();
  float sum = 0.f;
  for (int kk = threadIdx.x; kk <= qi; kk += blockDim.x) sum += __expf(__half2float(row[kk]) * scale - mx);
  for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = sum;
  __syncthreads();
  sum = 0.f;
  for (int w = 0; w < int(blockDim.x / 32); ++w) sum += red[w];
  for (int kk = threadIdx.x; kk < seq; kk += blockDim.x)
    row[kk] = kk <= qi ? __float2half(__expf(__half2float(row[kk]) * scale - mx) / sum) : __float2half(0.f);
}

void run_prefill(const cudaDeviceProp& prop, cudaStream_t stream, cublasHandle_t blas, int seq, int heads) {
  const int d = kHeadDim;
  const std::size_t qkv_elems = std::size_t(seq) * heads * d;
  const std::size_t p_elems = std::size_t(heads) * seq * seq;
  std::size_t free_b = 0, total_b = 0;
  CALIB_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if ((4 * qkv_elems + p_elems) * sizeof(__half) > free_b / 2) {
    calib::Line("attn_prefill").num("seq", seq).boolean("skipped", true).str("reason", "does not fit in memory").print();
    return;
  }
  __half *q, *k, *v, *o, *p;
  CALIB_CHECK(cudaMalloc(&q, qkv_elems * sizeof(__half)));
  CALIB_CHECK(cudaMalloc(&k, qkv_elems * sizeof(__half)));
  CALIB_CHECK(cudaMalloc(&v, qkv_elems * sizeof(__half)));
  CALIB_CHECK(cudaMalloc(&o, qkv_elems * sizeof(__half)));
  CALIB_CHECK(cudaMalloc(&p, p_elems * sizeof(__half)));
  fill_half<<<1024, 256, 0, stream>>>(q, qkv_elems, 1);
  fill_half<<<1024, 256, 0, stream>>>(k, qkv_elems, 2);
  fill_half<<<1024, 256, 0, stream>>>(v, qkv_elems, 3);
  const float one = 1.f, zero = 0.f;
  const long long ld = static_cast<long long>(heads) * d;
  auto run = [&] {
    // Scores (col-major seq_k × seq_q per head) = Kᵀ·Q; i.e. row-major [q][k].
    cublasGemmStridedBatchedEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, seq, seq, d, &one, k, CUDA_R_16F, ld, d, q, CUDA_R_16F,
                               ld, d, &zero, p, CUDA_R_16F, seq, static_cast<long long>(seq) * seq, heads,
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    causal_softmax<<<dim3(seq, heads), 256, 0, stream>>>(p, seq, 1.f / std::sqrt(float(d)));
    // O (col-major d × seq_q per head, strided in the token-major output) = V·P.
    cublasGemmStridedBatchedEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, d, seq, seq, &one, v, CUDA_R_16F, ld, d, p, CUDA_R_16F,
                               seq, static_cast<long long>(seq) * seq, &zero, o, CUDA_R_16F, ld, d, heads,
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  const auto st = calib::time_events(stream, run, 2, 5, 20, 200);
  CALIB_CHECK(cudaGetLastError());
  // Useful causal work: 4·d flops per (query, key ≤ query) pair per head, as the cost model counts it.
  const double pairs = 0.5 * double(seq) * (seq + 1);
  const double flops = 4.0 * d * heads * pairs;
  calib::Line l("attn_prefill");
  l.str("impl", "unfused_cublas").str("dtype", "fp16").num("batch", 1).num("seq", seq).num("heads", heads)
      .num("head_dim", d).boolean("causal", true).num("flops", flops);
  calib::add_stats(l, st).num("achieved_tflops", flops / (st.median_us * 1e-6) / 1e12).print();
  (void)prop;
  cudaFree(q); cudaFree(k); cudaFree(v); cudaFree(o); cudaFree(p);
}

}  // namespace

int main(int argc, char** argv) {
  const cudaDeviceProp prop = calib::open_device("attention");
  const bool quick = calib::quick_mode(argc, argv);
  cudaStream_t stream;
  CALIB_CHECK(cudaStreamCreate(&stream));

  // Correctness first: odd lengths, a page boundary, several splits, every GQA group size compiled.
  for (DecodeCase c : {DecodeCase{3, 1, 8, 8, 16}, DecodeCase{3, 17, 32, 8, 16}, DecodeCase{2, 300, 32, 4, 16},
                       DecodeCase{4, 1000, 16, 8, 16, true}, DecodeCase{2, 513, 64, 8, 1}, DecodeCase{2, 700, 32, 8, 32}})
    run_decode(prop, stream, c, c.batch, false);

  std::vector<int> batches = {1, 4, 16, 64, 256}, contexts = {128, 512, 2048, 8192, 32768};
  if (quick) batches = {1, 16}, contexts = {512, 4096};
  for (int b : batches)
    for (int ctx : contexts) {
      // Llama-3-8B heads (32 query, 8 KV); the first sequence of moderate configurations is re-checked.
      DecodeCase c{b, ctx, 32, 8, 16};
      if (!run_decode(prop, stream, c, ctx <= 2048 ? 1 : 0, true))
        calib::Line("attn_decode").num("batch", b).num("context", ctx).boolean("skipped", true)
            .str("reason", "does not fit in memory").print();
    }
  run_decode(prop, stream, DecodeCase{64, 4096, 32, 8, 16, true}, 1, true);

  cublasHandle_t blas;
  if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "attention: cublasCreate failed\n");
    return 1;
  }
  cublasSetStream(blas, stream);
  std::vector<int> seqs = {512, 1024, 2048, 4096, 8192};
  if (quick) seqs = {512, 2048};
  for (int sq : seqs) run_prefill(prop, stream, blas, sq, 32);
  cublasDestroy(blas);
  return 0;
}
