// The daily load curve (workload.daily_profile): read from a CSV, checked, and compiled onto the piecewise
// Poisson schedule the engine already samples (workload_source.cpp's time change), so a day is one more
// arrival process, not a second mechanism.
#include <cmath>
#include <cstdio>

#include "llmsim/core/csv.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/input_file.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/core/number.hpp"
#include "llmsim/spec/workload.hpp"

namespace llmsim::spec {

namespace {

std::vector<std::pair<double, double>> day_points(const DailyProfile& p) {
  if (!p.points.empty()) return p.points;
  std::vector<std::pair<double, double>> pts;
  pts.reserve(p.hourly.size());
  for (std::size_t h = 0; h < p.hourly.size(); ++h) pts.emplace_back(3600.0 * static_cast<double>(h), p.hourly[h]);
  return pts;
}

}  // namespace

PiecewiseArrivals compile_daily_profile(const DailyProfile& profile, int days, double base_rate) {
  PiecewiseArrivals a;
  a.rates.clear();
  const auto pts = day_points(profile);
  a.rates.reserve(pts.size());
  for (const auto& [t, m] : pts) a.rates.emplace_back(t, base_rate * m);
  a.period_s = kSecondsPerDay;  // one day, repeated: memory and work are one day's however many days
  a.periods = std::max(days, 1);
  return a;
}

std::optional<DailyPeak> daily_peak(const DailyProfile& profile) {
  if (profile.empty()) return std::nullopt;
  DailyPeak peak{-1, 0};
  for (const auto& [t, m] : day_points(profile))
    if (m > peak.multiplier) peak = {m, t};
  return peak;
}

Workload sizing_workload(const Workload& w) {
  const auto peak = daily_peak(w.daily_profile);
  if (!peak) return w;
  Workload out = w;
  out.daily_profile = {};
  out.days = 1;
  if (out.num_requests == kDailyProfileRequests) out.num_requests = Workload{}.num_requests;
  auto at_peak = [&](ArrivalSpec& a) {
    if (auto* p = std::get_if<PoissonArrivals>(&a)) p->rate *= peak->multiplier;
  };
  if (out.classes.empty()) at_peak(out.arrival);
  for (auto& c : out.classes) at_peak(c.arrival);
  return out;
}

std::string sizing_window(const Workload& w) {
  const auto peak = daily_peak(w.daily_profile);
  if (!peak) return "";
  const auto minutes = static_cast<int>(peak->start_s / 60);
  char when[16];
  std::snprintf(when, sizeof when, "%02d:%02d", minutes / 60, minutes % 60);
  return std::string("the daily profile's peak window (") + when + ", " + format_value(peak->multiplier) +
         " x the base rate)";
}

DailyProfile read_daily_profile_csv(const std::string& file, const std::string& path) {
  std::string text;
  try {
    text = read_text_file(file, "daily profile", kMaxCsvFileBytes);
  } catch (const ConfigError& e) {
    throw ConfigError(path, e.what());
  }
  CsvReader csv(text, file);
  std::vector<std::string> header, f;
  if (!csv.next(header)) throw ConfigError(path, "'" + file + "' is empty");
  int ti = -1, ri = -1;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (to_lower(header[i]) == "time_s") ti = static_cast<int>(i);
    if (to_lower(header[i]) == "rate") ri = static_cast<int>(i);
  }
  if (ti < 0 || ri < 0)
    throw ConfigError(path, "'" + file + "' needs a header with columns time_s and rate (a multiplier of the base rate)");
  DailyProfile p;
  p.csv = file;
  while (csv.next(f)) {
    double v[2] = {0, 0};
    const int cols[2] = {ti, ri};
    for (int k = 0; k < 2; ++k) {
      const auto c = static_cast<std::size_t>(cols[k]);
      if (f.size() <= c) throw ConfigError(csv.where(), "missing column " + header[c]);
      const auto x = parse_number(f[c]);
      if (!x) throw ConfigError(csv.where(c), "expected a number for " + header[c] + ", got '" + printable(f[c], 40) + "'");
      v[k] = *x;
    }
    if (p.points.size() >= 100'000) throw ConfigError(csv.where(), "a daily profile has at most 100000 rows");
    p.points.emplace_back(v[0], v[1]);
  }
  if (p.points.empty()) throw ConfigError(path, "'" + file + "' has a header but no rows");
  return p;
}

void check_daily_profile(const DailyProfile& p, int days, const std::string& path, Problems& problems) {
  if (p.empty()) return;
  if (!p.hourly.empty() && p.hourly.size() != 24) {
    problems.add(path, "expected 24 hourly multipliers of the base rate, got " + std::to_string(p.hourly.size()));
    return;
  }
  const auto pts = day_points(p);
  const std::string src = p.csv.empty() ? path : p.csv;
  bool any = false;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const auto [t, m] = pts[i];
    const std::string at = p.hourly.empty() ? src + " row " + std::to_string(i + 1) : path + "[" + std::to_string(i) + "]";
    if (i == 0 && t != 0) problems.add(at, "the day must start at time_s 0, got " + format_given(t));
    if (!(t >= 0 && t < kSecondsPerDay)) problems.add(at, "time_s must be in [0, 86400) s, got " + format_given(t));
    if (i > 0 && !(t > pts[i - 1].first))
      problems.add(at, "times must increase, got " + format_given(t) + " after " + format_value(pts[i - 1].first));
    if (!(std::isfinite(m) && m >= 0)) problems.add(at, "multiplier must be a finite number >= 0, got " + format_given(m));
    any = any || m > 0;
  }
  if (!any) problems.add(path, "every multiplier is 0: no request would ever arrive");
  constexpr int kMaxDays = static_cast<int>(kMaxSimulatedSeconds / kSecondsPerDay);
  if (days < 1 || days > kMaxDays)
    problems.add("workload.days", "must be in 1.." + std::to_string(kMaxDays) + ", got " + std::to_string(days));
}

}  // namespace llmsim::spec
