// A server's own command line on every scenario command (--vllm-args, --sglang-args; issue 30), --json as a flag on
// every command, and help text that never cuts a word in two.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "llmsim/core/json_view.hpp"

using llmsim::test::run;
using llmsim::test::run_shell;
using llmsim::test::temp_file;

namespace {

const char* kServerScenario = R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm", "price_per_gpu_hour": 1.8},
  "engine": {"max_model_len": 8192, "max_num_seqs": 64},
  "workload": {"arrival": {"process": "poisson", "rate": 4}, "num_requests": 120, "warmup_requests": 10, "seed": 3},
  "slo": {"ttft_ms": {"p95": 2000}, "tpot_ms": {"p95": 100}}})";

std::string server_scenario_file() { return "'" + temp_file("server-args-scenario.json", kServerScenario).string() + "'"; }

// A one-point grid on the scenario, so that `sweep --json` prints one row with tp, max_num_seqs, kv_cache, model.
std::string one_point_grid(const std::string& axis = R"("workload.arrival.rate": [4])") {
  temp_file("server-args-scenario.json", kServerScenario);
  return "'" + temp_file("server-args-grid.json", R"({"base": "server-args-scenario.json", "grid": {)" + axis + "}}")
                   .string() + "'";
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

llmsim::Json server_json_of(const std::string& args) {
  const auto r = run(args, false);
  INFO("llmsim " << args);
  REQUIRE(r.code == 0);
  return llmsim::parse_json(r.out, "stdout");
}

llmsim::Json row_of(const std::string& extra) {
  const auto rows = server_json_of("sweep " + one_point_grid() + " --json -q " + extra);
  REQUIRE(rows.size() == 1);
  return rows[0];
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::vector<std::string> commands() {
  const auto r = run("--help");
  REQUIRE(r.code == 0);
  std::vector<std::string> out;
  std::istringstream in(r.out.substr(r.out.find("commands:")));
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line))
    if (line.size() > 2 && line[0] == ' ') out.push_back(words(line).front());
  REQUIRE(out.size() >= 10);
  return out;
}

}  // namespace

TEST_CASE("--vllm-args sets what the server line says: scenario file < --vllm-args < --set") {
  const auto file = row_of("");
  CHECK(file["tp"] == 1);
  CHECK(file["max_num_seqs"] == 64);
  CHECK(file["kv_cache"] == "fp16");

  const auto args = row_of("--vllm-args " + quoted("vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2 "
                                                   "--max-num-seqs 128 --kv-cache-dtype fp8_e4m3 --port 8000"));
  CHECK(args["tp"] == 2);
  CHECK(args["max_num_seqs"] == 128);
  CHECK(args["kv_cache"] == "fp8");
  CHECK(args["model"] == "llama-3.1-8b");

  const auto set = row_of("--vllm-args " + quoted("vllm serve -tp 2 --max-num-seqs 128") +
                          " --set engine.max_num_seqs=32");
  CHECK(set["tp"] == 2);
  CHECK(set["max_num_seqs"] == 32);  // --set wins over the command line

  // A file that spells the field with vLLM's name is overridden too (not "two spellings disagree").
  const auto vllm_named = temp_file("server-args-vllm-named.json",
                                    R"({"model": "llama-3.1-8b", "tensor_parallel_size": 1, "max_num_seqs": 64,
                                        "hardware": {"gpu": "a100-80gb-sxm"}, "engine": {"max_model_len": 8192},
                                        "workload": {"num_requests": 60, "warmup_requests": 5}})");
  const auto named = run("simulate '" + vllm_named.string() + "' --vllm-args " + quoted("vllm serve -tp 2 --max-num-seqs 100"));
  REQUIRE(named.code == 0);
  CHECK_THAT(named.out, Catch::Contains("1 x 2 a100-80gb-sxm") && Catch::Contains("max_num_seqs 100"));

  // The same on simulate, which reads the scenario through the same path: the KV pool doubles at fp8.
  const auto fp16 = server_json_of("simulate " + server_scenario_file() + " --json");
  const auto fp8 = server_json_of("simulate " + server_scenario_file() + " --json --vllm-args " + quoted("vllm serve --kv-cache-dtype fp8"));
  CHECK(fp8["kv"]["capacity_tokens"].get<double>() > 1.8 * fp16["kv"]["capacity_tokens"].get<double>());
  const auto text = run("simulate " + server_scenario_file() + " --vllm-args " + quoted("vllm serve -tp 2 --max-num-seqs 100"));
  REQUIRE(text.code == 0);
  CHECK_THAT(text.out, Catch::Contains("1 x 2 a100-80gb-sxm"));
  CHECK_THAT(text.out, Catch::Contains("max_num_seqs 100"));
}

