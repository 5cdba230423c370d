// workload.ignore_eos as a stated input of a measured run (spec/sglang_admission.hpp): which clients send it, how
// `check` and a runs file read it, and what the H200 run fit is given (data/calibration_runs/datacrunch-h200-sxm:
// SGLang's bench_serving with no --disable-ignore-eos against a server with --disable-radix-cache).
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/analysis/bench_runs.hpp"
#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/analysis/vllm_result.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/sglang_admission.hpp"

using namespace llmsim;
using namespace llmsim::analysis;

TEST_CASE("ignore_eos: which benchmark clients send it, from their command lines", "[ignore_eos]") {
  // SGLang's bench_serving: `"ignore_eos": not args.disable_ignore_eos` (sglang#824).
  CHECK(spec::client_ignores_eos("python3 -m sglang.bench_serving --backend sglang --dataset-name random") == true);
  CHECK(spec::client_ignores_eos("python -m sglang.bench_serving --disable-ignore-eos --num-prompts 10") == false);
  CHECK(spec::client_ignores_eos("python3 python/sglang/bench_serving.py --backend sglang") == true);
  // A templated command (livinfly's RUNS.json) is still read by its words.
  CHECK(spec::client_ignores_eos("python3 -m sglang.bench_serving --dataset-name {random|sharegpt} --num-prompts N") ==
        true);
  // vLLM's client: ignore_eos only with --ignore-eos.
  CHECK(spec::client_ignores_eos("vllm bench serve --model m --dataset-name random") == false);
  CHECK(spec::client_ignores_eos("vllm bench serve --model m --ignore-eos") == true);
  CHECK(spec::client_ignores_eos("python vllm-benchmarks/benchmarks/benchmark_serving.py --model m --ignore-eos") ==
        true);
  CHECK(spec::client_ignores_eos("python benchmarks/benchmark_serving.py --backend vllm") == false);
  // Another program, or none: not stated.
  CHECK_FALSE(spec::client_ignores_eos("python -m sglang.bench_one_batch --batch-size 1").has_value());
  CHECK_FALSE(spec::client_ignores_eos("").has_value());
}

TEST_CASE("ignore_eos: check's flag, then the scenario's, then the client's default", "[ignore_eos]") {
  const std::string data = std::string(LLMSIM_SOURCE_DIR) + "/tests/data/vllm_results/";
  const auto sg = read_vllm_results(data + "livinfly-a100pcie-sglang047-mistral7b-online.jsonl").front();
  const auto vl = read_vllm_result(data + "lambdalabs-h100-llama3-8b-v0.5.4-np80.json");
  REQUIRE(sg.client == "sglang");
  REQUIRE(vl.client == "vllm");
  auto stated = [](const VllmResult& r, VllmCheckOptions o, const char* gpu, const char* model) {
    o.gpu = gpu;
    o.model = model;
    std::vector<std::string> notes;
    const auto s = vllm_check_scenario(r, o, spec::Catalog::builtin(), notes);
    bool noted = false;
    for (const auto& n : notes) noted = noted || n.find("ignore_eos") != std::string::npos;
    CHECK(noted == !(o.scenario.contains("workload") && !o.ignore_eos));  // decided by flag or default: noted
    return s.workload.ignore_eos;
  };
  VllmCheckOptions o;
  CHECK(stated(sg, o, "a100-40gb-pcie", "mistral-7b"));
  CHECK_FALSE(stated(vl, o, "h100-80gb-sxm", "llama-3.1-8b"));
  o.scenario = {{"workload", {{"ignore_eos", false}}}};  // the scenario's own statement wins over the default
  CHECK_FALSE(stated(sg, o, "a100-40gb-pcie", "mistral-7b"));
  o.ignore_eos = true;  // and --ignore-eos over the scenario
  CHECK(stated(sg, o, "a100-40gb-pcie", "mistral-7b"));
  o = {};
  o.ignore_eos = true;
  CHECK(stated(vl, o, "h100-80gb-sxm", "llama-3.1-8b"));
}

TEST_CASE("ignore_eos: the H200 runs state it from their bench_serving command", "[ignore_eos][calibration_runs]") {
  // datacrunch-research/h200-benchmarks, sglang/llama_3_3_70B_sglang.sh (2024-12-12): `python3 -m
  // sglang.bench_serving --backend sglang --dataset-name random ...` with no --disable-ignore-eos, against
  // `sglang.launch_server ... --disable-radix-cache`: every request ran to its max_new_tokens, and the server
  // admitted it by add_one_req_ignore_eos.
  const auto runs =
      read_bench_runs(std::string(LLMSIM_SOURCE_DIR) + "/data/calibration_runs/datacrunch-h200-sxm/RUNS.json");
  REQUIRE(runs.runs.size() == 5);
  for (const auto& r : runs.runs) {
    INFO(r.name);
    REQUIRE(r.serve);
    CHECK(r.scenario["workload"]["ignore_eos"] == true);
    VllmCheckOptions o;
    o.scenario = r.scenario;
    o.model = r.model;
    std::vector<std::string> notes;
    const auto s = spec::resolve(vllm_check_scenario(*r.serve, o, spec::Catalog::builtin(), notes),
                                 spec::Catalog::builtin());
    CHECK(s.scenario.workload.ignore_eos);
    CHECK_FALSE(s.scenario.engine.prefix_caching());
    // SGLang 0.4.0 (assumed in RUNS.json): the walk before 0.4.6.
    CHECK(spec::sglang_eos_admission(s.scenario.engine, s.scenario.workload).walk == spec::SglangEosWalk::next_finish);
  }
}
