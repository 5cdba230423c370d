// RUNS.json and the benchmark files it names: every bad input is a ConfigError naming the run and the field.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "../calibration/run_files.hpp"
#include "llmsim/analysis/bench_runs.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/sglang_args.hpp"
#include "llmsim/spec/vllm_bench_args.hpp"

using namespace llmsim;
using Catch::Matchers::Contains;

namespace {

const char* kLatency = "vllm bench latency --model meta-llama/Llama-3.1-8B-Instruct --batch-size 16 --input-len 512 "
                       "--output-len 128 -tp 1 --dtype bfloat16";

std::string runs_json(const Json& runs, const std::string& gpu = "h100-80gb-sxm") {
  return Json{{"format", "llmsim-runs"}, {"gpu", gpu}, {"runs", runs}}.dump();
}

std::string runs_error_of(const test::TempDir& dir, const std::string& runs_text) {
  const std::string path = dir.write("RUNS.json", runs_text);
  try {
    const auto runs = analysis::read_bench_runs(path);
    for (const auto& r : runs.runs) (void)analysis::BenchPredictor(r);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("bench runs: a vLLM latency run is read and predicted", "[analysis][runs]") {
  test::TempDir dir("benchruns-ok");
  dir.write("lat.json", test::vllm_latency_json(1.9));
  const auto runs = analysis::parse_bench_runs(
      runs_json(Json::array({{{"result", "lat.json"}, {"command", kLatency}, {"vllm_version", "0.5.4"}}})),
      (dir.path / "RUNS.json").string());
  REQUIRE(runs.runs.size() == 1);
  const auto& r = runs.runs[0];
  CHECK(r.kind == spec::BenchKind::vllm_latency);
  CHECK(r.model == "llama-3.1-8b");
  CHECK(r.batch == 16);
  CHECK(r.input_len == 512);
  CHECK(r.output_len == 128);
  CHECK(r.runtime == spec::Runtime::vllm_v0_sync);  // 0.5.4
  REQUIRE(r.measured.size() == 1);
  CHECK(r.measured[0].key == "avg_latency");
  CHECK(r.measured[0].value == 1.9);
  const auto gpu = spec::Catalog::builtin().gpu("h100-80gb-sxm");
  const auto p = analysis::BenchPredictor(r).predict(perf::default_profile(gpu));
  REQUIRE(p.size() == 1);
  CHECK(p[0] > 0.5);
  CHECK(p[0] < 5.0);
}

TEST_CASE("bench runs: the engine release picks the runtime (engine.runtime vllm==X)", "[analysis][runs]") {
  test::TempDir dir("benchruns-version");
  dir.write("lat.json", test::vllm_latency_json(1.9));
  auto runtime_of = [&](const Json& extra) {
    Json r{{"result", "lat.json"}, {"command", kLatency}};
    r.update(extra);
    const auto runs = analysis::parse_bench_runs(runs_json(Json::array({r})), (dir.path / "RUNS.json").string());
    return runs.runs.at(0);
  };
  CHECK(runtime_of({{"engine_version", "0.5.4"}}).runtime == spec::Runtime::vllm_v0_sync);
  CHECK(runtime_of({{"engine_version", "0.5.4"}}).scenario["engine"]["runtime"] == "vllm==0.5.4");
  CHECK(runtime_of({{"vllm_version", "0.6.3.post1"}}).runtime == spec::Runtime::vllm_v0);
  CHECK(runtime_of({{"engine_version", "0.10.1"}}).runtime == spec::Runtime::vllm_v1);
  CHECK(runtime_of({{"engine", "sglang"}, {"engine_version", "0.4.9"}}).runtime == spec::Runtime::sglang);
  CHECK(runtime_of({{"runtime", "vllm-v0"}, {"engine_version", "0.5.4"}}).runtime == spec::Runtime::vllm_v0);
  CHECK(runtime_of(Json::object()).runtime == spec::Runtime::vllm_v1);  // no version: V1, said in the notes
  CHECK_FALSE(runtime_of(Json::object()).notes_out.empty());
}

TEST_CASE("bench runs: the validation corpus's RUNS.json files are read by the same loader", "[analysis][runs]") {
  // Top-level defaults (engine, model, weights, tp ...) and the corpus's extra keys are accepted; runs calibrate-fit
  // cannot use yet (tables, notebooks, select, replicas, placeholder commands) are listed as skipped with the reason.
  namespace fs = std::filesystem;
  const fs::path corpus = fs::path(LLMSIM_DATA_DIR) / "validation" / "corpus";
  if (!fs::exists(corpus)) {
    WARN("no validation corpus at " << corpus);
    return;
  }
  std::size_t files = 0, read = 0, skipped = 0;
  for (const auto& e : fs::directory_iterator(corpus)) {
    const auto runs_json_path = e.path() / "RUNS.json";
    if (!fs::exists(runs_json_path)) continue;
    ++files;
    analysis::BenchRuns runs;
    REQUIRE_NOTHROW(runs = analysis::read_bench_runs(runs_json_path.string(), "", true));
    read += runs.runs.size();
    skipped += runs.skipped.size();
    for (const auto& s : runs.skipped) CHECK_THAT(s.reason, Contains("runs["));
  }
  std::cout << "validation corpus: " << files << " RUNS.json, " << read << " runs read, " << skipped << " skipped\n";
  CHECK(files >= 10);
  CHECK(read > 0);
}

TEST_CASE("bench runs: every bad input names the run and the field", "[analysis][runs]") {
  test::TempDir dir("benchruns-bad");
  dir.write("lat.json", test::vllm_latency_json(1.9, 30));
  dir.write("serve.json", R"({"date": "x", "backend": "vllm", "model_id": "meta-llama/Meta-Llama-3-8B-Instruct",
    "num_prompts": 4, "request_rate": "inf", "duration": 2.0, "completed": 4, "total_input_tokens": 40,
    "total_output_tokens": 40, "request_throughput": 2.0, "output_throughput": 20.0, "mean_ttft_ms": 30.0,
    "mean_tpot_ms": 10.0, "input_lens": [10, 10, 10, 10], "output_lens": [10, 10, 10, 10]})");
  dir.write("foreign.json", R"({"model": "x", "accuracy": 0.9})");
  dir.write("broken.json", R"({"avg_latency": 1.0, "latencies": [)");
  auto run = [](const std::string& file, const std::string& command) {
    return Json{{"result", file}, {"command", command}};
  };

  SECTION("unknown file type") {
    const auto e = runs_error_of(dir, runs_json(Json::array({run("foreign.json", kLatency)})));
    CHECK_THAT(e, Contains("runs[0] (foreign.json).result"));
    CHECK_THAT(e, Contains("unknown file type"));
    CHECK_THAT(e, Contains("avg_latency"));  // lists what it reads
  }
  SECTION("truncated file") {
    const auto e = runs_error_of(dir, runs_json(Json::array({run("broken.json", kLatency)})));
    CHECK_THAT(e, Contains("broken.json"));
  }
  SECTION("missing file") {
    const auto e = runs_error_of(dir, runs_json(Json::array({run("nowhere.json", kLatency)})));
    CHECK_THAT(e, Contains("runs[0] (nowhere.json).result"));
  }
  SECTION("command and file of different tools") {
    const auto e = runs_error_of(dir, runs_json(Json::array({run("serve.json", kLatency)})));
    CHECK_THAT(e, Contains("runs[0] (serve.json).result"));
    CHECK_THAT(e, Contains("vLLM serving result"));
    CHECK_THAT(e, Contains("command/file mismatch"));
  }
  SECTION("command flags contradict the file") {
    const auto e = runs_error_of(dir, runs_json(Json::array({run("lat.json", std::string(kLatency) + " --num-iters 10")})));
    CHECK_THAT(e, Contains("runs[0] (lat.json).command"));
    CHECK_THAT(e, Contains("--num-iters 10 but the file holds 30"));
    const auto e2 = runs_error_of(
        dir, runs_json(Json::array({run("serve.json", "vllm bench serve --model meta-llama/Meta-Llama-3-8B-Instruct "
                                                      "--num-prompts 100")})));
    CHECK_THAT(e2, Contains("--num-prompts 100 but the file ran 4"));
    const auto e3 = runs_error_of(
        dir, runs_json(Json::array({run("serve.json", "vllm bench serve --model Qwen/Qwen2.5-7B --num-prompts 4")})));
    CHECK_THAT(e3, Contains("command/file mismatch"));
  }
  SECTION("unknown flag, with a suggestion") {
    const auto e = runs_error_of(dir, runs_json(Json::array({run("lat.json", "vllm bench latency --batch-szie 8")})));
    CHECK_THAT(e, Contains("runs[0] (lat.json).command"));
    CHECK_THAT(e, Contains("unknown flag '--batch-szie'"));
    CHECK_THAT(e, Contains("--batch-size"));
  }
  SECTION("not a benchmark command") {
    const auto e = runs_error_of(dir, runs_json(Json::array({run("lat.json", "python train.py --epochs 3")})));
    CHECK_THAT(e, Contains("is not a benchmark command"));
  }
  SECTION("a run that does not fit in memory") {
    const auto e = runs_error_of(
        dir, runs_json(Json::array({run("lat.json", "vllm bench latency --model meta-llama/Llama-3.1-70B-Instruct "
                                                    "--batch-size 8 --input-len 512 --output-len 128 -tp 1")})));
    CHECK_THAT(e, Contains("runs[0] (lat.json)"));
    CHECK_THAT(e, Contains("does not fit in memory"));
    const auto kv = runs_error_of(
        dir, runs_json(Json::array({run("lat.json", "vllm bench latency --model meta-llama/Llama-3.1-8B-Instruct "
                                                    "--batch-size 256 --input-len 4096 --output-len 1024 "
                                                    "--max-model-len 8192")}), "rtx4090-24gb"));
    CHECK_THAT(kv, Contains("does not fit in memory"));
    CHECK_THAT(kv, Contains("KV cache"));
  }
  SECTION("no GPU, unknown model, unknown runtime or version, unknown key") {
    CHECK_THAT(runs_error_of(dir, Json{{"runs", Json::array({run("lat.json", kLatency)})}}.dump()),
               Contains("runs[0] (lat.json).gpu"));
    CHECK_THAT(runs_error_of(dir, runs_json(Json::array({run("lat.json", "vllm bench latency --model acme/Frobnicator-9B")}))),
               Contains("runs[0] (lat.json).model"));
    Json r = run("lat.json", kLatency);
    r["runtime"] = "vllm-v9";
    CHECK_THAT(runs_error_of(dir, runs_json(Json::array({r}))), Contains("runs[0] (lat.json).runtime"));
    r = run("lat.json", kLatency);
    r["engine_version"] = "banana";
    CHECK_THAT(runs_error_of(dir, runs_json(Json::array({r}))), Contains("runs[0] (lat.json).engine_version"));
    r = run("lat.json", kLatency);
    r["batchsize"] = 3;
    CHECK_THAT(runs_error_of(dir, runs_json(Json::array({r}))), Contains("runs[0].batchsize"));
    r = run("lat.json", kLatency);
    r["batch"] = 3;  // the corpus's key: must agree with the command
    CHECK_THAT(runs_error_of(dir, runs_json(Json::array({r}))),
               Contains("runs[0] (lat.json).batch: 3 but the command says --batch-size 16"));
  }
  SECTION("no runs") {
    CHECK_THAT(runs_error_of(dir, runs_json(Json::array())), Contains("nothing to fit"));
  }
}

TEST_CASE("bench command lines", "[analysis][runs]") {
  const auto c = spec::parse_bench_command(
      "python benchmarks/benchmark_latency.py --model m --input-len 32 --output-len 64 --batch-size 4 "
      "--tensor-parallel-size 2 --enforce-eager --kv-cache-dtype fp8 --num-iters 5",
      "cmd");
  CHECK(c.kind == spec::BenchKind::vllm_latency);
  CHECK(c.integer("batch_size", 0) == 4);
  CHECK(c.engine.model == "m");
  CHECK(c.engine.engine_args["tensor_parallel_size"] == 2);
  CHECK(c.engine.engine_args["enforce_eager"] == true);
  CHECK(c.engine.engine_args["kv_cache_dtype"] == "fp8");
  const auto t = spec::parse_bench_command("vllm bench throughput --model m --input-len 128 --output-len 128 "
                                           "--num-prompts 100 --max-model-len 4096",
                                           "cmd");
  CHECK(t.kind == spec::BenchKind::vllm_throughput);
  CHECK(t.integer("num_prompts", 0) == 100);
  const auto s = spec::parse_bench_command("python -m sglang.bench_one_batch --model-path meta-llama/Llama-3.1-8B "
                                           "--batch-size 1 16 --input-len 1024 --output-len 8 --tp-size 2",
                                           "cmd");
  CHECK(s.kind == spec::BenchKind::sglang_one_batch);
  CHECK(s.engine.engine_args["tensor_parallel_size"] == 2);
  // The server flags a benchmark launches its server with map as the server's own command line maps them
  // (spec/sglang_args.cpp's one table), --cuda-graph-max-bs too (engine.cuda_graph_max_bs): none of these is listed
  // as not modelled.
  const auto f = spec::parse_bench_command("python -m sglang.bench_one_batch --model-path m --batch-size 8 "
                                           "--input-len 512 --output-len 8 --mem-fraction-static 0.8 "
                                           "--chunked-prefill-size 4096 --max-running-requests 64 --tp 2 "
                                           "--disable-radix-cache --cuda-graph-max-bs 16",
                                           "cmd");
  CHECK(f.engine.engine_args["gpu_memory_utilization"] == 0.8);
  CHECK(f.engine.engine_args["max_num_batched_tokens"] == 4096);
  CHECK(f.engine.engine_args["max_num_seqs"] == 64);
  CHECK(f.engine.engine_args["tensor_parallel_size"] == 2);
  CHECK(f.engine.engine_args["enable_prefix_caching"] == false);
  CHECK(f.engine.engine_args["cuda_graph_max_bs"] == 16);
  CHECK(f.engine.not_modelled.empty());
  CHECK_THROWS_WITH(spec::parse_bench_command("vllm bench latency --input-len", "cmd"),
                    Contains("expected a value"));
}

TEST_CASE("bench runs: vLLM throughput and SGLang bench_one_batch files", "[analysis][runs]") {
  test::TempDir dir("benchruns-kinds");
  dir.write("tput.json", R"({"elapsed_time": 20.0, "num_requests": 200, "total_num_tokens": 51200,
                              "requests_per_second": 10.0, "tokens_per_second": 2560.0})");
  // python/sglang/bench_one_batch.py appends one line per batch size to result.jsonl.
  dir.write("result.jsonl",
            R"({"run_name": "before", "batch_size": 1, "input_len": 1024, "output_len": 16, "prefill_latency": 0.05, )"
            R"("prefill_throughput": 20480, "median_decode_latency": 0.008, "median_decode_throughput": 125, )"
            R"("overall_latency": 0.17, "overall_throughput": 6118})" "\n"
            R"({"run_name": "before", "batch_size": 16, "input_len": 1024, "output_len": 16, "prefill_latency": 0.6, )"
            R"("prefill_throughput": 27306, "median_decode_latency": 0.011, "median_decode_throughput": 1454, )"
            R"("overall_latency": 0.78, "overall_throughput": 21333})" "\n");
  const std::string path = dir.write(
      "RUNS.json",
      runs_json(Json::array(
          {{{"result", "tput.json"},
            {"command", "vllm bench throughput --model meta-llama/Llama-3.1-8B-Instruct --input-len 128 "
                        "--output-len 128 --num-prompts 200"},
            {"engine_version", "0.10.1"}},
           {{"result", "result.jsonl"},
            {"command", "python -m sglang.bench_one_batch --model-path meta-llama/Llama-3.1-8B-Instruct "
                        "--batch-size 1 16 --input-len 1024 --output-len 16"},
            {"engine", "sglang"},
            {"engine_version", "0.4.9"}}})));
  const auto runs = analysis::read_bench_runs(path);
  REQUIRE(runs.runs.size() == 3);  // the throughput run and one per line of result.jsonl
  const auto gpu = spec::Catalog::builtin().gpu("h100-80gb-sxm");
  const auto profile = perf::default_profile(gpu);
  const auto t = analysis::BenchPredictor(runs.runs[0]).predict(profile);
  REQUIRE(t.size() == 1);
  CHECK(runs.runs[0].measured[0].key == "requests_per_second");
  CHECK(t[0] > 1.0);
  CHECK(t[0] < 1000.0);
  CHECK(runs.runs[1].name.find("line 1") != std::string::npos);
  CHECK(runs.runs[2].batch == 16);
  CHECK(runs.runs[2].runtime == spec::Runtime::sglang);
  const auto g = analysis::BenchPredictor(runs.runs[2]).predict(profile);
  REQUIRE(g.size() == 3);  // prefill, median decode step, overall
  CHECK(g[0] < g[2]);
  CHECK(g[1] < g[0]);
  // A throughput run over a dataset: its lengths are not in the file.
  dir.write("RUNS2.json", runs_json(Json::array({{{"result", "tput.json"},
                                                   {"command", "vllm bench throughput --model m --dataset-name sharegpt "
                                                               "--num-prompts 200"}}})));
  CHECK_THROWS_WITH(analysis::read_bench_runs((dir.path / "RUNS2.json").string()),
                    Contains("runs[0] (tput.json).command") && Contains("--input-len"));
}

TEST_CASE("bench runs: SGLang bench_serving JSON lines, one run per line, with the server's SGLang arguments",
          "[analysis][runs]") {
  // A real SGLang bench_serving output (tests/data/vllm_results/README.md): five runs at 1-16 req/s.
  test::TempDir dir("benchruns-sglang-serving");
  const std::string src = std::string(LLMSIM_SOURCE_DIR) + "/tests/data/vllm_results/livinfly-a100pcie-sglang047-mistral7b-online.jsonl";
  std::filesystem::copy_file(src, dir.path / "online.jsonl");
  const Json run = {{"result", "online.jsonl"},
                    {"command", "python3 -m sglang.bench_serving --backend sglang --dataset-name random "
                                "--random-input 1024 --random-output 1024 --request-rate 1 --num-prompts 300"},
                    {"server_command", "python -m sglang.launch_server --model-path ~/Mistral-7B-Instruct "
                                       "--enable-torch-compile --disable-radix-cache"},
                    {"model", "mistral-7b"},
                    {"engine_version", "0.4.7.post1"}};
  const std::string path = dir.write("RUNS.json", runs_json(Json::array({run}), "a100-40gb-pcie"));
  const auto runs = analysis::read_bench_runs(path);
  REQUIRE(runs.runs.size() == 5);
  const auto& r = runs.runs[0];
  CHECK(r.kind == spec::BenchKind::sglang_serving);
  CHECK(r.runtime == spec::Runtime::sglang);
  CHECK(r.name == "runs[0] (online.jsonl) line 1");
  CHECK(runs.runs[4].name == "runs[0] (online.jsonl) line 5");
  REQUIRE(r.serve);
  CHECK(r.serve->client == "sglang");
  bool torch_compile_noted = false;
  for (const auto& n : r.notes_out) torch_compile_noted = torch_compile_noted || n.find("--enable-torch-compile") != std::string::npos;
  CHECK(torch_compile_noted);
  // Measured: output throughput, mean TTFT and TPOT; each predicted.
  REQUIRE(r.measured.size() == 3);
  const auto gpu = spec::Catalog::builtin().gpu("a100-40gb-pcie");
  const auto p = analysis::BenchPredictor(r).predict(perf::default_profile(gpu));
  REQUIRE(p.size() == 3);
  for (double x : p) CHECK(std::isfinite(x));
  // The command's prefix flags are argparse's: --random-input is --random-input-len.
  const auto cmd = spec::parse_bench_command(run["command"].get<std::string>(), "c");
  CHECK(cmd.flags.at("random_input_len") == "1024");
  CHECK_THROWS_WITH(spec::parse_bench_command("python -m sglang.bench_serving --random 5", "c"), Contains("'--random'"));
  // The file and the command must be the same tool's.
  Json wrong = run;
  wrong["command"] = "vllm bench serve --model m --num-prompts 300";
  dir.write("RUNS2.json", runs_json(Json::array({wrong}), "a100-40gb-pcie"));
  CHECK_THROWS_WITH(analysis::read_bench_runs((dir.path / "RUNS2.json").string()),
                    Contains("runs[0] (online.jsonl)") && Contains("SGLang bench_serving") &&
                        Contains("command/file mismatch"));
}

TEST_CASE("bench runs: SGLang bench_serving lines with medians only give median TTFT and ITL", "[analysis][runs]") {
  // data/calibration_runs/datacrunch-h200-sxm: SGLang 0.4.0's lines hold no mean TTFT or TPOT.
  const auto runs = analysis::read_bench_runs(std::string(LLMSIM_SOURCE_DIR) +
                                              "/data/calibration_runs/datacrunch-h200-sxm/RUNS.json");
  REQUIRE(runs.runs.size() == 5);
  std::vector<std::int64_t> requests;
  for (const auto& r : runs.runs) {
    std::vector<std::string> keys;
    for (const auto& m : r.measured) keys.push_back(m.key);
    CHECK(keys == std::vector<std::string>{"output_throughput", "median_ttft_ms", "median_itl_ms"});
    CHECK(r.runtime == spec::Runtime::sglang);
    requests.push_back(r.requests);
  }
  CHECK(requests == std::vector<std::int64_t>{300, 600, 1200, 2400, 3200});
  // Each is predicted (a 70B model on 4 H200s: the server's --tp-size 4 is read).
  const auto gpu = spec::Catalog::builtin().gpu("h200-141gb-sxm");
  const auto p = analysis::BenchPredictor(runs.runs[0]).predict(perf::default_profile(gpu));
  REQUIRE(p.size() == 3);
  for (double x : p) CHECK(std::isfinite(x));
  // A file with the means keeps to them (the SGLang 0.4.7 lines above: no median among the measured values).
  test::TempDir dir("benchruns-sglang-means");
  std::filesystem::copy_file(std::string(LLMSIM_SOURCE_DIR) +
                                 "/tests/data/vllm_results/livinfly-a100pcie-sglang047-mistral7b-online.jsonl",
                             dir.path / "online.jsonl");
  const Json run = {{"result", "online.jsonl"},
                    {"command", "python3 -m sglang.bench_serving --backend sglang --dataset-name random "
                                "--random-input 1024 --random-output 1024"},
                    {"model", "mistral-7b"},
                    {"engine_version", "0.4.7.post1"}};
  const auto means = analysis::read_bench_runs(dir.write("RUNS.json", runs_json(Json::array({run}), "a100-40gb-pcie")));
  for (const auto& m : means.runs.at(0).measured) CHECK(m.key.find("median") == std::string::npos);
}

TEST_CASE("bench runs: a server_command is read by the one SGLang server parser, errors at the run's field",
          "[analysis][runs]") {
  // The same line through --sglang-args' parser (spec/sglang_args) and through a RUNS.json: the same engine
  // arguments, by vLLM's names, in the run's scenario.
  test::TempDir dir("benchruns-sglang-server");
  const std::string src = std::string(LLMSIM_SOURCE_DIR) + "/tests/data/vllm_results/livinfly-a100pcie-sglang047-mistral7b-online.jsonl";
  std::filesystem::copy_file(src, dir.path / "online.jsonl");
  const std::string server = "sglang serve --model-path ~/Mistral-7B-Instruct --tp 2 --mem-fraction-static 0.8 "
                             "--chunked-prefill-size 4096 --max-running-requests 64 --port 30000 --enable-torch-compile";
  auto run = [&](const std::string& line) {
    return Json::array({{{"result", "online.jsonl"},
                         {"command", "python3 -m sglang.bench_serving --backend sglang --dataset-name random "
                                     "--random-input 1024 --random-output 1024 --request-rate 1 --num-prompts 300"},
                         {"server_command", line},
                         {"model", "mistral-7b"},
                         {"engine_version", "0.4.7.post1"}}});
  };
  const auto runs = analysis::read_bench_runs(dir.write("RUNS.json", runs_json(run(server), "a100-40gb-pcie")));
  REQUIRE(!runs.runs.empty());
  const auto direct = spec::parse_sglang_server_args(server);
  REQUIRE(direct.engine_args.size() == 5);  // tp, memory fraction, chunk, running requests, radix cache (on)
  for (auto it = direct.engine_args.begin(); it != direct.engine_args.end(); ++it) {
    INFO(it.key());
    REQUIRE(runs.runs[0].scenario.contains(it.key()));
    CHECK(runs.runs[0].scenario[it.key()] == it.value());
  }
  CHECK(runs.runs[0].scenario["tensor_parallel_size"] == 2);
  CHECK(runs.runs[0].scenario["gpu_memory_utilization"] == 0.8);
  bool noted = false;
  for (const auto& n : runs.runs[0].notes_out) noted = noted || n.find("--enable-torch-compile") != std::string::npos;
  CHECK(noted);
  // A typo is the parser's error with its suggestion, at the run's field; so is a value of the wrong type.
  CHECK_THROWS_WITH(analysis::read_bench_runs(dir.write("RUNS2.json", runs_json(run(server + " --max-runing-requests 8"),
                                                                                  "a100-40gb-pcie"))),
                    Contains("runs[0] (online.jsonl).server_command: --max-runing-requests") &&
                        Contains("did you mean --max-running-requests?"));
  CHECK_THROWS_WITH(analysis::read_bench_runs(dir.write("RUNS3.json", runs_json(run("python -m sglang.launch_server "
                                                                                    "--model-path m --tp-size two"),
                                                                                "a100-40gb-pcie"))),
                    Contains("runs[0] (online.jsonl).server_command: --tp-size") && Contains("two"));
  CHECK_THROWS_WITH(analysis::read_bench_runs(dir.write("RUNS4.json", runs_json(run("vllm serve m --tp 2"),
                                                                                "a100-40gb-pcie"))),
                    Contains("runs[0] (online.jsonl).server_command") && Contains("is a vLLM server, not SGLang's"));
  // On the command line (what = ""), the same problems are reported at the flag itself.
  CHECK_THROWS_WITH(spec::parse_sglang_server_args("sglang serve --max-runing-requests 8"),
                    Catch::Matchers::StartsWith("--max-runing-requests: ") && Contains("--max-running-requests?"));
}

TEST_CASE("bench runs: llama-bench -o json, one run per test, release from the build number", "[analysis][runs]") {
  // The fields llama-bench's JSON printer writes (tools/llama-bench/llama-bench.cpp, test::get_fields); the values
  // are illustrative, not a measurement.
  const std::string test_fields =
      R"("build_commit": "abc1234", "build_number": 4000, "cpu_info": "x", "gpu_info": "NVIDIA GeForce RTX 4090", )"
      R"("backends": "CUDA", "model_filename": "Meta-Llama-3-8B-Instruct-Q4_K_M.gguf", )"
      R"("model_type": "llama 8B Q4_K - Medium", "model_size": 4920733696, "model_n_params": 8030261248, )"
      R"("n_batch": 2048, "n_ubatch": 512, "n_threads": 16, "type_k": "f16", "type_v": "f16", "n_gpu_layers": 99, )"
      R"("split_mode": "layer", "main_gpu": 0, "no_kv_offload": false, "flash_attn": false, "use_mmap": true, )"
      R"("embeddings": false, )";
  test::TempDir dir("benchruns-llama-bench");
  dir.write("bench.json", "[\n  {" + test_fields +
                              R"("n_prompt": 512, "n_gen": 0, "test_time": "t", "avg_ns": 60000000, "stddev_ns": 1, )"
                              R"("avg_ts": 8500.0, "stddev_ts": 10.0},)" "\n  {" + test_fields +
                              R"("n_prompt": 0, "n_gen": 128, "test_time": "t", "avg_ns": 1000000000, "stddev_ns": 1, )"
                              R"("avg_ts": 128.0, "stddev_ts": 1.0}]
)");
  const Json run = {{"result", "bench.json"},
                    {"command", "./build/bin/llama-bench -m Meta-Llama-3-8B-Instruct-Q4_K_M.gguf -p 512 -n 128 "
                                "-ngl 99 -o json"},
                    {"model", "llama-3.1-8b"}};
  const std::string path = dir.write("RUNS.json", runs_json(Json::array({run}), "rtx4090-24gb"));
  const auto runs = analysis::read_bench_runs(path);
  REQUIRE(runs.runs.size() == 2);
  const auto& pp = runs.runs[0];
  const auto& tg = runs.runs[1];
  CHECK(pp.kind == spec::BenchKind::llama_bench);
  CHECK(pp.runtime == spec::Runtime::llama_cpp);
  CHECK(pp.runtime_from == "llama-bench build_number 4000");
  CHECK(pp.name == "runs[0] (bench.json) test 0");
  CHECK(pp.measured[0].key == "pp_tokens_per_s");
  CHECK(tg.measured[0].key == "tg_tokens_per_s");
  CHECK(pp.scenario["quant"]["weights"] == "gguf-q4_k_m");
  const auto gpu = spec::Catalog::builtin().gpu("rtx4090-24gb");
  const auto profile = perf::default_profile(gpu);
  const double pp_pred = analysis::BenchPredictor(pp).predict(profile).at(0);
  const double tg_pred = analysis::BenchPredictor(tg).predict(profile).at(0);
  // Prompt processing is compute-bound and runs far faster per token than one-token decoding.
  CHECK(pp_pred > 10 * tg_pred);
  CHECK(tg_pred > 20);
  CHECK(tg_pred < 1000);
  // Weights llmsim has no format for, and a CPU run, are refused naming the test and field.
  std::string q5 = test_fields;
  q5.replace(q5.find("Q4_K - Medium"), 13, "Q5_K - Medium");
  dir.write("q5.json", "[{" + q5 + R"("n_prompt": 512, "n_gen": 0, "avg_ts": 8000.0}])");
  Json bad = run;
  bad["result"] = "q5.json";
  dir.write("RUNS2.json", runs_json(Json::array({bad}), "rtx4090-24gb"));
  CHECK_THROWS_WITH(analysis::read_bench_runs((dir.path / "RUNS2.json").string()),
                    Contains("runs[0] (q5.json) test 0.model_type") && Contains("Q5_K"));
  std::string cpu = test_fields;
  cpu.replace(cpu.find("\"n_gpu_layers\": 99"), 18, "\"n_gpu_layers\": 0");
  dir.write("cpu.json", "[{" + cpu + R"("n_prompt": 512, "n_gen": 0, "avg_ts": 80.0}])");
  bad["result"] = "cpu.json";
  dir.write("RUNS3.json", runs_json(Json::array({bad}), "rtx4090-24gb"));
  CHECK_THROWS_WITH(analysis::read_bench_runs((dir.path / "RUNS3.json").string()), Contains("n_gpu_layers"));
  // A typo in the command is refused with the flag it resembles.
  CHECK_THROWS_WITH(spec::parse_bench_command("llama-bench -m x.gguf -ngll 99", "c"), Contains("-ngl"));
}

TEST_CASE("bench runs: SGLang bench_one_batch_server records (real, selected by run_name)", "[analysis][runs]") {
  // Seven unedited lines of a real result.jsonl (tests/data/sglang_one_batch/README.md): one W8A8 record and six
  // of the bf16 model at batch 1-64, SGLang 0.5.3.post3 on one A100 SXM 80GB.
  const std::string src(LLMSIM_SOURCE_DIR);
  const std::string file = src + "/tests/data/sglang_one_batch/mtilyxuegao-a100-qwen3-4b-result.jsonl";
  const std::string model = src + "/data/validation/models/qwen3-4b.json";
  const std::string command = "python -m sglang.bench_one_batch_server --base-url http://127.0.0.1:30000 "
                              "--model-path Qwen/Qwen3-4B-Instruct-2507 --batch-size 1 8 32 64 --input-len 128 256 "
                              "--output-len 32 64 128 512 --run-name original";
  auto run = [&](const Json& extra) {
    Json r = {{"result", file}, {"command", command}, {"model", model}, {"engine", "sglang"},
              {"server_command", "python -m sglang.launch_server --model-path Qwen/Qwen3-4B-Instruct-2507 --tp 1"}};
    for (auto it = extra.begin(); it != extra.end(); ++it) r[it.key()] = it.value();
    return r;
  };
  test::TempDir dir("benchruns-oneserver");
  const auto runs = analysis::read_bench_runs(
      dir.write("RUNS.json", runs_json(Json::array({run({{"select", {{"run_name_prefix", "original_"}}}})}),
                                       "a100-80gb-sxm")));
  REQUIRE(runs.runs.size() == 6);  // the W8A8 line is not selected
  const auto gpu = spec::Catalog::builtin().gpu("a100-80gb-sxm");
  const auto profile = perf::default_profile(gpu);
  for (const auto& r : runs.runs) {
    INFO(r.name);
    CHECK(r.kind == spec::BenchKind::sglang_one_batch_server);
    CHECK(r.runtime == spec::Runtime::sglang);
    CHECK(r.requests == r.batch);
    // latency (the whole batch, s) and the decode phase's tokens/s; overall_throughput repeats the latency.
    REQUIRE(r.measured.size() == 2);
    CHECK(r.measured[0].key == "latency");
    CHECK(r.measured[1].key == "decode_throughput");
    const auto p = analysis::BenchPredictor(r).predict(profile);
    REQUIRE(p.size() == 2);
    // The decode phase fits inside the whole batch: batch x output / decode tokens/s < latency.
    CHECK(static_cast<double>(r.batch * r.output_len) / p[1] < p[0]);
    // An uncalibrated A100 prices these real batches within a factor of two (the corpus: 4-11 % median error).
    CHECK(p[0] / r.measured[0].value == Approx(1.0).margin(0.5));
    CHECK(p[1] / r.measured[1].value == Approx(1.0).margin(0.5));
  }
  CHECK(runs.runs[0].batch == 32);
  CHECK(runs.runs[5].batch == 64);
  CHECK(runs.runs[5].output_len == 128);
  // Without a selection every record is a run.
  CHECK(analysis::read_bench_runs(dir.write("RUNS-all.json", runs_json(Json::array({run({})}), "a100-80gb-sxm")))
            .runs.size() == 7);
  // Bad input names the run and the field.
  CHECK_THAT(runs_error_of(dir, runs_json(Json::array({run({{"select", {{"run_name_prefix", "fp8_"}}}})}), "a100-80gb-sxm")),
             Contains("select.run_name_prefix") && Contains("no record") && Contains("fp8_"));
  CHECK_THAT(runs_error_of(dir, runs_json(Json::array({run({{"select", {{"run_name", "x"}}}})}), "a100-80gb-sxm")),
             Contains("run_name"));
  CHECK_THAT(runs_error_of(dir, runs_json(Json::array({run({{"command", "python -m sglang.bench_one_batch_server "
                                                                     "--batch-size 16 --input-len 256 --output-len 32"}})}),
                                     "a100-80gb-sxm")),
             Contains("--batch-size 16 but the file's batch_size is 32") && Contains("command/file mismatch"));
  CHECK_THAT(runs_error_of(dir, runs_json(Json::array({run({{"command", "python -m sglang.bench_one_batch --model-path m "
                                                                     "--batch-size 32"}})}),
                                     "a100-80gb-sxm")),
             Contains("bench_one_batch_server result") && Contains("command/file mismatch"));
  // The oldest bench_one_batch_server divided by the whole latency: that number is the latency again, not read.
  dir.write("old.jsonl", R"({"run_name": "a", "batch_size": 4, "input_len": 512, "output_len": 100, "latency": 2.0, )"
                         R"("output_throughput": 200.0, "overall_throughput": 1224.0})" "\n");
  const auto old = analysis::read_bench_runs(dir.write(
      "RUNS-old.json", runs_json(Json::array({run({{"result", "old.jsonl"}, {"command", "python -m "
                                                   "sglang.bench_one_batch_server --model None --batch-size 4"}})}),
                                 "a100-80gb-sxm")));
  REQUIRE(old.runs.size() == 1);
  REQUIRE(old.runs[0].measured.size() == 1);
  CHECK(old.runs[0].measured[0].key == "latency");
  CHECK(std::any_of(old.runs[0].notes_out.begin(), old.runs[0].notes_out.end(),
                    [](const std::string& n) { return n.find("not compared twice") != std::string::npos; }));
}

TEST_CASE("bench runs: vLLM's offline scripts before 0.6.4 keep chunked prefill off above 32K unless asked",
          "[analysis][runs]") {
  // benchmark_throughput.py / benchmark_latency.py of 0.6.3 passed enable_chunked_prefill=args.enable_chunked_prefill
  // (a store_true flag) to LLM(...): absent, it is an explicit False, which V0's >32K rule (vllm#6666) leaves off.
  // From vllm#9529 (0.6.4) the scripts take EngineArgs' flags and the rule applies as for `vllm serve`.
  test::TempDir dir("benchruns-chunked");
  dir.write("tput.json", R"({"elapsed_time": 20.0, "num_requests": 64, "total_num_tokens": 139264,
                              "requests_per_second": 3.2, "tokens_per_second": 6963.2})");
  const std::string tput = "python benchmark_throughput.py --backend vllm --model meta-llama/Llama-3.1-8B-Instruct "
                           "--input-len=2048 --output-len=128 --max-model-len 91680 --num-prompts=64";
  auto run_of = [&](const std::string& command, const std::string& version) {
    const Json r{{"result", "tput.json"}, {"command", command}, {"engine_version", version}};
    return analysis::parse_bench_runs(runs_json(Json::array({r})), (dir.path / "RUNS.json").string()).runs.at(0);
  };
  auto engine_of = [](const analysis::BenchRun& r) {
    return spec::resolve(spec::scenario_from_json(JsonView(r.scenario, "")), spec::Catalog::builtin()).scenario.engine;
  };
  const auto old = run_of(tput, "0.6.3.post2.dev308+gb489fc3c");
  CHECK(old.scenario["enable_chunked_prefill"] == false);
  const auto old_engine = engine_of(old);
  CHECK(old_engine.policy == spec::SchedulerPolicy::vllm_v0);  // prefill-first
  CHECK(old_engine.max_num_batched_tokens == 91680);           // max(max_model_len, 2048)
  // 0.6.4's script: the unset flag turns chunking on above 32K, at 0.6.4's 512-token budget.
  const auto later = run_of(tput, "0.6.4");
  CHECK_FALSE(later.scenario.contains("enable_chunked_prefill"));
  CHECK(engine_of(later).policy == spec::SchedulerPolicy::chunked);
  CHECK(engine_of(later).max_num_batched_tokens == 512);
  // The script's own flag turns it on in 0.6.3 too; `vllm serve` runs are not the offline scripts.
  const auto asked = run_of(tput + " --enable-chunked-prefill", "0.6.3");
  CHECK(asked.scenario["enable_chunked_prefill"] == true);
  CHECK(engine_of(asked).policy == spec::SchedulerPolicy::chunked);
  // The larger profiling step of the unchunked run leaves a smaller KV pool (its activations come out of it).
  const auto gpu = spec::Catalog::builtin().gpu("h100-80gb-sxm");
  CHECK(analysis::BenchPredictor(old).predict(perf::default_profile(gpu)).at(0) > 0);
}

TEST_CASE("bench runs: an engine_version llmsim cannot read is named once, with the way out", "[analysis][runs]") {
  // The release text was parsed under the run's path and the error wrapped again under the same path:
  // "runs[0] (lat.json).engine_version: runs[0] (lat.json).engine_version: 'vllm==abc': ..." (attack8).
  test::TempDir dir("benchruns-badversion");
  dir.write("lat.json", test::vllm_latency_json(1.9));
  for (const char* version : {"abc", "0.x", "0.1.0"}) {
    const std::string e = runs_error_of(
        dir, runs_json(Json::array({{{"result", "lat.json"}, {"command", kLatency}, {"engine_version", version}}})));
    INFO(e);
    const std::string field = "runs[0] (lat.json).engine_version";
    REQUIRE(e.find(field) == 0);
    CHECK(e.find(field, 1) == std::string::npos);
    CHECK_THAT(e, Contains(version));
    CHECK_THAT(e, Contains("or set \"runtime\""));
  }
}
