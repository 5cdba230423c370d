// `llmsim check` as a user runs it: a table for a real vLLM result, exit 2 with one line naming the
// culprit for a file of another tool, a malformed file or a missing GPU.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "llmsim/core/json_view.hpp"

namespace {

struct Out {
  int code = -1;
  std::string text;
};

Out check_cli(const std::string& args, const char* redirect = "2>&1") {
  const std::string cmd = std::string("timeout 60 '") + LLMSIM_CLI_PATH + "' " + args + " " + redirect;
  Out o;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) o.text.append(buf, n);
  const int status = pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

const std::string kData = std::string(LLMSIM_SOURCE_DIR) + "/tests/data/vllm_results/";
const std::string kArgs =
    "--vllm-args 'vllm serve meta-llama/Meta-Llama-3-8B-Instruct --max-model-len 2048 --max-num-seqs 256 "
    "--max-num-batched-tokens 2048 --enable-chunked-prefill False --gpu-memory-utilization 0.95'";

}  // namespace

TEST_CASE("llmsim check prints measured beside predicted for a real vLLM result") {
  const auto r = check_cli("check " + kData + "lambdalabs-h100-llama3-8b-v0.5.4-np80.json --gpu h100-80gb-sxm "
                        "--model llama-3.1-8b " + kArgs);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.text, Catch::Contains("metric") && Catch::Contains("measured") && Catch::Contains("predicted"));
  CHECK_THAT(r.text, Catch::Contains("total_output_tokens") && Catch::Contains("14101"));
  CHECK_THAT(r.text, Catch::Contains("p99_latency_ms"));
  const auto j = check_cli("check --vllm-result " + kData + "lambdalabs-h100-llama3-8b-v0.5.4-np80.json --gpu "
                        "h100-80gb-sxm --model llama-3.1-8b --json " + kArgs, "2>/dev/null");
  REQUIRE(j.code == 0);
  const auto doc = llmsim::parse_json(j.text, "stdout");
  CHECK(doc["fits"] == true);
  CHECK(doc["rows"].size() == 23);
  CHECK(doc["scenario"]["engine"]["max_num_seqs"] == 256);
  // --scenario-out writes what was simulated; `llmsim simulate` runs it to the same numbers.
  const std::string out = (std::filesystem::temp_directory_path() / "llmsim_check_scenario.json").string();
  REQUIRE(check_cli("check " + kData + "lambdalabs-h100-llama3-8b-v0.5.4-np80.json --gpu h100-80gb-sxm --model "
              "llama-3.1-8b --scenario-out " + out + " " + kArgs, "> /dev/null 2>&1").code == 0);
  const auto sim = check_cli("simulate --scenario " + out + " --json", "2>/dev/null");
  REQUIRE(sim.code == 0);
  const auto s = llmsim::parse_json(sim.text, "stdout");
  for (const auto& r : doc["rows"]) {
    if (r["key"] == "mean_tpot_ms") CHECK(s["mean_tpot_ms"].get<double>() == Approx(r["predicted"].get<double>()));
    if (r["key"] == "duration") CHECK(s["duration"].get<double>() == Approx(r["predicted"].get<double>()));
  }
}

