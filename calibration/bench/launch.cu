// Kernel-launch overhead: (i) host enqueue cost of an empty kernel, (ii) GPU time per kernel for N
// back-to-back tiny kernels on one stream (events around the batch; N varies so the fitter separates the
// per-kernel slope from the fixed cost), (iii) launch + synchronize round trip, (iv) the same N kernels
// replayed from a CUDA graph, (v) an 8-byte host-to-device copy.
#include <chrono>

#include "common.cuh"

namespace {

__global__ void tiny_kernel(int* p) {
  if (threadIdx.x == 0 && p[0] == 0x7fffffff) p[1] = 1;  // reads memory, does nothing observable
}

double host_us(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  calib::open_device("launch");
  const bool quick = calib::quick_mode(argc, argv);
  cudaStream_t stream;
  CALIB_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int* buf = nullptr;
  CALIB_CHECK(cudaMalloc(&buf, 64));
  CALIB_CHECK(cudaMemset(buf, 0, 64));
  const std::vector<int> counts = quick ? std::vector<int>{100, 1000} : std::vector<int>{100, 1000, 4000, 10000};

  for (int n : counts) {
    // (ii) eager: one event pair around n launches.
    auto eager = [&] {
      for (int i = 0; i < n; ++i) tiny_kernel<<<1, 32, 0, stream>>>(buf);
    };
    const auto se = calib::time_events(stream, eager, 2, 5, 11, 1e9);
    CALIB_CHECK(cudaGetLastError());
    calib::Line l("launch");
    l.str("mode", "stream").num("kernels", n);
    calib::add_stats(l, se).num("per_kernel_us", se.median_us / n).print();

    // (iv) graph: capture the same n launches once, then time replays.
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CALIB_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    eager();
    CALIB_CHECK(cudaStreamEndCapture(stream, &graph));
    CALIB_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    const auto sg = calib::time_events(stream, [&] { CALIB_CHECK(cudaGraphLaunch(exec, stream)); }, 2, 5, 11, 1e9);
    calib::Line g("launch");
    g.str("mode", "graph").num("kernels", n);
    calib::add_stats(g, sg).num("per_kernel_us", sg.median_us / n).print();
    CALIB_CHECK(cudaGraphExecDestroy(exec));
    CALIB_CHECK(cudaGraphDestroy(graph));

    // (i) host enqueue cost: wall time of issuing n launches without waiting.
    std::vector<double> enq;
    for (int r = 0; r < 5; ++r) {
      enq.push_back(host_us(eager));
      CALIB_CHECK(cudaStreamSynchronize(stream));
    }
    calib::Line h("launch");
    h.str("mode", "host_enqueue").num("kernels", n);
    const auto sh = calib::summarize(enq);
    calib::add_stats(h, sh).num("per_kernel_us", sh.median_us / n).print();
  }

  // (iii) round trip and (v) small copy latency: host-timed, median of many.
  std::vector<double> rt, cp;
  int host_val = 0;
  for (int r = 0; r < (quick ? 100 : 1000); ++r) {
    rt.push_back(host_us([&] {
      tiny_kernel<<<1, 32, 0, stream>>>(buf);
      CALIB_CHECK(cudaStreamSynchronize(stream));
    }));
    cp.push_back(host_us([&] {
      CALIB_CHECK(cudaMemcpyAsync(buf + 4, &host_val, sizeof host_val, cudaMemcpyHostToDevice, stream));
      CALIB_CHECK(cudaStreamSynchronize(stream));
    }));
  }
  calib::Line r("launch");
  r.str("mode", "round_trip").num("kernels", 1);
  calib::add_stats(r, calib::summarize(rt)).print();
  calib::Line c("launch");
  c.str("mode", "memcpy_8b_h2d").num("kernels", 1);
  calib::add_stats(c, calib::summarize(cp)).print();
  cudaFree(buf);
  return 0;
}
