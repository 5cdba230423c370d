// `llmsim calibrate-fit --runs`: the profile, the report, exit code 2 with the run named for bad input, and the
// microbenchmark fit under the runs' fit.
#include <catch2/catch.hpp>

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
