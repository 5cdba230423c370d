// GPU option strings — one parser for hardware.gpu, --gpu, compare --gpus, grid axes and Python — and what resolve()
// makes of them: the count becomes tp × pp, "+nvlink" the bridge's NVLink bandwidth, prices stay in one currency.
#include <catch2/catch.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/gpu_option.hpp"
#include "llmsim/spec/scenario.hpp"

using namespace llmsim;
using namespace llmsim::spec;

namespace {

Scenario on(const std::string& gpu, int tp = 1, int pp = 1) {
  Scenario s;
  s.model = "llama-3.1-70b";
  s.engine.max_model_len = 8192;
  s.hardware.gpu = gpu;
  s.hardware.parallel = {tp, pp};
  return s;
}

std::string resolve_error(const Scenario& s) {
  try {
    resolve(s, Catalog::builtin());
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("GPU options: count prefix, parallel and bridge suffixes", "[spec][gpu_option]") {
  const auto one = parse_gpu_option("rtx4090-24gb");
  CHECK(one.card == "rtx4090-24gb");
  CHECK(one.count == 1);
  CHECK_FALSE(one.count_given);
  const auto two = parse_gpu_option("2xrtx4090-24gb");
  CHECK(two.card == "rtx4090-24gb");
  CHECK(two.count == 2);
  CHECK(two.count_given);
  CHECK_FALSE(two.pipeline);
  const auto pp = parse_gpu_option("4xa100-80gb-sxm@pp");
  CHECK(pp.count == 4);
  CHECK(pp.pipeline);
  const auto bridged = parse_gpu_option("2xa100-80gb-pcie+nvlink");
  CHECK(bridged.card == "a100-80gb-pcie");
  CHECK(bridged.nvlink_bridge);
  CHECK_FALSE(bridged.pipeline);
  const auto both = parse_gpu_option("2xa100-80gb-pcie@pp+nvlink");
  CHECK((both.pipeline && both.nvlink_bridge && both.card == "a100-80gb-pcie"));
  CHECK(parse_gpu_option("2xa100-80gb-pcie+nvlink@pp").pipeline);
  CHECK(parse_gpu_option("2Xrtx4090-24gb").count == 2);
  CHECK(parse_gpu_option("2\xC3\x97rtx4090-24gb").count == 2);  // 2×rtx4090-24gb
  CHECK(parse_gpu_option("a100-80gb-sxm:mig-3g.40gb").card == "a100-80gb-sxm:mig-3g.40gb");
  CHECK(parse_gpu_option("3090").card == "3090");  // digits without 'x' are part of the id
  CHECK(parse_gpu_option("specs/gpu@home.json").card == "specs/gpu@home.json");  // a file, not a suffix
  CHECK_THROWS_AS(parse_gpu_option("0xrtx4090-24gb"), ConfigError);
  CHECK_THROWS_AS(parse_gpu_option("100xrtx4090-24gb"), ConfigError);
  CHECK_THROWS_AS(parse_gpu_option("2x"), ConfigError);
  CHECK_THROWS_WITH(parse_gpu_option("2xrtx4090-24gb@dp", "hardware.gpu"),
                    Catch::Contains("hardware.gpu: unknown suffix '@dp'") && Catch::Contains("+nvlink"));
  CHECK_THROWS_WITH(parse_gpu_option("2xrtx4090-24gb@pp@tp"), Catch::Contains("two parallel suffixes"));
  CHECK_THROWS_WITH(parse_gpu_option("2xa100-80gb-pcie+nvlink+nvlink"), Catch::Contains("given twice"));
}

TEST_CASE("the count becomes the split, and a tp/pp that contradicts it is an error", "[spec][gpu_option]") {
  CHECK(split_for(parse_gpu_option("2xrtx4090-24gb"), {1, 1}).tp == 2);
  CHECK(split_for(parse_gpu_option("2xrtx4090-24gb@pp"), {1, 1}).pp == 2);
  const auto given = split_for(parse_gpu_option("4xh100-80gb-sxm"), {2, 2});  // agrees: kept
  CHECK((given.tp == 2 && given.pp == 2));
  CHECK(split_for(parse_gpu_option("a100-80gb-sxm"), {4, 1}).tp == 4);  // no count: tp as given
  CHECK_THROWS_WITH(split_for(parse_gpu_option("2xrtx4090-24gb"), {4, 1}),
                    Catch::Contains("hardware.tp: tp 4 x pp 1 contradicts gpu '2xrtx4090-24gb'"));
  CHECK_THROWS_AS(split_for(parse_gpu_option("2xrtx4090-24gb@pp"), {2, 1}), ConfigError);
  // The same rule where a scenario file is read.
  Json j = Json::parse(R"({"hardware": {"gpu": "2xrtx4090-24gb", "tp": 4}})");
  CHECK_THROWS_WITH(scenario_from_json(JsonView(j, "")), Catch::Contains("hardware.tp: tp 4 x pp 1 contradicts"));
}

TEST_CASE("hardware.gpu takes GPU options: resolve() splits, bridges and says which link it assumed",
          "[spec][gpu_option]") {
  const auto& cat = Catalog::builtin();
  // 70B AWQ over two 4090s as a pipeline: the scenario file names it in one field.
  Scenario s = on("2xrtx4090-24gb@pp");
  s.weights = "awq-int4";
  const auto r = resolve(s, cat);
  CHECK(r.gpu.id == "rtx4090-24gb");
  CHECK((r.scenario.hardware.parallel.tp == 1 && r.scenario.hardware.parallel.pp == 2));
  CHECK(r.scenario.hardware.gpus_total() == 2);
  CHECK(r.price_per_gpu_hour == cat.gpu("rtx4090-24gb").price_per_hour);
  CHECK_THAT(r.interconnect, Catch::Contains("without P2P"));
  CHECK(resolve(r.scenario, cat).scenario.hardware.parallel.pp == 2);  // resolving again changes nothing

  // Two A100 PCIe cards have no NVLink unless bridged; with "+nvlink" the bridge's 300 GB/s per direction
  // (600 GB/s bidirectional, A100 datasheet) is the link the cost model prices the all-reduce over.
  const auto pcie = resolve(on("2xa100-80gb-pcie"), cat);
  CHECK(pcie.gpu.nvlink_bandwidth == 0);
  CHECK_THAT(pcie.interconnect, Catch::Contains("no NVLink bridge assumed (+nvlink for a bridged pair)"));
  const auto nvl = resolve(on("2xa100-80gb-pcie+nvlink"), cat);
  CHECK(nvl.gpu.id == "a100-80gb-pcie");
  CHECK(nvl.gpu.nvlink_bandwidth == Approx(300e9));
  CHECK(nvl.scenario.hardware.parallel.tp == 2);
  CHECK_THAT(nvl.interconnect, Catch::Contains("NVLink bridge, 300 GB/s per direction"));
  CHECK(resolve(on("a100-80gb-pcie+nvlink", 2), cat).gpu.nvlink_bandwidth == Approx(300e9));

  CHECK_THAT(resolve_error(on("2xrtx4090-24gb+nvlink")),
             Catch::Contains("hardware.gpu: 'rtx4090-24gb' has no NVLink bridge connector") &&
                 Catch::Contains("a100-80gb-pcie"));
  CHECK_THAT(resolve_error(on("2xa100-80gb-sxm+nvlink")), Catch::Contains("already has NVLink"));
  CHECK_THAT(resolve_error(on("4xa100-80gb-pcie+nvlink")), Catch::Contains("joins a pair of cards"));
  CHECK_THAT(resolve_error(on("2xa100-80gb-pcie:mig-3g.40gb+nvlink")), Catch::Contains("no NVLink bridge"));
}

TEST_CASE("money has one currency: no catalogue USD price under another", "[spec][cost]") {
  const auto& cat = Catalog::builtin();
  Scenario s = on("rtx4090-24gb");
  s.model = "llama-3.1-8b";
  s.cost.currency = "HKD";
  CHECK_THAT(resolve_error(s), Catch::Contains("hardware.price_per_gpu_hour: cost.currency is HKD") &&
                                   Catch::Contains("in USD") && Catch::Contains("no exchange rate"));
  s.hardware.price_per_gpu_hour = 3.9;
  const auto r = resolve(s, cat);
  CHECK(r.price_per_gpu_hour == 3.9);
  CHECK_FALSE(r.price_is_placeholder);
  CHECK_FALSE(r.purchase_price_per_gpu);  // the catalogue's $1,599 is USD: not used as HKD
  s.cost.currency = "USD";
  CHECK(*resolve(s, cat).purchase_price_per_gpu == 1599);
  Json j = Json::parse(R"({"cost": {"currency": "usd"}})");
  auto msg = [&] {
    try {
      scenario_from_json(JsonView(j, ""));
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(msg(), Catch::Contains("cost.currency: must be an ISO 4217 code"));
}

TEST_CASE("owned-hardware fields: bad values and fields in the wrong section name the field", "[spec][cost]") {
  auto error = [](const char* text) {
    try {
      scenario_from_json(JsonView(Json::parse(text), ""));
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(error(R"({"hardware": {"electricity_per_kwh": 0.15}})"),
             Catch::Contains("hardware.electricity_per_kwh: belongs under cost (cost.electricity_per_kwh), not hardware"));
  CHECK_THAT(error(R"({"cost": {"price_per_gpu_hour": 2}})"),
             Catch::Contains("cost.price_per_gpu_hour: belongs under hardware (hardware.price_per_gpu_hour)"));
  CHECK_THAT(error(R"({"cost": {"electricity_per_kwh": -0.1}})"), Catch::Contains("cost.electricity_per_kwh: must be >= 0, got -0.1"));
  CHECK_THAT(error(R"({"cost": {"pue": 0.8}})"), Catch::Contains("cost.pue: must be in [1, 5]"));
  CHECK_THAT(error(R"({"cost": {"depreciation_years": 0}})"), Catch::Contains("cost.depreciation_years"));
  CHECK_THAT(error(R"({"cost": {"hosting_per_gpu_month": -5}})"), Catch::Contains("cost.hosting_per_gpu_month"));
  CHECK_THAT(error(R"({"hardware": {"purchase_price_per_gpu": -1}})"),
             Catch::Contains("hardware.purchase_price_per_gpu: must be in [0, 1e12], got -1"));
  // Every owned-cost and price input is bounded: a huge value would make the bills it multiplies into infinite.
  for (const char* doc : {R"({"cost": {"electricity_per_kwh": 1e308}})", R"({"cost": {"hosting_per_gpu_month": 1e308}})",
                          R"({"hardware": {"purchase_price_per_gpu": 1e308}})"})
    CHECK_THAT(error(doc), Catch::Contains("must be"));
  Json doc = Json::object();
  CHECK_THROWS_WITH(set_json_path(doc, "hardware.electricity_per_kwh", 0.1), Catch::Contains("belongs under cost"));
  // Round trip of the new fields.
  const Scenario s = scenario_from_json(JsonView(Json::parse(
      R"({"hardware": {"purchase_price_per_gpu": 1500}, "cost": {"currency": "HKD", "electricity_per_kwh": 1.2,
          "pue": 1.4, "depreciation_years": 4, "hosting_per_gpu_month": 100}})"), ""));
  const Scenario back = scenario_from_json(JsonView(to_json(s), ""));
  CHECK(back.cost.currency == "HKD");
  CHECK(*back.cost.electricity_per_kwh == 1.2);
  CHECK(back.cost.pue == 1.4);
  CHECK(*back.hardware.purchase_price_per_gpu == 1500);
}

TEST_CASE("a tp or pp given as 1 counts against a counted GPU option; one not given takes the option's split",
          "[spec][gpu_option]") {
  const auto two = parse_gpu_option("2xa100-80gb-sxm");
  const auto two_pp = parse_gpu_option("2xa100-80gb-sxm@pp");
  // Not given: the option's split. Given 1 for the option's own 1: agrees.
  CHECK(split_for(two, {1, 1}).tp == 2);
  CHECK(split_for(two, {1, 1, false, true}).tp == 2);                        // pp 1 given: tp 2 x pp 1
  CHECK(split_for(two_pp, {1, 1, true, false}).pp == 2);                     // tp 1 given: a pipeline of 2
  // Given 1 where the option needs 2: refused, naming both and what a "2x" option means (one replica).
  CHECK_THROWS_WITH(split_for(two, {1, 1, true, false}, "--tp"),
                    Catch::Contains("--tp: tp 1 x pp 1 contradicts gpu '2xa100-80gb-sxm' (2 GPUs, tp 2, pp 1)") &&
                        Catch::Contains("one replica of 2 GPUs: for 2 replicas of tp 1 x pp 1"));
  CHECK_THROWS_WITH(split_for(two_pp, {1, 1, false, true}), Catch::Contains("tp 1 x pp 1 contradicts"));
  CHECK_THROWS_AS(split_for(two, {1, 1, true, true}), ConfigError);
  // A given tp never turns a tensor-parallel option into a pipeline; a given pp alone leaves tp = N / pp.
  CHECK_THROWS_AS(split_for(parse_gpu_option("4xa100-80gb-sxm"), {2, 1, true, false}), ConfigError);
  const auto pipe = split_for(parse_gpu_option("4xa100-80gb-sxm"), {1, 2, false, true});
  CHECK((pipe.tp == 2 && pipe.pp == 2));
  // No count: as given, whatever was written.
  CHECK(split_for(parse_gpu_option("a100-80gb-sxm"), {1, 1, true, true}).gpus() == 1);
}

TEST_CASE("a scenario's explicit tp 1 beside a 2x option is refused wherever it is written", "[spec][gpu_option]") {
  auto read = [](const char* text) {
    Json j = Json::parse(text);
    return scenario_from_json(JsonView(j, ""));
  };
  CHECK_THROWS_WITH(read(R"({"hardware": {"gpu": "2xa100-80gb-sxm", "tp": 1}})"),
                    Catch::Contains("hardware.tp: tp 1 x pp 1 contradicts gpu '2xa100-80gb-sxm'"));
  CHECK_THROWS_WITH(read(R"({"hardware": {"gpu": "2xa100-80gb-sxm@pp", "pp": 1}})"), Catch::Contains("contradicts"));
  // vLLM's name for it, in the file or set as a path, is the same field.
  CHECK_THROWS_WITH(read(R"({"hardware": {"gpu": "2xa100-80gb-sxm"}, "engine": {"tensor_parallel_size": 1}})"),
                    Catch::Contains("contradicts"));
  CHECK_THROWS_WITH(read(R"({"hardware": {"gpu": "2xa100-80gb-sxm"}, "tensor_parallel_size": 1})"),
                    Catch::Contains("contradicts"));
  CHECK_THROWS_WITH(read(R"({"disaggregation": {"prefill": {"gpu": "2xh100-80gb-sxm", "tp": 1},
                                                "decode": {"gpu": "h100-80gb-sxm"},
                                                "link": {"kind": "ethernet", "bandwidth_gbps": 100}}})"),
                    Catch::Contains("disaggregation.prefill.tp: tp 1 x pp 1 contradicts"));
  // Not written, or written as the option's own split: runs.
  CHECK_NOTHROW(read(R"({"hardware": {"gpu": "2xa100-80gb-sxm"}})"));
  CHECK_NOTHROW(read(R"({"hardware": {"gpu": "2xa100-80gb-sxm", "tp": 2, "pp": 1}})"));
  CHECK_NOTHROW(read(R"({"hardware": {"gpu": "2xa100-80gb-sxm@pp", "tp": 1}})"));
  const auto& cat = Catalog::builtin();
  Json doc = Json::parse(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "2xa100-80gb-sxm", "pp": 1}})");
  CHECK(resolve(scenario_from_json(JsonView(doc, "")), cat).scenario.hardware.parallel.tp == 2);
}

TEST_CASE("placing a counted option drops the tp/pp of 1 written for the old card; a value given after it counts",
          "[spec][gpu_option]") {
  const auto& cat = Catalog::builtin();
  auto tp_of = [&](const Json& d) { return resolve(scenario_from_json(JsonView(d, "")), cat).scenario.hardware.parallel.tp; };
  Json doc = Json::parse(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm", "tp": 1, "pp": 1}})");
  Json placed = doc;
  set_json_path(placed, "hardware.gpu", Json("2xa100-80gb-sxm"));  // a grid or search card axis, Python's gpu=
  CHECK(tp_of(placed) == 2);
  set_json_path(placed, "hardware.tp", Json(1));  // given beside the option (after it): counts
  CHECK_THROWS_WITH(tp_of(placed), Catch::Contains("contradicts gpu '2xa100-80gb-sxm'"));
  placed = doc;
  set_json_path(placed, "hardware.gpu", Json("2xa100-80gb-sxm"));
  set_json_path(placed, "engine.tensor_parallel_size", Json(1));
  CHECK_THROWS_AS(tp_of(placed), ConfigError);
  // A value other than 1 stays and must agree, as before.
  placed = doc;
  placed["hardware"]["tp"] = 4;
  set_json_path(placed, "hardware.gpu", Json("2xa100-80gb-sxm"));
  CHECK_THROWS_WITH(tp_of(placed), Catch::Contains("tp 4 x pp 1 contradicts"));
  // A card without a count keeps what was written.
  placed = doc;
  set_json_path(placed, "hardware.gpu", Json("h100-80gb-sxm"));
  CHECK(placed["hardware"]["tp"] == 1);
  // Written back, a tp not given stays unwritten (reading it again gives no explicit 1), a given 1 stays given.
  Json plain = Json::parse(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"}})");
  Json again = to_json(scenario_from_json(JsonView(plain, "")));
  CHECK_FALSE(again["hardware"].contains("tp"));
  set_json_path(again, "hardware.gpu", Json("2xa100-80gb-sxm"));
  CHECK(tp_of(again) == 2);
  again = to_json(scenario_from_json(JsonView(doc, "")));
  CHECK(again["hardware"]["tp"] == 1);
  again["hardware"]["gpu"] = "2xa100-80gb-sxm";  // the file itself says both: refused
  CHECK_THROWS_AS(tp_of(again), ConfigError);
}
