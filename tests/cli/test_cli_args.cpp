// The argument plumbing every command shares (examples/cli/common.cpp): the scenario as the first argument,
// --set PATH=VALUE overrides, help defaults as written, and progress only where a person watches it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "cli_util.hpp"
#include "llmsim/core/json_view.hpp"

using llmsim::test::read_file;
using llmsim::test::run;
using llmsim::test::run_shell;
using llmsim::test::temp_file;

namespace {

const char* kScenario = R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm", "price_per_gpu_hour": 1.8},
  "engine": {"max_model_len": 8192},
  "workload": {"arrival": {"process": "poisson", "rate": 4}, "num_requests": 200, "warmup_requests": 20, "seed": 3},
  "slo": {"ttft_ms": {"p95": 2000}, "tpot_ms": {"p95": 100}}})";

std::string scenario_file() { return "'" + temp_file("args-scenario.json", kScenario).string() + "'"; }

// A two-point grid on the scenario above.
std::string grid_file() {
  temp_file("args-scenario.json", kScenario);
  return "'" + temp_file("args-grid.json", R"({"base": "args-scenario.json", "grid": {"workload.arrival.rate": [1, 2]}})")
                   .string() + "'";
}

llmsim::Json json_of(const std::string& args) {
  const auto r = run(args, false);
  INFO("llmsim " << args);
  REQUIRE(r.code == 0);
  return llmsim::parse_json(r.out, "stdout");
}

}  // namespace

TEST_CASE("the scenario is the first argument or --scenario, once") {
  const std::string sc = scenario_file();
  const auto positional = json_of("simulate " + sc + " --json");
  CHECK(positional == json_of("simulate --scenario " + sc + " --json"));
  CHECK(positional["completed_requests"] == 180);
  CHECK(json_of("capacity " + sc + " --json --requests 200 --replications 1")["max_qps"].get<double>() > 0);
  const auto cmp = json_of("compare " + sc + " --gpus a100-80gb-sxm --requests 200 --replications 1 --json");
  CHECK(cmp["rows"].size() == 1);
  CHECK(json_of("sweep " + grid_file() + " --json").size() == 2);
  // throughput too (the README's tour calls it so): the same result as with --scenario.
  const auto tp = json_of("throughput " + sc + " --num-requests 50 --json");
  CHECK(tp == json_of("throughput --scenario " + sc + " --num-requests 50 --json"));

  auto r = run("simulate " + sc + " other.json");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("unexpected argument 'other.json'"));
  CHECK_THAT(r.out, Catch::Contains("takes one scenario argument"));
  r = run("simulate " + sc + " --scenario " + sc);
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--scenario: given more than once"));
  r = run("sweep " + grid_file() + " extra.json");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("unexpected argument 'extra.json'"));
  r = run("memory llama-3.1-8b --gpu rtx4090-24gb --model llama-3.1-8b");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("unexpected argument 'llama-3.1-8b' (this command takes options only)"));
  r = run("simulate");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("scenario"));
}

