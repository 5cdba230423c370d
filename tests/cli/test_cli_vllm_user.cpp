// Issue 30's table through the real binary, the rows the other CLI tests did not cover as a vLLM user types them:
// --set with vLLM's engine-argument names, vLLM's --quantization values on compare and memory, a latency-only summary
// for check, the families' own config.json and ModelOpt checkpoint directories, and `vllm serve DIR` reading DIR
// (tests/python/test_vllm_user.py and notebooks/vllm_user.ipynb are the Python and notebook side of the same rows).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_util.hpp"
#include "llmsim/core/json_view.hpp"

using llmsim::test::run;
using llmsim::test::temp_file;

namespace {

const std::filesystem::path kUserRoot(LLMSIM_SOURCE_DIR);

const char* kUserScenario = R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm", "price_per_gpu_hour": 1.8},
  "engine": {"max_model_len": 8192, "max_num_seqs": 64},
  "workload": {"arrival": {"process": "poisson", "rate": 4}, "num_requests": 60, "warmup_requests": 5, "seed": 3},
  "slo": {"ttft_ms": {"p95": 2000}, "tpot_ms": {"p95": 100}}})";

std::string user_scenario() { return "'" + temp_file("vllm-user-scenario.json", kUserScenario).string() + "'"; }

llmsim::Json user_json_of(const std::string& args) {
  const auto r = run(args, false);
  INFO("llmsim " << args);
  REQUIRE(r.code == 0);
  return llmsim::parse_json(r.out, "stdout");
}

}  // namespace

TEST_CASE("--set takes vLLM's engine-argument names: the same run as llmsim's own fields") {
  const std::string sim = "simulate " + user_scenario() + " --json ";
  const auto vllm_tp = user_json_of(sim + "--set engine.tensor_parallel_size=2");
  const auto own_tp = user_json_of(sim + "--set hardware.tp=2");
  const auto one = user_json_of(sim);
  CHECK(vllm_tp == own_tp);
  CHECK(vllm_tp["kv"]["capacity_tokens"].get<double>() > 2 * one["kv"]["capacity_tokens"].get<double>());
  const auto vllm_kv = user_json_of(sim + "--set engine.kv_cache_dtype=fp8_e4m3");
  CHECK(vllm_kv == user_json_of(sim + "--set quant.kv_cache=fp8"));
  CHECK(vllm_kv["kv"]["capacity_tokens"].get<double>() > 1.8 * one["kv"]["capacity_tokens"].get<double>());
  CHECK(user_json_of(sim + "--set max_num_seqs=8") == user_json_of(sim + "--set engine.max_num_seqs=8"));
}

TEST_CASE("vLLM's --quantization values on compare --quants and memory --quant") {
  // vLLM's names (vllm/model_executor/layers/quantization: awq, awq_marlin, gptq, gptq_marlin, bitsandbytes) are
  // the formats llmsim plans; compare, memory and simulate read them through the one table.
  const std::string mem = "memory --model llama-3.1-8b --gpu a100-80gb-sxm --max-model-len 8192 --json --quant ";
  CHECK(user_json_of(mem + "awq") == user_json_of(mem + "awq-int4"));
  CHECK(user_json_of(mem + "awq_marlin") == user_json_of(mem + "awq-int4"));
  CHECK(user_json_of(mem + "gptq_marlin") == user_json_of(mem + "gptq-int4"));
  CHECK(user_json_of(mem + "bitsandbytes")["quant"] == "nf4");
  const auto rows = user_json_of("compare " + user_scenario() + " --gpus a100-80gb-sxm --quants awq,gptq,fp8 "
                            "--replications 1 --requests 60 -q --json")["rows"];
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["quant"] == "awq-int4");
  CHECK(rows[1]["quant"] == "gptq-int4");
  CHECK(rows[2]["quant"] == "fp8");
  for (const auto& r : rows) CHECK(r["fits"] == true);
  // A method that names no format of its own says what to give instead.
  const auto ct = run("memory --model llama-3.1-8b --gpu a100-80gb-sxm --quant compressed-tensors");
  CHECK(ct.code == 2);
  CHECK_THAT(ct.out, Catch::Contains("--quant") && Catch::Contains("compressed-tensors"));
}

