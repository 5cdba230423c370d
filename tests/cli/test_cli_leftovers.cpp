// Issue 29's leftovers through the real binary: step reads VLLM_PP_LAYER_PARTITION as memory does; "auto" under a
// vLLM release without it is planned with a note naming the number to pass; a sweep whose split is set on top of a
// card axis labels its rows with the split they ran; a scenario comes from a pipe or standard input, read once.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_util.hpp"
#include "llmsim/core/json_view.hpp"

using namespace llmsim;

namespace {

// A short scenario file in this process's scratch folder.
std::string leftover_scenario_file() {
  const auto path = test::scratch_dir() / "leftover_scenario.json";
  std::ofstream(path) << R"({"model": "llama-3.1-8b", "hardware": {"gpu": "rtx4090-24gb"},
    "engine": {"max_model_len": 8192},
    "workload": {"arrival": {"process": "poisson", "rate": 1.0}, "num_requests": 20, "warmup_requests": 2}})";
  return path.string();
}

}  // namespace

TEST_CASE("step takes --pp-layer-partition as memory does: one parser, get_pp_indices' checks, the largest stage") {
  const std::string step = "step --model llama-3.1-8b --gpu rtx4090-24gb --pp 2 --decode-seqs 8 --context 1024 --json ";
  const auto even = test::run(step, false);
  const auto skew = test::run(step + "--pp-layer-partition 24,8", false);
  const auto line = test::run("step --gpu rtx4090-24gb --decode-seqs 8 --context 1024 --json --vllm-args "
                              "'VLLM_PP_LAYER_PARTITION=24,8 vllm serve meta-llama/Llama-3.1-8B -pp 2'", false);
  REQUIRE(even.code == 0);
  REQUIRE(skew.code == 0);
  REQUIRE(line.code == 0);
  CHECK(Json::parse(even.out)["pp_stage_layers"] == Json::array({16, 16}));
  CHECK(Json::parse(skew.out)["pp_stage_layers"] == Json::array({24, 8}));
  CHECK(Json::parse(line.out)["pp_stage_layers"] == Json::array({24, 8}));  // the environment of the pasted line
  // The partition sizes the memory check: Qwen2.5-32B AWQ fits two 4090s split evenly at 8 x 8,192 tokens, not with
  // 60 of its 64 layers on the first card.
  const std::string big = "step --model qwen2.5-32b --quant awq-int4 --gpu rtx4090-24gb --pp 2 --decode-seqs 8 "
                          "--context 8192 ";
  CHECK(test::run(big).code == 0);
  const auto crowded = test::run(big + "--pp-layer-partition 60,4");
  CHECK(crowded.code == 2);
  CHECK_THAT(crowded.out, Catch::Contains("KV-cache tokens"));
  // vLLM's get_pp_indices refusals, naming the flag.
  const auto sum = test::run(step + "--pp-layer-partition 16,8");
  CHECK(sum.code == 2);
  CHECK_THAT(sum.out, Catch::Contains("--pp-layer-partition") && Catch::Contains("sums to 24 layers"));
  const auto count = test::run(step + "--pp-layer-partition 16,8,8");
  CHECK(count.code == 2);
  CHECK_THAT(count.out, Catch::Contains("3 stages but pipeline parallel is 2"));
  const auto text = test::run(step + "--pp-layer-partition 16,x");
  CHECK(text.code == 2);
  CHECK_THAT(text.out, Catch::Contains("invalid partition string '16,x'"));
}

TEST_CASE("memory --max-model-len auto under a vLLM release without auto: planned, and the number to pass said") {
  const std::string mem = "memory --model llama-3.1-8b --gpu rtx4090-24gb --json ";
  const auto old = test::run(mem + "--max-model-len auto --engine-version 0.8.4", false);
  REQUIRE(old.code == 0);
  const Json j = Json::parse(old.out);
  REQUIRE(j["fits"].get<bool>());
  const std::string pass = "pass --max-model-len " + std::to_string(j["max_model_len"].get<int>());
  CHECK_THAT(j["max_model_len_note"].get<std::string>(),
             Catch::Contains("vLLM 0.8.4 has no --max-model-len auto (from 0.14.0) and would refuse it: " + pass));
  // -1 is the same request; a release with auto, or the context left unset (the default), has no such note.
  const auto minus = test::run(mem + "--max-model-len -1 --engine-version 0.8.4", false);
  CHECK_THAT(Json::parse(minus.out)["max_model_len_note"].get<std::string>(), Catch::Contains(pass));
  for (const std::string args : {"--max-model-len auto --engine-version 0.14.0", "--engine-version 0.8.4"}) {
    const auto r = test::run(mem + args, false);
    REQUIRE(r.code == 0);
    CHECK(Json::parse(r.out)["max_model_len_note"].get<std::string>().find("refuse") == std::string::npos);
  }
}

