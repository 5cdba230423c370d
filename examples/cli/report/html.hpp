#pragma once
// The few HTML pieces `llmsim report` writes: escaping (every user string — model ids, option names, reasons,
// file paths — goes through escape()), tables and numbers. No scripts, no external resources.
#include <string>
#include <string_view>
#include <vector>

namespace llmsim::cli::report {

/// Text safe inside HTML or SVG elements and attribute values: & < > " ' as entities.
std::string escape(std::string_view text);

/// One table cell: `html` is already markup (build it with escape()); numbers are right-aligned.
struct Cell {
  std::string html;
  bool numeric = false;
  std::string css_class;  ///< e.g. "bad", "good", "placeholder"
};
Cell text_cell(std::string_view text, std::string css_class = "");
Cell number_cell(std::string text, std::string css_class = "");

/// A <table> with a header row (header texts are escaped) and rows of cells; `row_classes` (optional, one per row)
/// marks rows such as the winner.
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<Cell>>& rows,
                  const std::vector<std::string>& row_classes = {});

/// A number with `decimals` decimals and thousands separators: 12345.6 -> "12,345.6". "–" for NaN.
std::string number(double v, int decimals);

/// Three significant digits, no exponent for 0.001 <= |v| < 1e7: 0.01234 -> "0.0123", 1234 -> "1,234".
std::string sig3(double v);

}  // namespace llmsim::cli::report