TEST_CASE("check compares a latency-only summary on the statistics it states") {
  // LambdaLabs' real 80-prompt vLLM 0.5.4 run (tests/data/vllm_results) without its duration and throughputs: what a
  // summary keeping only the latency statistics holds.
  auto doc = llmsim::read_json_file((kUserRoot / "tests/data/vllm_results/lambdalabs-h100-llama3-8b-v0.5.4-np80.json").string());
  for (const char* k : {"duration", "request_throughput", "input_throughput", "output_throughput"}) doc.erase(k);
  const auto file = temp_file("vllm-user-latency-only.json", doc.dump());
  const std::string args = "check '" + file.string() + "' --gpu h100-80gb-sxm --model llama-3.1-8b --engine-version 0.5.4 "
                           "--vllm-args 'vllm serve meta-llama/Meta-Llama-3-8B-Instruct --max-model-len 2048 "
                           "--max-num-seqs 256'";
  const auto text = run(args);
  REQUIRE(text.code == 0);
  CHECK_THAT(text.out, Catch::Contains("latency-only summary") && Catch::Contains("mean_ttft_ms"));
  const auto j = user_json_of(args + " --json");
  bool ttft = false;
  for (const auto& row : j["rows"]) {
    CHECK(row["key"] != "duration");
    CHECK(row["key"] != "request_throughput");
    if (row["key"] == "mean_ttft_ms") ttft = row["rel_error"].is_number();
  }
  CHECK(ttft);
}

TEST_CASE("the families' config.json and ModelOpt checkpoint directories through memory") {
  // Each catalogue model is its publisher's config.json (data/models/README.md): the file given as --model sizes the
  // same parameters as the id (the totals against the publishers' are tests/spec/test_model_families_current.cpp's).
  struct Row {
    const char* id;
    const char* gpu;
  };
  const Row rows[] = {{"gpt-oss-120b", "h100-80gb-sxm"},     {"gpt-oss-20b", "h100-80gb-sxm"},
                      {"llama-4-scout", "4xh100-80gb-sxm"},  {"kimi-k2", "8xb200-180gb-sxm"},
                      {"qwen3-next-80b-a3b", "4xh100-80gb-sxm"}, {"glm-4.7", "8xb200-180gb-sxm"},
                      {"phi-3-medium-4k", "h100-80gb-sxm"},  {"deepseek-v3.2", "8xb200-180gb-sxm"},
                      {"qwen3-coder-480b-a35b", "8xb200-180gb-sxm"}, {"gemma-3-27b", "h100-80gb-sxm"},
                      {"gemma-4-31b", "h100-80gb-sxm"}};
  for (const auto& r : rows) {
    INFO(r.id);
    const std::string flags = std::string(" --gpu ") + r.gpu + " --max-model-len 4096 --json";
    const auto by_id = user_json_of(std::string("memory --model ") + r.id + flags);
    const auto by_file = user_json_of("memory --model '" + (kUserRoot / "data/models" / (std::string(r.id) + ".json")).string() + "'" + flags);
    CHECK(by_id["fits"] == true);
    CHECK(by_id["params"] == by_file["params"]);
    CHECK(by_id["per_gpu"]["weights_bytes"] == by_file["per_gpu"]["weights_bytes"]);
  }
  // NVIDIA's ModelOpt FP8 Llama-3.1-70B (hf_quant_config.json beside config.json): one byte per weight, the embedding
  // and LM head 16-bit (2 x 1.05 B), not the 141 GB of a 16-bit plan.
  const auto dir = kUserRoot / "tests/data/hf_checkpoints";
  const auto fp8 = user_json_of("memory --model '" + (dir / "llama-3.1-70b-instruct-fp8").string() +
                           "' --gpu h100-80gb-sxm --max-model-len 4096 --json");
  CHECK(fp8["quant"] == "fp8");
  const double params = fp8["params"].get<double>();
  CHECK(params == Approx(70.55e9).epsilon(0.01));
  CHECK(fp8["per_gpu"]["weights_bytes"].get<double>() == Approx(params + 2 * 128256.0 * 8192).epsilon(0.01));
  // NVFP4 (Gemma-4 31B, attention kept 16-bit by its ignore list, the 262k-token embedding and the vision tower
  // 16-bit): between an all-NVFP4 plan and the 16-bit one, and well under the latter.
  const std::string gemma = " --gpu b200-180gb-sxm --max-model-len 8192 --json";
  const auto nvfp4 = user_json_of("memory --model '" + (dir / "gemma-4-31b-it-nvfp4").string() + "'" + gemma);
  const auto bf16 = user_json_of("memory --model gemma-4-31b --quant bf16" + gemma);
  const auto all_fp4 = user_json_of("memory --model gemma-4-31b --quant nvfp4" + gemma);
  CHECK(nvfp4["quant"] == "nvfp4+attn16");
  CHECK(nvfp4["params"] == bf16["params"]);
  const double bytes = nvfp4["per_gpu"]["weights_bytes"].get<double>();
  CHECK(bytes < 0.6 * bf16["per_gpu"]["weights_bytes"].get<double>());
  CHECK(bytes > all_fp4["per_gpu"]["weights_bytes"].get<double>());
}