TEST_CASE("--vllm-args lists the flags llmsim does not model and refuses a misspelled one") {
  const auto r = run("simulate " + server_scenario_file() + " --vllm-args " +
                     quoted("vllm serve llama-3.1-8b --disable-custom-all-reduce --speculative-config '{}' --port 8000"));
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("note: vLLM arguments llmsim does not model (ignored): --disable-custom-all-reduce"));
  CHECK_THAT(r.out, Catch::Contains("--speculative-config"));
  CHECK_THAT(r.out, !Catch::Contains("--port"));  // a server option changes nothing: not noise

  // Every scenario command takes the flag and parses it with check's rules: a typo is exit 2 with the suggestion.
  const std::string typo = " --vllm-args " + quoted("vllm serve --max-num-seq 8");
  for (const std::string& cmd :
       {"simulate " + server_scenario_file(), "capacity " + server_scenario_file(), "throughput " + server_scenario_file(),
        "compare " + server_scenario_file() + " --gpus a100-80gb-sxm", "report " + server_scenario_file() + " --gpus a100-80gb-sxm --json",
        "search " + server_scenario_file() + " --target-qps 2", "sweep " + one_point_grid()}) {
    INFO(cmd);
    const auto bad = run(cmd + typo);
    CHECK(bad.code == 2);
    CHECK_THAT(bad.out, Catch::Contains("--max-num-seq: unknown vLLM flag; did you mean --max-num-seqs?"));
    // Given blank (an unset shell variable), either flag would drop the server's settings without a word.
    for (const char* flag : {"--vllm-args", "--sglang-args"}) {
      const auto blank = run(cmd + " " + flag + " ' '");
      CHECK(blank.code == 2);
      CHECK_THAT(blank.out, Catch::Contains(std::string(flag) + ": an empty command line"));
      // Its example is that server's own line (attack11: an SGLang flag was shown `vllm serve ...`).
      const bool sglang = std::string(flag) == "--sglang-args";
      CHECK_THAT(blank.out, Catch::Contains(sglang ? "sglang.launch_server" : "vllm serve MODEL") &&
                                !Catch::Contains(sglang ? "vllm serve" : "sglang.launch_server"));
    }
  }
  const auto check_blank = run("check '" + std::string(LLMSIM_SOURCE_DIR) +
                               "/data/calibration_runs/lambdalabs-a100-80gb-sxm/prompt_10_Meta-Llama-3-8B-Instruct_tp1_len2000.json'"
                               " --gpu a100-80gb-sxm --model llama-3.1-8b --vllm-args ''");
  CHECK(check_blank.code == 2);
  CHECK_THAT(check_blank.out, Catch::Contains("--vllm-args: an empty command line"));
  const auto value = run("simulate " + server_scenario_file() + " --vllm-args " + quoted("vllm serve --max-num-seqs many"));
  CHECK(value.code == 2);
  CHECK_THAT(value.out, Catch::Contains("--max-num-seqs: expected an integer, got 'many'"));
  const auto model = run("simulate " + server_scenario_file() + " --vllm-args " + quoted("vllm serve someone/NoSuchModel-7B"));
  CHECK(model.code == 2);
  CHECK_THAT(model.out, Catch::Contains("--vllm-args: model 'someone/NoSuchModel-7B' is not a catalogue model"));
  const auto both = run("simulate " + server_scenario_file() + " --vllm-args " + quoted("vllm serve") + " --sglang-args " +
                        quoted("python -m sglang.launch_server"));
  CHECK(both.code == 2);
  CHECK_THAT(both.out, Catch::Contains("give one of them"));
}

