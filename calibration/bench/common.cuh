#pragma once
// Shared plumbing of the calibration programs: error checks, device metadata, CUDA-event timing with
// warm-up and medians, random fills, and one-JSON-object-per-line output (the raw format in
// docs/calibration.md). Each program prints a "device" line first, then one line per measured point.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace calib {

/// Exit code when no usable GPU is present: run_all.sh turns it into a clear message.
constexpr int kNoDevice = 3;

#define CALIB_CHECK(call)                                                                          \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                    \
                   cudaGetErrorString(err_));                                                      \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

/// Escapes a string for JSON (device names are plain ASCII, but be safe).
inline std::string json_str(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// Builds one JSON object line field by field: Line("mem_bw").num("bytes", 1e6).print().
class Line {
 public:
  explicit Line(const char* test) { body_ = "{\"test\":" + json_str(test); }
  Line& num(const char* key, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    body_ += std::string(",\"") + key + "\":" + buf;
    return *this;
  }
  Line& str(const char* key, const std::string& v) {
    body_ += std::string(",\"") + key + "\":" + json_str(v);
    return *this;
  }
  Line& boolean(const char* key, bool v) {
    body_ += std::string(",\"") + key + "\":" + (v ? "true" : "false");
    return *this;
  }
  void print() const {
    std::printf("%s}\n", body_.c_str());
    std::fflush(stdout);
  }

 private:
  std::string body_;
};

/// Summary of repeated timings (microseconds).
struct Stats {
  double median_us = 0, p10_us = 0, p90_us = 0, min_us = 0;
  int n = 0;
};

inline Stats summarize(std::vector<double> us) {
  Stats s;
  if (us.empty()) return s;
  std::sort(us.begin(), us.end());
  auto q = [&](double f) { return us[static_cast<std::size_t>(f * (us.size() - 1) + 0.5)]; };
  s.median_us = q(0.5);
  s.p10_us = q(0.1);
  s.p90_us = q(0.9);
  s.min_us = us.front();
  s.n = static_cast<int>(us.size());
  return s;
}

inline Line& add_stats(Line& l, const Stats& s) {
  return l.num("time_us_median", s.median_us)
      .num("time_us_p10", s.p10_us)
      .num("time_us_p90", s.p90_us)
      .num("time_us_min", s.min_us)
      .num("n_samples", s.n);
}

/// Times `work` with CUDA events on `stream`: `warmup` untimed runs, then samples until `min_reps` are
/// taken and either `max_reps` are reached or `budget_ms` of GPU time is spent. `before` runs untimed
/// before every sample (e.g. an L2 flush), outside the events.
inline Stats time_events(cudaStream_t stream, const std::function<void()>& work, int warmup = 3,
                         int min_reps = 10, int max_reps = 100, double budget_ms = 200,
                         const std::function<void()>& before = {}) {
  cudaEvent_t start, stop;
  CALIB_CHECK(cudaEventCreate(&start));
  CALIB_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < warmup; ++i) {
    if (before) before();
    work();
  }
  CALIB_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> us;
  double spent_ms = 0;
  while (static_cast<int>(us.size()) < max_reps && (static_cast<int>(us.size()) < min_reps || spent_ms < budget_ms)) {
    if (before) before();
    CALIB_CHECK(cudaEventRecord(start, stream));
    work();
    CALIB_CHECK(cudaEventRecord(stop, stream));
    CALIB_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CALIB_CHECK(cudaEventElapsedTime(&ms, start, stop));
    us.push_back(ms * 1e3);
    spent_ms += ms;
  }
  CALIB_CHECK(cudaEventDestroy(start));
  CALIB_CHECK(cudaEventDestroy(stop));
  return summarize(us);
}

