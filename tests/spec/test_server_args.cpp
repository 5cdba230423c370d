// Server command lines as engine arguments: SGLang's names (spec/sglang_args) mapped onto vLLM's, whose one alias
// table (scenario_prepass) maps them to scenario fields; and the typo rule both parsers share (core/names).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/scenario.hpp"
#include "llmsim/spec/scenario_prepass.hpp"
#include "llmsim/spec/sglang_args.hpp"
#include "llmsim/spec/vllm_args.hpp"

using namespace llmsim;
using namespace llmsim::spec;

namespace {

std::string line_error(const std::string& line, bool sglang = true) {
  try {
    if (sglang) parse_sglang_server_args(line);
    else parse_vllm_serve_args(line);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::vector<std::string>& v, const std::string& prefix) {
  return std::any_of(v.begin(), v.end(), [&](const std::string& s) { return s.rfind(prefix, 0) == 0; });
}

}  // namespace

TEST_CASE("an SGLang launch line becomes vLLM-named engine arguments") {
  const auto a = parse_sglang_server_args(
      "CUDA_VISIBLE_DEVICES=0,1 python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
      "--tp-size 2 --dp 3 --max-running-requests 64 --context-length=8192 --kv-cache-dtype fp8_e5m2 "
      "--quantization fp8 --page-size 16 --disable-cuda-graph --host 0.0.0.0 --port 30000 --trust-remote-code");
  CHECK(a.model == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(a.runtime == "sglang");
  CHECK(a.engine_args["tensor_parallel_size"] == 2);
  CHECK(a.engine_args["data_parallel_size"] == 3);  // `--dp` is argparse's unique prefix of --dp-size
  CHECK(a.engine_args["max_num_seqs"] == 64);
  CHECK(a.engine_args["max_model_len"] == "8192");  // a string, as vLLM's (it may be "auto"); the pre-pass reads it
  CHECK(a.engine_args["kv_cache_dtype"] == "fp8_e5m2");
  CHECK(a.engine_args["quantization"] == "fp8");
  CHECK(a.engine_args["block_size"] == 16);
  CHECK(a.engine_args["enforce_eager"] == true);
  CHECK(a.engine_args["enable_prefix_caching"] == true);  // SGLang's radix cache is on by default
  CHECK(contains(a.ignored, "--host 0.0.0.0"));
  CHECK(contains(a.ignored, "--trust-remote-code"));
  CHECK(a.not_modelled.empty());

  const auto b = parse_sglang_server_args("sglang serve --model llama-3.1-8b --tensor-parallel-size=4 --disable-radix-cache");
  CHECK(b.model == "llama-3.1-8b");
  CHECK(b.engine_args["tensor_parallel_size"] == 4);
  CHECK(b.engine_args["enable_prefix_caching"] == false);
}

TEST_CASE("SGLang's chunk, memory fraction and FCFS order map; what llmsim does not model is listed or refused") {
  // On the SGLang runtime the line implies, max_num_batched_tokens is SGLang's chunk (prefill-only steps) and
  // gpu_memory_utilization its mem_fraction_static (no activation peak taken out): the same meaning.
  const auto a = parse_sglang_server_args(
      "python -m sglang.launch_server --model-path m --chunked-prefill-size 4096 --mem-fraction-static 0.8 "
      "--schedule-policy fcfs --enable-mixed-chunk --speculative-algorithm EAGLE --some-future-flag 3");
  CHECK(a.engine_args["max_num_batched_tokens"] == 4096);
  CHECK(a.engine_args["gpu_memory_utilization"] == 0.8);
  CHECK(contains(a.ignored, "--schedule-policy fcfs"));  // llmsim's SGLang scheduler is first come, first served
  CHECK(contains(a.not_modelled, "--enable-mixed-chunk"));
  CHECK(contains(a.not_modelled, "--speculative-algorithm EAGLE"));
  CHECK(contains(a.not_modelled, "--some-future-flag 3"));  // unknown to llmsim and near nothing: listed
  CHECK(a.not_modelled.size() == 3);
  CHECK(parse_sglang_server_args("sglang serve --chunked=2048").engine_args["max_num_batched_tokens"] == 2048);
  // Queue orders other than FCFS, and chunked prefill turned off, are refused naming the flag.
  CHECK_THAT(line_error("sglang serve --schedule-policy lpm"),
             Catch::Contains("--schedule-policy: 'lpm' is not modelled") && Catch::Contains("fcfs"));
  CHECK_THAT(line_error("sglang serve --schedule-policy"), Catch::Contains("--schedule-policy: expected a value"));
  CHECK_THAT(line_error("sglang serve --chunked-prefill-size -1"),
             Catch::Contains("--chunked-prefill-size: '-1' turns chunked prefill off"));
  CHECK_THAT(line_error("sglang serve --mem-fraction-static most"), Catch::Contains("--mem-fraction-static: expected a number"));
  // Through the one alias table, onto the scenario's fields, and validated there.
  Json doc = {{"model", "llama-3.1-8b"}, {"hardware", {{"gpu", "a100-80gb-sxm"}}}, {"engine", {{"runtime", "sglang"}}}};
  for (const auto& [k, v] : a.engine_args.items()) set_json_path(doc, k, v);
  const auto sc = scenario_from_json(JsonView(doc, ""));
  CHECK(sc.engine.max_num_batched_tokens == 4096);
  CHECK(sc.engine.gpu_memory_utilization == 0.8);
  CHECK(sc.engine.policy == SchedulerPolicy::sglang);
  // With DP attention, --dp-size is attention parallelism inside the TP group, not replicas.
  const auto dp = parse_sglang_server_args("sglang serve --model-path m --tp 8 --dp-size 8 --enable-dp-attention");
  CHECK_FALSE(dp.engine_args.contains("data_parallel_size"));
  CHECK(contains(dp.not_modelled, "--dp-size 8 (with --enable-dp-attention"));
}

TEST_CASE("a bad SGLang line is an error naming the flag") {
  CHECK_THAT(line_error("sglang serve --max-runing-requests 8"),
             Catch::Contains("--max-runing-requests: unknown SGLang flag; did you mean --max-running-requests?"));
  CHECK_THAT(line_error("sglang serve --tp-szie 2"), Catch::Contains("did you mean --tp-size?"));  // a swap is one edit
  CHECK_THAT(line_error("sglang serve --p 2"), Catch::Contains("--p: ambiguous SGLang flag"));
  CHECK_THAT(line_error("sglang serve --tp-size two"), Catch::Contains("--tp-size: expected an integer, got 'two'"));
  CHECK_THAT(line_error("sglang serve --disable-radix-cache true"), Catch::Contains("is a bare flag and takes no value"));
  CHECK_THAT(line_error("sglang serve meta-llama/Llama-3.1-8B"), Catch::Contains("--model-path MODEL"));
  CHECK_THAT(line_error("sglang serve --model-path a --model b"), Catch::Contains("already named 'a'"));
  CHECK_THAT(line_error("vllm serve m -tp 2"), Catch::Contains("give its command line as --vllm-args"));
  CHECK_THAT(line_error("python -m vllm.entrypoints.openai.api_server --model m"), Catch::Contains("--vllm-args"));
  CHECK_THAT(line_error("python -m sglang.launch_server --model-path m", false), Catch::Contains("--sglang-args"));
  // A value is kept as given; the pre-pass judges it against the one alias table (gguf names no weight format).
  CHECK(parse_sglang_server_args("sglang serve --quantization gguf").engine_args["quantization"] == "gguf");
}

TEST_CASE("every SGLang alias lands on a vLLM name the one alias table maps") {
  for (const auto& s : sglang_aliases()) {
    INFO(s.name);
    const bool mapped = std::any_of(vllm_aliases().begin(), vllm_aliases().end(), [&](const VllmAlias& a) {
      return a.name == s.vllm_name && std::find(a.sections.begin(), a.sections.end(), "") != a.sections.end();
    });
    CHECK(mapped);
  }
}

TEST_CASE("misspelling_of: one or two edits by length, a neighbour swap counts once") {
  const std::vector<std::string> known{"max_num_seqs", "tp_size", "port", "gpu_memory_utilization"};
  CHECK(misspelling_of("max_num_seq", known) == "max_num_seqs");
  CHECK(misspelling_of("max_nmu_seqs", known) == "max_num_seqs");
  CHECK(misspelling_of("gpu_memory_utilisation", known) == "gpu_memory_utilization");
  CHECK(misspelling_of("tp_szie", known) == "tp_size");
  CHECK(misspelling_of("prot", known) == "port");
  CHECK(misspelling_of("max_num_seqs", known).empty());  // known: no typo
  CHECK(misspelling_of("ports_x", known).empty());        // 3 edits from "port", a short name: no guess
  CHECK(misspelling_of("enable_lora", known).empty());
}

TEST_CASE("a path replaces the field however the document spelt it (scenario < --vllm-args < --set)") {
  Json doc = parse_json(R"({"model": "llama-3.1-8b", "tensor_parallel_size": 1, "max_num_seqs": 64,
                            "hardware": {"gpu": "a100-80gb-sxm"}, "engine": {"tensor_parallel_size": 1}})", "test");
  set_json_path(doc, "hardware.tp", 2);           // as --set hardware.tp=2
  set_json_path(doc, "max_num_seqs", 100);        // as --vllm-args --max-num-seqs 100 (vLLM's name)
  const Scenario s = scenario_from_json(JsonView(doc, ""));  // no "two spellings disagree" error
  CHECK(s.hardware.parallel.tp == 2);
  CHECK(s.engine.max_num_seqs == 100);
  CHECK_FALSE(doc.contains("tensor_parallel_size"));
  CHECK_FALSE(doc["engine"].contains("tensor_parallel_size"));
  CHECK_FALSE(doc.contains("max_num_seqs"));
}

TEST_CASE("a vLLM switch set by path resolves against the document's release (enable_chunked_prefill on V0)") {
  // vLLM 0.5.5 ships V0 only: --enable-chunked-prefill there is V0's chunked prefill, never V1's scheduler, and
  // the release lent as context is not itself written back.
  Json doc = parse_json(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"},
                            "engine": {"runtime": "vllm==0.5.5"}})", "test");
  set_json_path(doc, "enable_chunked_prefill", true);
  CHECK(scenario_from_json(JsonView(doc, "")).engine.policy == SchedulerPolicy::chunked);

