// Memory bandwidth: read, write, copy and triad kernels with 16-byte vector accesses over sizes from well
// below L2 to several GB (BabelStream/RRZE style). Bytes are counted explicitly: copy = read + write,
// triad = 2 reads + 1 write. Each point: one JSON line with the median of CUDA-event timings.
#include "common.cuh"

namespace {

__global__ void fill_kernel(uint4* p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    float a = calib::hash_uniform(i, seed);
    p[i] = make_uint4(__float_as_uint(a), __float_as_uint(a * 0.5f), __float_as_uint(a + 1.f), __float_as_uint(-a));
  }
}

// Reduces to a register and writes one value per block, so the compiler cannot drop the loads.
__global__ void read_kernel(const uint4* __restrict__ in, std::size_t n, unsigned* __restrict__ sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    uint4 v = in[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9E3779B9u) sink[blockIdx.x] = acc;  // practically never taken, but not provably
}

__global__ void write_kernel(uint4* __restrict__ out, std::size_t n, unsigned v) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = make_uint4(v, v + 1, v + 2, v + 3);
}

__global__ void copy_kernel(const uint4* __restrict__ in, uint4* __restrict__ out, std::size_t n) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

__global__ void triad_kernel(const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ c,
                             std::size_t n, float s) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const cudaDeviceProp prop = calib::open_device("mem_bw");
  const bool quick = calib::quick_mode(argc, argv);
  cudaStream_t stream;
  CALIB_CHECK(cudaStreamCreate(&stream));

  // Largest array: min(4 GiB, 1/4 of free memory) so three arrays (triad) fit.
  std::size_t free_b = 0, total_b = 0;
  CALIB_CHECK(cudaMemGetInfo(&free_b, &total_b));
  std::size_t max_bytes = std::min<std::size_t>(std::size_t(calib::arg_int(argc, argv, "max-bytes", 4ll << 30)), free_b / 4);
  if (quick) max_bytes = std::min<std::size_t>(max_bytes, 256u << 20);
  const std::size_t min_bytes = 64u << 10;

  uint4 *a = nullptr, *b = nullptr, *c = nullptr;
  unsigned* sink = nullptr;
  CALIB_CHECK(cudaMalloc(&a, max_bytes));
  CALIB_CHECK(cudaMalloc(&b, max_bytes));
  CALIB_CHECK(cudaMalloc(&c, max_bytes));
  const int threads = 256;
  // Enough resident blocks to saturate memory: 8 per SM of 256 threads (occupancy 100% on sm_80..90).
  const int blocks_full = prop.multiProcessorCount * 8;
  CALIB_CHECK(cudaMalloc(&sink, sizeof(unsigned) * blocks_full));
  fill_kernel<<<blocks_full, threads, 0, stream>>>(a, max_bytes / 16, 1);
  fill_kernel<<<blocks_full, threads, 0, stream>>>(b, max_bytes / 16, 2);
  fill_kernel<<<blocks_full, threads, 0, stream>>>(c, max_bytes / 16, 3);
  CALIB_CHECK(cudaGetLastError());
  CALIB_CHECK(cudaStreamSynchronize(stream));

  for (std::size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    const std::size_t n = bytes / 16;
    const int blocks = static_cast<int>(std::min<std::size_t>(blocks_full, (n + threads - 1) / threads));
    struct Kernel {
      const char* name;
      double moved_per_array;  // bytes moved per byte of one array
      double arrays;           // arrays touched (working set)
      std::function<void()> run;
    };
    std::vector<Kernel> kernels = {
        {"read", 1, 1, [&] { read_kernel<<<blocks, threads, 0, stream>>>(a, n, sink); }},
        {"write", 1, 1, [&] { write_kernel<<<blocks, threads, 0, stream>>>(c, n, unsigned(bytes)); }},
        {"copy", 2, 2, [&] { copy_kernel<<<blocks, threads, 0, stream>>>(a, c, n); }},
        {"triad", 3, 3,
         [&] {
           triad_kernel<<<blocks, threads, 0, stream>>>(reinterpret_cast<const float4*>(a),
                                                        reinterpret_cast<const float4*>(b),
                                                        reinterpret_cast<float4*>(c), n, 0.5f);
         }},
    };
    for (auto& k : kernels) {
      // Small sizes are launch-bound and need many samples to converge (nvbench's warning for < 5 us).
      const auto s = calib::time_events(stream, k.run, 3, bytes < (8u << 20) ? 50 : 10, 200, 100);
      CALIB_CHECK(cudaGetLastError());
      const double moved = k.moved_per_array * static_cast<double>(bytes);
      calib::Line l("mem_bw");
      l.str("kernel", k.name)
          .num("array_bytes", static_cast<double>(bytes))
          .num("bytes", moved)
          .num("footprint_bytes", k.arrays * static_cast<double>(bytes))
          .num("blocks", blocks)
          .num("threads", threads);
      calib::add_stats(l, s).num("achieved_gbps", moved / (s.median_us * 1e-6) / 1e9).print();
    }
  }
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFree(sink);
  return 0;
}
