#include "llmsim/engine/workload_source.hpp"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>
#include <optional>

#include <boost/random/exponential_distribution.hpp>
#include <boost/random/gamma_distribution.hpp>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include "llmsim/core/csv.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/number.hpp"
#include "llmsim/core/overloaded.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/core/input_file.hpp"
#include "trace_parse.hpp"

namespace llmsim::engine {

namespace {

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

/// "YYYY-MM-DD HH:MM:SS[.fff]" (or with 'T') as seconds since the epoch.
bool parse_datetime(const std::string& s, double& out) {
  int y, mo, d, h, mi;
  double sec;
  char sep;
  int used = 0;  // the whole field must be the date: "2024-01-01 00:00:00junk" is not a time
  if (std::sscanf(s.c_str(), "%d-%d-%d%c%d:%d:%lf%n", &y, &mo, &d, &sep, &h, &mi, &sec, &used) != 7 ||
      static_cast<std::size_t>(used) != s.size())
    return false;
  if (y < 1 || y > 9999 || (sep != ' ' && sep != 'T') || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 ||
      mi > 59 || sec < 0 || sec >= 61)
    return false;
  out = static_cast<double>(days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d))) * 86400.0 +
        h * 3600.0 + mi * 60.0 + sec;
  return true;
}

int column_index(const std::vector<std::string>& header, std::string_view name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (to_lower(header[i]) == to_lower(name)) return static_cast<int>(i);
  return -1;
}

void sort_and_shift(std::vector<TraceRow>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const TraceRow& a, const TraceRow& b) { return a.arrival_s < b.arrival_s; });
  const double t0 = rows.empty() ? 0.0 : rows.front().arrival_s;
  for (auto& r : rows) r.arrival_s -= t0;
}

std::int64_t token_count(const CsvReader& csv, const std::vector<std::string>& f, int col, const std::string& name,
                         std::int64_t lo) {
  return detail::parse_token_count(f[static_cast<std::size_t>(col)],
                                   csv.where(static_cast<std::size_t>(col)) + ": column " + printable(name, 60), lo);
}

struct Layout {
  const char* format;
  const char* time;
  const char* input;
  const char* output;
};
constexpr Layout kLayouts[] = {{"plain", "arrival_time_s", "input_tokens", "output_tokens"},
                               {"azure", "TIMESTAMP", "ContextTokens", "GeneratedTokens"},
                               {"splitwise", "arrived_at", "num_prefill_tokens", "num_decode_tokens"},
                               {"burstgpt", "Timestamp", "Request tokens", "Response tokens"}};

detail::RawTrace parse_csv_trace(std::string_view text, const std::string& source, const spec::TraceReplay& options) {
  CsvReader csv(text, source);
  std::vector<std::string> header, f;
  if (!csv.next(header)) throw ConfigError(source, "trace is empty (expected a header row and at least one request)");
  const std::string header_at = source + ":" + std::to_string(csv.line());
  const Layout* layout = nullptr;
  int ti = -1, ii = -1, oi = -1;
  for (const auto& l : kLayouts) {
    if (options.format != "auto" && options.format != l.format) continue;
    ti = column_index(header, l.time);
    ii = column_index(header, l.input);
    oi = column_index(header, l.output);
    if (ti >= 0 && ii >= 0 && oi >= 0) {
      layout = &l;
      break;
    }
  }
  if (!layout) {
    std::string names, expected;
    for (const auto& h : header) names += (names.empty() ? "" : ",") + h;
    for (const auto& l : kLayouts)
      if (options.format == "auto" || options.format == l.format)
        expected += std::string(expected.empty() ? "" : " or ") + l.time + "," + l.input + "," + l.output;
    throw ConfigError(header_at, "unrecognised " + (options.format == "auto" ? std::string("trace") : options.format) +
                                     " header '" + printable(names, 120) + "' (expected " + expected + ")");
  }
  const bool burstgpt = std::string_view(layout->format) == "burstgpt";
  if (!burstgpt && (!options.model.empty() || !options.log_type.empty()))
    throw ConfigError(header_at, std::string("model and log_type filter BurstGPT traces; this header is the ") +
                                     layout->format + " layout");
  const std::optional<detail::BurstGptFilter> filter =
      burstgpt ? std::optional<detail::BurstGptFilter>(std::in_place, header, options, header_at) : std::nullopt;
  const std::size_t need = static_cast<std::size_t>(std::max({ti, ii, oi})) + 1;
  detail::RawTrace out;
  out.trace.format = layout->format;
  auto& rows = out.trace.rows;
  while (csv.next(f)) {
    if (f.size() < need)
      throw ConfigError(csv.where(), "expected " + std::to_string(header.size()) + " columns, got " +
                                         std::to_string(f.size()));
    TraceRow r;
    const auto& ts = f[static_cast<std::size_t>(ti)];
    const std::string time_where = csv.where(static_cast<std::size_t>(ti)) + ": column " +
                                   printable(header[static_cast<std::size_t>(ti)], 60);
    if (const auto t = parse_number(ts)) r.arrival_s = *t;
    else if (!parse_datetime(ts, r.arrival_s)) throw ConfigError(time_where, "not a time: '" + printable(ts, 60) + "'");
    if (!(r.arrival_s >= 0) || !std::isfinite(r.arrival_s))
      throw ConfigError(time_where, "must be >= 0, got " + printable(ts, 60));
    r.input_tokens = token_count(csv, f, ii, header[static_cast<std::size_t>(ii)], 1);
    r.output_tokens = token_count(csv, f, oi, header[static_cast<std::size_t>(oi)], 0);
    out.first_s = std::min(out.first_s, r.arrival_s);  // every valid row sets the trace's clock, filtered or not
    if (filter && (!filter->keep(f) || !filter->keep_output(r.output_tokens))) continue;
    // Production traces contain requests that generated nothing; they still take one decode step.
    r.output_tokens = std::max<std::int64_t>(1, r.output_tokens);
    rows.push_back(r);
  }
  if (out.first_s == std::numeric_limits<double>::infinity())
    throw ConfigError(source, "trace has a header but no requests");
  return out;
}