TEST_CASE("sweep: a split set on top of a card axis labels each row with the tp and pp it ran") {
  const auto grid = test::scratch_dir() / "leftover_card_grid.json";
  std::ofstream(grid) << R"({"base": {"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"},
    "workload": {"arrival": {"process": "poisson", "rate": 1.0}, "num_requests": 20}},
    "grid": {"hardware.gpu": ["a100-80gb-sxm", "2xa100-80gb-sxm@pp"]}})";
  const std::string sweep = "sweep '" + grid.string() + "' -q ";
  // No split set: the card labels say it all.
  const auto plain = test::run(sweep + "--out '" + (test::scratch_dir() / "plain.json").string() + "'");
  REQUIRE(plain.code == 0);
  const Json p = Json::parse(test::read_file(test::scratch_dir() / "plain.json"));
  CHECK_FALSE(p[0]["grid"].contains("hardware.tp"));
  // pp 2 on top: "a100-80gb-sxm" ran on two cards as a pipeline, which its label alone does not say.
  for (const std::string set : {"--set hardware.pp=2", "--set engine.pipeline_parallel_size=2",
                                "--vllm-args 'vllm serve meta-llama/Llama-3.1-8B -pp 2'"}) {
    INFO(set);
    const auto out = test::scratch_dir() / "split.json";
    const auto r = test::run(sweep + set + " --out '" + out.string() + "'");
    REQUIRE(r.code == 0);
    const Json rows = Json::parse(test::read_file(out));
    REQUIRE(rows.size() == 2);
    for (const auto& row : rows) {
      CHECK(row["grid"]["hardware.tp"] == row["tp"]);  // the label is the split the row ran
      CHECK(row["grid"]["hardware.pp"] == row["pp"]);
      CHECK(row["pp"] == 2);
    }
  }
  const auto text = test::run(sweep + "--set engine.tensor_parallel_size=2 --set hardware.gpu=a100-80gb-sxm");
  CHECK(text.code == 2);  // the card is the axis: a set on it is refused as before
  const auto table = test::run(sweep + "--set hardware.pp=2");
  CHECK_THAT(table.out, Catch::Contains("hardware.tp") && Catch::Contains("hardware.pp"));
}

TEST_CASE("simulate reads its scenario from standard input or a pipe, once, and an empty stream is an error") {
  const std::string file = leftover_scenario_file();
  const auto direct = test::run("simulate '" + file + "' --json", false);
  REQUIRE(direct.code == 0);
  const double ttft = Json::parse(direct.out)["ttft_ms"]["p95"].get<double>();
  auto same = [&](const test::Run& r) {
    REQUIRE(r.code == 0);
    CHECK(Json::parse(r.out)["ttft_ms"]["p95"].get<double>() == ttft);
  };
  same(test::run("simulate - --json < '" + file + "'", false));                       // redirected
  same(test::run_shell("cat '" + file + "' | " + test::cli() + " simulate - --json 2>/dev/null"));  // a pipe
  same(test::run_shell("bash -c \"" + test::cli() + " simulate <(cat '" + file + "') --json\" 2>/dev/null"));
  // --set applies to a scenario from standard input as to a file's.
  const auto set = test::run("simulate - --json --set engine.max_model_len=4096 < '" + file + "'", false);
  REQUIRE(set.code == 0);
  CHECK(Json::parse(set.out)["max_model_len"] == 4096);
  // Empty: a clear error at once, never a wait.
  const auto empty = test::run("simulate - < /dev/null");
  CHECK(empty.code == 2);
  CHECK_THAT(empty.out, Catch::Contains("standard input") && Catch::Contains("is empty"));
  const auto blank = test::run_shell("printf '  \\n' | " + test::cli() + " simulate - 2>&1");
  CHECK(blank.code == 2);
  CHECK_THAT(blank.out, Catch::Contains("is empty"));
  // A named FIFO nobody writes to is an empty stream, said at once (not after the 60 s idle limit).
  const auto fifo = test::scratch_dir() / "leftover_fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto t0 = std::chrono::steady_clock::now();
  const auto none = test::run("simulate '" + fifo.string() + "'");
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20));
  CHECK(none.code == 2);
  CHECK_THAT(none.out, Catch::Contains("leftover_fifo") && Catch::Contains("is a FIFO (pipe) that ended empty"));
}