TEST_CASE("a sweep refuses a command line that sets one of its axes") {
  const auto r = run("sweep " + one_point_grid(R"("engine.max_num_seqs": [32, 64])") + " --json --vllm-args " +
                     quoted("vllm serve --max-num-seqs 8"));
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--vllm-args: 'max_num_seqs' overlaps the grid axis 'engine.max_num_seqs'"));
}

TEST_CASE("--sglang-args reads SGLang's names where they mean what llmsim's do") {
  const std::string line = "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --tp-size 2 "
                           "--max-running-requests 48 --kv-cache-dtype fp8_e5m2 --chunked-prefill-size 4096 "
                           "--mem-fraction-static 0.85 --schedule-policy fcfs --enable-mixed-chunk --host 0.0.0.0 --port 30000";
  const auto err = temp_file("sglang-notes.txt", "");
  const auto rows = run_shell(llmsim::test::cli() + " sweep " + one_point_grid() + " --json -q --sglang-args " +
                              quoted(line) + " 2>'" + err.string() + "'");
  REQUIRE(rows.code == 0);
  const auto row = llmsim::parse_json(rows.out, "stdout")[0];
  const std::string notes = llmsim::test::read_file(err);
  CHECK(row["tp"] == 2);
  CHECK(row["max_num_seqs"] == 48);
  CHECK(row["kv_cache"] == "fp8");
  CHECK(row["max_num_batched_tokens"] == 4096);  // SGLang's chunk is the SGLang scheduler's token budget
  // What llmsim does not model is listed; FCFS is what it simulates, so it is not.
  CHECK_THAT(notes, Catch::Contains("SGLang arguments llmsim does not model (ignored): --enable-mixed-chunk"));
  CHECK_THAT(notes, !Catch::Contains("--chunked-prefill-size") && !Catch::Contains("--mem-fraction-static") &&
                    !Catch::Contains("--schedule-policy"));
  const auto lpm = run("simulate " + server_scenario_file() + " --sglang-args " + quoted("sglang serve --schedule-policy lpm"));
  CHECK(lpm.code == 2);
  CHECK_THAT(lpm.out, Catch::Contains("--schedule-policy: 'lpm' is not modelled"));
  // The server is SGLang: the run is priced as SGLang's runtime (its error band says so).
  const auto sim = server_json_of("simulate " + server_scenario_file() + " --json --sglang-args " +
                           quoted("python -m sglang.launch_server --model-path llama-3.1-8b"));
  CHECK_THAT(sim["error_band"]["latency"]["group"].get<std::string>(), Catch::Contains("sglang"));

  const auto typo = run("simulate " + server_scenario_file() + " --sglang-args " + quoted("sglang serve --tp-szie 2"));
  CHECK(typo.code == 2);
  CHECK_THAT(typo.out, Catch::Contains("--tp-szie: unknown SGLang flag; did you mean --tp-size?"));
  const auto wrong = run("simulate " + server_scenario_file() + " --sglang-args " + quoted("vllm serve llama-3.1-8b -tp 2"));
  CHECK(wrong.code == 2);
  CHECK_THAT(wrong.out, Catch::Contains("give its command line as --vllm-args"));
  const auto other = run("simulate " + server_scenario_file() + " --vllm-args " + quoted("python -m sglang.launch_server --tp-size 2"));
  CHECK(other.code == 2);
  CHECK_THAT(other.out, Catch::Contains("give its command line as --sglang-args"));
}

