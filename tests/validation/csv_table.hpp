#pragma once
// A small quote-aware CSV reader for the measurement sets: every bad cell becomes a ConfigError naming the file,
// the line, the column and the value, so a mistyped row is found at once.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace llmsim::validation {

class CsvTable {
 public:
  /// Reads `file` (header line, then one record per non-empty line). ConfigError when it cannot be read or a
  /// record has a different number of fields than the header.
  explicit CsvTable(const std::filesystem::path& file);

  std::size_t rows() const noexcept { return rows_.size(); }
  bool has(const std::string& column) const;
  /// Index of `column`; ConfigError naming the file and the column when absent.
  std::size_t col(const std::string& column) const;
  const std::string& text(std::size_t row, std::size_t col) const { return rows_[row][col]; }
  const std::string& text(std::size_t row, const std::string& column) const { return rows_[row][col(column)]; }
  /// The cell as a finite number; ConfigError "<file>:<line>: <column>: ..." when it is not one.
  double number(std::size_t row, const std::string& column) const;
  double number(std::size_t row, std::size_t col) const;
  /// The cell as an integer >= min_value; an empty cell gives `empty` (when allowed, else an error).
  std::int64_t integer(std::size_t row, const std::string& column, std::int64_t min_value,
                       std::int64_t empty = -1) const;
  /// "<file name>:<line>" of a record (line 1 is the header).
  std::string where(std::size_t row) const;
  const std::filesystem::path& file() const noexcept { return file_; }

 private:
  std::filesystem::path file_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> lines_;
};

/// Splits one CSV line; "" inside quotes is a literal quote, \r is dropped.
std::vector<std::string> split_csv_line(const std::string& line);

}  // namespace llmsim::validation
