// LoRA slots through the CLI (memory's flags, --vllm-args, --set), and the wording of money and rates: a sweep's
// cost head in the scenario's currency, a MIG slice's derived price said as such.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "cli_util.hpp"
#include "llmsim/core/json_view.hpp"

using namespace llmsim;
using test::run;

namespace {
std::string single_quoted(const std::string& s) { return "'" + s + "'"; }
const std::string kLoraScenarios = std::string(LLMSIM_SOURCE_DIR) + "/examples/scenarios/";
// 4 slots of rank 64 on Llama-3-8B at tp 1: 16 x PEFT's 41,943,040 rank-16 parameters, bf16 (test_lora_memory.cpp).
constexpr std::int64_t kFourSlotsRank64 = 16LL * 41943040 * 2;

Json lora_memory_json(const std::string& args) {
  const auto r = run("memory --model llama-3.1-8b --gpu a100-80gb-sxm --json " + args, false);
  INFO(args << "\n" << r.out);
  REQUIRE(r.code == 0);
  return parse_json(r.out, "stdout");
}
}  // namespace

TEST_CASE("memory plans vLLM's LoRA slots from its flags, from --vllm-args and says so in a line of its own", "[cli]") {
  const Json base = lora_memory_json("");
  const Json flags = lora_memory_json("--enable-lora --max-loras 4 --max-lora-rank 64");
  const Json server = lora_memory_json("--vllm-args " + single_quoted("vllm serve llama-3.1-8b --enable-lora --max-loras 4 --max-lora-rank 64"));
  CHECK(base["per_gpu"]["lora_bytes"] == 0);
  CHECK(flags["per_gpu"]["lora_bytes"] == kFourSlotsRank64);
  CHECK(server == flags);
  CHECK(flags["per_gpu"]["kv_cache_bytes"].get<double>() ==
        Approx(base["per_gpu"]["kv_cache_bytes"].get<double>() - kFourSlotsRank64).margin(2));
  const auto table = run("memory --model llama-3.1-8b --gpu a100-80gb-sxm --enable-lora --max-loras 4 --max-lora-rank 64");
  REQUIRE(table.code == 0);
  CHECK_THAT(table.out, Catch::Contains("LoRA slots (max_loras 4 x rank 64)") && Catch::Contains("1.34"));
  // A slot count without LoRA changes nothing in vLLM: refused here, naming the flag, not dropped silently.
  const auto alone = run("memory --model llama-3.1-8b --gpu a100-80gb-sxm --max-loras 4");
  CHECK(alone.code == 2);
  CHECK_THAT(alone.out, Catch::Contains("--max-loras") && Catch::Contains("--enable-lora"));
  const auto rank = run("memory --model llama-3.1-8b --gpu a100-80gb-sxm --enable-lora --max-lora-rank 12");
  CHECK(rank.code == 2);
  CHECK_THAT(rank.out, Catch::Contains("--max-lora-rank: ") && Catch::Contains("got 12"));
}

TEST_CASE("a scenario takes LoRA with vLLM's names through --set and --vllm-args alike", "[cli]") {
  const std::string sc = kLoraScenarios + "chat-8b.json --set workload.num_requests=60 --set workload.warmup_requests=0 --json";
  const auto set = run("simulate " + sc + " --set engine.enable_lora=true --set engine.max_loras=4 --set engine.max_lora_rank=64", false);
  const auto args = run("simulate " + sc + " --vllm-args " + single_quoted("vllm serve llama-3.1-8b --enable-lora --max-loras 4 --max-lora-rank 64"), false);
  const auto plain = run("simulate " + sc, false);
  REQUIRE(set.code == 0);
  REQUIRE(args.code == 0);
  REQUIRE(plain.code == 0);
  const Json a = parse_json(set.out, "stdout"), b = parse_json(args.out, "stdout"), c = parse_json(plain.out, "stdout");
  CHECK(a["kv"]["capacity_tokens"] == b["kv"]["capacity_tokens"]);
  CHECK(a["kv"]["capacity_tokens"].get<double>() < c["kv"]["capacity_tokens"].get<double>());
  const auto lonely = run("simulate " + sc + " --set engine.max_loras=4");
  CHECK(lonely.code == 2);
  CHECK_THAT(lonely.out, Catch::Contains("engine.max_loras") && Catch::Contains("enable_lora"));
}

TEST_CASE("sweep's cost column is headed in the rows' currency, as compare's are", "[cli]") {
  const auto grid = test::temp_file("lora-sweep-grid.json", R"({"base": ")" + kLoraScenarios +
                                                                 R"(chat-8b.json", "grid": {"workload.arrival.rate": [1, 2]}})");
  const auto r = run("sweep '" + grid.string() + "' --set workload.num_requests=60 --set workload.warmup_requests=0 "
                     "--set cost.currency=HKD -q");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("HKD/Mtok out"));
  CHECK(r.out.find("$") == std::string::npos);  // no '$' head, no '$' cell over Hong Kong dollars
}

TEST_CASE("a MIG slice's price is said to be the card's share, not a catalogue placeholder", "[cli]") {
  const auto sc = test::temp_file("lora-mig.json", R"({"model": "llama-3.1-8b", "quant": {"weights": "fp8"},
    "hardware": {"gpu": "a100-80gb-sxm:mig-3g.40gb"}, "engine": {"max_model_len": 8192},
    "workload": {"arrival": {"process": "poisson", "rate": 1.0}, "num_requests": 60, "warmup_requests": 0, "seed": 3},
    "slo": {"ttft_ms": {"p95": 2000}}})");
  const auto r = run("capacity '" + sc.string() + "'");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("3/7 of the") && Catch::Contains("itself a catalogue placeholder"));
  CHECK(r.out.find("GPU-hour (USD), a catalogue placeholder") == std::string::npos);
}

TEST_CASE("memory names the option a bad engine value came from, LoRA's as the others", "[cli]") {
  // --max-loras 0 read "engine.max_loras: must be in 1..1024" beside "--max-num-seqs: must be >= 1, got 0": the plan
  // checks the engine under its scenario fields, and memory takes options (attack8).
  const std::string vllm = "vllm serve llama-3.1-8b --enable-lora ";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--enable-lora --max-loras 0", "--max-loras: "},
      {"--enable-lora --max-lora-rank 7", "--max-lora-rank: "},
      {"--vllm-args " + single_quoted(vllm + "--max-loras 2000"), "--max-loras: "},
      {"--vllm-args " + single_quoted(vllm + "--max-lora-rank 3"), "--max-lora-rank: "},
      {"--block-size 2000", "--block-size: "}};
  for (const auto& [args, named] : cases) {
    const auto r = run("memory --model llama-3.1-8b --gpu a100-80gb-sxm " + args);  // stderr with stdout
    INFO(args << "\n" << r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find("error: " + named) != std::string::npos);
    CHECK(r.out.find("engine.") == std::string::npos);
  }
}
