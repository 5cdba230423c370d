// The scenario pre-pass: vLLM's key and value names, and partial scenarios merged onto the defaults.
#include <catch2/catch.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/scenario.hpp"
#include "llmsim/spec/scenario_prepass.hpp"

using namespace llmsim;
using namespace llmsim::spec;

namespace {

Scenario parse(const char* text) { return scenario_from_text(text, "test"); }

std::string prepass_error_of(const char* text) {
  try {
    parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a partial arrival merges onto the default process (was: process missing)") {
  const Scenario s = parse(R"({"workload": {"arrival": {"rate": 8}}})");
  REQUIRE(std::holds_alternative<PoissonArrivals>(s.workload.arrival));
  CHECK(std::get<PoissonArrivals>(s.workload.arrival).rate == 8);
  // Everything else keeps its documented default.
  const Scenario d;
  CHECK(s.model == d.model);
  CHECK(s.workload.num_requests == d.workload.num_requests);
  CHECK(to_json(s)["workload"]["input_tokens"] == to_json(d)["workload"]["input_tokens"]);
}

TEST_CASE("a partial length keeps the default distribution and its other fields") {
  const Scenario s = parse(R"({"workload": {"input_tokens": {"mean": 600}}})");
  REQUIRE(std::holds_alternative<LogNormalLength>(s.workload.input_tokens));
  const auto& l = std::get<LogNormalLength>(s.workload.input_tokens);
  CHECK(l.mean == 600);
  CHECK(l.sigma == std::get<LogNormalLength>(Workload{}.input_tokens).sigma);  // the workload default (1.0)
}

TEST_CASE("naming another variant starts from that variant's defaults, not the old variant's fields") {
  // The default input length is lognormal {mean, sigma}: a uniform must not inherit them (unknown keys).
  Scenario s = parse(R"({"workload": {"input_tokens": {"dist": "uniform", "max": 100}}})");
  REQUIRE(std::holds_alternative<UniformLength>(s.workload.input_tokens));
  CHECK(std::get<UniformLength>(s.workload.input_tokens).min == UniformLength{}.min);
  CHECK(std::get<UniformLength>(s.workload.input_tokens).max == 100);
  s = parse(R"({"workload": {"output_tokens": {"dist": "fixed"}}})");
  REQUIRE(std::holds_alternative<FixedLength>(s.workload.output_tokens));
  CHECK(std::get<FixedLength>(s.workload.output_tokens).value == FixedLength{}.value);
  s = parse(R"({"workload": {"arrival": {"process": "closed", "concurrency": 4}}})");
  REQUIRE(std::holds_alternative<ClosedLoop>(s.workload.arrival));
  CHECK(std::get<ClosedLoop>(s.workload.arrival).concurrency == 4);
  s = parse(R"({"workload": {"arrival": {"process": "gamma", "rate": 3}}})");
  REQUIRE(std::holds_alternative<GammaArrivals>(s.workload.arrival));
  CHECK(std::get<GammaArrivals>(s.workload.arrival).cv == GammaArrivals{}.cv);
  // An unknown variant still fails, listing the valid ones.
  CHECK_THAT(prepass_error_of(R"({"workload": {"arrival": {"process": "poison"}}})"), Catch::Contains("poisson"));
}

TEST_CASE("tenant classes: partial arrivals and lengths start from a class's defaults") {
  const Scenario s = parse(R"({"workload": {"classes": [{"arrival": {"rate": 2}},
                                                         {"output_tokens": {"dist": "uniform", "max": 64}}]}})");
  REQUIRE(s.workload.classes.size() == 2);
  REQUIRE(std::holds_alternative<PoissonArrivals>(s.workload.classes[0].arrival));
  CHECK(std::get<PoissonArrivals>(s.workload.classes[0].arrival).rate == 2);
  REQUIRE(std::holds_alternative<UniformLength>(s.workload.classes[1].output_tokens));
  CHECK(std::get<UniformLength>(s.workload.classes[1].output_tokens).max == 64);
}

TEST_CASE("null removes a field (merge patch), leaving its default") {
  const Scenario s = parse(R"({"hardware": {"gpu": "rtx4090-24gb", "price_per_gpu_hour": null}})");
  CHECK(s.hardware.gpu == "rtx4090-24gb");
  CHECK_FALSE(s.hardware.price_per_gpu_hour.has_value());
}

TEST_CASE("a complete scenario is unchanged by the pre-pass") {
  Scenario full;
  full.name = "x";
  full.hardware.parallel.tp = 2;
  full.workload.arrival = GammaArrivals{3, 1.5};
  full.workload.input_tokens = UniformLength{10, 20};
  const Json j = to_json(full);
  CHECK(prepare_scenario_json(JsonView(j, "")) == j);
  CHECK(to_json(scenario_from_json(JsonView(j, ""))) == j);
}

