// `llmsim calibrate-fit --runs`: the profile, the report, exit code 2 with the run named for bad input, and the
// microbenchmark fit under the runs' fit.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "cli_util.hpp"
#include "llmsim/core/json_view.hpp"

using namespace llmsim::test;

namespace {

const std::filesystem::path kSource(LLMSIM_SOURCE_DIR);

/// RUNS.json of the A100 runs of at most 40 prompts, with absolute result paths.
std::string small_a100_runs() {
  const auto dir = kSource / "data/calibration_runs/lambdalabs-a100-80gb-sxm";
  std::string runs;
  for (int n : {10, 20, 40}) {
    const std::string file = (dir / ("prompt_" + std::to_string(n) + "_Meta-Llama-3-8B-Instruct_tp1_len2000.json")).string();
    runs += std::string(runs.empty() ? "" : ",") + R"({"result": ")" + file +
            R"(", "command": "python3 benchmark_serving.py --backend vllm --model meta-llama/Meta-Llama-3-8B-Instruct --num-prompts )" +
            std::to_string(n) + R"( --save-result", "server_command": "vllm serve meta-llama/Meta-Llama-3-8B-Instruct --max-model-len 2000 --max-num-seqs 1024", "model": "llama-3.1-8b", "engine_version": "0.6.0"})";
  }
  const auto path = scratch_dir() / "RUNS-a100.json";
  std::ofstream(path) << R"({"gpu": "a100-80gb-sxm", "runs": [)" << runs << "]}";
  return path.string();
}

}  // namespace

TEST_CASE("calibrate-fit --runs writes a profile tied to the runs' runtime, and a report", "[cli][runs]") {
  const auto out = scratch_dir() / "a100-runs.json";
  const auto report = scratch_dir() / "a100-report.json";
  const auto r = run("calibrate-fit --runs " + small_a100_runs() + " --fields v0_cpu_overhead_per_iter_s -o " +
                     out.string() + " --report " + report.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("leave-one-run-out"));
  const std::string profile = read_file(out);
  CHECK_THAT(profile, Catch::Contains("\"runtime\": \"vllm-v0\""));
  CHECK_THAT(profile, Catch::Contains("\"engine_version\": \"vllm 0.6.0\""));
  CHECK_THAT(read_file(report), Catch::Contains("\"rms_cross_validated\""));
  // Microbenchmarks first, then the runs around them: both reports in one.
  const auto raw = (kSource / "data/profiles/raw/a100-80gb-sxm-public.json").string();
  const auto both = run("calibrate-fit " + raw + " --runs " + small_a100_runs() +
                        " --fields v0_cpu_overhead_per_iter_s -o " + out.string() + " --report " + report.string());
  INFO(both.out);
  CHECK(both.code == 0);
  CHECK_THAT(read_file(report), Catch::Contains("\"microbenchmarks\""));
}

TEST_CASE("calibrate-fit --runs: bad input exits 2 naming the run and the field", "[cli][runs]") {
  const auto dir = scratch_dir();
  std::ofstream(dir / "foreign.json") << R"({"accuracy": 0.9})";
  std::ofstream(dir / "RUNS-bad.json") << R"({"gpu": "h100-80gb-sxm", "runs": [{"result": "foreign.json",)"
                                        << R"( "command": "vllm bench latency --batch-size 8"}]})";
  const auto r = run("calibrate-fit --runs " + (dir / "RUNS-bad.json").string() + " -o " + (dir / "x.json").string());
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("runs[0] (foreign.json).result: unknown file type"));
  const auto none = run("calibrate-fit");
  CHECK(none.code == 2);
  CHECK_THAT(none.out, Catch::Contains("--runs"));
}

