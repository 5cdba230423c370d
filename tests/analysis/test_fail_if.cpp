// `--fail-if 'FIELD OP VALUE'`: parsing, unknown fields and exactly-when semantics.
#include <catch2/catch.hpp>

#include "llmsim/analysis/fail_if.hpp"
#include "llmsim/core/error.hpp"

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
  CHECK_FALSE(triggers(gt, nullptr));  // no number (does not fit): not this bound's business
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