TEST_CASE("vllm serve DIR reads DIR, whatever its name announces") {
  // vLLM reads a model path that exists from disk and never looks its name up (vllm/transformers_utils/config.py,
  // file_or_path_exists). A snapshot saved under a catalogue-like name was sized by its name before: this folder,
  // named like Llama-3.1-8B AWQ, holds NVIDIA's ModelOpt FP8 Llama-3.1-70B, and was planned as 8 B in AWQ.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("llmsim-vllm-user-" + std::to_string(::getpid())) / "Llama-3.1-8B-Instruct-AWQ";
  std::filesystem::create_directories(dir);
  const auto src = kUserRoot / "tests/data/hf_checkpoints/llama-3.1-70b-instruct-fp8";
  for (const char* f : {"config.json", "hf_quant_config.json"})
    std::filesystem::copy_file(src / f, dir / f, std::filesystem::copy_options::overwrite_existing);
  const std::string line = " --vllm-args 'vllm serve " + dir.string() + " --max-model-len 4096'";
  const auto plan = user_json_of("memory --gpu h100-80gb-sxm --json" + line);
  CHECK(plan["params"].get<double>() == Approx(70.55e9).epsilon(0.01));
  CHECK(plan["quant"] == "fp8");
  CHECK(plan == user_json_of("memory --model '" + dir.string() + "' --gpu h100-80gb-sxm --max-model-len 4096 --json"));
  const auto text = run("memory --gpu h100-80gb-sxm" + line);
  CHECK_THAT(text.out, !Catch::Contains("matched by name") && !Catch::Contains("from the checkpoint name"));
  // check reads the same directory from the server line.
  const auto c = user_json_of("check '" + (kUserRoot / "tests/data/vllm_results/lambdalabs-h100-llama3-8b-v0.5.4-np80.json").string() +
                         "' --gpu h100-80gb-sxm --json" + line);
  CHECK(c["scenario"]["model"] == dir.string());
  CHECK(c["scenario"]["quant"]["weights"] != "awq-int4");
  // --quantization naming the checkpoint's own method adds nothing (vLLM checks the pair and loads the checkpoint's
  // scheme): `--quantization modelopt` on this ModelOpt export was refused as "depends on the checkpoint".
  const std::string own = " --vllm-args 'vllm serve " + dir.string() + " --max-model-len 4096 --quantization ";
  CHECK(user_json_of("memory --gpu h100-80gb-sxm --json" + own + "modelopt'") == plan);
  // Another method is refused, as vLLM's ModelConfig._verify_quantization refuses it.
  const auto other = run("memory --gpu h100-80gb-sxm" + own + "awq'");
  CHECK(other.code == 2);
  CHECK_THAT(other.out, Catch::Contains("--quantization 'awq' does not match the checkpoint's own method 'modelopt'"));
  // Without a checkpoint to read, 'modelopt' still names no format.
  const auto bare = run("memory --gpu h100-80gb-sxm --vllm-args 'vllm serve meta-llama/Llama-3.1-8B-Instruct "
                        "--quantization modelopt'");
  CHECK(bare.code == 2);
  CHECK_THAT(bare.out, Catch::Contains("depends on the checkpoint"));
  std::filesystem::remove_all(dir.parent_path());
}
