#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"
#include "llmsim/spec/scenario_prepass.hpp"
#include "scenario_error.hpp"

using namespace llmsim;
using namespace llmsim::spec;

namespace {
// The example of DESIGN.md's "Scenario format".
const char* kDesignExample = R"({
  "model": "llama-3.1-8b",
  "quant": {"weights": "fp16", "kv_cache": "fp16"},
  "hardware": {"gpu": "a100-80gb-sxm", "tp": 1, "pp": 1, "replicas": 1, "price_per_gpu_hour": 1.80},
  "engine": {"policy": "vllm", "max_num_seqs": 256, "max_num_batched_tokens": 8192,
             "block_size": 16, "gpu_memory_utilization": 0.90, "preemption": "recompute"},
  "workload": {"arrival": {"process": "poisson", "rate": 4.0},
               "input_tokens": {"dist": "lognormal", "mean": 512, "sigma": 0.8},
               "output_tokens": {"dist": "fixed", "value": 256},
               "num_requests": 2000, "warmup_requests": 100, "seed": 1},
  "slo": {"ttft_ms": {"p95": 2000}, "tpot_ms": {"p95": 100}}
})";

Json design() { return parse_json(kDesignExample, "design"); }

}  // namespace

TEST_CASE("DESIGN.md example parses with the values it states") {
  const Scenario s = scenario_from_text(kDesignExample, "design");
  CHECK(s.model == "llama-3.1-8b");
  CHECK(s.hardware.gpu == "a100-80gb-sxm");
  REQUIRE(s.hardware.price_per_gpu_hour);
  CHECK(*s.hardware.price_per_gpu_hour == 1.80);
  CHECK(s.engine.max_num_batched_tokens == 8192);
  CHECK(std::get<PoissonArrivals>(s.workload.arrival).rate == 4.0);
  CHECK(std::get<LogNormalLength>(s.workload.input_tokens).mean == 512);
  CHECK(std::get<FixedLength>(s.workload.output_tokens).value == 256);
  REQUIRE(s.slo.targets.size() == 2);
  CHECK(s.slo.targets[0].metric == SloMetric::ttft);
  CHECK(s.slo.targets[0].percentile == 95);
  CHECK(s.slo.targets[0].max_ms == 2000);
  CHECK(s.slo.targets[1].metric == SloMetric::tpot);
}

TEST_CASE("defaults fill an empty scenario") {
  const Scenario s = scenario_from_text("{}", "empty");
  CHECK(s.model == "llama-3.1-8b");
  CHECK(s.engine.gpu_memory_utilization == 0.90);
  CHECK(s.workload.num_requests == 2000);
  CHECK(s.slo.empty());
}

TEST_CASE("to_json round-trips exactly") {
  Json j = design();
  j["workload"]["classes"] = Json::array(
      {{{"name", "chat"},
        {"arrival", {{"process", "gamma"}, {"rate", 1.7}, {"cv", 3.1}}},
        {"input_tokens", {{"dist", "normal"}, {"mean", 700.5}, {"stddev", 80}, {"min", 10}, {"max", 4000}}},
        {"output_tokens", {{"dist", "empirical"}, {"values", {12, 400, 33}}}},
        {"slo", {{"e2e_ms", {{"p99.9", 30000}}}, {"min_attainment", 0.95}}}},
       {{"name", "batch"},
        {"arrival", {{"process", "onoff"}, {"rate_on", 5}, {"on_s", 30}, {"off_s", 90}, {"rate_off", 0.25}}},
        {"input_tokens", {{"dist", "uniform"}, {"min", 100}, {"max", 300}}},
        {"prefix_tokens", 64},
        {"prefix_groups", 3}}});
  j["engine"]["synthetic_service"] = {{"kind", "lognormal"}, {"mean_s", 0.123456789012345}, {"cv", 0.5}};
  j["slo"]["itl_ms"] = {{"p50", 40.25}};
  j["cost"] = {{"storage_per_month", 12.5}, {"ops_overhead_fraction", 0.1}};
  const Scenario s1 = scenario_from_json(JsonView(j, ""));
  const Json out1 = to_json(s1);
  const Scenario s2 = scenario_from_json(JsonView(out1, ""));
  CHECK(to_json(s2) == out1);
  CHECK(out1["workload"]["classes"][0]["slo"]["e2e_ms"].contains("p99.9"));
  CHECK(out1["engine"]["synthetic_service"]["mean_s"].get<double>() == 0.123456789012345);
  CHECK(s2.workload.classes.size() == 2);
  CHECK(std::get<OnOffArrivals>(s2.workload.classes[1].arrival).rate_off == 0.25);
  CHECK(std::get<EmpiricalLength>(s2.workload.classes[0].output_tokens).values.size() == 3);
  // the dumped text parses to the same scenario too (the Python binding passes text)
  CHECK(to_json(scenario_from_text(out1.dump(), "dump")) == out1);
}

