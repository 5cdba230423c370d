#pragma once
// One CSV reader for every CSV input (traces, empirical length columns, sweep results): RFC 4180 fields —
// quoted fields may hold commas, line breaks and doubled quotes ("1,000" is one field) — plus what
// spreadsheets write: a UTF-8 byte-order mark, CRLF, LF or CR-only line ends. Errors name
// "<source>:<line>:<field>" (1-based), so a bad value is found in the file at once.
//
//   CsvReader csv(text, "trace.csv");
//   std::vector<std::string> f;
//   while (csv.next(f)) { ... f[2] ...; csv.where(2) -> "trace.csv:7:3" }
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace llmsim {

class CsvReader {
 public:
  /// `text` must outlive the reader. A leading UTF-8 BOM is skipped.
  CsvReader(std::string_view text, std::string source);

  /// Reads the next record into `fields` (reusing its strings). Blank lines are skipped. Unquoted fields lose
  /// surrounding spaces and tabs; quoted fields keep their content exactly. Returns false at the end.
  /// ConfigError at "<source>:<line>:<field>" for a quote that never closes (naming the line it opened on),
  /// text after a closing quote, or a quote inside an unquoted field.
  bool next(std::vector<std::string>& fields);

  /// Line on which the last record read begins (1-based).
  std::size_t line() const noexcept { return record_line_; }
  /// "<source>:<line>:<field + 1>" for field index `field` (0-based) of the last record.
  std::string where(std::size_t field) const;
  /// "<source>:<line>" of the last record.
  std::string where() const;
  const std::string& source() const noexcept { return source_; }

 private:
  std::string_view text_;
  std::string source_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
  std::size_t record_line_ = 0;
};

}  // namespace llmsim
