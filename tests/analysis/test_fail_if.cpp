// `--fail-if 'FIELD OP VALUE'`: parsing, unknown fields and exactly-when semantics.
#include <catch2/catch.hpp>

#include "llmsim/analysis/fail_if.hpp"
#include "llmsim/analysis/row.hpp"
#include "llmsim/core/error.hpp"
#include "scenarios.hpp"

using namespace llmsim;
using analysis::CompareOp;
using analysis::parse_fail_if;
using analysis::triggers;

namespace {
const std::vector<std::string> kFields = {"ttft_ms.p95", "max_qps", "fits", "gpu", "cost_per_mtok_output_slo"};
}

TEST_CASE("fail-if conditions parse with or without spaces", "[analysis][fail_if]") {
  auto a = parse_fail_if("ttft_ms.p95 > 2000", kFields);
  CHECK(a.field == "ttft_ms.p95");
  CHECK(a.op == CompareOp::gt);
  CHECK(a.value.get<double>() == 2000);
  auto b = parse_fail_if("max_qps<=4.5", kFields);
  CHECK(b.op == CompareOp::le);
  CHECK(b.value.get<double>() == 4.5);
  CHECK(parse_fail_if("max_qps >= 1", kFields).op == CompareOp::ge);
  CHECK(parse_fail_if("max_qps < 1", kFields).op == CompareOp::lt);
  auto c = parse_fail_if("fits == false", kFields);
  CHECK(c.op == CompareOp::eq);
  CHECK(c.value.is_boolean());
  auto d = parse_fail_if("gpu != 'rtx4090-24gb'", kFields);
  CHECK(d.op == CompareOp::ne);
  CHECK(d.value.get<std::string>() == "rtx4090-24gb");
}

TEST_CASE("fail-if rejects unknown fields listing the valid ones", "[analysis][fail_if]") {
  try {
    parse_fail_if("ttft_ms.p96 > 2000", kFields);
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    CHECK(m.find("--fail-if") != std::string::npos);
    CHECK(m.find("ttft_ms.p96") != std::string::npos);
    CHECK(m.find("ttft_ms.p95") != std::string::npos);  // close match / valid list
    CHECK(m.find("max_qps") != std::string::npos);
  }
}

TEST_CASE("fail-if rejects malformed conditions", "[analysis][fail_if]") {
  CHECK_THROWS_AS(parse_fail_if("max_qps 5", kFields), ConfigError);
  CHECK_THROWS_AS(parse_fail_if("max_qps => 5", kFields), ConfigError);
  CHECK_THROWS_AS(parse_fail_if("max_qps >> 5", kFields), ConfigError);
  CHECK_THROWS_AS(parse_fail_if("> 5", kFields), ConfigError);
  CHECK_THROWS_AS(parse_fail_if("max_qps >", kFields), ConfigError);
  CHECK_THROWS_AS(parse_fail_if("gpu < abc", kFields), ConfigError);  // ordering needs a number
}

TEST_CASE("fail-if triggers exactly when the row's value satisfies the condition", "[analysis][fail_if]") {
  auto gt = parse_fail_if("ttft_ms.p95 > 2000", kFields);
  CHECK(triggers(gt, 2000.5));
  CHECK_FALSE(triggers(gt, 2000.0));
  CHECK_FALSE(triggers(gt, 10.0));
  // No number (does not fit, completed nothing, no capacity search) cannot show the bound holds: a CI gate
  // fails on it unless the caller allows missing values (--allow-missing).
  CHECK(triggers(gt, nullptr));
  CHECK_FALSE(triggers(gt, nullptr, /*allow_missing=*/true));
  auto le = parse_fail_if("max_qps <= 4", kFields);
  CHECK(triggers(le, 4.0));
  CHECK(triggers(le, 3.0));
  CHECK_FALSE(triggers(le, 4.01));
  auto fits = parse_fail_if("fits == false", kFields);
  CHECK(triggers(fits, false));
  CHECK_FALSE(triggers(fits, true));
  auto gpu = parse_fail_if("gpu == a100-80gb-sxm", kFields);
  CHECK(triggers(gpu, "a100-80gb-sxm"));
  CHECK_FALSE(triggers(gpu, "rtx4090-24gb"));

  std::vector<std::pair<std::string, Json>> row = {{"ttft_ms.p95", 2500.0}, {"max_qps", 6.0}, {"fits", true}};
  auto v = analysis::violations({gt, le, fits}, row);
  REQUIRE(v.size() == 1);
  CHECK(v[0].find("ttft_ms.p95 > 2000") != std::string::npos);
  CHECK(v[0].find("2500") != std::string::npos);
}