TEST_CASE("unknown keys are rejected listing the valid ones") {
  Json j = design();
  j["engine"]["max_num_seq"] = 3;
  const auto msg = test::scenario_error_of(j);
  CHECK_THAT(msg, Catch::StartsWith("engine.max_num_seq"));
  CHECK_THAT(msg, Catch::Contains("did you mean 'max_num_seqs'"));
  j = design();
  j["modle"] = "x";
  CHECK_THAT(test::scenario_error_of(j), Catch::Contains("valid: name, model"));
  j = design();
  j["workload"]["arrival"]["cv"] = 2;  // poisson has no cv
  CHECK_THAT(test::scenario_error_of(j), Catch::StartsWith("workload.arrival.cv"));
  j = design();
  j["workload"]["arrival"]["process"] = "poison";
  CHECK_THAT(test::scenario_error_of(j), Catch::Contains("did you mean 'poisson'"));
}

TEST_CASE("bad values name the field and the value") {
  Json j = design();
  j["workload"]["output_tokens"]["value"] = -5;
  auto msg = test::scenario_error_of(j);
  CHECK_THAT(msg, Catch::Contains("workload.output_tokens.value"));
  CHECK_THAT(msg, Catch::Contains("-5"));
  j = design();
  j["workload"]["arrival"]["rate"] = -3;
  CHECK_THAT(test::scenario_error_of(j), Catch::Contains("workload.arrival.rate: must be > 0, got -3"));
  j = design();
  j["engine"]["gpu_memory_utilization"] = 1.5;
  CHECK_THAT(test::scenario_error_of(j), Catch::Contains("engine.gpu_memory_utilization"));
  j = design();
  j["slo"]["ttft_ms"] = {{"p0", 100}};
  CHECK_THAT(test::scenario_error_of(j), Catch::Contains("slo.ttft_ms.p0"));
  j = design();
  j["slo"]["ttft_ms"] = {{"p101", 100}};
  CHECK_THAT(test::scenario_error_of(j), Catch::Contains("(0, 100]"));
  j = design();
  j["slo"]["ttft_ms"] = {{"95", 100}};
  CHECK_THAT(test::scenario_error_of(j), Catch::Contains("percentile key"));
  j = design();
  j["hardware"]["tp"] = 0;
  j["workload"]["num_requests"] = 0;
  msg = test::scenario_error_of(j);  // both problems in one error
  CHECK_THAT(msg, Catch::Contains("hardware.tp"));
  CHECK_THAT(msg, Catch::Contains("workload.num_requests"));
  CHECK_THAT(test::scenario_error_of(parse_json("[1,2]", "t")), Catch::Contains("expected an object"));
  CHECK_THROWS_AS(scenario_from_text("{\"model\": ", "t"), ConfigError);
}