TEST_CASE("a sweep's grid and check's benchmark result stream in as a scenario does; standard input is read once") {
  // attack12: `jq ... grid.json | llmsim sweep -` and `llmsim check <(jq ... runs.jsonl)` were refused ("is a FIFO
  // (named pipe), expected a file"; "no such file '-'") while every scenario argument streamed.
  const std::string file = leftover_scenario_file();
  const auto grid = test::scratch_dir() / "leftover_grid.json";
  std::ofstream(grid) << R"({"base": ")" + file + R"(", "grid": {"engine.max_num_seqs": [16, 32]}})";
  const std::string a = (test::scratch_dir() / "leftover_grid_a.csv").string();
  const std::string b = (test::scratch_dir() / "leftover_grid_b.csv").string();
  const std::string c = (test::scratch_dir() / "leftover_grid_c.csv").string();
  REQUIRE(test::run("sweep '" + grid.string() + "' -q --out '" + a + "'").code == 0);
  REQUIRE(test::run("sweep - -q --out '" + b + "' < '" + grid.string() + "'").code == 0);
  REQUIRE(test::run_shell("bash -c \"" + test::cli() + " sweep <(cat '" + grid.string() + "') -q --out '" + c +
                          "'\" 2>&1").code == 0);
  auto text = [](const std::string& p) { return test::read_file(p); };
  CHECK(text(b) == text(a));
  CHECK(text(c) == text(a));
  const std::string result =
      std::string(LLMSIM_SOURCE_DIR) + "/tests/data/vllm_results/lambdalabs-h100-llama3-8b-v0.5.4-np80.json";
  const std::string check = " --gpu h100-80gb-sxm --model llama-3.1-8b --engine-version 0.5.4 --json";
  const auto direct = test::run("check '" + result + "'" + check, false);
  const auto piped = test::run("check -" + check + " < '" + result + "'", false);
  REQUIRE(direct.code == 0);
  REQUIRE(piped.code == 0);
  CHECK(Json::parse(piped.out)["rows"] == Json::parse(direct.out)["rows"]);
  // Two arguments cannot both be standard input: said at once, naming the second.
  const auto twice = test::run("check - --scenario -" + check + " < '" + result + "'");
  CHECK(twice.code == 2);
  CHECK_THAT(twice.out, Catch::Contains("--scenario") && Catch::Contains("standard input"));
  const auto empty = test::run("sweep - < /dev/null");
  CHECK(empty.code == 2);
  CHECK_THAT(empty.out, Catch::Contains("standard input") && Catch::Contains("is empty"));
}

TEST_CASE("a document whose root is no object names the file or argument it came from") {
  // attack12: `simulate arr.json` with [] said "error: expected an object, got array" (no file, no field), as did a
  // runs file ([] or 42) and a grid holding a number.
  const auto arr = test::scratch_dir() / "leftover_root_array.json";
  const auto num = test::scratch_dir() / "leftover_root_number.json";
  std::ofstream(arr) << "[]";
  std::ofstream(num) << "42";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"simulate '" + arr.string() + "'", "scenario '"},
      {"simulate - < '" + num.string() + "'", "scenario (standard input)"},
      {"sweep '" + num.string() + "'", "grid ("},
      {"calibrate-fit --runs '" + arr.string() + "' -o /dev/null", "runs file '"},
      {"calibrate-fit --runs '" + num.string() + "' -o /dev/null", "runs file '"}};
  for (const auto& [args, named] : cases) {
    const auto r = test::run(args);
    INFO(args);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains(named) && Catch::Contains("expected an object"));
    CHECK_THAT(r.out, Catch::Contains("leftover_root_") || Catch::Contains("standard input"));
  }
}
