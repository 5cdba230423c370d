#include "llmsim/analysis/sweep_journal.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string_view>
#include <tuple>

#include "llmsim/core/error.hpp"

namespace llmsim::analysis {

RowRecord record_of(const Row& row) { return RowRecord{to_json(row), flatten(row)}; }

namespace {

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = 0xcbf29ce484222325ULL) {
  for (const unsigned char ch : bytes) {
    h ^= ch;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// The content hash of an input file, cached by path, size and modification time (a grid of many points names the
// same trace or profile in each).
std::string file_hash(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  const auto mtime = fs::last_write_time(path, ec).time_since_epoch().count();
  if (ec) return "unreadable";
  static std::mutex m;
  static std::map<std::string, std::tuple<std::uintmax_t, long long, std::string>> cache;
  const std::lock_guard<std::mutex> lock(m);
  auto& slot = cache[path];
  if (std::get<2>(slot).empty() || std::get<0>(slot) != size || std::get<1>(slot) != static_cast<long long>(mtime)) {
    std::ifstream in(path, std::ios::binary);
    std::uint64_t h = 0xcbf29ce484222325ULL;
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) h = fnv1a(std::string_view(buf, static_cast<std::size_t>(in.gcount())), h);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    slot = {size, static_cast<long long>(mtime), hex};
  }
  return std::get<2>(slot);
}

// Every string of the scenario that names a regular file (a trace, a daily profile, an empirical length file, a
// model config.json, a GPU spec file), with its content hash: a row journaled before such a file changed is not
// the row of this input. Found by walking the values, so a new file-valued field needs no list kept in step.
void input_files(const Json& j, Json& out) {
  if (j.is_object() || j.is_array()) {
    for (const auto& v : j) input_files(v, out);
  } else if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    std::error_code ec;
    if (!s.empty() && s.size() < 4096 && s.front() != '{' && std::filesystem::is_regular_file(s, ec))
      out.push_back(Json::array({s, file_hash(s)}));
  }
}

}  // namespace

std::string point_key(const SweepPoint& point, const RowOptions& options) {
  Json labels = Json::array();
  for (const auto& [path, value] : point.labels) labels.push_back(Json::array({path, value}));
  const auto& c = options.capacity_options;
  const Json scenario = spec::to_json(point.scenario);
  Json inputs = Json::array();
  input_files(scenario, inputs);
  const Json doc{{"scenario", scenario},
                 {"inputs", inputs},
                 {"labels", labels},
                 {"capacity", options.capacity},
                 {"capacity_options",
                  {c.num_requests, c.warmup(), c.replications, c.rel_tol, c.max_evaluations, c.min_rate,
                   c.max_rate, c.max_concurrency}}};
  const std::uint64_t h = fnv1a(doc.dump());
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string journal_line(std::size_t point, const std::string& key, const RowRecord& record) {
  Json flat = Json::array();
  for (const auto& [column, value] : record.flat) flat.push_back(Json::array({column, value}));
  return Json{{"point", point}, {"key", key}, {"row", record.row}, {"flat", flat}}.dump() + "\n";
}

std::vector<JournalEntry> parse_journal(std::string_view text, const std::string& source) {
  std::vector<JournalEntry> out;
  std::size_t start = 0, line = 0;
  while (start < text.size()) {
    ++line;
    const std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) break;  // torn last line: the point runs again
    const std::string where = source + ":" + std::to_string(line);
    const std::string_view body = text.substr(start, end - start);
    start = end + 1;
    if (body.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const Json doc = parse_json(body, where);
    const JsonView v(doc, where);
    v.allow_only({"point", "key", "row", "flat"});
    JournalEntry e;
    e.point = static_cast<std::size_t>(v["point"].as_integer_in(0, static_cast<std::int64_t>(kMaxGridPoints)));
    e.key = v.string("key");
    const JsonView row = v["row"];
    row.expect_object();
    e.record.row = row.json();
    for (const auto& pair : v["flat"].elements()) {
      const auto items = pair.elements();
      if (items.size() != 2) pair.fail("expected [column, value]");
      e.record.flat.emplace_back(items[0].as_string(), items[1].json());
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace llmsim::analysis
