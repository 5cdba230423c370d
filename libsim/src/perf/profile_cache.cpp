// Calibrated profile files read once (issue 29): a capacity search runs ~30 simulations and a sweep thousands, each
// building its cost model from hardware.gpu_profile, and each used to read and parse the file again. The parsed
// document is kept per path while the file's size and modification time stay the same (an edited file is read
// again), so a sweep of 1,000 rows reads it once. Inline profiles (JSON text in the field) are kept by their text,
// the last few: a run fit (calibration/fit) predicts each of its runs at every profile it tries, passing the profile
// inline, and each simulation parsed the same text again for its cost model and for its error band (2-3 % of the
// H200 serving fit's CPU, `perf`, issue 30).
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include "llmsim/perf/hardware_profile.hpp"

namespace llmsim::perf {

namespace {

struct Entry {
  std::filesystem::file_time_type mtime;
  std::uintmax_t size = 0;
  std::shared_ptr<const Json> doc;
};

std::mutex g_mutex;
std::map<std::string, Entry> g_cache;
std::atomic<std::int64_t> g_reads{0};
constexpr std::size_t kMaxEntries = 64;  // a handful of profiles in practice; the bound keeps memory bounded anyway
// Inline texts: a fit's current profile, read by its runs' simulations one after another; a few KB each.
std::map<std::string, std::shared_ptr<const Json>, std::less<>> g_inline;
constexpr std::size_t kMaxInline = 8;

}  // namespace

std::shared_ptr<const Json> profile_document(const std::string& ref) {
  if (is_inline_json(ref)) {
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      if (auto it = g_inline.find(ref); it != g_inline.end()) return it->second;
    }
    auto doc = std::make_shared<const Json>(read_json_ref(ref, "hardware.gpu_profile"));  // outside the lock
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_inline.size() >= kMaxInline) g_inline.clear();
    g_inline.emplace(ref, doc);
    return doc;
  }
  std::error_code ec;
  const auto mtime = std::filesystem::last_write_time(ref, ec);
  const auto size = ec ? 0 : std::filesystem::file_size(ref, ec);
  if (ec) return std::make_shared<const Json>(read_json_ref(ref, "hardware.gpu_profile"));  // its own error message
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (auto it = g_cache.find(ref); it != g_cache.end() && it->second.mtime == mtime && it->second.size == size)
      return it->second.doc;
  }
  auto doc = std::make_shared<const Json>(read_json_ref(ref, "hardware.gpu_profile"));  // outside the lock
  ++g_reads;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_cache.size() >= kMaxEntries) g_cache.clear();
  g_cache[ref] = Entry{mtime, size, doc};
  return doc;
}

std::int64_t profile_file_reads() noexcept { return g_reads.load(); }

}  // namespace llmsim::perf