TEST_CASE("set_json_path sets scenario fields and rejects others") {
  Json j = design();
  set_json_path(j, "hardware.gpu", "rtx4090-24gb");
  set_json_path(j, "workload.arrival.rate", 8);
  set_json_path(j, "quant.weights", "awq-int4");
  set_json_path(j, "cost.network_gbps", 10);
  set_json_path(j, "slo.e2e_ms.p99", 20000);
  const Scenario s = scenario_from_json(JsonView(j, ""));
  CHECK(s.hardware.gpu == "rtx4090-24gb");
  CHECK(std::get<PoissonArrivals>(s.workload.arrival).rate == 8);
  CHECK(s.weights == "awq-int4");
  CHECK(s.cost.network_gbps == 10);
  CHECK(s.slo.targets.size() == 3);
  CHECK_THROWS_WITH(set_json_path(j, "hardware.gpus", "x"), Catch::Contains("did you mean 'gpu'"));
  CHECK_THROWS_AS(set_json_path(j, "model.id", "x"), ConfigError);
  CHECK_THROWS_AS(set_json_path(j, "workload.arrival.speed", 1), ConfigError);
  CHECK_THROWS_AS(set_json_path(j, "engine..block_size", 1), ConfigError);
  Json empty = Json::object();
  set_json_path(empty, "engine.block_size", 32);
  CHECK(empty["engine"]["block_size"] == 32);
}

TEST_CASE("resolve checks cross-field rules") {
  const auto& cat = Catalog::builtin();
  Scenario s = scenario_from_text(kDesignExample, "design");
  const auto r = resolve(s, cat);
  CHECK(r.model.id == "llama-3.1-8b");
  CHECK(r.gpu.id == "a100-80gb-sxm");
  CHECK(r.price_per_gpu_hour == 1.80);
  // vllm (V1) chunks prompts, so without an explicit limit the context is the model's, as in vLLM V1; V0's
  // prefill-first policy must fit a prompt in one iteration's budget
  CHECK(r.max_model_len == 131072);
  Scenario v0 = s;
  v0.engine.policy = SchedulerPolicy::vllm_v0;
  CHECK(resolve(v0, cat).max_model_len == 8192);
  s.hardware.parallel.tp = 3;
  CHECK_THROWS_WITH(resolve(s, cat), Catch::Contains("hardware.tp: must divide the model's num_attention_heads (32), got 3"));
  s.hardware.parallel.tp = 2;
  s.hardware.parallel.pp = 5;  // 32 layers over 5 stages: vLLM's uneven split (spec::pp_stage_layers), not an error
  CHECK_NOTHROW(resolve(s, cat));
  s.hardware.parallel.pp = 1;
  s.engine.max_model_len = 200000;
  CHECK_THROWS_WITH(resolve(s, cat), Catch::Contains("engine.max_model_len"));
  s.engine.max_model_len = 4096;
  s.workload.input_tokens = FixedLength{5000};
  CHECK_THROWS_WITH(resolve(s, cat), Catch::Contains("workload.input_tokens"));
  s.workload.input_tokens = FixedLength{500};
  s.hardware.gpu = "a100-80gb";
  CHECK_THROWS_WITH(resolve(s, cat), Catch::Contains("hardware.gpu: unknown GPU"));
  s.hardware.gpu = "a100-80gb-sxm";
  s.hardware.price_per_gpu_hour.reset();
  s.weights = "fp8";
  const auto r2 = resolve(s, cat);
  CHECK(r2.price_per_gpu_hour == cat.gpu("a100-80gb-sxm").price_per_hour);
  CHECK(r2.quant.weights.compute_dtype == DType::fp16);  // W8A16 fallback on Ampere
  s.engine.policy = SchedulerPolicy::chunked;
  s.engine.max_model_len = 0;
  CHECK(resolve(s, cat).max_model_len == 131072);
}

