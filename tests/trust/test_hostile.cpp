// Issue 17 reproductions below the faces: inline specs without files, values that pass field checks but overflow
// what is computed from them, and CSV inputs read as RFC 4180 with strict numbers. (The CLI and Python faces of
// the same classes are in tests/cli and tests/python.)
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/analysis/step.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/workload_source.hpp"
#include "llmsim/metrics/summary.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "trust_util.hpp"

using namespace llmsim;

namespace {

Json small() {
  return parse_json(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm", "price_per_gpu_hour": 2},
    "workload": {"arrival": {"process": "poisson", "rate": 2}, "input_tokens": {"dist": "fixed", "value": 256},
                 "output_tokens": {"dist": "fixed", "value": 32}, "num_requests": 60, "warmup_requests": 5, "seed": 3}})",
                    "small");
}

std::string error_of(const Json& scenario) {
  try {
    trust::resolve_json(scenario);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string summary_text(const Json& scenario) {
  return metrics::to_json(analysis::evaluate(trust::resolve_json(scenario)).summary).dump();
}

std::filesystem::path data_file(const std::string& rel) { return std::filesystem::path(LLMSIM_DATA_DIR) / rel; }

}  // namespace

TEST_CASE("inline model, GPU and profile objects run exactly as the same files do", "[hostile][inline]") {
  const auto gpu_file = data_file("gpus/rtx4090-24gb.json");
  const auto model_file = data_file("models/llama-3.1-8b.json");
  const auto profile_file = data_file("profiles/a100-80gb-sxm-public.json");
  REQUIRE(std::filesystem::exists(gpu_file));
  REQUIRE(std::filesystem::exists(model_file));

  Json by_file = small(), inline_doc = small();
  by_file["hardware"]["gpu"] = gpu_file.string();
  by_file["model"] = model_file.string();
  inline_doc["hardware"]["gpu"] = read_json_file(gpu_file.string());
  inline_doc["model"] = read_json_file(model_file.string());
  // The model id differs (file stem vs inline name), so compare the numbers, not the ids.
  auto numbers = [](const Json& s) {
    Json j = metrics::to_json(analysis::evaluate(trust::resolve_json(s)).summary);
    return j.dump();
  };
  CHECK(numbers(by_file) == numbers(inline_doc));
  // The parsed scenario keeps the object, so it round-trips as JSON (and prints as an object, not a string).
  const Json back = spec::to_json(spec::scenario_from_json(JsonView(inline_doc, "")));
  CHECK(back["hardware"]["gpu"].is_object());
  CHECK(back["model"].is_object());
  CHECK(spec::to_json(spec::scenario_from_json(JsonView(back, ""))) == back);

  Json with_profile = small(), profile_inline = small();
  with_profile["hardware"]["gpu_profile"] = profile_file.string();
  profile_inline["hardware"]["gpu_profile"] = read_json_file(profile_file.string());
  CHECK(summary_text(with_profile) == summary_text(profile_inline));

  // Errors inside an inline object name its fields.
  Json bad = small();
  bad["hardware"]["gpu"] = read_json_file(gpu_file.string());
  bad["hardware"]["gpu"]["memory_gib"] = -1;
  CHECK_THAT(error_of(bad), Catch::Contains("hardware.gpu.memory_gib"));
}

TEST_CASE("duplicate keys in a scenario are refused, naming both positions", "[hostile][json]") {
  CHECK_THROWS_WITH(spec::scenario_from_text(R"({"model": "llama-3.1-8b", "model": "qwen2.5-14b"})", "s.json"),
                    Catch::Contains("duplicate key 'model'") && Catch::Contains("first at line 1, column 2"));
}

TEST_CASE("values that pass their field check but overflow what is computed from them are refused", "[hostile][derived]") {
  Json price = small();
  price["hardware"]["price_per_gpu_hour"] = 1e308;  // printed "$inf/month" before
  CHECK_THAT(error_of(price), Catch::StartsWith("hardware.price_per_gpu_hour: ") && Catch::Contains("monthly bill"));
  Json big_bill = small();
  big_bill["hardware"]["price_per_gpu_hour"] = 1e7;
  big_bill["hardware"]["replicas"] = 100000;  // each factor valid, the bill ($5.8e15/month) not
  big_bill["hardware"]["tp"] = 8;
  CHECK_THAT(error_of(big_bill), Catch::Contains("monthly bill"));
  Json gpus = small();
  gpus["hardware"]["tp"] = 1024;
  gpus["hardware"]["pp"] = 1024;
  gpus["hardware"]["replicas"] = 100000;  // tp x pp x replicas overflowed an int
  CHECK_THAT(error_of(gpus), Catch::Contains("hardware.replicas: tp x pp x replicas = 104857600000 GPUs"));
  Json target = small();
  target["cost"]["target_qps"] = 1e300;
  CHECK_THAT(error_of(target), Catch::StartsWith("cost.target_qps: must be <= 1000000000"));
  Json memory = small();
  memory["hardware"]["gpu"] = read_json_file(data_file("gpus/rtx4090-24gb.json").string());
  memory["hardware"]["gpu"]["memory_gib"] = 1e15;  // reported as an int64-overflowed negative before
  CHECK_THAT(error_of(memory), Catch::StartsWith("hardware.gpu.memory_gib: must be in [0, 1000000], got 1e+15"));
  memory["hardware"]["gpu"]["memory_gib"] = 24;
  memory["hardware"]["gpu"]["sm_count"] = 1e12;  // truncated into an int before
  CHECK_THAT(error_of(memory), Catch::Contains("hardware.gpu.sm_count: must be in 1..1073741824"));
  Json model = small();
  model["model"] = read_json_file(data_file("models/llama-3.1-8b.json").string());
  model["model"]["hidden_size"] = 1 << 30;
  model["model"]["intermediate_size"] = 1 << 30;  // the parameter count overflowed int64
  CHECK_THAT(error_of(model), Catch::Contains("parameters, more than llmsim counts"));
}

TEST_CASE("trace and length CSVs: quoted fields, BOM, CR line ends, strict numbers with file:line:field", "[hostile][csv]") {
  // "1,000" was split at its comma and read as 1 token.
  CHECK_THROWS_WITH(engine::parse_trace("arrival_time_s,input_tokens,output_tokens\n0,\"1,000\",5\n", "t.csv"),
                    Catch::StartsWith("t.csv:2:2: column input_tokens: expected a whole number of tokens, got '1,000'"));
  // An Excel export: BOM, CRLF, quoted numbers.
  const auto excel = engine::parse_trace("\xEF\xBB\xBF" "arrival_time_s,input_tokens,output_tokens\r\n0,\"1000\",5\r\n1,7,\"2\"\r\n",
                                         "excel.csv");
  REQUIRE(excel.size() == 2);
  CHECK(excel[0].input_tokens == 1000);
  CHECK(excel[1].output_tokens == 2);
  // Old Mac line ends: three requests, not one header line echoed whole.
  const auto cr = engine::parse_trace("arrival_time_s,input_tokens,output_tokens\r0,1,1\r1,2,2\r2,3,3\r", "cr.csv");
  CHECK(cr.size() == 3);
  CHECK_THROWS_WITH(engine::parse_trace(std::string("a,b\r") + std::string(100000, 'x') + "\r", "big.csv"),
                    Catch::Contains("unrecognised trace header 'a,b'"));
  for (const char* bad : {"0x10", "1e3.5", "12abc", "nan", "inf", " "})
    CHECK_THROWS_AS(engine::parse_trace(std::string("arrival_time_s,input_tokens,output_tokens\n0,") + bad + ",5\n", "t"),
                    ConfigError);
  CHECK_THROWS_WITH(engine::parse_trace("arrival_time_s,input_tokens,output_tokens\n2024-01-01 00:00:00junk,5,5\n", "t"),
                    Catch::Contains("t:2:1: column arrival_time_s: not a time"));
  const auto lengths = engine::parse_csv_column("\xEF\xBB\xBF" "id,\"len\"\r\n1,\"12\"\r\n2,7\r\n", "l.csv", "len", "w.input_tokens");
  CHECK(lengths == std::vector<std::int64_t>{12, 7});
  CHECK_THROWS_WITH(engine::parse_csv_column("len\n\"1,000\"\n", "l.csv", "len", "w"), Catch::StartsWith("l.csv:2:1: column len"));
  CHECK_THROWS_WITH(engine::read_trace("/dev/zero"), Catch::Contains("is a character device"));
}

TEST_CASE("step: one rule for CLI and Python refuses a batch the memory plan cannot hold", "[hostile][step]") {
  Json s = small();
  s["model"] = "qwen2.5-14b";
  s["hardware"]["gpu"] = "rtx4090-24gb";  // 28 GB of weights on a 24 GB card
  const auto rs = trust::resolve_json(s);
  const auto cm = perf::make_cost_model(rs);
  CHECK_THROWS_WITH(analysis::step_cost(cm, rs.scenario.engine, {0, 0, 1, 512}), Catch::StartsWith("model: does not fit"));
  CHECK_THROWS_WITH(analysis::step_cost(cm, rs.scenario.engine, {0, 0, 1, 512}, analysis::StepNames::cli_flags),
                    Catch::StartsWith("--model: does not fit"));
  const auto ok = trust::resolve_json(small());
  const auto cm8 = perf::make_cost_model(ok);
  CHECK(analysis::step_cost(cm8, ok.scenario.engine, {0, 0, 8, 512}).time_s > 0);
  CHECK_THROWS_WITH(analysis::step_cost(cm8, ok.scenario.engine, {0, 0, 1000000, 8000}), Catch::StartsWith("batch: needs"));
  CHECK_THROWS_WITH(analysis::step_cost(cm8, ok.scenario.engine, {0, 0, std::int64_t{1} << 62, 100}),
                    Catch::StartsWith("batch: needs"));  // no int64 overflow on the way
  CHECK_THROWS_WITH(analysis::step_cost(cm8, ok.scenario.engine, {0, 0, 4, 0}), Catch::StartsWith("context: must be >= 1"));
}
