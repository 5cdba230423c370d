#pragma once
// Small scenarios for the analysis tests: few requests, so a capacity search takes milliseconds.
#include <string>

#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::test {

inline Json chat_json(const std::string& gpu = "a100-80gb-sxm", const std::string& model = "llama-3.1-8b",
                      const std::string& weights = "fp16") {
  return Json::parse(R"({
    "model": ")" + model + R"(",
    "quant": {"weights": ")" + weights + R"("},
    "hardware": {"gpu": ")" + gpu + R"(", "price_per_gpu_hour": 2.0},
    "engine": {"max_model_len": 8192},
    "workload": {"arrival": {"process": "poisson", "rate": 2.0},
                 "input_tokens": {"dist": "lognormal", "mean": 800, "sigma": 0.8},
                 "output_tokens": {"dist": "lognormal", "mean": 150, "sigma": 0.6},
                 "num_requests": 400, "warmup_requests": 40, "seed": 7},
    "slo": {"ttft_ms": {"p95": 2000}, "tpot_ms": {"p95": 100}}
  })");
}

inline spec::ResolvedScenario resolve_json(const Json& j) {
  return spec::resolve(spec::scenario_from_json(JsonView(j, "")), spec::Catalog::builtin());
}

}  // namespace llmsim::test
