#include "llmsim/analysis/sweep_journal.hpp"

#include <cstdint>
#include <cstdio>

#include "llmsim/core/error.hpp"

namespace llmsim::analysis {

RowRecord record_of(const Row& row) { return RowRecord{to_json(row), flatten(row)}; }

std::string point_key(const SweepPoint& point, const RowOptions& options) {
  Json labels = Json::array();
  for (const auto& [path, value] : point.labels) labels.push_back(Json::array({path, value}));
  const auto& c = options.capacity_options;
  const Json doc{{"scenario", spec::to_json(point.scenario)},
                 {"labels", labels},
                 {"capacity", options.capacity},
                 {"capacity_options",
                  {c.num_requests, c.warmup_requests, c.replications, c.rel_tol, c.max_evaluations, c.min_rate,
                   c.max_rate, c.max_concurrency}}};
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char ch : doc.dump()) {
    h ^= ch;
    h *= 0x100000001b3ULL;
  }
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
