#pragma once
// Sampling the workload: arrival processes, length distributions, trace and empirical CSV reading.
// Boost.Random engines and distributions only, so a seed reproduces a run on every standard library.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llmsim/core/rng.hpp"
#include "llmsim/spec/workload.hpp"

namespace llmsim::engine {

/// One request of a replayed trace (arrival relative to the trace's first row, seconds).
struct TraceRow {
  double arrival_s = 0;
  std::int64_t input_tokens = 0, output_tokens = 0;
  std::int64_t hash_begin = 0;  ///< Mooncake: the row's block hash ids are Trace::hash_ids[hash_begin, + hash_count)
  std::int32_t hash_count = 0;
};

/// A parsed trace: its rows in time order, the first at 0, and (Mooncake) their block hash ids.
struct Trace {
  std::vector<TraceRow> rows;
  std::vector<std::uint64_t> hash_ids;  ///< concatenated per row (TraceRow::hash_begin/hash_count)
  int hash_block_tokens = 0;            ///< prompt tokens per hash id; 0 = the trace carries no block hashes
  std::string format;                   ///< the layout read: plain, azure, splitwise, burstgpt or mooncake
};

/// Parses a trace in `options.format` ("auto": a line starting with '{' is Mooncake JSONL, otherwise a CSV whose
/// header picks the layout, case-insensitive, extra columns ignored): plain `arrival_time_s,input_tokens,
/// output_tokens`, Azure `TIMESTAMP,ContextTokens,GeneratedTokens` (TIMESTAMP in seconds or as
/// "YYYY-MM-DD HH:MM:SS[.fff]"), Splitwise `arrived_at,num_prefill_tokens,num_decode_tokens`, BurstGPT
/// `Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type` (trace_burstgpt.cpp), Mooncake
/// `{"timestamp": ms, "input_length", "output_length", "hash_ids": [...]}` (trace_mooncake.cpp). CSV goes through
/// core/csv.hpp (RFC 4180 quoting, BOM, CRLF/LF/CR); numbers are strict (parse_number: "1,000" is an error, not 1).
/// Then the selection of spec::TraceReplay (filters, time window, row window); rows are sorted by time and
/// shifted so the first arrives at 0. A bad row throws ConfigError "<source>:<line>[:<field>]: column/field NAME:
/// ..." with the value; a selection that keeps no row throws naming the selection.
Trace parse_trace(std::string_view text, const std::string& source, const spec::TraceReplay& options);
/// parse_trace with every option at its default (format auto, no selection); the rows only.
std::vector<TraceRow> parse_trace(std::string_view text, const std::string& source);
/// An inline trace (spec::TraceReplay::requests) as rows, by the CSV rules: sorted by time, shifted to start
/// at 0, an output of 0 tokens run as 1.
std::vector<TraceRow> trace_rows(const std::vector<spec::TraceRequest>& requests);
/// Reads (up to kMaxCsvFileBytes, regular files only) and parses `options.path` (ConfigError at `path` when it
/// cannot be read).
Trace load_trace(const spec::TraceReplay& options, const std::string& path = "workload.arrival");
/// Reads and parses a trace file with the default options (ConfigError at `path` when it cannot be read).
std::vector<TraceRow> read_trace(const std::string& file, const std::string& path = "workload.arrival.path");

/// The integer column `column` of CSV text (header row names the columns); values must be whole, in 1..1e9.
std::vector<std::int64_t> parse_csv_column(std::string_view text, const std::string& source, const std::string& column,
                                           const std::string& path);
/// Reads (up to kMaxCsvFileBytes, regular files only) and parses one column of a CSV file.
std::vector<std::int64_t> read_csv_column(const std::string& file, const std::string& column,
                                          const std::string& path);

/// std::llround(x) for 0.5 <= x < 2^52 (a drawn length), inline where libm's is a call: x + 0.5 is exact within x's
/// binade and, when it crosses into the next, lands below the next integer, so truncating it gives the same integer.
inline std::int64_t round_length(double x) noexcept { return static_cast<std::int64_t>(x + 0.5); }

/// Draws token counts from one LengthDist; every draw is >= 1 (and <= max for bounded forms).
class LengthSampler {
 public:
  /// Loads an empirical CSV column when the distribution names a file. ConfigError at `path` for invalid
  /// parameters (empty empirical data, min > max, non-positive mean, ...).
  LengthSampler(const spec::LengthDist& dist, const std::string& path, std::int64_t max_len);
  std::int64_t sample(RandomEngine& rng) const;
  /// Mean of the distribution before clipping to the model's length (for capacity hints).
  double mean() const noexcept { return mean_; }

 private:
  spec::LengthDist dist_;
  double mu_ = 0, sigma_ = 0, mean_ = 0;  // lognormal parameters of ln(x)
  std::int64_t max_len_ = 0;
};

/// Next-arrival generator for one open-loop class (Poisson, Gamma, constant, on/off, piecewise-constant rate,
/// offline). ConfigError at `path` for invalid parameters (spec::validate_arrival).
class ArrivalSampler {
 public:
  ArrivalSampler(const spec::ArrivalSpec& spec, const std::string& path);
  /// Time of the first arrival after `now_s` (>= now_s; `now_s` itself for offline); +inf when a schedule's
  /// rate stays 0 from there on. O(1) per draw (piecewise: O(segments crossed), the segment of the last arrival
  /// remembered).
  double next(double now_s, RandomEngine& rng);

 private:
  spec::ArrivalSpec spec_;
  std::size_t segment_ = 0;  ///< piecewise: the segment of the last arrival
  double period_count_ = 0;  ///< piecewise with a repeated period: the expected arrivals of one period
};

}  // namespace llmsim::engine