TEST_CASE("fail-if values are typed by the row schema: booleans are true or false only", "[analysis][fail_if]") {
  const auto schema = analysis::row_schema();
  auto kind = [&](const std::string& column) {
    for (const auto& [c, k] : schema)
      if (c == column) return k;
    FAIL("no column " << column);
    return analysis::ValueKind::any;
  };
  CHECK(kind("fits") == analysis::ValueKind::boolean);
  CHECK(kind("slo_met") == analysis::ValueKind::boolean);
  CHECK(kind("unstable") == analysis::ValueKind::boolean);
  CHECK(kind("max_qps") == analysis::ValueKind::number);
  CHECK(kind("ttft_ms.p95") == analysis::ValueKind::number);
  CHECK(kind("at_target.ttft_ms.p95") == analysis::ValueKind::number);
  CHECK(kind("gpu") == analysis::ValueKind::string);
  // These used to parse as strings that never matched, so the gate passed whatever the rows said.
  for (const char* bad : {"fits == maybe", "fits == FALSE", "fits == 0", "fits < 1", "fits == 'false'",
                          "max_qps == fast", "max_qps < 1,000", "max_qps > 0x10", "gpu > a100", "slo_met != yes"})
    CHECK_THROWS_AS(parse_fail_if(bad, schema), ConfigError);
  CHECK_THROWS_WITH(parse_fail_if("fits == maybe", schema), Catch::Contains("'fits' holds true or false"));
  CHECK(parse_fail_if("fits == false", schema).value == false);
  CHECK(parse_fail_if("slo_met != true", schema).value == true);
  CHECK(parse_fail_if("gpu == 5", schema).value == "5");  // a string column compares text
  CHECK(parse_fail_if("max_qps < 1e3", schema).value == 1000.0);
}

TEST_CASE("fail-if on a grid label takes the kind of its values", "[analysis][fail_if]") {
  const auto schema = analysis::row_schema({"workload.arrival.rate", "hardware.gpu", "mixed"},
                                           {{1.0, 2.0}, {"l4", "a100-80gb-sxm"}, {1.0, "x"}});
  CHECK(parse_fail_if("workload.arrival.rate > 1", schema).value == 1.0);
  CHECK_THROWS_AS(parse_fail_if("workload.arrival.rate > fast", schema), ConfigError);
  CHECK_THROWS_AS(parse_fail_if("hardware.gpu < l4", schema), ConfigError);
  CHECK(parse_fail_if("mixed == x", schema).value == "x");
}

TEST_CASE("a field with no value in any row is an error, not a passing gate", "[analysis][fail_if]") {
  const auto schema = analysis::row_schema();
  const auto cond = parse_fail_if("max_qps < 1000", schema);
  const std::vector<std::vector<std::pair<std::string, Json>>> none = {{{"max_qps", nullptr}}, {{"max_qps", nullptr}}};
  CHECK_THROWS_WITH(analysis::require_values({cond}, none),
                    Catch::Contains("'max_qps' has no value in any row") && Catch::Contains("--capacity"));
  const std::vector<std::vector<std::pair<std::string, Json>>> some = {{{"max_qps", nullptr}}, {{"max_qps", 12.0}}};
  CHECK_NOTHROW(analysis::require_values({cond}, some));
  // The row without a value violates the bound; the other is checked on its number.
  CHECK(analysis::violations({cond}, some[0]).size() == 1);
  CHECK_THAT(analysis::violations({cond}, some[0])[0], Catch::Contains("got no value"));
  CHECK(analysis::violations({cond}, some[0], /*allow_missing=*/true).empty());
  CHECK(analysis::violations({cond}, some[1]).size() == 1);
}

