// `hardware` beside `disaggregation` (issue 29): the pools are the deployment, so every hardware field written beside
// them is an error naming the field and the pool fields that say it — never dropped without a word (the pools ran on
// the default a100-80gb-sxm at its catalogue price). A disaggregated scenario written out reads back.
#include <catch2/catch.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"
#include "scenario_error.hpp"

using namespace llmsim;
using namespace llmsim::spec;
using Catch::Contains;

namespace {

Json pools() {
  return {{"model", "llama-3.1-8b"},
          {"disaggregation",
           {{"prefill", {{"replicas", 1}}},
            {"decode", {{"replicas", 1}}},
            {"link", {{"kind", "ethernet"}, {"bandwidth_gbps", 100}}}}}};
}

}  // namespace

TEST_CASE("every hardware field beside disaggregation is refused by name, never ignored", "[disagg][hardware]") {
  // The issue's case: an RTX 4090 at $0.30 beside the pools ran them on A100s at $1.80.
  Json issue = pools();
  issue["hardware"] = {{"gpu", "rtx4090-24gb"}, {"price_per_gpu_hour", 0.30}};
  const std::string e = test::scenario_error_of(issue);
  CHECK_THAT(e, Contains("hardware.gpu: not used with disaggregation") && Contains("disaggregation.prefill.gpu") &&
                    Contains("disaggregation.decode.gpu"));
  CHECK_THAT(e, Contains("hardware.price_per_gpu_hour: not used with disaggregation") &&
                    Contains("disaggregation.decode.price_per_gpu_hour"));
  // The class: each field the hardware section takes (docs/disaggregation.md: a pool is written exactly like it).
  const std::vector<std::pair<std::string, Json>> fields = {
      {"gpu", "h100-80gb-sxm"},          {"gpu_profile", "profile.json"},
      {"tp", 2},                         {"pp", 2},
      {"replicas", 3},                   {"router", "round_robin"},
      {"price_per_gpu_hour", 0.3},       {"purchase_price_per_gpu", 1000},
      {"pp_layer_partition", {16, 16}},  {"fleet", Json::array({{{"gpu", "rtx4090-24gb"}}})}};
  for (const auto& [field, value] : fields) {
    const std::string name = field;
    CAPTURE(name);
    Json j = pools();
    j["hardware"] = {{name, value}};
    CHECK_THAT(test::scenario_error_of(j), Contains("hardware." + name + ": not used with disaggregation"));
  }
  // An empty section says nothing and is accepted; without disaggregation the same fields are read as before.
  Json empty = pools();
  empty["hardware"] = Json::object();
  CHECK(test::scenario_error_of(empty).empty());
  Json plain = {{"model", "llama-3.1-8b"}, {"hardware", {{"gpu", "rtx4090-24gb"}, {"price_per_gpu_hour", 0.30}}}};
  CHECK(test::scenario_error_of(plain).empty());
}

TEST_CASE("a disaggregated scenario written out reads back with its pools' cards and prices", "[disagg][hardware]") {
  Json j = pools();
  j["disaggregation"]["prefill"] = {{"gpu", "rtx4090-24gb"}, {"price_per_gpu_hour", 0.30}};
  const Scenario s = scenario_from_json(JsonView(j, ""));
  const Json written = to_json(s);
  CHECK_FALSE(written.contains("hardware"));
  const Scenario back = scenario_from_json(JsonView(written, ""));
  REQUIRE(back.disaggregation);
  CHECK(back.disaggregation->prefill.hardware.gpu == "rtx4090-24gb");
  CHECK(back.disaggregation->prefill.hardware.price_per_gpu_hour == 0.30);
  const auto r = resolve(back, Catalog::builtin());
  REQUIRE(r.disagg_pools.size() == 2);
  CHECK(r.disagg_pools[0].gpu.id == "rtx4090-24gb");
  CHECK(r.disagg_pools[0].price_per_gpu_hour == 0.30);
}