  Json v1 = parse_json(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"},
                           "engine": {"runtime": "vllm==0.10.1"}})", "test");
  set_json_path(v1, "enable_chunked_prefill", true);  // V1 chunks already: the release's default stays
  CHECK(scenario_from_json(JsonView(v1, "")).engine.policy == SchedulerPolicy::vllm);

  Json no_release = parse_json(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"}})", "test");
  set_json_path(no_release, "enable_chunked_prefill", false);
  CHECK(scenario_from_json(JsonView(no_release, "")).engine.policy == SchedulerPolicy::vllm_v0);
}

TEST_CASE("VLLM_PP_LAYER_PARTITION before `vllm serve` becomes the scenario's layer split; a typo flag stays an error") {
  // vLLM reads the split from its environment (vllm/distributed/utils.py get_pp_indices), so a pasted launch line
  // carries it as an assignment before the program; the other variables are the shell's.
  const auto args = parse_vllm_serve_args(
      "CUDA_VISIBLE_DEVICES=0,1 VLLM_PP_LAYER_PARTITION=18,14 vllm serve meta-llama/Llama-3.1-8B -pp 2");
  CHECK(args.engine_args["VLLM_PP_LAYER_PARTITION"] == "18,14");
  CHECK_FALSE(args.engine_args.contains("CUDA_VISIBLE_DEVICES"));
  Json doc = parse_json(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"}})", "test");
  for (auto it = args.engine_args.begin(); it != args.engine_args.end(); ++it) doc[it.key()] = *it;
  const Scenario s = scenario_from_json(JsonView(doc, ""));
  CHECK(s.hardware.parallel.pp == 2);
  CHECK(s.hardware.parallel.layer_partition == std::vector<int>{18, 14});
  // As a path (--set), by either name.
  Json by_path = parse_json(R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm", "pp": 2}})", "test");
  set_json_path(by_path, "hardware.pp_layer_partition", "20,12");
  CHECK(scenario_from_json(JsonView(by_path, "")).hardware.parallel.layer_partition == std::vector<int>{20, 12});
  set_json_path(by_path, "VLLM_PP_LAYER_PARTITION", "10,22");
  CHECK(scenario_from_json(JsonView(by_path, "")).hardware.parallel.layer_partition == std::vector<int>{10, 22});
  // It is an environment variable, not a flag: --vllm-pp-layer-partition is no vLLM flag.
  const auto flagged = parse_vllm_serve_args("vllm serve m --VLLM_PP_LAYER_PARTITION 1,2");
  CHECK_FALSE(flagged.engine_args.contains("VLLM_PP_LAYER_PARTITION"));
  CHECK(std::find(known_vllm_engine_flags().begin(), known_vllm_engine_flags().end(), "VLLM_PP_LAYER_PARTITION") ==
        known_vllm_engine_flags().end());
}