TEST_CASE("--json is a flag on every command; files go to --out") {
  for (const auto& cmd : commands()) {
    INFO(cmd);
    CHECK_THAT(run(cmd + " --help").out, Catch::Contains("  --json "));
  }
  // search: --json prints, --out writes the same JSON; the old `--json FILE` says what to write instead.
  const std::string search = "search " + server_scenario_file() + " --target-qps 2 --gpus a100-80gb-sxm --axis " +
                             quoted(R"(quant.weights=["fp16"])") + " -q";
  const auto out = temp_file("search-out.json", "");
  const auto printed = server_json_of(search + " --json");
  CHECK(printed["front"].size() == 1);
  REQUIRE(run(search + " --out '" + out.string() + "'").code == 0);
  CHECK(llmsim::read_json_file(out.string()) == printed);
  for (const std::string old : {" --json result.json", " --json=result.json", " --json -"}) {
    const auto r = run(search + old);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("--json: is a flag now"));
    CHECK_THAT(r.out, Catch::Contains("--out"));
  }
  // report: --json prints the comparison with its headline; the page is written only with --out.
  const std::string report = "report " + server_scenario_file() + " --gpus a100-80gb-sxm --requests 120 --replications 1 -q";
  const auto j = server_json_of(report + " --json");
  CHECK(j["rows"].size() == 1);
  CHECK_THAT(j["headline"].get<std::string>(), Catch::Contains("a100-80gb-sxm"));
  CHECK(j["report"].is_null());
  const auto none = run(report);
  CHECK(none.code == 2);
  CHECK_THAT(none.out, Catch::Contains("--out: required"));
}

TEST_CASE("help text wraps at spaces: no word is cut in two at any width") {
  // Words Boost's own layout (80 columns) cut in two: "cost_per_mtok_at_capaci" / "ty", "gemm_bw_eff_vs" / "_m".
  for (const char* cmd : {"compare", "report"})
    CHECK_THAT(run(std::string(cmd) + " --help").out, Catch::Contains("cost_per_mtok_at_capacity"));
  CHECK_THAT(run("calibrate-fit --help").out, Catch::Contains("gemm_bw_eff_vs_m"));
  // A usage written over several source lines is one form per "llmsim CMD" line, then its description: no blank
  // line inside the usage, a further form under the first, the description from the left margin.
  const auto step_help = run_shell("env COLUMNS=100 " + llmsim::test::cli() + " step --help").out;
  CHECK(step_help.substr(0, step_help.find("\n\n")).find("[--json]") != std::string::npos);
  CHECK_THAT(step_help, Catch::Contains("\n\nTime of one serving-engine iteration:"));
  const auto fit_help = run_shell("env COLUMNS=100 " + llmsim::test::cli() + " calibrate-fit --help").out;
  CHECK_THAT(fit_help, Catch::Contains("[--json]\n       llmsim calibrate-fit --runs RUNS.json"));
  for (const auto& cmd : commands()) {
    const auto wide = run_shell("env COLUMNS=100000 " + llmsim::test::cli() + " " + cmd + " --help");
    REQUIRE(wide.code == 0);
    for (const char* columns : {"40", "60", "80", "100"}) {
      INFO(cmd << " at COLUMNS=" << columns);
      const auto narrow = run_shell(std::string("env COLUMNS=") + columns + " " + llmsim::test::cli() + " " + cmd + " --help");
      REQUIRE(narrow.code == 0);
      CHECK(words(narrow.out) == words(wide.out));  // a cut word would be two words here
      // And no line is wider than asked, but for one unit that is wider on its own: a word, or one [...] group of
      // the usage line.
      std::istringstream in(narrow.out);
      for (std::string l; std::getline(in, l);) {
        if (l.size() <= std::stoul(columns)) continue;
        const std::string unit = l.substr(l.find_first_not_of(' '));
        INFO("line: " << l);
        CHECK((words(unit).size() == 1 ||
               (unit.front() == '[' && unit.back() == ']' && unit.find("] [") == std::string::npos)));
      }
    }
  }
}