TEST_CASE("--set PATH=VALUE edits the scenario as editing the file would, on every scenario command") {
  const std::string sc = scenario_file();
  // Numbers, strings and objects: the same result as the edited file.
  const auto set = json_of("simulate " + sc + " --set workload.num_requests=120 --set hardware.gpu=rtx4090-24gb --json");
  auto edited = llmsim::parse_json(kScenario, "scenario");
  edited["workload"]["num_requests"] = 120;
  edited["hardware"]["gpu"] = "rtx4090-24gb";
  CHECK(set == json_of("simulate '" + temp_file("args-edited.json", edited.dump()).string() + "' --json"));
  CHECK(set["completed_requests"] == 100);
  CHECK(set["kv"]["capacity_tokens"] != json_of("simulate " + sc + " --json")["kv"]["capacity_tokens"]);
  CHECK(json_of("simulate " + sc + R"( --set 'slo={"ttft_ms": {"p95": 1}}' --json)")["slo_met"] == false);
  // The named flags apply after --set.
  CHECK(json_of("simulate " + sc + " --set workload.num_requests=120 --num-requests 60 --json")["completed_requests"] == 40);

  // capacity and compare read it too: an unknown model is refused by name, an impossible SLO has no capacity.
  auto r = run("capacity " + sc + " --set model=llama-9b --requests 200");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("unknown model 'llama-9b'"));
  const std::string cmp = "compare " + sc + " --gpus a100-80gb-sxm --requests 200 --replications 1 --json";
  CHECK(json_of(cmp)["rows"][0]["max_qps"].get<double>() > 0);
  CHECK(json_of(cmp + " --set slo.ttft_ms.p95=0.001")["rows"][0]["max_qps"].is_null());
  // sweep: every point, unless the path is one of the grid's axes.
  const auto rows = json_of("sweep " + grid_file() + " --set workload.num_requests=60 --json");
  REQUIRE(rows.size() == 2);
  for (const auto& row : rows) CHECK(row["completed_requests"] == 40);
  r = run("sweep " + grid_file() + " --set workload.arrival.rate=3");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("'workload.arrival.rate' is an axis of this grid"));
  // The class: a --set on a section holding an axis, on a field inside one, or by a vLLM name for an axis's field
  // would run every row at one value under labels saying otherwise (rows "rate 1" and "rate 2" both ran at 9).
  temp_file("args-scenario.json", kScenario);
  const std::string section_grid =
      "'" + temp_file("args-grid-section.json",
                      R"({"base": "args-scenario.json", "grid": {"workload.arrival": [{"process": "poisson", "rate": 1},
                          {"process": "poisson", "rate": 2}], "engine.max_num_seqs": [8, 16]}})")
                .string() + "'";
  for (const auto& [grid, set, names] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {grid_file(), R"('workload.arrival={"process": "poisson", "rate": 9}')", "'workload.arrival' holds 'workload.arrival.rate'"},
           {grid_file(), "workload={}", "'workload' holds 'workload.arrival.rate'"},
           // An axis value over a section merges (spec::merge_json_path): it writes the fields it names.
           {section_grid, "workload.arrival.rate=9",
            "'workload.arrival.rate' overlaps the grid axis 'workload.arrival' (both set 'workload.arrival.rate')"},
           {section_grid, "max_num_seqs=4", "grid axis 'engine.max_num_seqs' (both set 'engine.max_num_seqs')"},
           {section_grid, "engine.max_num_seqs=4", "'engine.max_num_seqs' is an axis of this grid"}}) {
    r = run("sweep " + grid + " --set " + set);
    INFO(set);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains(names) && Catch::Contains("change the axis's values in the grid"));
  }
  // A sibling of an axis is no override of it.
  CHECK(json_of("sweep " + grid_file() + " --set workload.arrival.process=poisson --set workload.num_requests=60 --json")
            .size() == 2);

  r = run("simulate " + sc + " --set workload.arival.rate=3");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("arival"));
  CHECK_THAT(r.out, Catch::Contains("arrival"));  // the valid field is named
  r = run("simulate " + sc + " --set workload.num_requests");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--set: expected PATH=VALUE, got 'workload.num_requests'"));
  r = run("simulate " + sc + " --set workload.arrival.rate=fast");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("workload.arrival.rate"));
  CHECK_THAT(r.out, Catch::Contains("fast"));
}

TEST_CASE("--gpu and --price are refused where the scenario's cards are elsewhere, as hardware.gpu is") {
  // The class: a flag on a field the scenario does not use would change nothing, silently. Every command with
  // --gpu/--price, on a disaggregated and on a fleet scenario, says where the cards are.
  const auto dir = std::filesystem::path(LLMSIM_SOURCE_DIR) / "examples/scenarios";
  const std::string disagg = "'" + (dir / "disagg-a100-prefill-4090-decode.json").string() + "'";
  const std::string fleet = "'" + (dir / "fleet-4090-a100.json").string() + "'";
  for (const char* command : {"simulate", "capacity", "throughput"}) {
    for (const auto& [flag, field] : std::vector<std::pair<std::string, std::string>>{
             {"--gpu a100-80gb-sxm", "gpu"}, {"--price 0.5", "price_per_gpu_hour"}}) {
      auto r = run(std::string(command) + " " + disagg + " " + flag);
      INFO(command << " " << flag);
      CHECK(r.code == 2);
      CHECK_THAT(r.out, Catch::Contains("--" + flag.substr(2, flag.find(' ') - 2) + ": this scenario's cards are in "
                                        "disaggregation.prefill / disaggregation.decode: set disaggregation.<pool>." +
                                        field));
      r = run(std::string(command) + " " + fleet + " " + flag);
      CHECK(r.code == 2);
      CHECK_THAT(r.out, Catch::Contains("hardware.fleet: set hardware.fleet[i]." + field));
    }
  }
  // The same rule as the path: --set hardware.gpu says the same.
  CHECK_THAT(run("simulate " + fleet + " --set hardware.gpu=a100-80gb-sxm").out,
             Catch::Contains("hardware.fleet: set hardware.fleet[i].gpu"));
}

