// Error bands (analysis/error_band.hpp): the band follows the residuals of its regime, widens the regime when a
// group is too small, prefers blind sources, and says when it rests on sources the model was developed on.
#include <catch2/catch.hpp>

#include "llmsim/analysis/error_band.hpp"
#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"

using namespace llmsim;
using namespace llmsim::analysis;

namespace {

ErrorBandGroup group(std::string family, std::string runtime, std::string batch, std::string metric, bool blind,
                     std::size_t n, double median_abs) {
  ErrorBandGroup g;
  g.family = std::move(family);
  g.runtime = std::move(runtime);
  g.batch = std::move(batch);
  g.metric = std::move(metric);
  g.blind = blind;
  g.n = n;
  g.median_abs = median_abs;
  g.p90_abs = 2 * median_abs;
  return g;
}

Regime regime(std::string family, std::string runtime, std::int64_t batch, MetricFamily m = MetricFamily::latency) {
  return Regime{std::move(family), std::move(runtime), batch, m};
}

}  // namespace

TEST_CASE("a band is wider where the residuals are wider", "[error_band]") {
  const std::vector<ErrorBandGroup> t = {
      group("hopper_hbm", "vllm-v1", "32-63", "latency", true, 40, 0.20),
      group("hopper_hbm", "vllm-v1", "1", "latency", true, 40, 0.03),
      group("ampere_hbm", "vllm-v1", "32-63", "latency", true, 40, 0.06),
  };
  const auto wide = error_band(regime("hopper_hbm", "vllm-v1", 48), t);
  const auto narrow = error_band(regime("hopper_hbm", "vllm-v1", 1), t);
  const auto other_card = error_band(regime("ampere_hbm", "vllm-v1", 40), t);
  CHECK(wide.typical == Approx(0.20));
  CHECK(narrow.typical == Approx(0.03));
  CHECK(other_card.typical == Approx(0.06));
  CHECK(wide.typical > other_card.typical);
  CHECK(wide.blind);
  CHECK(wide.n == 40);
  CHECK_THAT(wide.describe(), Catch::Contains("±20%") && Catch::Contains("40 blind"));
}

TEST_CASE("a regime too small for a band widens, and blind groups come first", "[error_band]") {
  const std::vector<ErrorBandGroup> t = {
      group("gddr", "vllm-v1", "16-31", "latency", true, 4, 0.50),    // too few: skipped
      group("gddr", "vllm-v1", "*", "latency", false, 80, 0.04),      // development only at this level
      group("gddr", "vllm-v1", "*", "latency", true, 12, 0.11),       // blind wins at the same level
      group("*", "*", "*", "throughput", true, 300, 0.09),
  };
  const auto b = error_band(regime("gddr", "vllm-v1", 20), t);
  CHECK(b.typical == Approx(0.11));
  CHECK(b.blind);
  CHECK_THAT(b.group, Catch::Contains("batch *"));
  // A throughput regime with no specific group falls back to the widest one.
  const auto any = error_band(regime("gddr", "sglang", 20, MetricFamily::throughput), t);
  CHECK(any.typical == Approx(0.09));
  CHECK(any.group == "* / * / batch * / throughput");
  // Development residuals only: known, but labelled a lower bound.
  const std::vector<ErrorBandGroup> dev = {group("*", "*", "*", "ttft", false, 50, 0.07)};
  const auto d = error_band(regime("gddr", "vllm-v1", 1, MetricFamily::ttft), dev);
  CHECK(d.known());
  CHECK_FALSE(d.blind);
  CHECK_THAT(d.describe(), Catch::Contains("lower bound"));
  // Nothing: unknown, and said so.
  const auto none = error_band(regime("gddr", "vllm-v1", 1, MetricFamily::latency), dev);
  CHECK_FALSE(none.known());
  CHECK_THAT(none.describe(), Catch::Contains("unknown"));
}

TEST_CASE("two values are within error when their bands overlap", "[error_band]") {
  ErrorBand b;
  b.n = 20;
  b.typical = 0.05;
  CHECK(within_error(100, b, 108, b));       // 8 <= 5 + 5.4
  CHECK_FALSE(within_error(100, b, 112, b));  // 12 > 5 + 5.6
  CHECK_FALSE(within_error(100, ErrorBand{}, 100.1, b));  // an unknown band ranks nothing as a tie
}

