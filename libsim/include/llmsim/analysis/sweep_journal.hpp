#pragma once
// The journal of a sweep: one JSON line per finished point, written as rows finish, so an interrupted
// `llmsim sweep --out F` keeps them (in F.partial) and `--resume` continues from there. Each line carries the
// point's fingerprint, so a journal never fills rows of a grid (or of options) it was not written for.
//
//   {"point": 3, "key": "9f2c...", "row": {...to_json(row)...}, "flat": [["workload.arrival.rate", 2], ...]}
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmsim/analysis/row.hpp"
#include "llmsim/analysis/sweep.hpp"

namespace llmsim::analysis {

/// A finished row as the outputs need it: its JSON object (to_json) and its flattened columns (flatten).
struct RowRecord {
  Json row;
  std::vector<std::pair<std::string, Json>> flat;
};
RowRecord record_of(const Row& row);

struct JournalEntry {
  std::size_t point = 0;
  std::string key;
  RowRecord record;
};

/// Fingerprint of a point and the options that shape its row (capacity search and its settings): 16 hex digits
/// of FNV-1a over the normalized scenario, the labels and the options. Equal inputs give equal keys everywhere.
std::string point_key(const SweepPoint& point, const RowOptions& options);

/// One journal line (ending in '\n') for a finished point.
std::string journal_line(std::size_t point, const std::string& key, const RowRecord& record);

/// Parses a journal. A last line without its '\n' (the process was killed while writing it) is dropped; any
/// other malformed line is a ConfigError at "<source>:<line>". Later lines for the same point replace earlier ones.
std::vector<JournalEntry> parse_journal(std::string_view text, const std::string& source);

}  // namespace llmsim::analysis