TEST_CASE("compare and report on pools or a fleet blame what was given: --gpus only when it was") {
  // The class: an error naming a flag the user never gave. `compare`/`report` on a disaggregated or fleet file
  // without --gpus said "error: --gpus: ..." (issue 29's attack); the scenario's own section is what to look at.
  const auto dir = std::filesystem::path(LLMSIM_SOURCE_DIR) / "examples/scenarios";
  const std::string disagg = "'" + (dir / "disagg-a100-prefill-4090-decode.json").string() + "'";
  const std::string fleet = "'" + (dir / "fleet-4090-a100.json").string() + "'";
  const auto page = (std::filesystem::temp_directory_path() / "llmsim-pools-report.html").string();
  for (const std::string& command : std::vector<std::string>{"compare", "report -o '" + page + "'"}) {
    INFO(command);
    auto r = run(command + " " + disagg + " --replications 1");
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("error: disaggregation: ") && !Catch::Contains("--gpus") &&
                          Catch::Contains("llmsim search"));
    r = run(command + " " + fleet + " --replications 1");
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("error: hardware.fleet: ") && !Catch::Contains("--gpus"));
    r = run(command + " " + disagg + " --gpus rtx4090-24gb --replications 1");
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("error: --gpus: "));
  }
}

TEST_CASE("throughput counts every GPU of a fleet and of a disaggregated deployment") {
  // The class: a deployment whose cards are not hardware.gpu x replicas (fleet members, disaggregated pools)
  // was reported from the unused top-level section: "1 GPU" for a fleet of three.
  const auto dir = std::filesystem::path(LLMSIM_SOURCE_DIR) / "examples/scenarios";
  const std::string fleet = "'" + (dir / "fleet-4090-a100.json").string() + "'";
  const std::string disagg = "'" + (dir / "disagg-a100-prefill-4090-decode.json").string() + "'";
  const auto f = json_of("throughput " + fleet + " --num-requests 200 --json");
  CHECK(f["num_gpus"] == 3);  // 2 x rtx4090 + 1 x a100
  CHECK(f["cards"] == "2 x 1 rtx4090-24gb + 1 x 1 a100-80gb-sxm");
  CHECK_THAT(run("throughput " + fleet + " --num-requests 200").out,
             Catch::Contains("on 2 x 1 rtx4090-24gb + 1 x 1 a100-80gb-sxm (3 GPUs)"));
  const auto d = json_of("throughput " + disagg + " --num-requests 200 --json");
  CHECK(d["num_gpus"] == 3);  // prefill 1 x a100, decode 2 x rtx4090
  CHECK(d["cards"] == "prefill 1 x 1 a100-80gb-sxm, decode 2 x 1 rtx4090-24gb");
  CHECK(d["gpu"] == "a100-80gb-sxm/rtx4090-24gb");
}