// `memory` and `step` take no scenario: the server's command line stands for their own options (issue 29/30).
TEST_CASE("memory --vllm-args plans what the same options plan") {
  const std::string line = "vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2 --max-model-len 8192 --kv-cache-dtype fp8";
  const auto args = server_json_of("memory --gpu a100-80gb-sxm --json --vllm-args " + quoted(line));
  const auto options = server_json_of("memory --gpu a100-80gb-sxm --json --model llama-3.1-8b --tp 2 "
                                      "--max-model-len 8192 --kv-dtype fp8");
  CHECK(args == options);
  CHECK(args["tp"] == 2);
  CHECK(args["kv_dtype"] == "fp8");
  CHECK(args["max_model_len"] == 8192);
  // ... and not what the defaults plan (so the line was read).
  const auto plain = server_json_of("memory --gpu a100-80gb-sxm --json --model llama-3.1-8b");
  CHECK(plain["tp"] == 1);
  CHECK(plain != args);
  // An option on the command line wins over the server's (as --set does on a scenario command).
  const auto wins = server_json_of("memory --gpu a100-80gb-sxm --json --kv-dtype fp16 --vllm-args " + quoted(line));
  CHECK(wins["kv_dtype"] == "fp16");
  CHECK(wins["tp"] == 2);
  // --kv-dtype takes vLLM's --kv-cache-dtype values as --vllm-args does (one alias table): fp8_e4m3 is fp8.
  const auto e4m3 = server_json_of("memory --gpu a100-80gb-sxm --json --model llama-3.1-8b --tp 2 "
                                   "--max-model-len 8192 --kv-dtype fp8_e4m3");
  CHECK(e4m3 == options);
  CHECK(server_json_of("memory --gpu a100-80gb-sxm --json --model llama-3.1-8b --kv-dtype bfloat16")["kv_dtype"] ==
        "bf16");
  // Flags that do not change one replica's memory are noted, not dropped without a word.
  // (--enable-prefix-caching is read: a hybrid model's state depends on it, memory/sglang_mamba_pool.hpp.)
  const auto noted = run("memory --gpu a100-80gb-sxm --vllm-args " + quoted(line + " -dp 2 --no-async-scheduling"));
  REQUIRE(noted.code == 0);
  CHECK_THAT(noted.out, Catch::Contains("--data-parallel-size does not apply to `llmsim memory`"));
  CHECK_THAT(noted.out, Catch::Contains("async-scheduling does not apply"));
  // A vLLM 0.6 server line with multi-step scheduling (session 42's flags) plans as without them, noted.
  const auto multi = run("memory --gpu a100-80gb-sxm --vllm-args " +
                         quoted(line + " --num-scheduler-steps 8 --multi-step-stream-outputs false"));
  REQUIRE(multi.code == 0);
  CHECK_THAT(multi.out, Catch::Contains("--num-scheduler-steps does not apply to `llmsim memory`") &&
                            Catch::Contains("--multi-step-stream-outputs does not apply"));
  CHECK(server_json_of("memory --gpu a100-80gb-sxm --json --vllm-args " +
                       quoted(line + " --num-scheduler-steps 8")) == args);
}

TEST_CASE("step --vllm-args / --sglang-args time what the same options time") {
  const std::string batch = "step --gpu a100-80gb-sxm --decode-seqs 32 --context 1024 --json ";
  const auto args = server_json_of(batch + "--vllm-args " +
                                   quoted("vllm serve llama-3.1-8b -tp 2 --kv-cache-dtype fp8 --enforce-eager"));
  const auto options = server_json_of(batch + "--model llama-3.1-8b --tp 2 --kv-dtype fp8 --eager");
  CHECK(args == options);
  CHECK(args["tp"] == 2);
  CHECK(args != server_json_of(batch + "--model llama-3.1-8b"));
  const auto sglang = server_json_of(batch + "--sglang-args " +
                                     quoted("python -m sglang.launch_server --model-path llama-3.1-8b --tp-size 2"));
  CHECK(sglang == server_json_of(batch + "--model llama-3.1-8b --tp 2 --engine sglang"));
  CHECK(sglang["engine"] != args["engine"]);
}

