#include "report/html.hpp"

#include <cmath>
#include <cstdio>

namespace llmsim::cli::report {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

Cell text_cell(std::string_view text, std::string css_class) { return {escape(text), false, std::move(css_class)}; }

Cell number_cell(std::string text, std::string css_class) { return {escape(text), true, std::move(css_class)}; }

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<Cell>>& rows,
                  const std::vector<std::string>& row_classes) {
  std::string out = "<table>\n<thead><tr>";
  for (const auto& h : header) out += "<th>" + escape(h) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string cls = i < row_classes.size() ? row_classes[i] : "";
    out += cls.empty() ? "<tr>" : "<tr class=\"" + escape(cls) + "\">";
    for (const auto& c : rows[i]) {
      std::string classes = c.numeric ? "num" : "";
      if (!c.css_class.empty()) classes += (classes.empty() ? "" : " ") + c.css_class;
      out += (classes.empty() ? "<td>" : "<td class=\"" + escape(classes) + "\">") + c.html + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string number(double v, int decimals) {
  if (!std::isfinite(v)) return "\u2013";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(v));
  std::string digits(buf);
  const auto dot = digits.find('.');
  std::string whole = digits.substr(0, dot), frac = dot == std::string::npos ? "" : digits.substr(dot);
  std::string grouped;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (i > 0 && (whole.size() - i) % 3 == 0) grouped += ',';
    grouped += whole[i];
  }
  const bool negative = v < 0 && (grouped.find_first_not_of("0,") != std::string::npos ||
                                  frac.find_first_not_of(".0") != std::string::npos);
  return (negative ? "-" : "") + grouped + frac;
}

std::string sig3(double v) {
  if (!std::isfinite(v)) return "\u2013";
  const double a = std::fabs(v);
  if (a == 0) return "0";
  if (a >= 1e7 || a < 1e-3) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2e", v);
    return buf;
  }
  const int decimals = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : static_cast<int>(2 - std::floor(std::log10(a)));
  return number(v, decimals);
}

}  // namespace llmsim::cli::report