TEST_CASE("messages echo what was given and blame the right field") {
  const std::string sc = scenario_file();
  // A value just past a bound is echoed with the digits that put it there, not rounded onto the bound.
  auto r = run("simulate " + sc + " --set cost.hours_per_month=744.0000001");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("must be in (0, 744]") && Catch::Contains("got 744.0000001"));
  // throughput queues every request at t = 0: a daily-profile scenario (Poisson) runs, without being told to use
  // the Poisson process it already has.
  const auto month = std::filesystem::path(LLMSIM_SOURCE_DIR) / "examples/scenarios/month-autoscale.json";
  r = run("throughput '" + month.string() + "' --num-requests 200");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, !Catch::Contains("use process"));
  // Nor blamed for the day-long request count its profile implies (num_requests unset): the default count runs.
  r = run("throughput '" + month.string() + "'");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, !Catch::Contains("num_requests"));
}

TEST_CASE("--set and --axis values are read as strictly as a scenario file: no duplicate key, no lost number") {
  const std::string sc = scenario_file();
  // The class: a JSON value nlohmann would accept while dropping part of it (the first of two equal keys), or one
  // that fell back to a string and then failed as "expected a number, got string".
  for (const auto& [args, names] : std::vector<std::pair<std::string, std::string>>{
           {R"(simulate )" + sc + R"( --set 'slo={"ttft_ms": {"p95": 1}, "ttft_ms": {"p95": 9000}}')",
            "duplicate key 'ttft_ms'"},
           {R"(simulate )" + sc + R"( --set 'workload.arrival={"process": "poisson", "rate": 1, "rate": 2}')",
            "duplicate key 'rate'"},
           {R"(sweep )" + grid_file() + R"( --set 'engine={"max_num_seqs": 8, "max_num_seqs": 16}')",
            "duplicate key 'max_num_seqs'"},
           {R"(search )" + sc + R"( --target-qps 2 --axis 'workload.arrival=[{"process": "poisson", "rate": 1, "rate": 3}]')",
            "--axis workload.arrival: duplicate key 'rate' in '[0]'"},
           {"simulate " + sc + " --set workload.arrival.rate=1e999",
            "workload.arrival.rate: the number 1e999 is out of range: expected a finite number"},
           {"simulate " + sc + R"( --set 'workload.arrival={"rate": 1e999}')", "the number 1e999 is out of range"},
           {"simulate " + sc + R"( --set 'slo={"ttft_ms": {"p95": 1}')", "--set slo: invalid JSON"}}) {
    const auto r = run(args);
    INFO(args);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains(names));
    CHECK_THAT(r.out, !Catch::Contains("got string"));
  }
  // A bare word is still a string, and a JSON string keeps its quotes' meaning.
  CHECK(json_of("simulate " + sc + " --set hardware.gpu=rtx4090-24gb --set workload.num_requests=60 --json")["gpu"] ==
        json_of("simulate " + sc + R"( --set 'hardware.gpu="rtx4090-24gb"' --set workload.num_requests=60 --json)")["gpu"]);
}

TEST_CASE("max_model_len: unset, auto and -1 are vLLM's auto everywhere; a number stays strict") {
  // 8B fp16 on a 24 GB card: the model's 131,072 tokens do not fit next to 16 GB of weights.
  const auto path = std::filesystem::path(LLMSIM_SOURCE_DIR) / "examples/scenarios/chat-8b.json";
  const std::string sc = "simulate '" + path.string() + "' --gpu rtx4090-24gb --num-requests 120";
  const auto unset = json_of(sc + " --set engine={} --json");
  CHECK(unset["fits"] == true);
  CHECK(unset["max_model_len"].get<int>() < 131072);
  CHECK(unset["max_model_len_note"] == "auto: the model's 131,072 does not fit");
  for (const char* spelling : {"auto", "-1", "AUTO"})
    CHECK(json_of(sc + " --set engine.max_model_len=" + spelling + " --json") == unset);
  const auto text = run(sc + " --set engine.max_model_len=auto");
  CHECK_THAT(text.out, Catch::Contains("max_model_len " ) && Catch::Contains("(auto: the model's 131,072 does not fit)"));
  const auto strict = run(sc + " --set engine.max_model_len=131072");
  CHECK_THAT(strict.out, Catch::Contains("cannot run") && Catch::Contains("lower max_model_len"));
  CHECK(run(sc + " --set engine.max_model_len=big").code == 2);
  // vLLM's own spelling at the top level of a scenario file (the pre-pass), as a pasted command line gives it.
  auto doc = llmsim::parse_json(read_file(path), "chat-8b");
  doc["engine"].erase("max_model_len");
  doc["max_model_len"] = "auto";
  const auto file = temp_file("ctx-auto.json", doc.dump());
  CHECK(json_of("simulate '" + file.string() + "' --gpu rtx4090-24gb --num-requests 120 --json") == unset);
}

