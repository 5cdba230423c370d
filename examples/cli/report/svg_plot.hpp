#pragma once
// A small inline-SVG chart for `llmsim report`: lines or markers per series, a dashed reference line (an SLO), loads
// past saturation as marks on the top edge (not as latencies), optional point labels and a legend. Linear x, linear
// or log y. Every text is escaped; the output needs no script, font or stylesheet from outside the page.
#include <optional>
#include <string>
#include <vector>

namespace llmsim::cli::report {

struct Series {
  std::string name;
  std::string color;                      ///< CSS colour, e.g. "#1f77b4"
  std::vector<std::pair<double, double>> points;  ///< (x, y); non-finite or (log y) non-positive y are left out
  std::vector<std::string> labels;        ///< optional, one per point: text drawn beside it
  std::vector<double> saturated_x;        ///< x of loads past saturation: an "x" on the top edge
  bool line = true;                       ///< join the points (else markers only)
  bool emphasis = false;                  ///< drawn thicker and larger (the winner)
};

struct ReferenceLine {
  double y = 0;
  std::string label;
  std::string color = "#d62728";
};

struct Chart {
  std::string title, x_label, y_label;
  bool log_y = false;
  int width = 520, height = 340;          ///< of the plotting frame with its axes; the legend adds rows below
  std::vector<Series> series;
  std::vector<ReferenceLine> references;
  std::string saturated_label = "saturated (queue grows without bound)";
  std::string empty_text = "no data to plot";  ///< drawn in the frame when no series has a point
};

/// The chart as an <svg> element to put inside an HTML page (no xmlns: HTML gives inline SVG its namespace), with
/// role="img" and a <title>, sized in CSS pixels.
std::string render_svg(const Chart& chart);

/// Tick values covering [lo, hi]: about `target` round steps (1, 2, 5 × 10^k); for log axes, powers of ten (and
/// 2 and 5 times them when the range spans less than three decades).
std::vector<double> ticks(double lo, double hi, int target, bool log);

/// A palette colour for series `i` (cycling; colour-blind-friendly Tableau 10).
std::string palette(std::size_t i);

}  // namespace llmsim::cli::report