TEST_CASE("step --vllm-args with --num-scheduler-steps prices the multi-step window; streaming is noted") {
  // vLLM V0: the window's later steps (multi_step.later_step_ms) below its first (time_ms, the host's work); the
  // server line's flag and step's own option are one field.
  const std::string batch = "step --gpu a100-80gb-sxm --decode-seqs 16 --context 1024 --engine vllm-v0 --json ";
  const auto multi = server_json_of(batch + "--vllm-args " +
                                    quoted("vllm serve llama-3.1-8b --num-scheduler-steps 8 "
                                           "--multi-step-stream-outputs false"));
  REQUIRE(multi.contains("multi_step"));
  CHECK(multi["multi_step"]["num_scheduler_steps"] == 8);
  CHECK(multi["multi_step"]["later_step_ms"].get<double>() < multi["time_ms"].get<double>());
  CHECK(server_json_of(batch + "--model llama-3.1-8b --num-scheduler-steps 8")["multi_step"] == multi["multi_step"]);
  const auto single = server_json_of(batch + "--vllm-args " + quoted("vllm serve llama-3.1-8b"));
  CHECK_FALSE(single.contains("multi_step"));
  CHECK(single["time_ms"] == multi["time_ms"]);
  const auto text = run("step --gpu a100-80gb-sxm --decode-seqs 16 --context 1024 --engine vllm-v0 --model llama-3.1-8b "
                        "--num-scheduler-steps 8");
  CHECK(text.code == 0);
  CHECK_THAT(text.out, Catch::Contains("multi-step window of 8: first step"));
  // V1 has no multi-step: refused naming the field, as simulate refuses it.
  const auto v1 = run("step --gpu a100-80gb-sxm --decode-seqs 16 --context 1024 --vllm-args " +
                          quoted("vllm serve llama-3.1-8b --num-scheduler-steps 8"));
  CHECK(v1.code == 2);
  CHECK_THAT(v1.out, Catch::StartsWith("llmsim step: error: --num-scheduler-steps: vLLM V1"));
}

TEST_CASE("step takes the server line's --max-model-len, which decides a V0 release's >32K chunking (issue 29)") {
  // vLLM 0.6.3 chunks prefills by itself above a 32K context (vllm#6666), and multi-step does not run with chunking:
  // the server line's --max-model-len 8192 keeps it unchunked. step dropped it, so the 128K model was refused.
  const std::string batch = "step --gpu a100-80gb-sxm --decode-seqs 16 --context 1024 --engine vllm==0.6.3 --json ";
  const auto line = server_json_of(batch + "--vllm-args " +
                                   quoted("vllm serve llama-3.1-8b --max-model-len 8192 --num-scheduler-steps 8"));
  REQUIRE(line.contains("multi_step"));
  CHECK(line["multi_step"]["num_scheduler_steps"] == 8);
  CHECK(server_json_of(batch + "--model llama-3.1-8b --max-model-len 8192 --num-scheduler-steps 8") == line);
  // Without it the release's auto context is the model's 131,072: chunked, refused naming the rule.
  const auto full = run("step --gpu a100-80gb-sxm --decode-seqs 16 --context 1024 --engine vllm==0.6.3 --vllm-args " +
                        quoted("vllm serve llama-3.1-8b --num-scheduler-steps 8"));
  CHECK(full.code == 2);
  CHECK_THAT(full.out, Catch::Contains("32K"));
  const auto bad = run(batch + "--model llama-3.1-8b --max-model-len many");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Catch::StartsWith("llmsim step: error: --max-model-len: "));
}