std::string describe_selection(const spec::TraceReplay& o, const std::string& format) {
  std::string s;
  auto add = [&](const std::string& x) { s += (s.empty() ? "" : ", ") + x; };
  if (!o.model.empty()) add("model '" + printable(o.model, 40) + "'");
  if (!o.log_type.empty()) add("log_type '" + printable(o.log_type, 40) + "'");
  if (!o.keep_failed && format == "burstgpt") add("failed rows dropped");
  if (o.start_s > 0 || o.duration_s > 0)
    add("time window from " + format_value(o.start_s) + " s" +
        (o.duration_s > 0 ? " for " + format_value(o.duration_s) + " s" : std::string()));
  if (o.start_row > 0) add("start_row " + std::to_string(o.start_row));
  if (o.max_rows > 0) add("max_rows " + std::to_string(o.max_rows));
  return s;
}

}  // namespace

namespace detail {

std::int64_t parse_token_count(std::string_view v, const std::string& where, std::int64_t lo) {
  const auto x = parse_number(v);
  if (!x || *x != std::floor(*x))
    throw ConfigError(where, "expected a whole number of tokens, got '" + printable(v, 60) + "'" +
                                 (v.find(',') != std::string_view::npos ? " (no thousands separators)" : ""));
  if (*x < static_cast<double>(lo) || *x > 1e9)
    throw ConfigError(where, "must be in " + std::to_string(lo) + "..1e9, got " + printable(v, 60));
  return static_cast<std::int64_t>(*x);
}

}  // namespace detail

Trace parse_trace(std::string_view text, const std::string& source, const spec::TraceReplay& options) {
  const std::size_t first = text.find_first_not_of(" \t\r\n", text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0);
  const bool jsonl = options.format == "mooncake" || (options.format == "auto" && first != std::string_view::npos &&
                                                      text[first] == '{');
  if (jsonl && (!options.model.empty() || !options.log_type.empty()))
    throw ConfigError(source, "model and log_type filter BurstGPT traces; this is a Mooncake (JSONL) trace");
  detail::RawTrace raw = jsonl ? detail::parse_mooncake(text, source, options) : parse_csv_trace(text, source, options);
  if (raw.first_s == std::numeric_limits<double>::infinity()) throw ConfigError(source, "trace has no requests");
  Trace& t = raw.trace;
  auto& rows = t.rows;
  std::stable_sort(rows.begin(), rows.end(), [](const TraceRow& a, const TraceRow& b) { return a.arrival_s < b.arrival_s; });
  // The time window on the trace's own clock (from its first row), then the row window over what is left.
  if (options.start_s > 0 || options.duration_s > 0) {
    const double lo = options.start_s, hi = options.duration_s > 0 ? options.start_s + options.duration_s : HUGE_VAL;
    std::erase_if(rows, [&](const TraceRow& r) { return !(r.arrival_s - raw.first_s >= lo && r.arrival_s - raw.first_s < hi); });
  }
  const auto n = static_cast<std::int64_t>(rows.size());
  const std::int64_t from = std::min(options.start_row, n);
  const std::int64_t to = options.max_rows > 0 ? std::min(n, from + options.max_rows) : n;
  rows.erase(rows.begin() + to, rows.end());
  rows.erase(rows.begin(), rows.begin() + from);
  if (rows.empty())
    throw ConfigError(source, "no request left after the selection (" + describe_selection(options, t.format) +
                                  "); " + std::to_string(n) + " rows passed the filters and the time window");
  sort_and_shift(rows);
  return std::move(raw.trace);
}

