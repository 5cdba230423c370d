#pragma once
// Strict, locale-independent number parsing for text inputs (CSV fields, --fail-if values).
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace llmsim {

/// The finite decimal number `text` spells, or nullopt: an optional sign, digits with an optional fraction
/// and exponent ("12", "-0.5", "1e3", "+7"). Nothing else is accepted — no spaces, thousands separators
/// ("1,000"), hex ("0x10"), "inf"/"nan" or trailing text ("12abc") — so a malformed value is an error, never
/// a different number. The result does not depend on the C locale.
std::optional<double> parse_number(std::string_view text);

/// Magnitude from which a figure is printed in scientific notation ("%.6g"), not fixed: a double's integer digits
/// stop being exact near 2^53 (~9.007e15); format_value draws its line at the same place.
inline constexpr double kFixedNotationLimit = 1e15;

/// `v` with `decimals` digits after the point ("%.*f"): prices and rates in messages and notes. From
/// kFixedNotationLimit on, and for inf/nan, "%.6g" ("9.85761e+299"), never a figure cut short.
std::string format_fixed(double v, int decimals);

/// `v` to `digits` significant digits in fixed notation, all of an integer part ("1014"); below 1e-4 and from
/// kFixedNotationLimit on, scientific ("1.2e-07").
std::string format_significant(double v, int digits);

/// format_fixed, except that a figure which is not zero never reads as one: a value that `decimals` would round to
/// 0 ("0.00 req/s" for a peak of 0.00038 req/s) is given to 2 significant digits ("0.00038") instead.
std::string format_fixed_nonzero(double v, int decimals);

/// `v` to `digits` significant digits ("%.*g").
std::string format_digits(double v, int digits = 3);

/// Two figures a message sets side by side ("offered 5.16 req/s against a saturation throughput of 4.98 req/s"):
/// each to `digits` significant digits in fixed notation (all of an integer part: "1014", never "1.01e+03"), more
/// (up to 6) only where fewer would print two different values alike; below 1e-4 and from kFixedNotationLimit on,
/// in scientific notation ("1.2e-07", "9.86e+299").
std::pair<std::string, std::string> format_distinct(double a, double b, int digits = 3);

}  // namespace llmsim