TEST_CASE("vLLM's engine-argument names are accepted and shown canonical") {
  const Scenario s = parse(R"({"engine": {"tensor_parallel_size": 2, "pipeline_parallel_size": 1,
      "enable_chunked_prefill": true, "kv_cache_dtype": "fp8_e4m3", "quantization": "awq", "enforce_eager": true,
      "max_num_seqs": 128}})");
  CHECK(s.hardware.parallel.tp == 2);
  CHECK(s.engine.chunked_prefill());
  CHECK(s.kv_cache == "fp8");
  CHECK(s.weights == "awq-int4");
  CHECK_FALSE(s.engine.cuda_graphs);
  CHECK(s.engine.max_num_seqs == 128);
  const Json out = to_json(s);
  CHECK_FALSE(out["engine"].contains("tensor_parallel_size"));
  CHECK_FALSE(out["engine"].contains("enforce_eager"));
  CHECK(out["quant"]["kv_cache"] == "fp8");
  CHECK(out["hardware"]["tp"] == 2);
  // Swapping needs V0 (vLLM V1 preempts by recompute only): without chunked prefill the names select it.
  const Scenario v0 = parse(R"({"engine": {"enable_chunked_prefill": false, "swap_space": 8,
      "preemption_mode": "swap"}})");
  CHECK(v0.engine.policy == SchedulerPolicy::vllm_v0);
  CHECK(v0.engine.swap_space_gb == 8);
  CHECK(v0.engine.preemption == PreemptionMode::swap);
}

TEST_CASE("--enable-chunked-prefill on a V0 release selects V0's chunked prefill, not the release's default") {
  // vLLM 0.5/0.6 run prefill-first unless --enable-chunked-prefill (or max_model_len > 32K) turns chunking on: the
  // switch must not be dropped because the release's default scheduler does not chunk (it was, before this test).
  const Scenario on = parse(R"({"engine": {"runtime": "vllm==0.6.3", "enable_chunked_prefill": true,
      "max_num_batched_tokens": 512}})");
  CHECK(on.engine.policy == SchedulerPolicy::chunked);
  CHECK(on.engine.chunked_prefill());
  const Scenario off = parse(R"({"engine": {"runtime": "vllm==0.6.3", "enable_chunked_prefill": false}})");
  CHECK(off.engine.policy == SchedulerPolicy::vllm_v0);
  const Scenario flat = parse(R"({"engine": {"runtime": "vllm==0.5.5"}, "enable_chunked_prefill": true})");
  CHECK(flat.engine.chunked_prefill());
  const Scenario v1 = parse(R"({"engine": {"runtime": "vllm==0.10.1", "enable_chunked_prefill": true}})");
  CHECK(v1.engine.policy == SchedulerPolicy::vllm);
}

TEST_CASE("a flat vLLM config (as `vllm serve --config` takes) works at the top level") {
  const Scenario s = parse(R"({"model": "llama-3.1-8b", "tensor_parallel_size": 2, "max_num_seqs": 64,
      "gpu_memory_utilization": 0.85, "max_model_len": 4096, "dtype": "bfloat16", "enable_prefix_caching": true,
      "block_size": 32, "data_parallel_size": 2, "enable_chunked_prefill": false, "cpu_offload_gb": 4})");
  CHECK(s.hardware.parallel.tp == 2);
  CHECK(s.hardware.replicas == 2);
  CHECK(s.engine.max_num_seqs == 64);
  CHECK(s.engine.gpu_memory_utilization == 0.85);
  CHECK(s.engine.max_model_len == 4096);
  CHECK(s.engine.block_size == 32);
  CHECK(s.engine.enable_prefix_caching);
  CHECK(s.engine.cpu_offload_gb == 4);
  CHECK_FALSE(s.engine.chunked_prefill());
  CHECK(s.weights == "bf16");
}

TEST_CASE("vLLM's values in the canonical fields") {
  Scenario s = parse(R"({"quant": {"weights": "AWQ", "kv_cache": "fp8_e5m2"}})");
  CHECK(s.weights == "awq-int4");
  CHECK(s.kv_cache == "fp8");
  s = parse(R"({"quant": {"weights": "gptq_marlin", "kv_cache": "auto"}})");
  CHECK(s.weights == "gptq-int4");
  s = parse(R"({"quant": {"weights": "bitsandbytes"}})");
  CHECK(s.weights == "nf4");
}