TEST_CASE("the shipped example scenario resolves") {
  const auto path = std::filesystem::path(LLMSIM_SOURCE_DIR) / "examples/scenarios/chat-8b.json";
  const Scenario s = scenario_from_text(read_text_file(path.string(), "scenario"), path.string());
  const auto r = resolve(s, Catalog::builtin());
  CHECK(r.max_model_len == 8192);
  CHECK(std::get<LogNormalLength>(s.workload.input_tokens).mean == 1150);
}

TEST_CASE("a path may use vLLM's names: --set, grid axes and keyword overrides map them like the file", "[vocabulary]") {
  Json doc = design();
  doc["hardware"]["tp"] = 1;
  set_json_path(doc, "engine.tensor_parallel_size", Json(2));  // replaces hardware.tp, as a path always does
  set_json_path(doc, "kv_cache_dtype", Json("fp8_e4m3"));
  set_json_path(doc, "engine.enforce_eager", Json(true));
  set_json_path(doc, "max_num_seqs", Json(64));
  const Scenario s = scenario_from_json(JsonView(doc, ""));
  CHECK(s.hardware.parallel.tp == 2);
  CHECK(s.kv_cache == "fp8");
  CHECK_FALSE(s.engine.cuda_graphs);
  CHECK(s.engine.max_num_seqs == 64);
  CHECK(doc["hardware"]["tp"] == 2);
  CHECK_FALSE(doc["engine"].contains("tensor_parallel_size"));  // written as llmsim's field, not the alias
  // A vLLM name in a section vLLM does not put it in is still an unknown field, with the valid ones listed.
  CHECK_THROWS_WITH(set_json_path(doc, "workload.tensor_parallel_size", Json(2)), Catch::Contains("scenario field"));
  // A value that is no KV dtype is refused when the scenario is read, naming llmsim's field.
  set_json_path(doc, "engine.kv_cache_dtype", Json("fp3"));
  CHECK_THROWS_WITH(scenario_from_json(JsonView(doc, "")), Catch::Contains("quant.kv_cache"));
}

TEST_CASE("a vLLM name set under a section it maps out of leaves that section's other fields", "[vocabulary]") {
  // engine.tensor_parallel_size writes hardware.tp: the engine section it was written under must keep its
  // max_model_len, enable_prefix_caching, ... (it was replaced by {} when the scenario named no runtime).
  // Every alias whose field lives in another section than one it is accepted under, with a value it takes:
  const std::map<std::string, Json> value{{"tensor_parallel_size", 2}, {"pipeline_parallel_size", 2},
                                          {"data_parallel_size", 2},   {"kv_cache_dtype", "fp8"},
                                          {"quantization", "awq"},     {"dtype", "bfloat16"},
                                          {"kv_offloading_size", 4},   {"cuda_graph_max_bs", 64}};
  int crossing = 0;
  for (const auto& a : vllm_aliases()) {
    const std::string target_section = a.target.substr(0, a.target.find('.'));
    for (const auto& section : a.sections) {
      if (section.empty() || section == target_section) continue;
      ++crossing;
      INFO(section + "." + a.name);
      REQUIRE(value.count(a.name) == 1);  // a new crossing alias needs a value here
      Json doc = design();
      doc["engine"]["max_model_len"] = 4096;
      doc["engine"]["enable_prefix_caching"] = true;
      doc["quant"] = {{"weights", "fp16"}, {"kv_cache", "fp16"}};
      doc["hardware"]["replicas"] = 1;
      const Json before = doc;
      set_json_path(doc, section + "." + a.name, value.at(a.name));
      for (auto it = before[section].begin(); it != before[section].end(); ++it) {
        const std::string field = section + "." + it.key();
        if (field == a.target) continue;
        INFO(field);
        REQUIRE(doc[section].contains(it.key()));
        CHECK(doc[section][it.key()] == it.value());
      }
      CHECK_NOTHROW(scenario_from_json(JsonView(doc, "")));
    }
  }
  CHECK(crossing >= 5);
}

