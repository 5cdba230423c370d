#include "csv_table.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "llmsim/core/error.hpp"

namespace llmsim::validation {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else {
        quoted = !quoted;
      }
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

CsvTable::CsvTable(const std::filesystem::path& file) : file_(file) {
  std::ifstream in(file);
  if (!in) throw ConfigError(file.string(), "cannot be read");
  std::string line;
  if (!std::getline(in, line)) throw ConfigError(file.string(), "is empty (needs a header line)");
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte-order mark (spreadsheet exports)
  header_ = split_csv_line(line);
  for (std::size_t n = 2; std::getline(in, line); ++n) {
    if (line.empty() || line == "\r") continue;
    // A quoted field may hold line breaks (RFC 4180): join lines while a quote is open; the row keeps its first line.
    const std::size_t first = n;
    std::string more;
    while (std::count(line.begin(), line.end(), '"') % 2 == 1 && std::getline(in, more)) {
      line += "\n" + more;
      ++n;
    }
    auto fields = split_csv_line(line);
    if (fields.size() != header_.size())
      throw ConfigError(file.filename().string() + ":" + std::to_string(first),
                        "has " + std::to_string(fields.size()) + " fields, the header has " +
                            std::to_string(header_.size()));
    rows_.push_back(std::move(fields));
    lines_.push_back(first);
  }
}

bool CsvTable::has(const std::string& column) const {
  return std::find(header_.begin(), header_.end(), column) != header_.end();
}

std::size_t CsvTable::col(const std::string& column) const {
  const auto it = std::find(header_.begin(), header_.end(), column);
  if (it == header_.end()) throw ConfigError(file_.filename().string(), "has no column '" + column + "'");
  return static_cast<std::size_t>(it - header_.begin());
}

std::string CsvTable::where(std::size_t row) const {
  return file_.filename().string() + ":" + std::to_string(lines_[row]);
}

double CsvTable::number(std::size_t row, std::size_t c) const {
  const std::string& s = rows_[row][c];
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v))
    throw ConfigError(where(row) + ": " + header_[c], "must be a finite number, got '" + s + "'");
  return v;
}

double CsvTable::number(std::size_t row, const std::string& column) const { return number(row, col(column)); }

std::int64_t CsvTable::integer(std::size_t row, const std::string& column, std::int64_t min_value,
                               std::int64_t empty) const {
  const std::size_t c = col(column);
  const std::string& s = rows_[row][c];
  if (s.empty() && empty >= 0) return empty;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || v < min_value)
    throw ConfigError(where(row) + ": " + column,
                      "must be an integer >= " + std::to_string(min_value) + ", got '" + s + "'");
  return v;
}

}  // namespace llmsim::validation