TEST_CASE("the error-band table round-trips and rejects a malformed group", "[error_band]") {
  const std::vector<ErrorBandGroup> t = {group("hopper_hbm", "vllm-v1", "1", "latency", true, 10, 0.0512)};
  const Json j = error_bands_to_json(t, "test");
  const auto back = parse_error_bands(JsonView(j, "t"));
  REQUIRE(back.size() == 1);
  CHECK(back[0].median_abs == Approx(0.0512));
  Json bad = j;
  bad["groups"][0]["p90_abs"] = 0.01;  // below the median
  CHECK_THROWS_AS(parse_error_bands(JsonView(bad, "t")), ConfigError);
  CHECK_NOTHROW(error_band_table());  // the compiled-in table parses
}

TEST_CASE("a scenario's regime is its GPU family and runtime", "[error_band]") {
  const auto& cat = spec::Catalog::builtin();
  spec::Scenario s;
  s.hardware.gpu = "h100-80gb-sxm";
  s.engine.runtime = spec::Runtime::vllm_v0_sync;
  const auto r = spec::resolve(s, cat);
  const Regime g = regime_of(r, MetricFamily::ttft, 8);
  CHECK(g.family == "hopper_hbm");
  CHECK(g.runtime == "vllm-v0.5");
  CHECK(g.batch == 8);
}

TEST_CASE("a profile fitted from runs brings its own cross-validated band", "[error_band]") {
  const auto& cat = spec::Catalog::builtin();
  const auto gpu = cat.gpu("h100-80gb-sxm");
  perf::HardwareProfile p = perf::default_profile(gpu);
  p.runtime = "vllm-v1";
  p.cross_validated_error = perf::HardwareProfile::CrossValidatedError{12, 36, 0.041, 0.093, 0.01};
  spec::Scenario s;
  s.hardware.gpu = gpu.id;
  s.hardware.gpu_profile = perf::to_json(p).dump();
  s.workload.num_requests = 60;
  s.workload.warmup_requests = 10;
  auto r = spec::resolve(s, cat);
  const auto band = profile_error_band(r);
  REQUIRE(band);
  CHECK(band->typical == 0.041);
  CHECK(band->p90 == 0.093);
  CHECK(band->n == 12);
  CHECK(band->cross_validated);
  CHECK_THAT(band->describe(), Catch::Contains("from 12 cross-validated runs") && Catch::Contains("36 measured values"));
  // Every evaluated run with the profile carries it in summary.error_band.
  const auto res = evaluate(r);
  REQUIRE(res.summary.fits);
  CHECK(res.summary.error_band.latency.typical == 0.041);
  CHECK(res.summary.error_band.ttft.typical == 0.041);
  CHECK_THAT(res.summary.error_band.throughput.text, Catch::Contains("cross-validated runs"));
  // A profile without it, or fitted on another runtime, leaves the validation table's band.
  p.runtime = "vllm-v0.5";
  s.hardware.gpu_profile = perf::to_json(p).dump();
  CHECK_FALSE(profile_error_band(spec::resolve(s, cat)));
  p.runtime = "vllm-v1";
  p.cross_validated_error.reset();
  s.hardware.gpu_profile = perf::to_json(p).dump();
  CHECK_FALSE(profile_error_band(spec::resolve(s, cat)));
  s.hardware.gpu_profile.clear();
  CHECK_FALSE(profile_error_band(spec::resolve(s, cat)));
  // A malformed record is an error naming its field.
  Json j = perf::to_json(p);
  j["cross_validated_error"] = {{"runs", 1}, {"values", 3}, {"median_abs", 0.05}, {"p90_abs", 0.1}};
  CHECK_THROWS_WITH(perf::profile_from_json(JsonView(j, "prof.json")), Catch::Contains("cross_validated_error.runs"));
  j["cross_validated_error"] = {{"runs", 4}, {"values", 4}, {"median_abs", 0.05}, {"p90_abs", 0.01}};
  CHECK_THROWS_WITH(perf::profile_from_json(JsonView(j, "prof.json")), Catch::Contains("cross_validated_error.p90_abs"));
}