TEST_CASE("with no SLO set, slo_met and meets_slo have no verdict, and a gate on them is an error naming the field",
          "[analysis][fail_if][slo]") {
  // Issue 29: with no latency target slo_met read true (vacuous), so `--fail-if 'slo_met == false'` passed a CI job
  // on a field that said nothing. The row now writes null with slo_met_note, and the gate is refused.
  Json none = test::chat_json();
  none["slo"] = Json::object();
  none["workload"]["num_requests"] = 120;
  none["workload"]["warmup_requests"] = 20;
  const auto row = analysis::evaluate_row(test::resolve_json(none));
  const auto flat = analysis::flatten(row);
  auto at = [&](const std::string& key) {
    for (const auto& [k, v] : flat)
      if (k == key) return v;
    FAIL("no column " << key);
    return Json();
  };
  REQUIRE(row.fits);
  CHECK(at("slo_met").is_null());
  CHECK(at("meets_slo").is_null());
  CHECK_THAT(at("slo_met_note").get<std::string>(), Catch::StartsWith("no SLO set"));
  const auto schema = analysis::row_schema();
  for (const char* text : {"slo_met == false", "meets_slo != true"}) {
    const auto cond = parse_fail_if(text, schema);
    CHECK_THROWS_WITH(analysis::require_values({cond}, {flat}),
                      Catch::Contains(std::string("'") + text + "'") && Catch::Contains("has no verdict in row 0") &&
                          Catch::Contains("(no SLO set: ") && Catch::Contains("slo.ttft_ms.p95"));
  }
  // Other fields of the same row gate as before; with an SLO the verdict is a bool again.
  CHECK_NOTHROW(analysis::require_values({parse_fail_if("ttft_ms.p95 > 1e9", schema)}, {flat}));
  const auto with_slo = analysis::flatten(analysis::evaluate_row(test::resolve_json(test::chat_json())));
  for (const auto& [k, v] : with_slo) {
    if (k == "slo_met" || k == "meets_slo") CHECK(v.is_boolean());
    if (k == "slo_met_note") CHECK(v.is_null());
  }
  CHECK_NOTHROW(analysis::require_values({parse_fail_if("slo_met == false", schema)}, {with_slo}));
}

TEST_CASE("with no SLO set, slo_attainment has no value either, and a gate on it is an error naming the field",
          "[analysis][fail_if][slo]") {
  // Issue 29 (tidy): slo_met became null with no target, but slo_attainment still read 1.0 (every request "met" the
  // empty SLO), so `--fail-if 'slo_attainment < 0.9'` passed a CI job on a share of nothing.
  Json none = test::chat_json();
  none["slo"] = Json::object();
  none["workload"]["num_requests"] = 120;
  none["workload"]["warmup_requests"] = 20;
  const auto flat = analysis::flatten(analysis::evaluate_row(test::resolve_json(none)));
  bool seen = false;
  for (const auto& [k, v] : flat)
    if (k == "slo_attainment" || k == "at_target.slo_attainment") {
      INFO(k);
      CHECK(v.is_null());
      seen = seen || k == "slo_attainment";
    }
  CHECK(seen);
  const auto schema = analysis::row_schema();
  for (const char* text : {"slo_attainment < 0.9", "at_target.slo_attainment < 0.9"}) {
    INFO(text);
    CHECK_THROWS_WITH(analysis::require_values({parse_fail_if(text, schema)}, {flat}),
                      Catch::Contains(std::string("'") + text + "'") && Catch::Contains("has no value in row 0") &&
                          Catch::Contains("(no SLO set: "));
  }
  // With an SLO it is a number again, and the same gate checks it.
  const auto with_slo = analysis::flatten(analysis::evaluate_row(test::resolve_json(test::chat_json())));
  for (const auto& [k, v] : with_slo)
    if (k == "slo_attainment") CHECK(v.is_number());
  CHECK_NOTHROW(analysis::require_values({parse_fail_if("slo_attainment < 0.9", schema)}, {with_slo}));
}