TEST_CASE("help shows defaults as they are written, not as 17 significant digits") {
  const std::regex long_expansion(R"([0-9]\.[0-9]{9,})");  // 0.029999999999999999, 0.90000000000000002
  for (const char* cmd : {"memory", "catalog", "step", "simulate", "capacity", "compare", "sweep", "search", "calibrate-fit"}) {
    const auto r = run(std::string(cmd) + " --help");
    INFO(cmd << ":\n" << r.out);
    CHECK(r.code == 0);
    CHECK_FALSE(std::regex_search(r.out, long_expansion));
  }
  CHECK_THAT(run("capacity --help").out, Catch::Contains("--rel-tol arg (=0.03)"));
  // memory's fraction has no parser default (an SGLang release has its own, attack11): its help names vLLM's as text.
  CHECK_THAT(run("memory --help").out, Catch::Contains("(default 0.90, vLLM's;"));
  CHECK_THAT(run("simulate --help").out, Catch::Contains("usage: llmsim simulate SCENARIO.json"));
}

TEST_CASE("progress goes to a terminal, or as plain lines with --progress, never '\\r' into a file") {
  const std::string grid = grid_file(), sc = scenario_file();
  const auto dir = llmsim::test::scratch_dir();
  const std::string out = "'" + (dir / "stdout.txt").string() + "'", err = "'" + (dir / "stderr.txt").string() + "'";
  // stderr is a file: no progress at all unless asked for.
  auto r = run_shell(llmsim::test::cli() + " sweep " + grid + " --json > " + out + " 2> " + err);
  CHECK(r.code == 0);
  CHECK(read_file(dir / "stderr.txt").empty());
  r = run_shell(llmsim::test::cli() + " compare " + sc + " --gpus a100-80gb-sxm --requests 200 --replications 1 > " + out +
                " 2> " + err);
  CHECK(r.code == 0);
  CHECK(read_file(dir / "stderr.txt").empty());
  // --progress: lines, no carriage returns.
  r = run_shell(llmsim::test::cli() + " sweep " + grid + " --json --progress > " + out + " 2> " + err);
  CHECK(r.code == 0);
  const std::string lines = read_file(dir / "stderr.txt");
  CHECK_THAT(lines, Catch::Contains("sweep: 2/2 points (100%)\n"));
  CHECK(lines.find('\r') == std::string::npos);
  CHECK(llmsim::parse_json(read_file(dir / "stdout.txt"), "stdout").size() == 2);  // stdout untouched
  // A terminal (script(1) gives the command one): the line is rewritten in place.
  r = run_shell("script -qfec \"" + llmsim::test::cli() + " sweep " + grid + " --out '" + (dir / "rows.csv").string() +
                "'\" /dev/null");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("\rsweep: 2/2 points (100%)"));
  r = run_shell(llmsim::test::cli() + " sweep " + grid + " --progress --quiet 2>&1");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--progress: conflicts with --quiet"));
}