TEST_CASE("metrics.percentiles: extra percentiles to report, validated with the field named") {
  Json j = design();
  j["metrics"] = {{"percentiles", {75, 99.9, 12.5}}};
  const Scenario s = scenario_from_json(JsonView(j, ""));
  CHECK(s.metrics.percentiles == std::vector<double>{75, 99.9, 12.5});
  // It round-trips, and a scenario without it writes no metrics section (the JSON of every existing run unchanged).
  CHECK(scenario_from_json(JsonView(to_json(s), "")).metrics.percentiles == s.metrics.percentiles);
  CHECK_FALSE(to_json(scenario_from_json(JsonView(design(), ""))).contains("metrics"));
  j["metrics"] = nullptr;
  CHECK(scenario_from_json(JsonView(j, "")).metrics.empty());
  // Bad values: out of (0, 100), a duplicate, not a number, not a list, an unknown key, too many.
  auto err = [](const Json& metrics) {
    Json d = design();
    d["metrics"] = metrics;
    return test::scenario_error_of(d);
  };
  CHECK_THAT(err({{"percentiles", {0}}}), Catch::Contains("metrics.percentiles[0]") && Catch::Contains("(0, 100)"));
  CHECK_THAT(err({{"percentiles", {50, 100}}}), Catch::Contains("metrics.percentiles[1]") && Catch::Contains("got 100"));
  CHECK_THAT(err({{"percentiles", {-5}}}), Catch::Contains("metrics.percentiles[0]") && Catch::Contains("got -5"));
  CHECK_THAT(err({{"percentiles", {1e300}}}), Catch::Contains("metrics.percentiles[0]"));
  // Every percentile accepted is one whose output key ("p" + the number) the key reader takes back: no exponents.
  for (const double q : {1e-320, 1e-5, 0.00004}) {
    INFO(q);
    CHECK_THAT(err({{"percentiles", {q}}}), Catch::Contains("metrics.percentiles[0]") && Catch::Contains("reads back"));
  }
  for (const double q : {0.0001, 0.5, 12.5, 99.9, 99.999}) {
    INFO(q);
    CHECK(err({{"percentiles", {q}}}).empty());
    CHECK(parse_percentile_key("p" + format_given(q)) == q);
  }
  CHECK_THAT(err({{"percentiles", {75, 99.9, 75}}}),
             Catch::Contains("metrics.percentiles[2]") && Catch::Contains("duplicates metrics.percentiles[0]"));
  CHECK_THAT(err({{"percentiles", {"p75"}}}), Catch::Contains("metrics.percentiles[0]"));
  CHECK_THAT(err({{"percentiles", 75}}), Catch::Contains("metrics.percentiles") && Catch::Contains("array"));
  CHECK_THAT(err({{"percentile", {75}}}), Catch::Contains("percentiles"));
  CHECK_THAT(err(75), Catch::Contains("metrics"));
  Json many = Json::array();
  for (int i = 1; i <= 101; ++i) many.push_back(i * 0.5);
  CHECK_THAT(err({{"percentiles", many}}), Catch::Contains("metrics.percentiles") && Catch::Contains("at most 100"));
  // Every problem at once, each with its own path.
  const std::string both = err({{"percentiles", {0, 50, 50}}});
  CHECK_THAT(both, Catch::Contains("metrics.percentiles[0]") && Catch::Contains("metrics.percentiles[2]"));
  // A dotted path sets it (--set, sweep axes); other sub-fields are refused with the valid one.
  Json d = design();
  set_json_path(d, "metrics.percentiles", Json::array({75, 99.9}));
  CHECK(scenario_from_json(JsonView(d, "")).metrics.percentiles == std::vector<double>{75, 99.9});
  CHECK_THROWS_WITH(set_json_path(d, "metrics.quantiles", Json::array({75})), Catch::Contains("percentiles"));
  CHECK_THROWS_WITH(set_json_path(d, "metrics.percentiles.x", 1), Catch::Contains("no sub-field"));
}
