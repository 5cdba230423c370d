// Runs build/bin/llmsim as a user would: exit 0 on success, 2 with a one-line message naming the culprit.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "llmsim/core/json_view.hpp"

namespace {

struct Run {
  int code = -1;
  std::string out;  // stdout, then stderr
};

Run run(const std::string& args, bool with_stderr = true) {
  // `timeout` turns a hang into exit 124, a failed check instead of a stuck test run.
  const std::string cmd =
      std::string("timeout 60 '") + LLMSIM_CLI_PATH + "' " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::filesystem::path temp_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "llmsim_test_cli";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("llmsim memory answers") {
  auto r = run("memory --model llama-3.1-8b --gpu rtx4090-24gb --quant fp16 --max-model-len 8192");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("fits: yes"));
  r = run("memory --model qwen2.5-14b --gpu rtx4090-24gb --quant fp16");
  CHECK(r.code == 0);  // a valid question whose answer is "no"
  CHECK_THAT(r.out, Catch::Contains("cannot run because weights need"));
  r = run("memory --model llama-3.1-70b --gpu rtx4090-48gb --quant awq-int4 --max-model-len 8192 --json", false);
  REQUIRE(r.code == 0);
  const auto j = llmsim::parse_json(r.out, "stdout");
  CHECK(j["fits"] == true);
  CHECK(j["reason"] == "");
  CHECK(j["kv_bytes_per_token"] == 327680);
  CHECK(j["max_concurrent_seqs"].get<int>() >= 1);
  CHECK(j["params"].get<double>() > 70e9);
  for (const char* k : {"weights_bytes", "kv_cache_bytes", "activation_bytes", "runtime_bytes", "free_bytes", "total_bytes"}) {
    CHECK(j["per_gpu"].contains(k));
  }
  r = run("memory --model llama-3.1-8b --gpu rtx4090-24gb --num-gpus 2 --tp 2 --quant fp16 --json", false);
  REQUIRE(r.code == 0);
  CHECK(llmsim::parse_json(r.out, "stdout")["per_gpu"]["weights_bytes"].get<double>() < 8.1e9);
  CHECK(run("memory --help").code == 0);
  CHECK(run("memory --model llama-3.1-8b --gpu a100-80gb-sxm:mig-3g.40gb --quant fp8").code == 0);
}

TEST_CASE("bad inputs exit 2 naming the culprit") {
  auto r = run("memory --model llama-3.1-8b --gpu rtx4090 --quant fp16");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("unknown GPU 'rtx4090'; did you mean 'rtx4090-24gb'"));
  r = run("memory --model llama3.1-8b --gpu rtx4090-24gb");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("did you mean 'llama-3.1-8b'"));
  r = run("memory --model llama-3.1-8b --gpu rtx4090-24gb --quant awq_int4");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--quant: unknown quantization format 'awq_int4'; did you mean 'awq-int4'"));
  r = run("memory --model llama-3.1-8b --gpu rtx4090-24gb --tp 3");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("hardware.tp: must divide the model's num_attention_heads (32), got 3"));
  r = run("memory --model llama-3.1-8b --gpu rtx4090-24gb --max-model-len -5");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--max-model-len"));
  CHECK_THAT(r.out, Catch::Contains("-5"));
  r = run("memory --model llama-3.1-8b --gpu rtx4090-24gb --kv-dtype fp4");
  CHECK(r.code == 2);
  r = run("memory --gpu rtx4090-24gb");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--model"));

  const auto broken = temp_file("broken-config.json", "{\"hidden_size\": 4096,");
  r = run("memory --model '" + broken.string() + "' --gpu rtx4090-24gb");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("invalid JSON"));
  const auto incomplete = temp_file("incomplete-config.json",
                                    R"({"num_hidden_layers": 32, "num_attention_heads": 32, "intermediate_size": 11008,
                                        "vocab_size": 32000, "max_position_embeddings": 4096})");
  r = run("memory --model '" + incomplete.string() + "' --gpu rtx4090-24gb");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--model.hidden_size: missing"));
  // one line on stderr
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  std::filesystem::remove_all(broken.parent_path());
}

TEST_CASE("llmsim catalog lists what ships") {
  auto r = run("catalog gpus");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("rtx4090-48gb"));
  CHECK_THAT(r.out, Catch::Contains("placeholder"));
  r = run("catalog models --json", false);
  REQUIRE(r.code == 0);
  const auto models = llmsim::parse_json(r.out, "stdout");
  CHECK(models.size() == 11);
  r = run("catalog quants --json", false);
  REQUIRE(r.code == 0);
  CHECK(llmsim::parse_json(r.out, "stdout")["weights"].size() == 10);
  r = run("catalog gpus --json", false);
  REQUIRE(r.code == 0);
  CHECK(llmsim::parse_json(r.out, "stdout").size() == 14);
  r = run("catalog gpu");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("did you mean 'gpus'"));
}

TEST_CASE("a '%' in an argument is refused instead of hanging Boost's error formatter (fuzz/regressions)") {
  const auto r = run("step '--tp%original_token%' -4b");  // fuzz/regressions/cli_program_options_placeholder_hang
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("'%' is not allowed"));
}
