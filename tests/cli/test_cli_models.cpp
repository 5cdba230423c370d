// The models of 2026 (issue 30) through the real binary: `memory` and `simulate` from the catalogue id and from the
// config.json file give the same answer; an architecture llmsim cannot price exits 2 with the reason.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "cli_util.hpp"
#include "llmsim/core/json_view.hpp"

using llmsim::test::run;

TEST_CASE("Qwen3.5, GLM-5 and MiniMax-M2.5 plan and simulate from their id and from their config.json") {
  const std::filesystem::path root(LLMSIM_SOURCE_DIR);
  struct Row {
    const char* id;
    const char* gpu;
    const char* quant;
  };
  const Row rows[] = {{"qwen3.5-27b", "h200-141gb-sxm", "fp16"},
                      {"qwen3.5-35b-a3b", "h100-80gb-sxm", "fp16"},
                      {"glm-5", "8xh200-141gb-sxm", "fp8"},
                      {"minimax-m2.5", "4xh200-141gb-sxm", "auto"}};
  const std::string chat = (root / "examples/scenarios/chat-8b.json").string();
  for (const auto& r : rows) {
    INFO(r.id);
    const std::string file = (root / "data/models" / (std::string(r.id) + ".json")).string();
    const std::string flags = std::string(" --gpu ") + r.gpu + " --quant " + r.quant +
                              " --max-num-seqs 64 --max-model-len 32768 --json";
    const auto by_id = run(std::string("memory --model ") + r.id + flags, false);
    const auto by_file = run("memory --model '" + file + "'" + flags, false);
    REQUIRE(by_id.code == 0);
    REQUIRE(by_file.code == 0);
    const auto a = llmsim::parse_json(by_id.out, "stdout"), b = llmsim::parse_json(by_file.out, "stdout");
    CHECK(a["fits"] == true);
    CHECK(a["kv_bytes_per_token"] == b["kv_bytes_per_token"]);
    CHECK(a["params"] == b["params"]);
    CHECK(a["kv_capacity_tokens"] == b["kv_capacity_tokens"]);
    const std::string sim = "simulate --scenario '" + chat + "' --gpu " + r.gpu +
                            " --set workload.num_requests=60 --set workload.warmup_requests=5"
                            " --set engine.max_num_seqs=64 --json --set model=";
    const std::string q = std::string(" --quant ") + (std::string(r.quant) == "auto" ? "fp8" : r.quant);
    const auto s_id = run(sim + r.id + q, false);
    const auto s_file = run(sim + "'" + file + "'" + q, false);
    REQUIRE(s_id.code == 0);
    REQUIRE(s_file.code == 0);
    const auto si = llmsim::parse_json(s_id.out, "stdout"), sf = llmsim::parse_json(s_file.out, "stdout");
    CHECK(si["completed_requests"].get<int>() > 0);
    for (const char* k : {"completed_requests", "mean_ttft_ms", "mean_tpot_ms", "output_throughput"}) {
      INFO(k);
      CHECK(si[k] == sf[k]);
    }
  }
}

TEST_CASE("DeepSeek-V4 and Nemotron-H exit 2 with why llmsim cannot price them") {
  const std::filesystem::path data = std::filesystem::path(LLMSIM_SOURCE_DIR) / "tests/data/hf_checkpoints";
  auto r = run("memory --model '" + (data / "deepseek-v4-flash").string() + "' --gpu 8xh200-141gb-sxm");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("model_type") && Catch::Contains("compress_ratios"));
  r = run("memory --model '" + (data / "nemotron-h-56b-base-8k/config.json").string() + "' --gpu 8xh200-141gb-sxm");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("Mamba-2"));
}
