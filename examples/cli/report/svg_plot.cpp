#include "report/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "report/html.hpp"

namespace llmsim::cli::report {

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string tick_text(double v) {
  const double a = std::fabs(v);
  if (a >= 1e6 || (a > 0 && a < 1e-3)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0e", v);
    return buf;
  }
  if (a >= 100) return number(v, 0);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", std::round(v * 1e4) / 1e4);
  return buf;
}

bool usable(double y, bool log) { return std::isfinite(y) && (!log || y > 0); }

}  // namespace

std::string palette(std::size_t i) {
  static const char* colors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                 "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return colors[i % (sizeof colors / sizeof *colors)];
}

std::vector<double> ticks(double lo, double hi, int target, bool log) {
  std::vector<double> out;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
  if (log) {
    const int a = static_cast<int>(std::floor(std::log10(lo))), b = static_cast<int>(std::ceil(std::log10(hi)));
    const bool dense = b - a < 3;
    for (int e = a; e <= b; ++e)
      for (double m : dense ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
        const double v = m * std::pow(10.0, e);
        if (v >= lo * 0.999 && v <= hi * 1.001) out.push_back(v);
      }
    return out;
  }
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return out;
}

std::string render_svg(const Chart& c) {
  const double left = 70, right = 20, top = 34, bottom = 50;
  const double pw = c.width - left - right, ph = c.height - top - bottom;
  // Data ranges: x from 0 (loads, capacities), y from 0 (linear) or the smallest value (log), references included.
  double xmax = 0, ymin = std::numeric_limits<double>::infinity(), ymax = 0;
  bool any = false, marked = false;  // points drawn / saturation marks drawn
  for (const auto& s : c.series) {
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !usable(y, c.log_y)) continue;
      any = true;
      xmax = std::max(xmax, x);
      ymin = std::min(ymin, y);
      ymax = std::max(ymax, y);
    }
    for (double x : s.saturated_x)
      if (std::isfinite(x)) {
        xmax = std::max(xmax, x);
        marked = true;
      }
  }
  for (const auto& r : c.references)
    if (usable(r.y, c.log_y)) {
      ymin = std::min(ymin, r.y);
      ymax = std::max(ymax, r.y);
    }
  if (!(xmax > 0)) xmax = 1;
  xmax *= 1.05;
  double ylo = 0, yhi = ymax > 0 ? ymax * 1.1 : 1;
  if (c.log_y) {
    if (!std::isfinite(ymin) || !(ymin > 0)) ymin = 1;
    ylo = std::pow(10.0, std::floor(std::log10(ymin)));
    yhi = std::pow(10.0, std::ceil(std::log10(std::max(ymax, ymin * 1.01))));
  }
  auto X = [&](double x) { return left + pw * x / xmax; };
  auto Y = [&](double y) {
    const double f = c.log_y ? (std::log10(y) - std::log10(ylo)) / (std::log10(yhi) - std::log10(ylo)) : (y - ylo) / (yhi - ylo);
    return top + ph * (1 - f);
  };

  // Legend entries below the frame, wrapped into rows.
  struct Entry { std::string text, color; char kind; bool emphasis; };  // kind: l line, m marker, x saturated, r reference
  std::vector<Entry> legend;
  bool saturated = false;
  for (const auto& s : c.series) {
    legend.push_back({s.name, s.color, s.line ? 'l' : 'm', s.emphasis});
    saturated = saturated || !s.saturated_x.empty();
  }
  if (saturated) legend.push_back({c.saturated_label, "#444", 'x', false});
  for (const auto& r : c.references) legend.push_back({r.label, r.color, 'r', false});
  std::vector<std::pair<double, double>> at;  // position of each entry
  double lx = left, ly = c.height + 6;
  for (const auto& e : legend) {
    const double w = 28 + 6.4 * static_cast<double>(e.text.size());
    if (lx + w > c.width - 4 && lx > left) {
      lx = left;
      ly += 18;
    }
    at.emplace_back(lx, ly);
    lx += w + 12;
  }
  const double total_h = legend.empty() ? c.height : ly + 18;

  std::string o;
  o += "<svg role=\"img\" width=\"" + std::to_string(c.width) + "\" height=\"" +
       num(total_h) + "\" viewBox=\"0 0 " + std::to_string(c.width) + " " + num(total_h) +
       "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o += "<title>" + escape(c.title) + "</title>\n";
  o += "<rect x=\"0\" y=\"0\" width=\"" + std::to_string(c.width) + "\" height=\"" + num(total_h) + "\" fill=\"#ffffff\"/>\n";
  o += "<text x=\"" + num(left) + "\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" + escape(c.title) + "</text>\n";
  o += "<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" + num(pw) + "\" height=\"" + num(ph) +
       "\" fill=\"#fafafa\" stroke=\"#999\"/>\n";
  for (double t : ticks(0, xmax, 6, false)) {
    o += "<line x1=\"" + num(X(t)) + "\" x2=\"" + num(X(t)) + "\" y1=\"" + num(top) + "\" y2=\"" + num(top + ph) +
         "\" stroke=\"#e3e3e3\"/>";
    o += "<text x=\"" + num(X(t)) + "\" y=\"" + num(top + ph + 16) + "\" text-anchor=\"middle\">" + escape(tick_text(t)) + "</text>\n";
  }
  for (double t : ticks(ylo, yhi, 5, c.log_y)) {
    o += "<line x1=\"" + num(left) + "\" x2=\"" + num(left + pw) + "\" y1=\"" + num(Y(t)) + "\" y2=\"" + num(Y(t)) +
         "\" stroke=\"#e3e3e3\"/>";
    o += "<text x=\"" + num(left - 6) + "\" y=\"" + num(Y(t) + 4) + "\" text-anchor=\"end\">" + escape(tick_text(t)) + "</text>\n";
  }
  o += "<text x=\"" + num(left + pw / 2) + "\" y=\"" + num(top + ph + 36) + "\" text-anchor=\"middle\">" +
       escape(c.x_label) + "</text>\n";
  o += "<text transform=\"translate(16," + num(top + ph / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
       escape(c.y_label) + (c.log_y ? " (log scale)" : "") + "</text>\n";
  for (const auto& r : c.references) {
    if (!usable(r.y, c.log_y)) continue;
    o += "<line x1=\"" + num(left) + "\" x2=\"" + num(left + pw) + "\" y1=\"" + num(Y(r.y)) + "\" y2=\"" + num(Y(r.y)) +
         "\" stroke=\"" + escape(r.color) + "\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n";
  }
  if (!any && !marked) {
    o += "<text x=\"" + num(left + pw / 2) + "\" y=\"" + num(top + ph / 2) + "\" text-anchor=\"middle\" fill=\"#777\">" +
         escape(c.empty_text) + "</text>\n";
  }
  for (const auto& s : c.series) {
    const std::string color = escape(s.color);
    const double width = s.emphasis ? 3 : 1.8, r = s.emphasis ? 5.5 : 3.5;
    std::string path;
    for (const auto& [x, y] : s.points)
      if (std::isfinite(x) && usable(y, c.log_y)) path += (path.empty() ? "M" : " L") + num(X(x)) + " " + num(Y(y));
    if (s.line && !path.empty())
      o += "<path d=\"" + path + "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"" + num(width) + "\"/>\n";
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const auto [x, y] = s.points[i];
      if (!std::isfinite(x) || !usable(y, c.log_y)) continue;
      o += "<circle cx=\"" + num(X(x)) + "\" cy=\"" + num(Y(y)) + "\" r=\"" + num(r) + "\" fill=\"" + color + "\"" +
           (s.emphasis ? " stroke=\"#111\" stroke-width=\"1.5\"" : "") + "/>";
      if (i < s.labels.size() && !s.labels[i].empty()) {
        const bool right_half = X(x) > left + 0.6 * pw;  // labels of points on the right run leftwards, inside the frame
        o += "<text x=\"" + num(right_half ? X(x) - 7 : X(x) + 7) + "\" y=\"" + num(Y(y) - 6) + "\" font-size=\"11\"" +
             (right_half ? " text-anchor=\"end\"" : "") + ">" + escape(s.labels[i]) + "</text>";
      }
      o += "\n";
    }
    for (double x : s.saturated_x) {
      if (!std::isfinite(x)) continue;
      const double cx = X(x), cy = top + 7;
      o += "<path d=\"M" + num(cx - 5) + " " + num(cy - 5) + " L" + num(cx + 5) + " " + num(cy + 5) + " M" + num(cx - 5) + " " +
           num(cy + 5) + " L" + num(cx + 5) + " " + num(cy - 5) + "\" stroke=\"" + color + "\" stroke-width=\"2.2\"/>\n";
    }
  }
  for (std::size_t i = 0; i < legend.size(); ++i) {
    const auto& e = legend[i];
    const auto [x, y] = at[i];
    const std::string color = escape(e.color);
    if (e.kind == 'l' || e.kind == 'r')
      o += "<line x1=\"" + num(x) + "\" x2=\"" + num(x + 20) + "\" y1=\"" + num(y) + "\" y2=\"" + num(y) + "\" stroke=\"" + color +
           "\" stroke-width=\"" + (e.emphasis ? "3" : "2") + "\"" + (e.kind == 'r' ? " stroke-dasharray=\"6 4\"" : "") + "/>";
    if (e.kind == 'l' || e.kind == 'm')
      o += "<circle cx=\"" + num(x + 10) + "\" cy=\"" + num(y) + "\" r=\"3.5\" fill=\"" + color + "\"/>";
    if (e.kind == 'x')
      o += "<path d=\"M" + num(x + 5) + " " + num(y - 5) + " L" + num(x + 15) + " " + num(y + 5) + " M" + num(x + 5) + " " +
           num(y + 5) + " L" + num(x + 15) + " " + num(y - 5) + "\" stroke=\"" + color + "\" stroke-width=\"2\"/>";
    o += "<text x=\"" + num(x + 26) + "\" y=\"" + num(y + 4) + "\"" + (e.emphasis ? " font-weight=\"bold\"" : "") + ">" +
         escape(e.text) + "</text>\n";
  }
  o += "</svg>\n";
  return o;
}

}  // namespace llmsim::cli::report