TEST_CASE("llmsim check refuses a file whose counts disagree, and leaves vLLM's failed requests out") {
  const std::string real = kData + "lambdalabs-h100-llama3-8b-v0.5.4-np80.json";
  std::string text;
  {
    std::FILE* f = std::fopen(real.c_str(), "r");
    REQUIRE(f);
    char buf[4096];
    for (std::size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
    std::fclose(f);
  }
  const auto doc = llmsim::parse_json(text, real);
  const auto dir = std::filesystem::temp_directory_path() / ("llmsim_check_counts_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const llmsim::Json& j) {
    const std::string path = (dir / name).string();
    std::FILE* f = std::fopen(path.c_str(), "w");
    const std::string body = j.dump();
    std::fputs(body.c_str(), f);
    std::fclose(f);
    return path;
  };
  const std::string args = " --gpu h100-80gb-sxm --model llama-3.1-8b " + kArgs;
  // The class: a field that contradicts the others is refused by name, not simulated.
  for (const auto& [field, value, names] : std::vector<std::tuple<std::string, llmsim::Json, std::string>>{
           {"total_input_tokens", -5, "total_input_tokens: must be >= 0, got -5"},
           {"total_output_tokens", -1, "total_output_tokens: must be >= 0"},
           {"failed", -2, "failed: must be >= 0"},
           {"completed", 79, "input_lens: has 80 entries, but the run sent completed + failed = 79 + 0"}}) {
    auto bad = doc;
    bad[field] = value;
    const auto r = check_cli("check " + write("bad.json", bad) + args);
    INFO(field);
    CHECK(r.code == 2);
    CHECK_THAT(r.text, Catch::Contains(names));
  }
  {  // NaN (Python's json writes it) is a value that is not a number, not a missing field.
    std::string nan_text = doc.dump();
    const auto at = nan_text.find("\"duration\":");
    REQUIRE(at != std::string::npos);
    const auto end = nan_text.find_first_of(",}", at);
    nan_text.replace(at, end - at, "\"duration\": NaN");
    const std::string path = (dir / "nan.json").string();
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(nan_text.c_str(), f);
    std::fclose(f);
    const auto r = check_cli("check " + path + args);
    CHECK(r.code == 2);
    CHECK_THAT(r.text, Catch::Contains("duration: NaN or null"));
    CHECK_THAT(r.text, !Catch::Contains("missing"));
  }
  {  // A percentile key only as vLLM writes it: "p0x5f" is not read as p95 (strtod takes hex).
    auto odd = doc;
    odd["p0x5f_ttft_ms"] = 1.0;
    odd["p1e1_ttft_ms"] = 1.0;
    const auto r = check_cli("check " + write("odd.json", odd) + args + " --json", "2>/dev/null");
    REQUIRE(r.code == 0);
    const auto j = llmsim::parse_json(r.text, "stdout");
    for (const auto& row : j["rows"]) {
      CHECK(row["key"] != "p0x5f_ttft_ms");
      CHECK(row["key"] != "p1e1_ttft_ms");
    }
  }
  // 5 requests failed (output 0, as vLLM's client lists them): they are not simulated as completed ones.
  auto failed = doc;
  int zeroed = 0;
  for (std::size_t i = 0; i < failed["output_lens"].size() && zeroed < 5; ++i) {
    if (failed["output_lens"][i] == 0) continue;
    failed["output_lens"][i] = 0;
    ++zeroed;
  }
  const int zeros_before = static_cast<int>(std::count(doc["output_lens"].begin(), doc["output_lens"].end(), 0));
  failed["completed"] = 80 - 5 - zeros_before;
  failed["failed"] = 5 + zeros_before;
  const auto r = check_cli("check " + write("failed.json", failed) + args + " --json", "2>/dev/null");
  REQUIRE(r.code == 0);
  const auto j = llmsim::parse_json(r.text, "stdout");
  CHECK(j["scenario"]["workload"]["num_requests"] == failed["completed"]);
  std::string notes = j["notes"].dump();
  CHECK_THAT(notes, Catch::Contains("requests failed in the measured run (output 0 in the file): they are left out"));
  for (const auto& row : j["rows"]) {
    if (row["key"] == "completed") CHECK(row["predicted"] == failed["completed"]);
    if (row["key"] == "failed") CHECK(row["predicted"].is_null());
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("llmsim check --scenario-out replaces the file whole or not at all") {
  // The class: an output written in place is truncated by a full disk or a kill. Here a file-size limit (SIGXFSZ
  // ignored, so write(2) fails with EFBIG) stops the write after 1 KiB: the earlier file must stay as it was.
  const auto dir = std::filesystem::temp_directory_path() / ("llmsim_check_out_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "scenario.json").string();
  const std::string before(4096, 'x');
  { std::FILE* f = std::fopen(out.c_str(), "w"); REQUIRE(f); std::fputs(before.c_str(), f); std::fclose(f); }
  const std::string cmd = std::string("sh -c \"trap '' XFSZ; ulimit -f 1; timeout 60 '") + LLMSIM_CLI_PATH + "' check " +
                          kData + "lambdalabs-h100-llama3-8b-v0.5.4-np80.json --gpu h100-80gb-sxm --model llama-3.1-8b "
                          "--scenario-out " + out + " " + kArgs + " >/dev/null\" 2>&1";
  std::string text;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
  const int status = pclose(p);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  CHECK_THAT(text, Catch::Contains("--scenario-out: cannot write"));
  std::string after;
  if (std::FILE* f = std::fopen(out.c_str(), "r")) {
    for (std::size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) after.append(buf, n);
    std::fclose(f);
  }
  CHECK(after == before);
  std::size_t files = 0;  // and no temporary file is left beside it
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  CHECK(files == 1);
  std::filesystem::remove_all(dir);
  // A full device is an error, not exit 0 with nothing written.
  CHECK(check_cli("check " + kData + "lambdalabs-h100-llama3-8b-v0.5.4-np80.json --gpu h100-80gb-sxm --model llama-3.1-8b "
            "--scenario-out /dev/full " + kArgs, ">/dev/null 2>&1").code == 2);
}

TEST_CASE("llmsim check --engine-version prices the run as that vLLM release", "[runtime_version]") {
  // The LambdaLabs file ran vLLM 0.5.4: V0's scheduler, flash-attn decode, synchronous output processing.
  const std::string base = "check " + kData + "lambdalabs-h100-llama3-8b-v0.5.4-np80.json --gpu h100-80gb-sxm "
                           "--model llama-3.1-8b --json " + kArgs;
  const auto v054 = check_cli(base + " --engine-version 0.5.4", "2>/dev/null");
  REQUIRE(v054.code == 0);
  const auto d054 = llmsim::parse_json(v054.text, "stdout");
  CHECK(d054["scenario"]["engine"]["runtime"] == "vllm==0.5.4");
  CHECK(d054["scenario"]["engine"]["policy"] == "vllm-v0");
  // Without the release the command line's V0 scheduler runs on the 0.6 runtime (asynchronous output processing):
  // 0.5.4's synchronous output processing makes every decode step slower, so the mean TPOT rises.
  const auto current = llmsim::parse_json(check_cli(base, "2>/dev/null").text, "stdout");
  CHECK_FALSE(current["scenario"]["engine"].contains("runtime"));
  auto tpot = [](const llmsim::Json& d) {
    for (const auto& r : d["rows"])
      if (r["key"] == "mean_tpot_ms") return r["predicted"].get<double>();
    return 0.0;
  };
  CHECK(tpot(d054) > 1.1 * tpot(current));
  const auto bad = check_cli(base + " --engine-version tensorrt-llm==0.12", "2>&1");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.text, Catch::Contains("engine.runtime") && Catch::Contains("not modelled"));
}

TEST_CASE("llmsim check refuses bad input with one line naming the file or field") {
  auto r = check_cli("check " + kData + "README.md --gpu h100-80gb-sxm");
  CHECK(r.code == 2);
  CHECK_THAT(r.text, Catch::Contains("README.md") && Catch::Contains("invalid JSON"));
  r = check_cli("check " + kData + "lambdalabs-h100-llama3-8b-v0.5.4-np80.json --model llama-3.1-8b");
  CHECK(r.code == 2);
  CHECK_THAT(r.text, Catch::StartsWith("llmsim check: error: --gpu:"));
  r = check_cli("check " + kData + "lambdalabs-h100-llama3-8b-v0.5.4-np80.json --gpu h100-80gb-sxm");
  CHECK(r.code == 2);
  CHECK_THAT(r.text, Catch::Contains("not a catalogue model") && Catch::Contains("--model"));
  r = check_cli("check " + kData + "lambdalabs-h100-llama3-8b-v0.5.4-np80.json --gpu h100-80gb-sxm --model "
             "llama-3.1-8b --vllm-args 'vllm serve m --max-num-seqs lots'");
  CHECK(r.code == 2);
  CHECK_THAT(r.text, Catch::Contains("--max-num-seqs: expected an integer, got 'lots'"));
  CHECK(std::count(r.text.begin(), r.text.end(), '\n') == 1);
}

TEST_CASE("llmsim check on a JSON-lines file: a row per run, or one run with --run", "[files]") {
  const std::string file = kData + "lambdalabs-h100-llama3-8b-v0.5.4-append.jsonl";
  const std::string common = " --gpu h100-80gb-sxm --model llama-3.1-8b --engine-version 0.5.4 " + kArgs;
  auto r = check_cli("check " + file + common);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.text, Catch::Contains("2 runs, one per line") && Catch::Contains("mean TTFT err") &&
                         Catch::Contains("median |err|"));
  CHECK_THAT(r.text, Catch::Contains("320"));
  // --json: every run's full comparison, each with its line.
  r = check_cli("check " + file + common + " --json", "2>/dev/null");
  REQUIRE(r.code == 0);
  const auto doc = llmsim::parse_json(r.text, "stdout");
  REQUIRE(doc["runs"].size() == 2);
  CHECK(doc["runs"][1]["line"] == 2);
  CHECK(doc["runs"][1]["scenario"]["workload"]["num_requests"] == 320);
  // --run 2: that run's table, as for a single-run file.
  r = check_cli("check " + file + common + " --run 2");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.text, Catch::Contains("line 2") && Catch::Contains("320 completed") && Catch::Contains("p99_latency_ms"));
  r = check_cli("check " + file + common + " --run 3");
  CHECK(r.code == 2);
  CHECK_THAT(r.text, Catch::Contains("--run") && Catch::Contains("lines 1, 2"));
  r = check_cli("check " + file + common + " --scenario-out /tmp/llmsim_never_written.json");
  CHECK(r.code == 2);
  CHECK_THAT(r.text, Catch::Contains("--scenario-out") && Catch::Contains("--run"));
}

TEST_CASE("llmsim check reads SGLang bench_serving output", "[files]") {
  const auto r = check_cli("check " + kData + "livinfly-a100pcie-sglang047-mistral7b-online.jsonl --gpu a100-40gb-pcie "
                     "--model mistral-7b --run 1");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.text, Catch::Contains("mean_e2e_latency_ms") && Catch::Contains("concurrency") &&
                         Catch::Contains("SGLang runtime"));
}