TEST_CASE("search: a small space gives a front and a winner; bad input is exit 2 naming the field") {
  const std::string sc = scenario_file();
  const std::string space = " --target-qps 6 --gpus rtx4090-24gb,a100-80gb-sxm --axis 'quant.weights=[\"fp16\",\"awq-int4\"]'";
  const auto j = json_of("search " + sc + space + " --json");
  CHECK(j["counts"]["enumerated"] == 4);
  REQUIRE(j["winner"].is_object());
  CHECK(j["winner"]["monthly_cost"].get<double>() == j["front"][0]["monthly_cost"].get<double>());
  CHECK(j["reasons"].size() == 2);
  auto r = run("search " + sc + " --target-qps -1");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("search.target_qps"));
  r = run("search " + sc + " --target-qps 2 --axis 'engine.max_num_seq=[8]'");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("search.axes[1].path"));
  // The class: a run cut by the simulated-time limit (workload.horizon_s) is not an SLO verdict, in capacity and
  // in search, whose summary must not blame the SLO.
  r = run("search " + sc + " --target-qps 4 --gpus a100-80gb-sxm -q --set workload.horizon_s=3");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("stopped at the simulated-time limit") && Catch::Contains("raise workload.horizon_s"));
  CHECK_THAT(r.out, !Catch::Contains("no configuration meets the SLO"));
  r = run("capacity " + sc + " --set workload.horizon_s=3 --requests 200");
  CHECK_THAT(r.out, Catch::Contains("no load could be judged") && Catch::Contains("the SLO was not what failed"));
  r = run("search " + sc + " --target-qps 2 --gpus nope-gpu");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("nope-gpu"));
}

TEST_CASE("sweep: a capacity-search option without --capacity is refused, not ignored") {
  const auto grid = llmsim::test::scratch_dir() / "capacity-options-grid.json";
  std::ofstream(grid) << R"({"base": {"workload": {"num_requests": 50, "warmup_requests": 0}}, )"
                      << R"("grid": {"workload.arrival.rate": [1]}})";
  for (const char* flag : {"--rel-tol 0.01", "--replications 3", "--requests 100", "--max-evaluations 5"}) {
    INFO(flag);
    const auto r = run("sweep " + grid.string() + " " + flag);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("given without --capacity"));
    CHECK_THAT(r.out, Catch::Contains(std::string(flag).substr(0, std::string(flag).find(' '))));
  }
}

TEST_CASE("a printed bill says the basis it billed; a refused combination says what to do instead") {
  const auto dir = std::filesystem::path(LLMSIM_SOURCE_DIR) / "examples/scenarios";
  // An autoscaled capacity row's monthly_cost is its simulated day's replica-hours: the target line must not call
  // it the sized fleet held all month (that figure is on the bill line as "held fixed").
  auto r = run("capacity '" + (dir / "month-autoscale.json").string() +
               "' --replications 1 --requests 300 --set cost.target_qps=12");
  REQUIRE(r.code == 0);
  const auto target_line = r.out.substr(r.out.find("target 12.00 QPS"), r.out.find("\nbill:") - r.out.find("target 12.00 QPS"));
  CHECK_THAT(target_line, Catch::Contains("autoscaled replica(s)") && !Catch::Contains(" at 730 h"));
  CHECK_THAT(r.out, Catch::Contains("held fixed at the peak"));
  // Failures on a fleet or on disaggregated pools are not modelled: the refusal names the field and the way to size
  // spares for them (each pool alone, its replicas field).
  for (const auto& [file, field] : std::vector<std::pair<std::string, std::string>>{
           {"fleet-4090-a100.json", "hardware.fleet[i].replicas"},
           {"disagg-a100-prefill-4090-decode.json", "disaggregation.decode.replicas"}}) {
    r = run("simulate '" + (dir / file).string() + R"(' --set 'failures={"mtbf_h": 1, "mttr_h": 0.1}')");
    INFO(file);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("error: failures:") && Catch::Contains("To size spares") && Catch::Contains(field));
  }
}

TEST_CASE("an option value of the wrong type or past a double's range names the option") {
  const std::string sc = scenario_file();
  // Boost's "the argument ('x') for option '--y' is invalid" was reported under "arguments", and a number too large
  // for a double as "invalid" too.
  auto r = run("simulate " + sc + " --rate 1e999");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("error: --rate: the number 1e999 is out of range"));
  r = run("simulate " + sc + " --seed abc");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("error: --seed: 'abc' is not a whole number"));
  // The run fit's prior scale, through the CLI: its flag, with the value as given.
  const auto runs = std::filesystem::path(LLMSIM_SOURCE_DIR) / "data/calibration_runs/lambdalabs-a100-80gb-sxm/RUNS.json";
  r = run("calibrate-fit --runs '" + runs.string() + "' --no-cross-validate --out /dev/null --prior-scale -1");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("error: --prior-scale (Python prior_scale=): ") && Catch::Contains("got -1"));
}

