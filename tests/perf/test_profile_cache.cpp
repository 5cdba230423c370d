// hardware.gpu_profile given inline (JSON text, as a run fit passes each profile it tries): the same text is parsed
// once while it is among the last few (perf/profile_cache.cpp), a different text is its own document, and a bad text
// is an error every time, never a cached document.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/catalog.hpp"

using namespace llmsim;

TEST_CASE("an inline profile's text is parsed once and read again from the parsed document", "[perf][profile]") {
  const auto g = spec::Catalog::builtin().gpu("h100-80gb-sxm");
  perf::HardwareProfile p = perf::default_profile(g);
  const std::string a = perf::to_json(p).dump();
  p.cpu_overhead_per_iter_s *= 2;
  const std::string b = perf::to_json(p).dump();
  REQUIRE(a != b);
  const auto da = perf::profile_document(a);
  const auto db = perf::profile_document(b);
  CHECK(perf::profile_document(a) == da);  // the same document: not parsed again
  CHECK(perf::profile_document(b) == db);
  CHECK(da != db);
  CHECK(*da == parse_json(a, "a"));
  CHECK(perf::load_profile(b, perf::default_profile(g)).cpu_overhead_per_iter_s == p.cpu_overhead_per_iter_s);
  const std::string bad = a.substr(0, a.size() / 2);
  for (int k = 0; k < 2; ++k) CHECK_THROWS_AS(perf::profile_document(bad), ConfigError);
}
