// The models of 2026 (issue 30) through the real binary: `memory` and `simulate` from the catalogue id and from the
// config.json file give the same answer (Nemotron-H's Mamba-2 hybrids among them); an architecture llmsim cannot
// price exits 2 with the reason.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_util.hpp"
#include "llmsim/core/json_view.hpp"

using llmsim::test::run;

TEST_CASE("Qwen3.5, GLM-5, MiniMax-M2.5 and Nemotron-H plan and simulate from their id and from their config.json") {
  const std::filesystem::path root(LLMSIM_SOURCE_DIR);
  struct Row {
    const char* id;
    const char* gpu;
    const char* quant;
  };
  const Row rows[] = {{"qwen3.5-27b", "h200-141gb-sxm", "fp16"},
                      {"qwen3.5-35b-a3b", "h100-80gb-sxm", "fp16"},
                      {"glm-5", "8xh200-141gb-sxm", "fp8"},
                      {"minimax-m2.5", "4xh200-141gb-sxm", "auto"},
                      {"nemotron-3-nano-30b-a3b", "h100-80gb-sxm", "fp16"}};
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

TEST_CASE("DeepSeek-V4 exits 2 with why llmsim cannot price it") {
  const std::filesystem::path data = std::filesystem::path(LLMSIM_SOURCE_DIR) / "tests/data/hf_checkpoints";
  auto r = run("memory --model '" + (data / "deepseek-v4-flash").string() + "' --gpu 8xh200-141gb-sxm");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("model_type") && Catch::Contains("compress_ratios"));
}

TEST_CASE("Nemotron-H on an H100: memory shows the Mamba state, step prices it, a latent-MoE config exits 2") {
  const std::filesystem::path data = std::filesystem::path(LLMSIM_SOURCE_DIR) / "tests/data/hf_checkpoints";
  // NVIDIA's config.json as a checkpoint directory, as `vllm serve DIR` reads it.
  auto r = run("memory --model '" + (data / "nemotron-3-nano-30b-a3b").string() +
               "' --gpu h100-80gb-sxm --quant fp16 --max-num-seqs 256");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("Mamba-2") && Catch::Contains("sequences' state fit the pool"));
  r = run("step --model nemotron-3-nano-30b-a3b --gpu h100-80gb-sxm --quant fp16 --decode-seqs 32 --context 4096 --json",
          false);
  REQUIRE(r.code == 0);
  const auto s = llmsim::parse_json(r.out, "stdout");
  CHECK(s["time_ms"].get<double>() > 0);
  // `step` prices the batch, not a server's max_num_seqs (vLLM's start-up check of the default 1,024 against the
  // Mamba blocks is `memory`'s): each of the batch's sequences needs its state in the pool, and more than fit is an
  // error naming the batch.
  r = run("step --model nemotron-3-nano-30b-a3b --gpu h100-80gb-sxm --quant fp16 --decode-seqs 5000 --context 16");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("batch") && Catch::Contains("linear-attention state"));
  // Nemotron-3 Super's latent MoE is not modelled: refused with the reason, never sized without it.
  const auto dir = std::filesystem::temp_directory_path() / "llmsim-test-nemotron-latent";
  std::filesystem::create_directories(dir);
  auto c = llmsim::read_json_file((data / "nemotron-3-nano-30b-a3b/config.json").string());
  c["moe_latent_size"] = 1024;
  std::ofstream(dir / "config.json") << c.dump();
  r = run("memory --model '" + dir.string() + "' --gpu 8xh200-141gb-sxm");
  std::filesystem::remove_all(dir);
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("moe_latent_size") && Catch::Contains("latent MoE"));
}