std::vector<TraceRow> parse_trace(std::string_view text, const std::string& source) {
  spec::TraceReplay options;
  options.keep_failed = true;  // no filter: today's formats replay a 0-token reply as 1 token
  return parse_trace(text, source, options).rows;
}

std::vector<TraceRow> trace_rows(const std::vector<spec::TraceRequest>& requests) {
  std::vector<TraceRow> rows;
  rows.reserve(requests.size());
  for (const auto& q : requests) rows.push_back({q.arrival_s, q.input_tokens, std::max<std::int64_t>(1, q.output_tokens)});
  sort_and_shift(rows);
  return rows;
}

Trace load_trace(const spec::TraceReplay& options, const std::string& path) {
  std::string text;
  try {
    text = read_text_file(options.path, "trace", kMaxCsvFileBytes);
  } catch (const ConfigError& e) {
    throw ConfigError(path + ".path", e.what());
  }
  return parse_trace(text, options.path, options);
}

std::vector<TraceRow> read_trace(const std::string& file, const std::string& path) {
  std::string text;
  try {
    text = read_text_file(file, "trace", kMaxCsvFileBytes);
  } catch (const ConfigError& e) {
    throw ConfigError(path, e.what());
  }
  return parse_trace(text, file);
}

std::vector<std::int64_t> parse_csv_column(std::string_view text, const std::string& source, const std::string& column,
                                           const std::string& path) {
  CsvReader csv(text, source);
  std::vector<std::string> header, f;
  if (!csv.next(header)) throw ConfigError(path, "'" + source + "' is empty");
  const int ci = column_index(header, column);
  if (ci < 0) throw ConfigError(path + ".column", unknown_name_message("column", column, header));
  std::vector<std::int64_t> values;
  while (csv.next(f)) {
    if (f.size() <= static_cast<std::size_t>(ci))
      throw ConfigError(csv.where(), "missing column " + printable(column, 60) + " (the row has " +
                                         std::to_string(f.size()) + " fields)");
    values.push_back(token_count(csv, f, ci, column, 1));
  }
  if (values.empty()) throw ConfigError(path, "'" + source + "' has no values in column " + column);
  return values;
}

std::vector<std::int64_t> read_csv_column(const std::string& file, const std::string& column,
                                          const std::string& path) {
  std::string text;
  try {
    text = read_text_file(file, "empirical length file", kMaxCsvFileBytes);
  } catch (const ConfigError& e) {
    throw ConfigError(path, e.what());
  }
  return parse_csv_column(text, file, column, path);
}

// ---------------------------------------------------------------------------------------------------------

LengthSampler::LengthSampler(const spec::LengthDist& dist, const std::string& path, std::int64_t max_len)
    : dist_(dist), max_len_(max_len) {
  Problems p;
  std::visit(Overloaded{
                 [&](const spec::FixedLength& d) {
                   if (d.value < 1) p.add(path + ".value", "must be >= 1, got " + std::to_string(d.value));
                   mean_ = static_cast<double>(d.value);
                 },
                 [&](const spec::UniformLength& d) {
                   if (d.min < 1) p.add(path + ".min", "must be >= 1, got " + std::to_string(d.min));
                   if (d.max < d.min)
                     p.add(path + ".max", "must be >= min (" + std::to_string(d.min) + "), got " + std::to_string(d.max));
                   mean_ = (static_cast<double>(d.min) + static_cast<double>(d.max)) / 2;
                 },
                 [&](const spec::NormalLength& d) {
                   if (!(d.mean > 0)) p.add(path + ".mean", "must be > 0, got " + format_given(d.mean));
                   if (!(d.stddev >= 0)) p.add(path + ".stddev", "must be >= 0, got " + format_given(d.stddev));
                   if (d.min < 1) p.add(path + ".min", "must be >= 1, got " + std::to_string(d.min));
                   if (d.max != 0 && d.max < d.min) p.add(path + ".max", "must be >= min or 0, got " + std::to_string(d.max));
                   mean_ = d.mean;
                 },
                 [&](const spec::LogNormalLength& d) {
                   if (!(d.mean > 0)) p.add(path + ".mean", "must be > 0, got " + format_given(d.mean));
                   if (!(d.sigma >= 0) || d.sigma > spec::kMaxLogNormalSigma)  // validate() checked it; a sampler built alone too
                     p.add(path + ".sigma", "must be in [0, " + format_value(spec::kMaxLogNormalSigma) + "], got " + format_given(d.sigma));
                   sigma_ = d.sigma;
                   mu_ = d.mean > 0 ? std::log(d.mean) - d.sigma * d.sigma / 2 : 0;
                   mean_ = d.mean;
                 },
                 [&](spec::EmpiricalLength& d) {
                   if (d.values.empty() && !d.path.empty()) d.values = read_csv_column(d.path, d.column, path);
                   if (d.values.empty()) p.add(path + ".values", "empty: give values or a path and column");
                   double sum = 0;
                   for (std::size_t i = 0; i < d.values.size(); ++i) {
                     if (d.values[i] < 1) {
                       p.add(path + ".values[" + std::to_string(i) + "]", "must be >= 1, got " + std::to_string(d.values[i]));
                       break;
                     }
                     sum += static_cast<double>(d.values[i]);
                   }
                   mean_ = d.values.empty() ? 0 : sum / static_cast<double>(d.values.size());
                 },
             },
             dist_);
  p.throw_if_any();
}

