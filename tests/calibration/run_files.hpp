#pragma once
// Test helpers: benchmark result files written the way vLLM writes them, in a fresh temporary folder.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "llmsim/core/json_view.hpp"

namespace llmsim::test {

/// A temporary folder removed at the end of the scope.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag) {
    path = std::filesystem::temp_directory_path() /
           ("llmsim-" + tag + "-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const auto p = path / name;
    std::ofstream(p) << text;
    return p.string();
  }
};

/// What `vllm bench latency --output-json` writes (vllm/benchmarks/latency.py: json.dump(results, f, indent=4)):
/// every iteration's latency, their mean and the percentiles 10/25/50/75/90/99. `avg_latency` is the mean of
/// `iterations` equal latencies.
inline std::string vllm_latency_json(double seconds, int iterations = 30) {
  Json j;
  j["avg_latency"] = seconds;
  j["latencies"] = std::vector<double>(static_cast<std::size_t>(iterations), seconds);
  j["percentiles"] = {{"10", seconds}, {"25", seconds}, {"50", seconds}, {"75", seconds}, {"90", seconds},
                      {"99", seconds}};
  return j.dump(4);
}

}  // namespace llmsim::test