TEST_CASE("step: SGLang's CUDA-graph limit comes from the release or --cuda-graph-max-bs (issue 27)") {
  // sglang==0.5.3 on a 40 GB A100 at TP 1 replays decode graphs up to 32: a batch of 33 runs eagerly unless the
  // server line (or the option) raises the limit; the same limit through either gives the same step.
  const std::string batch = "step --gpu a100-40gb-sxm --model llama-3.2-1b --decode-seqs 33 --context 256 --json ";
  const auto dflt = server_json_of(batch + "--engine sglang==0.5.3");
  const auto raised = server_json_of(batch + "--engine sglang==0.5.3 --cuda-graph-max-bs 64");
  CHECK(dflt["time_ms"].get<double>() > raised["time_ms"].get<double>());
  const auto line = server_json_of("step --gpu a100-40gb-sxm --decode-seqs 33 --context 256 --json --engine "
                                   "sglang==0.5.3 --sglang-args " +
                                   quoted("python -m sglang.launch_server --model-path llama-3.2-1b "
                                          "--cuda-graph-max-bs 64"));
  CHECK(line["time_ms"] == raised["time_ms"]);
  const auto vllm = run(batch + "--cuda-graph-max-bs 64");
  CHECK(vllm.code == 2);
  CHECK_THAT(vllm.out, Catch::Contains("--cuda-graph-max-bs") && Catch::Contains("SGLang"));
}

TEST_CASE("memory and step refuse a misspelled, unusable or blank server command line") {
  for (const std::string cmd : {"memory --gpu a100-80gb-sxm", "step --gpu a100-80gb-sxm --decode-seqs 8 --context 512"}) {
    INFO(cmd);
    const auto typo = run(cmd + " --vllm-args " + quoted("vllm serve llama-3.1-8b --max-num-seqz 8"));
    CHECK(typo.code == 2);
    CHECK_THAT(typo.out, Catch::Contains("--max-num-seqz") && Catch::Contains("did you mean --max-num-seqs"));
    const auto unusable = run(cmd + " --vllm-args " + quoted("vllm serve llama-3.1-8b --kv-offloading-size 16"));
    CHECK(unusable.code == 2);
    CHECK_THAT(unusable.out, Catch::Contains("--kv-offloading-size cannot be used by `llmsim"));
    const auto blank = run(cmd + " --vllm-args ' '");
    CHECK(blank.code == 2);
    CHECK_THAT(blank.out, Catch::Contains("--vllm-args: an empty command line"));
    const auto no_model = run(cmd);
    CHECK(no_model.code == 2);
    CHECK_THAT(no_model.out, Catch::Contains("--model"));
  }
}

TEST_CASE("memory plans an SGLang server line with SGLang's accounting, as check and the scenario commands take it") {
  // Before, `memory --sglang-args` was refused while check, step and the scenario commands took the line. Now the line
  // is read by the same parser and its server plans the pool (no profiling run: SGLang's rule), the options given
  // winning as with --vllm-args; the same plan as --engine sglang with the options typed.
  const std::string line = "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2 --context-length 8192";
  const llmsim::Json plan = server_json_of("memory --gpu h100-80gb-sxm --json --sglang-args " + quoted(line));
  CHECK(plan["tp"] == 2);
  CHECK(plan["max_model_len"] == 8192);
  CHECK(plan["per_gpu"]["activation_bytes"] == 0);  // SGLang runs no profiling pass
  CHECK(server_json_of("memory --gpu h100-80gb-sxm --json --model qwen3-8b --tp 2 --max-model-len 8192 --engine sglang") ==
        plan);
  CHECK(server_json_of("memory --gpu h100-80gb-sxm --json --model qwen3-8b --tp 2 --max-model-len 8192") != plan);
  // A bare --engine-version beside the line is SGLang's release (as `llmsim check` reads it).
  const auto release = run("memory --gpu h100-80gb-sxm --engine-version 0.4.9 --sglang-args " + quoted(line));
  REQUIRE(release.code == 0);
  CHECK_THAT(release.out, Catch::Contains("runtime sglang, sglang==0.4.9"));
  const auto bad = run("memory --gpu h100-80gb-sxm --model qwen3-8b --engine tgi");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Catch::Contains("--engine: expected vllm or sglang, got 'tgi'"));
}