std::int64_t LengthSampler::sample(RandomEngine& rng) const {
  return std::visit(
      Overloaded{
          [](const spec::FixedLength& d) -> std::int64_t { return d.value; },
          [&](const spec::UniformLength& d) -> std::int64_t {
            return boost::random::uniform_int_distribution<std::int64_t>(d.min, d.max)(rng);
          },
          [&](const spec::NormalLength& d) -> std::int64_t {
            const double x = boost::random::normal_distribution<double>(d.mean, d.stddev)(rng);
            const double hi = d.max > 0 ? static_cast<double>(d.max) : (max_len_ > 0 ? static_cast<double>(max_len_) : 1e9);
            return round_length(std::clamp(x, static_cast<double>(std::max<std::int64_t>(1, d.min)), hi));
          },
          [&](const spec::LogNormalLength&) -> std::int64_t {
            const double x = boost::random::lognormal_distribution<double>(mu_, sigma_)(rng);
            // x > 0: below 0.5 both llround and round_length give 0 or 1, which the max makes 1.
            return std::max<std::int64_t>(1, round_length(std::min(x, 1e9)));
          },
          [&](const spec::EmpiricalLength& d) -> std::int64_t {
            const auto i = boost::random::uniform_int_distribution<std::size_t>(0, d.values.size() - 1)(rng);
            return d.values[i];
          },
      },
      dist_);
}

// ---------------------------------------------------------------------------------------------------------

ArrivalSampler::ArrivalSampler(const spec::ArrivalSpec& spec, const std::string& path) : spec_(spec) {
  if (std::holds_alternative<spec::ClosedLoop>(spec_)) throw InternalError("ArrivalSampler given a closed loop");
  if (std::holds_alternative<spec::TraceReplay>(spec_)) throw InternalError("ArrivalSampler given a trace");
  spec::validate_arrival(spec_, path);  // the one set of bounds (spec/workload.cpp)
  if (const auto* pw = std::get_if<spec::PiecewiseArrivals>(&spec_); pw && pw->period_s > 0) {
    spec::PiecewiseArrivals one = *pw;
    one.periods = 1;
    period_count_ = spec::piecewise_count(one, pw->period_s);  // expected arrivals per period
  }
}