TEST_CASE("llmsim check --sglang-args reads the SGLang server's command line", "[files]") {
  const auto r = check_cli("check " + kData + "livinfly-a100pcie-sglang047-mistral7b-online.jsonl --gpu a100-40gb-pcie "
                     "--model mistral-7b --run 1 --sglang-args "
                     "\"python -m sglang.launch_server --model-path mistral-7b --max-running-requests 24\"");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.text, Catch::Contains("policy sglang, max_num_seqs 24"));
  const auto bad = check_cli("check " + kData + "livinfly-a100pcie-sglang047-mistral7b-online.jsonl --gpu a100-40gb-pcie "
                       "--model mistral-7b --run 1 --sglang-args \"python -m sglang.launch_server --max-runing-requests 2\"");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.text, Catch::Contains("--max-runing-requests: unknown SGLang flag"));
}

TEST_CASE("llmsim check refuses counts no run can have before building them: sizes sized by a field are bounded") {
  // A file's counts size what check builds (a trace of every request): a claim past what can be simulated, or totals
  // that cannot belong to that many requests, is exit 2 naming the field, in seconds, not GBs and minutes.
  const auto dir = std::filesystem::temp_directory_path() / ("llmsim_check_counts_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto file = [&](const std::string& name, long long completed, long long input_tokens) {
    llmsim::Json j = {{"backend", "vllm"}, {"model_id", "meta-llama/Meta-Llama-3-8B-Instruct"},
                      {"request_rate", "inf"}, {"duration", 100.0}, {"completed", completed},
                      {"total_input_tokens", input_tokens}, {"total_output_tokens", completed * 100},
                      {"mean_ttft_ms", 10.0}, {"mean_tpot_ms", 10.0}};
    const auto p = dir / name;
    FILE* f = std::fopen(p.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs(j.dump().c_str(), f);
    std::fclose(f);
    return p.string();
  };
  struct Case {
    std::string path, field;
  };
  for (const auto& [path, field] : {Case{file("huge.json", 20'000'000, 20'000'000'000LL), "completed"},
                                    Case{file("empty-prompts.json", 20'000'000, 1000), "total_input_tokens"},
                                    Case{file("few-tokens.json", 100, 99), "total_input_tokens"}}) {
    const auto r = check_cli("check '" + path + "' --gpu h100-80gb-sxm --model llama-3.1-8b");
    INFO(path << ": " << r.text);
    CHECK(r.code == 2);
    CHECK_THAT(r.text, Catch::Contains(field));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("llmsim check prints the context it simulated as a number, also when it came from vLLM's auto") {
  // Issue 29: with max_model_len unset (vLLM's --max-model-len auto) `check --json` echoed -1, the value that asks
  // for auto, not the context that ran. Now the number, and a note saying it came from auto; a given number is
  // echoed as given, with no note.
  const std::string file = kData + "lambdalabs-h100-llama3-8b-v0.5.4-np80.json --gpu h100-80gb-sxm --model llama-3.1-8b ";
  const std::string server = "--vllm-args 'vllm serve meta-llama/Meta-Llama-3-8B-Instruct --max-num-seqs 256' ";
  const auto j = check_cli("check " + file + server + "--json", "2>/dev/null");
  REQUIRE(j.code == 0);
  const auto doc = llmsim::parse_json(j.text, "stdout");
  REQUIRE(doc["max_model_len"].is_number_integer());
  const auto ctx = doc["max_model_len"].get<int>();
  CHECK(ctx > 0);
  CHECK(doc["scenario"]["engine"]["max_model_len"] == ctx);
  CHECK_THAT(doc["max_model_len_note"].get<std::string>(), Catch::StartsWith("auto"));
  const auto text = check_cli("check " + file + server, "2>/dev/null");
  CHECK_THAT(text.text, Catch::Contains("max_model_len ") && Catch::Contains("(auto"));
  const auto given = llmsim::parse_json(check_cli("check " + file + kArgs + " --json", "2>/dev/null").text, "stdout");
  CHECK(given["max_model_len"] == 2048);
  CHECK(given["scenario"]["engine"]["max_model_len"] == 2048);
  CHECK(given["max_model_len_note"] == "");
}

TEST_CASE("workload.ignore_eos: from the scenario file, --set, and check's client default or flags", "[ignore_eos]") {
  // SGLang 0.4.7 with the radix cache off, outputs of 200-3800 tokens at once on a 24 GB card: requests that stop at
  // EOS are admitted by new_token_ratio, which decays and over-admits (retractions); requests that ignore EOS by the
  // exact walk (add_one_req_ignore_eos), which retracts nothing (tests/engine/test_sglang_ignore_eos.cpp).
  llmsim::Json sc = {{"model", "llama-3.1-8b"}, {"hardware", {{"gpu", "rtx4090-24gb"}}},
                     {"engine", {{"runtime", "sglang==0.4.7"}, {"enable_prefix_caching", false}, {"block_size", 1},
                                 {"max_model_len", 8192}, {"api_server", false}}},
                     {"workload", {{"arrival", {{"process", "offline"}}}, {"input_tokens", {{"dist", "fixed"}, {"value", 300}}},
                                   {"output_tokens", {{"dist", "uniform"}, {"min", 200}, {"max", 3800}}},
                                   {"num_requests", 300}, {"warmup_requests", 0}}}};
  const auto dir = std::filesystem::temp_directory_path();
  const std::string plain = (dir / "llmsim_eos_plain.json").string();
  const std::string eos = (dir / "llmsim_eos_file.json").string();
  { std::ofstream(plain) << sc.dump(); }
  sc["workload"]["ignore_eos"] = true;
  { std::ofstream(eos) << sc.dump(); }
  auto simulate = [](const std::string& args) {
    const auto r = check_cli("simulate " + args + " --json", "2>/dev/null");
    REQUIRE(r.code == 0);
    return llmsim::parse_json(r.text, "stdout");
  };
  const auto from_plain = simulate(plain);
  const auto from_file = simulate(eos);
  const auto from_set = simulate(plain + " --set workload.ignore_eos=true");
  CHECK(from_plain["preemptions"].get<long long>() > 0);
  CHECK(from_file["preemptions"] == 0);
  CHECK(from_set == from_file);
  const auto bad = check_cli("simulate " + plain + " --set workload.ignore_eos=1");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.text, Catch::Contains("workload.ignore_eos"));

  // check: SGLang's bench_serving sends ignore_eos unless --disable-ignore-eos; vLLM's client only with --ignore-eos.
  auto stated = [](const std::string& args) {
    const auto r = check_cli("check " + args + " --json", "2>/dev/null");
    REQUIRE(r.code == 0);
    const auto doc = llmsim::parse_json(r.text, "stdout");
    return doc["scenario"]["workload"].value("ignore_eos", false);
  };
  const std::string sglang = kData + "livinfly-a100pcie-sglang047-mistral7b-online.jsonl --gpu a100-40gb-pcie "
                             "--model mistral-7b --run 1";
  const std::string vllm = kData + "lambdalabs-h100-llama3-8b-v0.5.4-np80.json --gpu h100-80gb-sxm --model llama-3.1-8b " + kArgs;
  CHECK(stated(sglang));
  CHECK_FALSE(stated(sglang + " --disable-ignore-eos"));
  CHECK_FALSE(stated(vllm));
  CHECK(stated(vllm + " --ignore-eos"));
  const auto both = check_cli("check " + sglang + " --ignore-eos --disable-ignore-eos");
  CHECK(both.code == 2);
  CHECK_THAT(both.text, Catch::Contains("--ignore-eos") && Catch::Contains("--disable-ignore-eos"));
}
