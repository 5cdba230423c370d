// Overload of a time-varying load, judged on the per-hour fleet table (run_monitor.hpp, check_windows).
#include "run_monitor.hpp"

#include <cstdio>

namespace llmsim::engine::detail {

namespace {

// "day 2 14:00" (the day only when the run is longer than one); a window's end at midnight is "24:00" of its day.
std::string clock_at(double t_s, bool days, bool end = false) {
  const auto minutes = static_cast<long long>(t_s / 60 + 0.5);
  long long day = minutes / (24 * 60), in_day = minutes % (24 * 60);
  if (end && in_day == 0 && day > 0) {
    --day;
    in_day = 24 * 60;
  }
  char buf[48];
  if (days) std::snprintf(buf, sizeof buf, "day %lld %02lld:%02lld", day + 1, in_day / 60, in_day % 60);
  else std::snprintf(buf, sizeof buf, "%02lld:%02lld", in_day / 60, in_day % 60);
  return buf;
}

std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

}  // namespace

void RunMonitor::check_windows(const std::vector<metrics::FleetHour>& hours) {
  if (unstable_ || hours.empty()) return;
  // Prefix sums: entered (arrivals that were not rejected) and completed up to each bucket.
  const std::size_t n = hours.size();
  std::vector<std::int64_t> entered(n + 1, 0), completed(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    entered[i + 1] = entered[i] + hours[i].arrivals - hours[i].rejected;
    completed[i + 1] = completed[i] + hours[i].completed;
  }
  std::int64_t worst = 0;
  std::size_t wa = 0, wb = 0;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a; b < n; ++b) {
      const std::int64_t in = entered[b + 1] - entered[a];
      const std::int64_t behind = in - (completed[b + 1] - completed[a]);
      const double e = static_cast<double>(in), d = static_cast<double>(behind);
      if (in < 100 || !(d > 0.05 * e && d > 3 * std::sqrt(e) + 8) || behind <= worst) continue;
      worst = behind;
      wa = a;
      wb = b;
    }
  if (worst == 0) return;
  const std::int64_t in = entered[wb + 1] - entered[wa], done = completed[wb + 1] - completed[wa];
  const bool days = hours.back().end_s > 86400.0 * 1.0001;
  flag("the fleet fell behind the offered load between " + clock_at(hours[wa].start_s, days) + " and " +
       clock_at(hours[wb].end_s, days, true) + ": " + std::to_string(in) + " requests arrived then and " +
       std::to_string(done) + " completed (" + pct(100.0 * static_cast<double>(in - done) / static_cast<double>(in)) +
       " % fewer: the queue grew, or requests failed or timed out; arrivals faster than service)");
  windows_flagged_ = true;
}

}  // namespace llmsim::engine::detail