namespace {

/// Poisson arrivals with a rate λ(t) that is constant on each [from_s, next from_s): the next arrival after
/// `now` is where the integrated rate Λ(t) − Λ(now) reaches the unit-exponential draw `e` (a time change of a
/// unit-rate Poisson process: exact, and O(segments crossed)). +inf when the rate stays 0 for good. `segment` is
/// where the last call's arrival fell: arrivals move forward, so `now` is usually still in it (checked, else searched).
/// The last segment ends at `end_s` (+inf: never); +inf then leaves in `e` what is left of the draw after it.
double next_piecewise(const std::vector<std::pair<double, double>>& rates, double now, double& e, std::size_t& segment,
                      double end_s) {
  std::size_t j = segment;
  // The segment holding now: the last one starting at or before it (the first when none does).
  if (!(j < rates.size() && rates[j].first <= now && (j + 1 == rates.size() || now < rates[j + 1].first))) {
    j = static_cast<std::size_t>(
        std::upper_bound(rates.begin(), rates.end(), now, [](double t, const auto& seg) { return t < seg.first; }) -
        rates.begin());
    j = j == 0 ? 0 : j - 1;
  }
  double t = now;
  for (; j < rates.size(); ++j) {
    const double end = j + 1 < rates.size() ? rates[j + 1].first : end_s;
    const double r = rates[j].second;
    if (r > 0) {
      if (e < r * (end - t)) {
        segment = j;
        return t + e / r;
      }
      e -= r * (end - t);
    }
    t = end;
  }
  return std::numeric_limits<double>::infinity();
}

/// A repeated period (a compiled daily profile, spec::PiecewiseArrivals::period_s) by the same time change: the rest
/// of the current period, then whole periods of `per_period` expected arrivals at once, then the period that holds
/// the arrival. O(segments crossed in two periods), whatever the number of periods; +inf after the last one.
double next_periodic(const spec::PiecewiseArrivals& a, double per_period, double now, double e, std::size_t& segment) {
  const double horizon = a.period_s * static_cast<double>(a.periods);
  double start = std::floor(std::max(now, 0.0) / a.period_s) * a.period_s;
  double pos = std::clamp(now - start, 0.0, a.period_s);
  for (int guard = 0; guard < 8 && start < horizon; ++guard) {
    const double t = next_piecewise(a.rates, pos, e, segment, a.period_s);
    if (std::isfinite(t)) return start + t;  // inside this period
    start += a.period_s;
    pos = 0;
    segment = 0;
    if (!(per_period > 0)) break;
    // Rounding may leave e just above a period's intensity, hence the loop.
    const double k = std::floor(e / per_period);
    e -= k * per_period;
    start += k * a.period_s;
  }
  return std::numeric_limits<double>::infinity();
}

/// On/off arrivals (rate_on for on_s, then rate_off for off_s, repeating) by the same time change, in O(1):
/// the rest of the current phase, then whole periods of intensity rate_on·on_s + rate_off·off_s at once.
double next_onoff(const spec::OnOffArrivals& a, double now, double e) {
  const double period = a.on_s + a.off_s;
  const double per_period = a.rate_on * a.on_s + a.rate_off * a.off_s;
  double start = std::floor(now / period) * period;  // start of the current period
  double pos = std::clamp(now - start, 0.0, period);
  for (int guard = 0; guard < 8; ++guard) {
    if (pos < a.on_s) {  // in the on phase
      const double avail = a.rate_on * (a.on_s - pos);
      if (e < avail) return start + pos + e / a.rate_on;
      e -= avail;
      pos = a.on_s;
    }
    if (a.rate_off > 0) {  // in the off phase
      const double avail = a.rate_off * (period - pos);
      if (e < avail) return start + pos + e / a.rate_off;
      e -= avail;
    }
    // Whole periods in one step; rounding may leave e just above a period's intensity, hence the loop.
    const double k = std::floor(e / per_period);
    e -= k * per_period;
    start += (k + 1) * period;
    pos = 0;
  }
  return start;  // unreachable in exact arithmetic: e < per_period after the first turn
}

}  // namespace

double ArrivalSampler::next(double now_s, RandomEngine& rng) {
  return std::visit(
      Overloaded{
          [&](const spec::PoissonArrivals& a) {
            return now_s + boost::random::exponential_distribution<double>(a.rate)(rng);
          },
          [&](const spec::GammaArrivals& a) {
            // Gamma gaps with mean 1/rate and coefficient of variation cv: shape 1/cv², scale cv²/rate.
            const double shape = 1.0 / (a.cv * a.cv);
            return now_s + boost::random::gamma_distribution<double>(shape, 1.0 / (a.rate * shape))(rng);
          },
          [&](const spec::ConstantArrivals& a) { return now_s + 1.0 / a.rate; },
          [&](const spec::OnOffArrivals& a) {
            return next_onoff(a, now_s, boost::random::exponential_distribution<double>(1.0)(rng));
          },
          [&](const spec::PiecewiseArrivals& a) {
            double e = boost::random::exponential_distribution<double>(1.0)(rng);
            if (a.period_s > 0) return next_periodic(a, period_count_, now_s, e, segment_);
            return next_piecewise(a.rates, now_s, e, segment_, std::numeric_limits<double>::infinity());
          },
          [&](const spec::OfflineArrivals&) { return now_s; },
          [&](const spec::ClosedLoop&) -> double { throw InternalError("closed loop has no arrival sampler"); },
          [&](const spec::TraceReplay&) -> double { throw InternalError("trace has no arrival sampler"); },
      },
      spec_);
}

}  // namespace llmsim::engine