/// Selects device 0 (or $CALIB_DEVICE) and prints the "device" metadata line; exits kNoDevice without one.
inline cudaDeviceProp open_device(const char* program) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "%s: no CUDA device available; calibration needs a GPU\n", program);
    std::exit(kNoDevice);
  }
  int dev = 0;
  if (const char* d = std::getenv("CALIB_DEVICE")) dev = std::atoi(d);
  CALIB_CHECK(cudaSetDevice(dev));
  cudaDeviceProp p{};
  CALIB_CHECK(cudaGetDeviceProperties(&p, dev));
  int driver = 0, runtime = 0, mem_clock_khz = 0, bus_bits = 0, sm_clock_khz = 0;
  CALIB_CHECK(cudaDriverGetVersion(&driver));
  CALIB_CHECK(cudaRuntimeGetVersion(&runtime));
  // CUDA 13 removed clock fields from cudaDeviceProp; the attributes remain.
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, dev);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
  cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, dev);
  char uuid[64];
  std::snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                p.uuid.bytes[0] & 0xff, p.uuid.bytes[1] & 0xff, p.uuid.bytes[2] & 0xff, p.uuid.bytes[3] & 0xff,
                p.uuid.bytes[4] & 0xff, p.uuid.bytes[5] & 0xff, p.uuid.bytes[6] & 0xff, p.uuid.bytes[7] & 0xff,
                p.uuid.bytes[8] & 0xff, p.uuid.bytes[9] & 0xff, p.uuid.bytes[10] & 0xff, p.uuid.bytes[11] & 0xff,
                p.uuid.bytes[12] & 0xff, p.uuid.bytes[13] & 0xff, p.uuid.bytes[14] & 0xff, p.uuid.bytes[15] & 0xff);
  Line("device")
      .str("program", program)
      .str("name", p.name)
      .str("uuid", uuid)
      .num("device_index", dev)
      .num("device_count", count)
      .str("compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor))
      .num("sm_count", p.multiProcessorCount)
      .num("l2_bytes", p.l2CacheSize)
      .num("memory_bytes", static_cast<double>(p.totalGlobalMem))
      .num("memory_clock_khz", mem_clock_khz)
      .num("memory_bus_bits", bus_bits)
      // DDR: two transfers per clock (HBM and GDDR6X report the clock this formula expects).
      .num("theoretical_bandwidth", 2.0 * mem_clock_khz * 1e3 * bus_bits / 8.0)
      .num("sm_clock_khz", sm_clock_khz)
      .boolean("ecc", p.ECCEnabled != 0)
      .num("cuda_driver_version", driver)
      .num("cuda_runtime_version", runtime)
      .print();
  return p;
}

/// Deterministic pseudo-random uniform in [-1, 1) from an index (no curand dependency).
__host__ __device__ inline float hash_uniform(std::uint64_t i, std::uint64_t seed) {
  std::uint64_t x = i * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull + 1;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return static_cast<float>((x >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
}

/// Flushes L2 between samples by writing a buffer larger than it ("cold" timing, as nvbench does).
class L2Flush {
 public:
  explicit L2Flush(const cudaDeviceProp& p) : bytes_(std::max<std::size_t>(4 * static_cast<std::size_t>(p.l2CacheSize), 64u << 20)) {
    CALIB_CHECK(cudaMalloc(&buf_, bytes_));
  }
  ~L2Flush() { cudaFree(buf_); }
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;
  void operator()(cudaStream_t s) const { CALIB_CHECK(cudaMemsetAsync(buf_, flip_ ^= 1, bytes_, s)); }

 private:
  void* buf_ = nullptr;
  std::size_t bytes_;
  mutable int flip_ = 0;
};

/// Reads an integer option "--name=value" from argv, or `fallback`.
inline long long arg_int(int argc, char** argv, const char* name, long long fallback) {
  std::string prefix = std::string("--") + name + "=";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) return std::atoll(argv[i] + prefix.size());
  return fallback;
}

/// True when "--quick" was given: fewer points, for smoke runs.
inline bool quick_mode(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--quick") == 0) return true;
  return false;
}

}  // namespace calib