TEST_CASE("an alias that disagrees with its canonical field is an error naming both") {
  std::string e = prepass_error_of(R"({"hardware": {"tp": 1}, "engine": {"tensor_parallel_size": 2}})");
  CHECK_THAT(e, Catch::Contains("engine.tensor_parallel_size"));
  CHECK_THAT(e, Catch::Contains("hardware.tp"));
  // Two aliases of one field that disagree name each other.
  e = prepass_error_of(R"({"tensor_parallel_size": 4, "engine": {"tensor_parallel_size": 2}})");
  CHECK_THAT(e, Catch::Contains("tensor_parallel_size"));
  // Agreeing is fine.
  CHECK(parse(R"({"hardware": {"tp": 2}, "engine": {"tensor_parallel_size": 2}})").hardware.parallel.tp == 2);
  // Policies that do not chunk prefill (static) or do (chunked) against the switch.
  CHECK_THAT(prepass_error_of(R"({"engine": {"policy": "static", "enable_chunked_prefill": true}})"),
             Catch::Contains("engine.enable_chunked_prefill"));
  CHECK_THAT(prepass_error_of(R"({"engine": {"policy": "chunked", "enable_chunked_prefill": false}})"),
             Catch::Contains("engine.policy 'chunked'"));
  CHECK_THAT(prepass_error_of(R"({"quant": {"weights": "fp16", "kv_cache": "fp8"}, "engine": {"kv_cache_dtype": "auto"}})"),
             Catch::Contains("quant.kv_cache"));
  CHECK_THAT(prepass_error_of(R"({"quant": {"weights": "fp16"}, "dtype": "bfloat16"})"), Catch::Contains("dtype"));
  CHECK_THAT(prepass_error_of(R"({"engine": {"quantization": "awq", "enforce_eager": false, "cuda_graphs": false}})"),
             Catch::Contains("engine.enforce_eager"));
}

TEST_CASE("dtype with a quantized format is the activation type, not a conflict") {
  const Scenario s = parse(R"({"quantization": "gptq", "dtype": "float16"})");
  CHECK(s.weights == "gptq-int4");
}

TEST_CASE("vLLM values llmsim cannot map say why, at the user's path") {
  CHECK_THAT(prepass_error_of(R"({"engine": {"quantization": "gguf"}})"), Catch::Contains("gguf-q4_k_m"));
  CHECK_THAT(prepass_error_of(R"({"engine": {"quantization": "compressed-tensors"}})"), Catch::Contains("quant.weights"));
  CHECK_THAT(prepass_error_of(R"({"engine": {"quantization": "squeezellm"}})"), Catch::Contains("engine.quantization"));
  CHECK_THAT(prepass_error_of(R"({"dtype": "float32"})"), Catch::Contains("not modelled"));
  CHECK_THAT(prepass_error_of(R"({"engine": {"tensor_parallel_size": "two"}})"), Catch::Contains("engine.tensor_parallel_size"));
  CHECK_THAT(prepass_error_of(R"({"engine": {"enforce_eager": 1}})"), Catch::Contains("engine.enforce_eager"));
  // Unknown names are still unknown keys of the section, listing the valid ones.
  CHECK_THAT(prepass_error_of(R"({"engine": {"max_num_seq": 3}})"), Catch::Contains("max_num_seqs"));
  // The root must be an object.
  CHECK_THAT(prepass_error_of("[1, 2]"), Catch::Contains("object"));
}

TEST_CASE("a bad value set by vLLM's name is named once, as written (--set, grid axes, keywords, server lines)") {
  // attack11: the alias pass viewed its one-key document at the written path, so the key came twice:
  // "max_num_seqs.max_num_seqs: expected an integer", "engine.kv_cache_dtype.engine.kv_cache_dtype: ...".
  for (const auto& [path, value] : std::vector<std::pair<std::string, Json>>{
           {"max_num_seqs", "abc"}, {"tensor_parallel_size", 1.5},
           {"engine.kv_cache_dtype", Json::array({1})}, {"max_model_len", "abc"}}) {
    INFO(path);
    Json doc = Json::parse(R"({"model": "llama-3.1-8b"})");
    try {
      set_json_path(doc, path, value);
      FAIL("accepted");
    } catch (const ConfigError& e) {
      CHECK(e.path() == path);
      CHECK_THAT(std::string(e.what()), Catch::StartsWith(path + ": ") && !Catch::Contains(path + "." + path));
    }
  }
}

TEST_CASE("an inline trace replays given requests and round-trips") {
  const Scenario s = parse(R"({"workload": {"arrival": {"process": "trace",
                                                         "requests": [[0, 10, 5], [0.5, 20, 0]]}}})");
  REQUIRE(std::holds_alternative<TraceReplay>(s.workload.arrival));
  const auto& t = std::get<TraceReplay>(s.workload.arrival);
  REQUIRE(t.requests.size() == 2);
  CHECK(t.requests[1].arrival_s == 0.5);
  CHECK(t.requests[1].input_tokens == 20);
  CHECK(t.requests[1].output_tokens == 0);
  CHECK(to_json(scenario_from_json(JsonView(to_json(s), ""))) == to_json(s));
  CHECK_THAT(prepass_error_of(R"({"workload": {"arrival": {"process": "trace", "requests": [[0, 0, 5]]}}})"),
             Catch::Contains("workload.arrival.requests[0]"));
  CHECK_THAT(prepass_error_of(R"({"workload": {"arrival": {"process": "trace", "requests": [[0, 5]]}}})"),
             Catch::Contains("workload.arrival.requests[0]"));
}