// Acceptance 4 of issue 28, class by class through the command a user runs (an unknown file type: the test above):
// exit 2, the run and the field named, no profile written (never a fit on nothing).
TEST_CASE("calibrate-fit --runs: each class of bad input is refused, naming the run and the field", "[cli][runs]") {
  const auto dir = scratch_dir() / "bad-classes";
  std::filesystem::create_directories(dir);
  // A latency file as `vllm bench latency --output-json` writes it (the value is not what is under test).
  auto latency = [&](const std::string& name, double seconds) {
    std::ofstream(dir / name) << R"({"avg_latency": )" << seconds << R"(, "latencies": [)" << seconds << ", " << seconds
                              << R"(], "percentiles": {"50": )" << seconds << "}}";
  };
  auto runs_file = [&](const std::string& name, const std::string& runs) {
    std::ofstream(dir / name) << R"({"gpu": "h100-80gb-sxm", "runs": [)" << runs << "]}";
    return (dir / name).string();
  };
  auto entry = [](const std::string& file, const std::string& command) {
    return R"({"result": ")" + file + R"(", "command": ")" + command + R"(", "engine_version": "0.10.1"})";
  };
  const std::string profile = (dir / "never.json").string();
  auto refused = [&](const std::string& runs_json, const std::string& extra = "") {
    const auto r = run("calibrate-fit --runs " + runs_json + extra + " -o " + profile);
    CHECK(r.code == 2);
    CHECK_FALSE(std::filesystem::exists(profile));
    return r.out;
  };
  const std::string lat8 = "vllm bench latency --model meta-llama/Llama-3.1-8B-Instruct";

  SECTION("command/file mismatch: a latency command over a serving file") {
    std::ofstream(dir / "serve.json") << R"({"backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct",)"
        << R"( "num_prompts": 4, "request_rate": "inf", "duration": 2.0, "completed": 4, "total_input_tokens": 40,)"
        << R"( "total_output_tokens": 40, "request_throughput": 2.0, "output_throughput": 20.0, "mean_ttft_ms": 30.0,)"
        << R"( "mean_tpot_ms": 10.0, "input_lens": [10, 10, 10, 10], "output_lens": [10, 10, 10, 10]})";
    const auto out = refused(runs_file("RUNS-mismatch.json", entry("serve.json", lat8 + " --batch-size 8")));
    CHECK_THAT(out, Catch::Contains("runs[0] (serve.json).result"));
    CHECK_THAT(out, Catch::Contains("command/file mismatch"));
  }
  SECTION("a run that does not fit in memory") {
    latency("lat70.json", 9.0);
    const auto out = refused(runs_file(
        "RUNS-memory.json", entry("lat70.json", "vllm bench latency --model meta-llama/Llama-3.1-70B-Instruct "
                                                "--batch-size 8 --input-len 512 --output-len 128 -tp 1")));
    CHECK_THAT(out, Catch::Contains("runs[0] (lat70.json)"));
    CHECK_THAT(out, Catch::Contains("does not fit in memory"));
  }
  SECTION("too few runs for a field") {
    // Only the 4096-token prompt makes prefill attention cost anything: that field has one run.
    std::string runs;
    for (auto [b, in, out] : {std::tuple{1, 128, 128}, {2, 128, 256}, {4, 256, 128}, {8, 64, 64}, {1, 4096, 8}}) {
      const std::string name = "lat_b" + std::to_string(b) + "_i" + std::to_string(in) + ".json";
      latency(name, 0.01 * out + 0.001 * in * b);
      runs += (runs.empty() ? "" : ",") + entry(name, lat8 + " --batch-size " + std::to_string(b) + " --input-len " +
                                                          std::to_string(in) + " --output-len " + std::to_string(out));
    }
    const std::string few = runs_file("RUNS-few.json", runs);
    const auto out = refused(few);
    CHECK_THAT(out, Catch::Contains("attn_prefill_efficiency"));
    CHECK_THAT(out, Catch::Contains("too few runs"));
    CHECK_THAT(out, Catch::Contains("runs[4] (lat_b1_i4096.json)"));
    // Asking for no run per field is asking for a fit on nothing: refused, naming the option.
    CHECK_THAT(refused(few, " --min-runs-per-field 0"), Catch::Contains("min_runs_per_field: must be at least 1"));
  }
}

TEST_CASE("calibrate-fit --json prints the profile and the report; --out writes the profile", "[cli][json]") {
  const auto raw = (kSource / "data/profiles/raw/a100-80gb-sxm-public.json").string();
  const auto out = scratch_dir() / "a100-json.json";
  const auto j = llmsim::parse_json(run("calibrate-fit " + raw + " --json --out " + out.string(), false).out, "stdout");
  REQUIRE(j.contains("profile"));
  REQUIRE(j.contains("report"));
  CHECK(j["profile"] == llmsim::parse_json(read_file(out), "--out"));
  CHECK(j["report"].contains("terms"));
  CHECK_FALSE(j["report"]["terms"].empty());
  // The older behaviour stays: without --out or --json the profile alone is stdout; -o is --out's short name.
  const auto alone = run("calibrate-fit " + raw, false);
  REQUIRE(alone.code == 0);
  CHECK(llmsim::parse_json(alone.out, "stdout") == j["profile"]);
  const auto older = scratch_dir() / "a100-o.json";
  REQUIRE(run("calibrate-fit " + raw + " -o " + older.string()).code == 0);
  CHECK(llmsim::parse_json(read_file(older), "-o") == j["profile"]);
  const auto both = run("calibrate-fit " + raw + " --out " + out.string() + " -o " + older.string());
  CHECK(both.code == 2);
  CHECK_THAT(both.out, Catch::Contains("--out: given with -o/--output"));
}

// Issue 28: the capacity guard's switch (calibration/fit/run_fit_capacity.hpp). These runs (request rate inf) measured
// the server at its capacity, so auto leaves the guard off; on holds the capacity anyway (the report names the probe
// and says a run reached capacity); off never. A value other than auto/on/off exits 2 naming the switch.
TEST_CASE("calibrate-fit --capacity-guard auto|on|off", "[cli][runs]") {
  const std::string base =
      "calibrate-fit --runs " + small_a100_runs() + " --fields v0_cpu_overhead_per_iter_s --no-cross-validate --json";
  auto report_of = [&](const std::string& extra) {
    const auto r = run(base + extra, false);
    INFO(r.out);
    REQUIRE(r.code == 0);
    return llmsim::parse_json(r.out, "stdout")["report"];
  };
  CHECK(report_of("")["capacity_guard"].is_null());
  CHECK(report_of(" --capacity-guard auto")["capacity_guard"].is_null());
  CHECK(report_of(" --capacity-guard off")["capacity_guard"].is_null());
  const auto on = report_of(" --capacity-guard ON");
  REQUIRE(on["capacity_guard"].is_object());
  CHECK_THAT(on["capacity_guard"]["probe"].get<std::string>(), Catch::Contains("sent at once"));
  CHECK(on["capacity_guard"]["output_tokens_per_s_base"].get<double>() > 0);
  CHECK_THAT(on["notes"].dump(), Catch::Contains("--capacity-guard on") && Catch::Contains("at its capacity"));
  const auto bad = run(base + " --capacity-guard sometimes");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Catch::Contains("error: --capacity-guard (Python capacity_guard=): expected auto, on or off, "
                                      "got 'sometimes'"));
}
