#pragma once
// Length distributions (tokens), shared by the workload's requests and its sessions (spec/sessions.hpp).
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace llmsim::spec {

// ---- length distributions (tokens) ----
struct FixedLength { std::int64_t value = 256; };
struct UniformLength { std::int64_t min = 1, max = 512; };            ///< inclusive
struct NormalLength { double mean = 512, stddev = 128; std::int64_t min = 1, max = 0; }; ///< max 0 = model limit
/// Lognormal with the given arithmetic mean and sigma of ln(x) (the form DESIGN.md's scenario uses).
struct LogNormalLength { double mean = 512, sigma = 0.8; };
/// The one bound on a lognormal's sigma (the scenario's validation and the engine's sampler both use it): at 5 the
/// median is already e^-12.5 of the mean, every draw 1 token but a rare huge one.
inline constexpr double kMaxLogNormalSigma = 5;
/// Draws uniformly from measured values (inline, or a CSV file's column).
struct EmpiricalLength { std::vector<std::int64_t> values; std::string path; std::string column; };
using LengthDist = std::variant<FixedLength, UniformLength, NormalLength, LogNormalLength, EmpiricalLength>;

}  // namespace llmsim::spec