TEST_CASE("an integer option given another number says it takes a whole number and which; step says its range") {
  // Issue 29: `step --context 1e12` said only "'1e12' is not a valid value for it". Every integer option of every
  // command: a number in another form is named as the whole number it is (or is not), with the type's range.
  const std::string sc = scenario_file();
  auto r = run("step --model llama-3.1-8b --gpu a100-80gb-sxm --decode-seqs 1 --context 1e12");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("error: --context: '1e12' is not written in digits") &&
                        Catch::Contains("write it as 1000000000000"));
  r = run("simulate " + sc + " --seed 2.5");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("error: --seed: '2.5' is not a whole number: this option takes a whole number"));
  r = run("simulate " + sc + " --num-requests 1e30");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("error: --num-requests: '1e30' is out of range"));
  // Written in digits, past the model: the valid range, not only the limit.
  r = run("step --model llama-3.1-8b --gpu a100-80gb-sxm --decode-seqs 1 --context 1000000000000");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("error: --context:") && Catch::Contains("--context must be in 1..131071"));
  r = run("step --model llama-3.1-8b --gpu a100-80gb-sxm --prefill-tokens 100000 --prefill-context 100000");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--prefill-context + --prefill-tokens must be at most 131072"));
}

TEST_CASE("every unknown command gets a next step: a misspelt command, the command for the word, or --help") {
  const std::vector<std::string> commands{"memory", "catalog", "step", "simulate", "throughput", "capacity", "compare",
                                          "report", "sweep", "search", "calibrate-fit", "check"};
  // Misspellings, words for what a command does, an option typed first, and words that mean nothing here.
  for (const std::string word : {"simulat", "capcity", "month", "monthly", "bill", "cost", "daily", "gpus", "models",
                                 "benchmark", "validate", "vllm", "sizing", "plan", "html", "grid", "vram", "--json",
                                 "-x", "xyzzy", "help2", "q"}) {
    const auto r = run("'" + word + "'");
    INFO("llmsim " << word << ": " << r.out);
    CHECK(r.code == 2);
    const auto at = r.out.find("unknown command '" + word + "'; ");
    REQUIRE(at != std::string::npos);
    // What follows the name, before the list of valid commands, names a command or --help.
    const auto end = r.out.find(" (valid: ", at);
    REQUIRE(end != std::string::npos);
    const std::string hint = r.out.substr(at, end - at);
    bool names = hint.find("--help") != std::string::npos;
    for (const auto& c : commands) names = names || hint.find("'" + c) != std::string::npos;
    CHECK(names);
  }
  // The monthly bill is asked for by name: the answer points at the commands that print one.
  const auto r = run("month");
  CHECK_THAT(r.out, Catch::Contains("'capacity'") && Catch::Contains("workload.days"));
}

TEST_CASE("every unknown option gets a next step: a vLLM server flag goes to --vllm-args, a typo its option") {
  const std::string sc = scenario_file();
  // vLLM's own flags, short and long, on commands that take --vllm-args but not the flag itself (issue 30's first
  // row); `memory` has --tp, --max-num-seqs and other vLLM names of its own.
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
      {"simulate " + sc, {"-tp", "--max-num-seqs", "--kv-cache-dtype", "--enable-prefix-caching"}},
      {"capacity " + sc, {"-tp", "--max-num-seqs"}},
      {"compare " + sc, {"-tp", "--kv-cache-dtype"}},
      {"memory --model llama-3-8b", {"--kv-cache-dtype", "--enable-prefix-caching"}}};
  for (const auto& [cmd, flags] : cases) {
    for (const auto& flag : flags) {
      const auto r = run(cmd + " " + flag + " 2");
      INFO("llmsim " << cmd << " " << flag << ": " << r.out);
      CHECK(r.code == 2);
      CHECK_THAT(r.out, Catch::Contains("unrecognised option '" + flag + "'; it is a vLLM server flag") &&
                            Catch::Contains("--vllm-args \"vllm serve MODEL " + flag));
    }
  }
  // A misspelling of the command's own option names it; a word that is neither says --help.
  auto r = run("simulate " + sc + " --num-reqests 2");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("unrecognised option '--num-reqests'; did you mean '--num-requests'"));
  r = run("simulate " + sc + " --xyzzy 2");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("unrecognised option '--xyzzy'; '--help' lists this command's options"));
}

