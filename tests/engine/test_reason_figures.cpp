// The figures a run's reason quotes are rounded as estimates, not printed to the last digit ("offered 5.16349
// req/s" was the audit's instance): the unstable reason's two rates.
#include <catch2/catch.hpp>

#include <regex>

#include "llmsim/core/number.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/spec/scenario.hpp"
#include "engine_test_util.hpp"

using namespace llmsim;

namespace {
int significant_digits(const std::string& number) {
  int n = 0;
  bool leading = true;
  for (const char c : number) {
    if (c == 'e' || c == 'E') break;
    if (c < '0' || c > '9') continue;
    if (leading && c == '0') continue;
    leading = false;
    ++n;
  }
  return n;
}
}  // namespace

TEST_CASE("an unstable run's reason quotes its offered and saturation rates to three significant digits") {
  for (const double rate : {37.3, 250.0, 1013.7}) {
    const Json w = {{"arrival", {{"process", "poisson"}, {"rate", rate}}},
                    {"input_tokens", {{"dist", "lognormal"}, {"mean", 220}}},
                    {"output_tokens", {{"dist", "lognormal"}, {"mean", 195}}},
                    {"num_requests", 600}, {"warmup_requests", 0}, {"seed", 11}};
    const auto r = engine::simulate(test::make(test::scenario(w)), engine::SimulationOptions{});
    const auto& s = r.summary;
    INFO(s.reason);
    REQUIRE(s.unstable);
    const std::regex quoted("offered ([0-9.e+-]+) req/s against a saturation throughput of ([0-9.e+-]+) req/s");
    std::smatch m;
    REQUIRE(std::regex_search(s.reason, m, quoted));
    // Three significant digits, or the whole integer part of a larger rate ("1014"), in fixed notation.
    for (const std::string& figure : {m[1].str(), m[2].str()}) {
      CHECK(figure.find('e') == std::string::npos);
      CHECK(significant_digits(figure) <= std::max<int>(3, static_cast<int>(figure.find('.') == std::string::npos ? figure.size() : figure.find('.'))));
    }
    CHECK(std::stod(m[1]) == Approx(s.offered.requests_per_s).epsilon(0.005));
    CHECK(std::stod(m[2]) == Approx(s.saturation.throughput.requests_per_s).epsilon(0.005));
  }
}

TEST_CASE("two figures set side by side keep the digits that tell them apart") {
  CHECK(format_distinct(5.16349, 4.98123) == std::make_pair(std::string("5.16"), std::string("4.98")));
  CHECK(format_distinct(5.16349, 5.16012) == std::make_pair(std::string("5.163"), std::string("5.160")));
  CHECK(format_distinct(32.41, 32.41).first == "32.4");  // equal figures read equal
  CHECK(format_distinct(1013.7, 20.4) == std::make_pair(std::string("1014"), std::string("20.4")));
  CHECK(format_distinct(0.0123456, 0.5) == std::make_pair(std::string("0.0123"), std::string("0.500")));
}
