// Copy bandwidth and latency: pinned host↔device (copy engine), device↔device within one GPU and, with
// two or more GPUs, peer-to-peer with and without peer access enabled (without it the driver stages through
// the host, which is what GeForce boxes get). Sizes 4 KB … 1 GB; the fitter reads α (latency) and β
// (bandwidth) from T(S) = α + S/β.
#include "common.cuh"

namespace {

void sweep(const char* kind, cudaStream_t stream, std::size_t max_bytes, bool quick,
           const std::function<void(std::size_t)>& copy, int src_dev = -1, int dst_dev = -1) {
  for (std::size_t bytes = 4096; bytes <= max_bytes; bytes *= quick ? 16 : 4) {
    const auto s = calib::time_events(stream, [&] { copy(bytes); }, 3, bytes < (1u << 20) ? 50 : 10, 100, 200);
    CALIB_CHECK(cudaGetLastError());
    calib::Line l("copy");
    l.str("kind", kind).num("bytes", static_cast<double>(bytes));
    if (src_dev >= 0) l.num("src_device", src_dev).num("dst_device", dst_dev);
    calib::add_stats(l, s).num("achieved_gbps", bytes / (s.median_us * 1e-6) / 1e9).print();
  }
}

}  // namespace

int main(int argc, char** argv) {
  calib::open_device("copy");
  const bool quick = calib::quick_mode(argc, argv);
  int dev = 0, count = 0;
  CALIB_CHECK(cudaGetDevice(&dev));
  CALIB_CHECK(cudaGetDeviceCount(&count));
  cudaStream_t stream;
  CALIB_CHECK(cudaStreamCreate(&stream));
  const std::size_t max_bytes = quick ? (64u << 20) : (1u << 30);

  void *host = nullptr, *d0 = nullptr, *d1 = nullptr;
  CALIB_CHECK(cudaMallocHost(&host, max_bytes));
  std::memset(host, 1, max_bytes);
  CALIB_CHECK(cudaMalloc(&d0, max_bytes));
  CALIB_CHECK(cudaMalloc(&d1, max_bytes));
  CALIB_CHECK(cudaMemset(d0, 2, max_bytes));

  sweep("h2d", stream, max_bytes, quick, [&](std::size_t n) { CALIB_CHECK(cudaMemcpyAsync(d0, host, n, cudaMemcpyHostToDevice, stream)); });
  sweep("d2h", stream, max_bytes, quick, [&](std::size_t n) { CALIB_CHECK(cudaMemcpyAsync(host, d0, n, cudaMemcpyDeviceToHost, stream)); });
  sweep("d2d", stream, max_bytes, quick, [&](std::size_t n) { CALIB_CHECK(cudaMemcpyAsync(d1, d0, n, cudaMemcpyDeviceToDevice, stream)); });

  if (count >= 2) {
    const int peer = dev == 0 ? 1 : 0;
    int can = 0;
    CALIB_CHECK(cudaDeviceCanAccessPeer(&can, dev, peer));
    void* p1 = nullptr;
    CALIB_CHECK(cudaSetDevice(peer));
    CALIB_CHECK(cudaMalloc(&p1, max_bytes));
    CALIB_CHECK(cudaSetDevice(dev));
    calib::Line("copy_peer_info").num("src_device", dev).num("dst_device", peer).boolean("can_access_peer", can != 0).print();
    // Without peer access the driver stages through host memory.
    sweep("peer_staged", stream, max_bytes, quick,
          [&](std::size_t n) { CALIB_CHECK(cudaMemcpyPeerAsync(p1, peer, d0, dev, n, stream)); }, dev, peer);
    if (can) {
      CALIB_CHECK(cudaDeviceEnablePeerAccess(peer, 0));
      sweep("peer", stream, max_bytes, quick,
            [&](std::size_t n) { CALIB_CHECK(cudaMemcpyPeerAsync(p1, peer, d0, dev, n, stream)); }, dev, peer);
    }
    CALIB_CHECK(cudaSetDevice(peer));
    cudaFree(p1);
    CALIB_CHECK(cudaSetDevice(dev));
  } else {
    calib::Line("copy").str("kind", "peer").boolean("skipped", true).str("reason", "only one GPU").print();
  }
  cudaFreeHost(host);
  cudaFree(d0);
  cudaFree(d1);
  return 0;
}