TEST_CASE("a GPU profile fitted on another runtime is warned about on every command that prices with it") {
  // The committed public A100 profile, as `calibrate-fit --runs` writes it from vLLM 0.6.0 runs (runtime vllm-v0).
  const auto src = std::filesystem::path(LLMSIM_SOURCE_DIR) / "data/profiles/a100-80gb-sxm-public.json";
  llmsim::Json profile = llmsim::parse_json(read_file(src), src.string());
  profile["runtime"] = "vllm-v0";
  profile["engine_version"] = "0.6.0";
  const std::string prof = temp_file("v0-fitted-profile.json", profile.dump()).string();
  const std::string sc = scenario_file();
  const std::string set = " --set 'hardware.gpu_profile=\"" + prof + "\"'";
  const std::string warning = "fitted from runs on runtime 'vllm-v0'";
  const std::string small = " --replications 1 --requests 200";
  // `check` takes a fitted profile through its partial scenario.
  const std::string partial =
      temp_file("v0-fitted-partial.json", llmsim::Json{{"hardware", {{"gpu_profile", prof}}}}.dump()).string();
  const std::string bench = (std::filesystem::path(LLMSIM_SOURCE_DIR) /
                             "data/calibration_runs/lambdalabs-a100-80gb-sxm/prompt_10_Meta-Llama-3-8B-Instruct_tp1_len2000.json")
                                .string();
  for (const std::string& args :
       {"simulate " + sc + set, "capacity " + sc + set + small,
        "compare " + sc + set + " --gpus a100-80gb-sxm --json" + small, "throughput " + sc + set + " --num-requests 50",
        "search " + sc + set + " --target-qps 2 --gpus a100-80gb-sxm --axis 'engine.max_num_seqs=[64]' --json",
        "sweep " + grid_file() + set + " --json",
        "step --model llama-3.1-8b --gpu a100-80gb-sxm --decode-seqs 8 --context 512 --gpu-profile '" + prof + "'",
        "check --vllm-result '" + bench + "' --gpu a100-80gb-sxm --model llama-3.1-8b --engine-version 0.14.0 --scenario '" +
            partial + "'"}) {
    const auto r = run(args);
    INFO("llmsim " << args << "\n" << r.out);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains(warning));
  }
  // On the runtime it was fitted on, nothing is said (vLLM 0.6.3 runs V0's engine).
  for (const std::string& args :
       {"simulate " + sc + set + " --set engine.runtime=vllm==0.6.3",
        "capacity " + sc + set + small + " --set engine.runtime=vllm==0.6.3",
        "step --model llama-3.1-8b --gpu a100-80gb-sxm --decode-seqs 8 --context 512 --engine vllm==0.6.3 "
        "--gpu-profile '" + prof + "'"}) {
    const auto r = run(args);
    INFO("llmsim " << args << "\n" << r.out);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, !Catch::Contains("fitted from runs on runtime"));
  }
}

TEST_CASE("an SLO below one request's unloaded latency says so: more replicas cannot shorten one prefill") {
  const std::string sc = scenario_file();
  // A p95 TTFT of 20 ms: an 8B prefill of ~1,000 tokens alone takes longer on an A100.
  const std::string tight = " --set 'slo={\"ttft_ms\": {\"p95\": 20}}' --replications 1 --requests 200";
  for (const std::string& args : {"capacity " + sc + tight, "compare " + sc + tight + " --gpus a100-80gb-sxm"}) {
    const auto r = run(args);
    INFO("llmsim " << args << "\n" << r.out);
    CHECK_THAT(r.out, Catch::Contains("below one request's unloaded latency") &&
                          Catch::Contains("more replicas cannot shorten"));
    // ... with that latency: the failing target and its value.
    CHECK(std::regex_search(r.out, std::regex(R"(ttft_ms\.p95 = [0-9.]+ ms > 20)")));
  }
}
