// A figure printed in a message is the figure: never cut short, at any magnitude a double can hold. format_fixed
// wrote into a char[64], so a rate of 1e300 req/s (accepted: a burst's rate) read "offered 98576072856823198...428
// req/s", 63 digits, 237 orders of magnitude short, and 1e-300 read as a string of zeros (attack8).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <string>

#include "llmsim/core/error.hpp"
#include "llmsim/core/number.hpp"

using namespace llmsim;

namespace {
// The value a printed figure reads as, or NaN when the text is not a whole number ("1e+3 req/s" is not).
double read_back(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() ? v : std::nan("");
}
}  // namespace

TEST_CASE("a figure printed at any magnitude reads back as itself, in a form short enough to read") {
  for (int e = -300; e <= 307; e += 7) {
    for (const double mantissa : {1.0, 3.14159, 9.87654}) {
      const double v = mantissa * std::pow(10.0, e);
      INFO("v = " << v);
      const std::string fixed = format_fixed(v, 2);
      const auto [a, b] = format_distinct(v, 2 * v);
      INFO("printed " << fixed << " / " << a << " / " << b);
      // format_fixed keeps two decimals: below 0.005 a value reads 0.00 by request; above, within rounding.
      if (v >= 0.01) CHECK(read_back(fixed) == Approx(v).epsilon(1e-5).margin(0.005));
      CHECK(read_back(a) == Approx(v).epsilon(0.006));
      CHECK(read_back(b) == Approx(2 * v).epsilon(0.006));
      CHECK(a.size() <= 24);
      CHECK(b.size() <= 24);
      CHECK(fixed.size() <= 24);
    }
  }
}

TEST_CASE("fixed notation stops where format_value's does, and the ordinary rates keep it") {
  CHECK(format_fixed(123456.789, 1) == "123456.8");
  CHECK(format_fixed(9.99e14, 0) == "999000000000000");
  CHECK(format_fixed(1e15, 0) == format_value(1e15 + 0.5));  // "1e+15" both
  CHECK(format_distinct(1013.7, 20.4) == std::make_pair(std::string("1014"), std::string("20.4")));
  CHECK(format_distinct(9.857607e299, 10.2) == std::make_pair(std::string("9.86e+299"), std::string("10.2")));
  CHECK(format_distinct(1.23e-7, 0.5).first == "1.23e-07");
  CHECK(format_fixed(std::nan(""), 2) == "nan");
}

TEST_CASE("a figure that is not zero never reads as zero at a table's decimals") {
  // simulate and capacity printed "offered 0.00 req/s", "goodput 0.00 req/s" and "target 0.00 QPS" for a day whose
  // peak is 0.00038 req/s (attack8): a zero presented as a result.
  for (int decimals = 0; decimals <= 3; ++decimals) {
    for (int e = -12; e <= 6; ++e) {
      const double v = 3.8 * std::pow(10.0, e);
      const std::string text = format_fixed_nonzero(v, decimals);
      INFO(v << " at " << decimals << " decimals: " << text);
      CHECK(read_back(text) == Approx(v).epsilon(0.2));
      CHECK(read_back(format_fixed_nonzero(-v, decimals)) == Approx(-v).epsilon(0.2));
    }
  }
  CHECK(format_fixed_nonzero(0.00038, 2) == "0.00038");
  CHECK(format_fixed_nonzero(0.0, 2) == "0.00");  // a zero is a zero
  CHECK(format_fixed_nonzero(12.345, 2) == "12.35");  // the table's form wherever it shows the figure
}
