// vLLM benchmark results: reading real files (tests/data/vllm_results, sources in its README), the
// `vllm serve` command line, and the measured-vs-predicted check.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/analysis/vllm_result.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/vllm_args.hpp"

using namespace llmsim;
using namespace llmsim::analysis;

namespace {

std::string data(const std::string& name) { return std::string(LLMSIM_SOURCE_DIR) + "/tests/data/vllm_results/" + name; }

const char* kH100_80 = "lambdalabs-h100-llama3-8b-v0.5.4-np80.json";
const char* kH100_320 = "lambdalabs-h100-llama3-8b-v0.5.4-np320.json";
const char* kA100_80 = "lambdalabs-a100-llama3-8b-np80.json";
const char* kConcurrency = "er0080-bench-serve-opt125m-concurrency2.json";
// The LambdaLabs server (benchmark.py): max_model_len and max_num_seqs from the file name, the script's
// --gpu-memory-utilization default 0.95, and vLLM 0.5.4's own defaults stated explicitly (the file does not
// record the version, so check cannot know them): no chunked prefill below 32K context and a token budget
// of max(max_model_len, 2048) (serving-engines.md §1.4).
const char* kLambdaArgs =
    "python3 -m vllm.entrypoints.openai.api_server --model meta-llama/Meta-Llama-3-8B-Instruct "
    "--max-model-len 2048 --gpu-memory-utilization 0.95 --max-num-seqs 256 --max-num-batched-tokens 2048 "
    "--enable-chunked-prefill False";

std::string check_error_of(const std::string& text) {
  try {
    parse_vllm_result(text, "bench.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

const VllmCheckRow& row(const VllmCheck& c, const std::string& key) {
  for (const auto& r : c.rows)
    if (r.key == key) return r;
  FAIL("no row " << key);
  throw std::logic_error("unreachable");
}

VllmCheck check_h100(const char* file) {
  VllmCheckOptions o;
  o.gpu = "h100-80gb-sxm";
  o.model = "llama-3.1-8b";  // Llama-3-8B's architecture; max_model_len 2048 leaves 3.1's longer context unused
  o.vllm_args = kLambdaArgs;
  return check_vllm_result(read_vllm_result(data(file)), o);
}

}  // namespace

TEST_CASE("a benchmark_serving.py result (vLLM 0.5.4 era) reads with its per-request lengths") {
  const auto r = read_vllm_result(data(kH100_80));
  CHECK(r.model_id == "meta-llama/Meta-Llama-3-8B-Instruct");
  CHECK(r.backend == "vllm");
  CHECK(r.completed == 80);
  CHECK_FALSE(r.request_rate.has_value());  // "inf"
  CHECK_FALSE(r.max_concurrency.has_value());
  CHECK(r.duration_s == 9.49651653401088);
  REQUIRE(r.input_lens.size() == 80);
  CHECK(r.input_lens.front() == 13);
  CHECK(r.output_lens[71] == 0);
  // Every number of the file is kept; "latency" was E2EL's name then.
  CHECK(r.scalars.size() == 7);  // duration, completed, 2 totals, 3 throughputs
  CHECK(r.latencies.size() == 16);
  bool e2el = false;
  for (const auto& l : r.latencies) e2el = e2el || (l.key == "p99_latency_ms" && l.metric == "e2el" && l.percentile == 99);
  CHECK(e2el);
  CHECK(r.latencies.front().key == "mean_ttft_ms");  // vLLM's order: TTFT, TPOT, ITL, E2EL
}

TEST_CASE("a `vllm bench serve` result (concurrency-limited, newer keys) reads") {
  const auto r = read_vllm_result(data(kConcurrency));
  CHECK(r.model_id == "facebook/opt-125m");
  REQUIRE(r.max_concurrency.has_value());
  CHECK(*r.max_concurrency == 2);
  CHECK(r.input_lens.empty());
  bool total = false, goodput = false;
  for (const auto& s : r.scalars) {
    total = total || s.key == "total_token_throughput";
    goodput = goodput || s.key == "request_goodput";
  }
  CHECK(total);
  CHECK_FALSE(goodput);  // null in the file: not measured
}

TEST_CASE("latency keys split as vLLM names them") {
  auto k = parse_vllm_latency_key("p99.9_e2el_ms");
  REQUIRE(k);
  CHECK(k->statistic == "p");
  CHECK(k->percentile == 99.9);
  CHECK(k->metric == "e2el");
  CHECK(parse_vllm_latency_key("median_itl_ms")->statistic == "median");
  CHECK(parse_vllm_latency_key("mean_e2e_latency_ms")->metric == "e2el");  // SGLang's name
  CHECK(parse_vllm_latency_key("p90_e2e_latency_ms")->percentile == 90);
  CHECK_FALSE(parse_vllm_latency_key("mean_e2e_ms"));
  CHECK_FALSE(parse_vllm_latency_key("p0_ttft_ms"));
  CHECK_FALSE(parse_vllm_latency_key("request_throughput"));
}

TEST_CASE("a printed `vllm bench serve` summary is refused as the console printout, with the file to give instead") {
  // The block the client prints (vllm/benchmarks/serve.py), pasted into a file, with or without the command above it.
  const std::string block = "============ Serving Benchmark Result ============\n"
                            "Successful requests:                     100\n"
                            "Benchmark duration (s):                  20.00\n"
                            "Mean TTFT (ms):                          55.10\n"
                            "==================================================\n";
  for (const std::string& text : {block, "$ vllm bench serve --model m --request-rate 4\n" + block, "\n  " + block}) {
    INFO(text);
    const std::string e = check_error_of(text);
    CHECK_THAT(e, Catch::StartsWith("bench.json: line "));
    CHECK_THAT(e, Catch::Contains("prints on the console") && Catch::Contains("--save-result"));
    CHECK_THAT(e, !Catch::Contains("invalid JSON"));
  }
  CHECK_THAT(check_error_of(block), Catch::StartsWith("bench.json: line 1 "));
  CHECK_THAT(check_error_of("# run\n\n" + block), Catch::StartsWith("bench.json: line 3 "));
  // A saved result whose text merely names the block (a note field) is read as JSON, as before.
  CHECK_THAT(check_error_of(R"({"note": "Serving Benchmark Result", "completed": 3})"), Catch::Contains("missing 'duration'"));
}

TEST_CASE("malformed or foreign result files get an error naming the file and the field") {
  const std::string ok_head = R"("duration": 2, "completed": 3, "total_input_tokens": 10, "total_output_tokens": 20,
                                 "request_throughput": 1.5, "mean_ttft_ms": 12)";
  CHECK(check_error_of("{" + ok_head + "}").empty());
  CHECK_THAT(check_error_of(R"({"duration": "abc", "completed": 3, "total_input_tokens": 1, "total_output_tokens": 2,
                          "request_throughput": 1, "mean_ttft_ms": 3})"),
             Catch::StartsWith("bench.json: duration:"));
  CHECK_THAT(check_error_of(R"({"completed": 3})"), Catch::Contains("bench.json: not a vLLM benchmark result: missing 'duration'"));
  CHECK_THAT(check_error_of("[1, 2]"), Catch::Contains("expected a JSON object"));
  CHECK_THAT(check_error_of("{" + ok_head + R"(, "input_lens": [1, 2], "output_lens": [3]})"), Catch::Contains("output_lens"));
  CHECK_THAT(check_error_of("{" + ok_head + R"(, "input_lens": [1, "x"], "output_lens": [3, 4]})"),
             Catch::Contains("input_lens[1]"));
  // Every per-request list has one entry per request sent (completed + failed): another length is another run's.
  for (const std::string list : {R"("input_lens": [1, 2], "output_lens": [3, 4])", R"("ttfts": [0.1, 0.2])",
                                 R"("ttfts": [0.1, 0.2, 0.3, 0.4])"}) {
    INFO(list);
    CHECK_THAT(check_error_of("{" + ok_head + ", " + list + "}"),
               Catch::Contains("entries, but the run sent completed + failed = 3 + 0"));
  }
  CHECK(check_error_of("{" + ok_head + R"(, "ttfts": [0.1, 0.2, 0.3]})").empty());
  CHECK_THAT(check_error_of("{" + ok_head + R"(, "request_rate": -2})"), Catch::Contains("request_rate"));
  CHECK_THAT(check_error_of(R"({"duration": 2, "completed": 3, "total_input_tokens": 3, "total_output_tokens": 2,
                          "request_throughput": 1})"),
             Catch::Contains("no latency statistics"));
  CHECK_THAT(check_error_of("{not json"), Catch::StartsWith("bench.json"));
  // Other tools' outputs (key structures as those tools write them) say what they look like. SGLang's
  // bench_serving output is read (test_result_files.cpp).
  CHECK(check_error_of(R"({"backend": "sglang", "duration": 2, "completed": 3, "total_input_tokens": 3,
                     "total_output_tokens": 2, "request_throughput": 1, "mean_e2e_latency_ms": 5,
                     "mean_ttft_ms": 3})").empty());
  CHECK_THAT(check_error_of(R"({"avg_latency": 2.5, "latencies": [2.5], "percentiles": {"50": 2.5}})"),
             Catch::Contains("vLLM latency result") && Catch::Contains("calibrate-fit --runs"));
  CHECK_THAT(check_error_of(R"({"elapsed_time": 399.6, "num_requests": 256, "total_num_tokens": 557056,
                          "requests_per_second": 0.64, "tokens_per_second": 1393.9})"),
             Catch::Contains("vLLM throughput result") && Catch::Contains("calibrate-fit --runs"));
  CHECK_THAT(check_error_of(R"({"results_ttft_s_mean": 0.2, "results_num_completed_requests": 10})"),
             Catch::Contains("LLMPerf") && !Catch::Contains("calibrate-fit"));
  CHECK_THAT(check_error_of(R"({"time_to_first_token": {"avg": 3, "unit": "ms"}, "request_throughput": {"avg": 1}})"),
             Catch::Contains("GenAI-Perf"));
  // Python writes NaN and Infinity; they read as "not measured" and "inf".
  const auto r = parse_vllm_result("{" + ok_head + R"(, "request_rate": Infinity, "std_ttft_ms": NaN})", "bench.json");
  CHECK_FALSE(r.request_rate.has_value());
  CHECK(r.latencies.size() == 1);
}

TEST_CASE("numpy's percentile (linear interpolation) and HF names to catalogue ids") {
  CHECK(numpy_percentile({1, 2, 3, 4}, 50) == 2.5);
  CHECK(numpy_percentile({1, 2, 3, 4}, 99) == Approx(3.97));
  CHECK(numpy_percentile({4, 1, 3, 2}, 0) == 1);
  CHECK(numpy_percentile({}, 50) == 0);
  const auto& cat = spec::Catalog::builtin();
  CHECK(catalogue_model_for("meta-llama/Meta-Llama-3.1-8B-Instruct", cat) == "llama-3.1-8b");
  CHECK(catalogue_model_for("meta-llama/Llama-2-7b-chat-hf", cat) == "llama-2-7b");
  CHECK(catalogue_model_for("Qwen/Qwen2.5-7B-Instruct", cat) == "qwen2.5-7b");
  CHECK(catalogue_model_for("neuralmagic/Meta-Llama-3.1-8B-FP8", cat) == "llama-3.1-8b");
  CHECK_FALSE(catalogue_model_for("meta-llama/Meta-Llama-3-8B-Instruct", cat).has_value());  // not in the catalogue
  // A versioned name matches its own version before the unversioned family (v0.3 is not v0.1).
  CHECK(catalogue_model_for("mistralai/Mistral-7B-Instruct-v0.3", cat) == "mistral-7b-v0.3");
  CHECK(catalogue_model_for("mistralai/Mistral-7B-Instruct-v0.1", cat) == "mistral-7b");
  CHECK(catalogue_model_for("Qwen/Qwen3-30B-A3B-AWQ", cat) == "qwen3-30b-a3b");
  // Published names with a publisher prefix, a dtype, a tuning label, a release date or shape labels (attack11: the
  // Nemotron entries added last session were reachable by no name their checkpoints are served under).
  CHECK(catalogue_model_for("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", cat) == "nemotron-3-nano-30b-a3b");
  CHECK(catalogue_model_for("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-FP8", cat) == "nemotron-3-nano-30b-a3b");
  CHECK(catalogue_model_for("nvidia/Nemotron-H-56B-Base-8K", cat) == "nemotron-h-56b");
  CHECK(catalogue_model_for("Qwen/Qwen3-Next-80B-A3B-Thinking", cat) == "qwen3-next-80b-a3b");
  CHECK(catalogue_model_for("mistralai/Mistral-Small-24B-Instruct-2501", cat) == "mistral-small-24b");
  CHECK(catalogue_model_for("Qwen/Qwen3-235B-A22B-Instruct-2507", cat) == "qwen3-235b-a22b");
  CHECK(catalogue_model_for("meta-llama/Llama-4-Scout-17B-16E-Instruct", cat) == "llama-4-scout");
  CHECK(catalogue_model_for("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", cat) == "llama-4-maverick");
  CHECK(catalogue_model_for("microsoft/Phi-3-medium-4k-instruct", cat) == "phi-3-medium-4k");  // its 4k is its id's
  // A different model whose name begins like a catalogue one is still no match (no prefix matching).
  CHECK_FALSE(catalogue_model_for("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", cat).has_value());
  CHECK_FALSE(catalogue_model_for("nvidia/NVIDIA-Nemotron-Nano-9B-v2", cat).has_value());
}

TEST_CASE("a `vllm serve` command line becomes vLLM-named scenario keys") {
  const auto a = spec::parse_vllm_serve_args(
      "CUDA_VISIBLE_DEVICES=0,1 vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2 --max-num-seqs=128 \\\n"
      "  --gpu-memory-utilization 0.9 --kv-cache-dtype fp8 --quantization awq --enable-chunked-prefill "
      "--no-enable-prefix-caching --enforce-eager --port 8000 --disable-log-requests --num-scheduler-steps 10 "
      "--served-model-name 'my model' --swap-space 16");
  CHECK(a.model == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(a.engine_args["tensor_parallel_size"] == 2);
  CHECK(a.engine_args["max_num_seqs"] == 128);
  CHECK(a.engine_args["gpu_memory_utilization"] == 0.9);
  CHECK(a.engine_args["kv_cache_dtype"] == "fp8");
  CHECK(a.engine_args["quantization"] == "awq");
  CHECK(a.engine_args["enable_chunked_prefill"] == true);
  CHECK(a.engine_args["enable_prefix_caching"] == false);
  CHECK(a.engine_args["enforce_eager"] == true);
  CHECK(a.engine_args["swap_space"] == 16);
  CHECK(a.engine_args["num_scheduler_steps"] == 10);  // vLLM V0's multi-step scheduling (spec/multi_step.hpp)
  CHECK(spec::parse_vllm_serve_args("vllm serve m --multi-step-stream-outputs False")
            .engine_args["multi_step_stream_outputs"] == false);
  CHECK(a.not_modelled.empty());
  CHECK(a.ignored.size() == 3);  // --port 8000, --disable-log-requests, --served-model-name 'my model'
  // The patch parses as a scenario with the canonical fields.
  Json patch = spec::scenario_patch(a);
  patch["model"] = "llama-3.1-8b";
  const auto s = spec::scenario_from_json(JsonView(patch, ""));
  CHECK(s.hardware.parallel.tp == 2);
  CHECK(s.weights == "awq-int4");
  CHECK(s.kv_cache == "fp8");
  CHECK(s.engine.chunked_prefill());
  CHECK_FALSE(s.engine.cuda_graphs);
  // The python -m form with --model, and an older explicit boolean value.
  const auto b = spec::parse_vllm_serve_args(
      "python3 -m vllm.entrypoints.openai.api_server --model x/y --enable-chunked-prefill False");
  CHECK(b.model == "x/y");
  CHECK(b.engine_args["enable_chunked_prefill"] == false);
  // Bad values name the flag.
  auto err = [](const char* line) {
    try {
      spec::parse_vllm_serve_args(line);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(err("vllm serve m --max-num-seqs many"), Catch::Contains("--max-num-seqs: expected an integer, got 'many'"));
  CHECK_THAT(err("vllm serve m --gpu-memory-utilization"), Catch::Contains("--gpu-memory-utilization"));
  CHECK_THAT(err("vllm serve m --served-model-name 'x"), Catch::Contains("unterminated"));
  CHECK_THAT(err("vllm serve a --model b"), Catch::Contains("--model"));
  // Odd tokens are unmodelled flags, not crashes.
  CHECK(spec::parse_vllm_serve_args("vllm serve m -- --= ---x 3").not_modelled.size() == 3);
}

TEST_CASE("check replays the file's requests and states every number it reports") {
  const auto r = read_vllm_result(data(kH100_80));
  const VllmCheck c = check_h100(kH100_80);
  REQUIRE(c.fits);
  // The scenario is the file's: 80 requests, all sent at once in the file's order, no warm-up.
  const auto& s = c.scenario;
  CHECK(s.model == "llama-3.1-8b");
  CHECK(s.hardware.gpu == "h100-80gb-sxm");
  CHECK(s.engine.max_num_batched_tokens == 2048);
  CHECK(s.engine.max_model_len == 2048);
  // The knobs shown are the ones simulated, not the scenario's 0 = "engine default" placeholders.
  CHECK(s.engine.max_num_seqs > 0);
  CHECK(s.hardware.parallel.gpus() == 1);
  CHECK(s.workload.num_requests == 80);
  CHECK(s.workload.warmup_requests == 0);
  REQUIRE(std::holds_alternative<spec::TraceReplay>(s.workload.arrival));
  const auto& reqs = std::get<spec::TraceReplay>(s.workload.arrival).requests;
  REQUIRE(reqs.size() == 80);
  CHECK(reqs[4].input_tokens == 329);
  CHECK(reqs[4].output_tokens == 101);
  CHECK(reqs[79].arrival_s == 0);
  // One row per number of the file, each with a prediction.
  CHECK(c.rows.size() == r.scalars.size() + r.latencies.size());
  for (const auto& x : c.rows) {
    INFO(x.key);
    REQUIRE(x.predicted.has_value());
    CHECK(std::isfinite(*x.predicted));
    REQUIRE(x.rel_error.has_value());
  }
  // Replayed exactly: the counts agree to the token.
  CHECK(row(c, "completed").predicted == 80);
  CHECK(row(c, "total_input_tokens").predicted == 19504);
  CHECK(row(c, "total_output_tokens").predicted == 14101);
  CHECK(*row(c, "request_throughput").predicted == Approx(80 / *row(c, "duration").predicted));
  // By vLLM's definitions, as the engine's own summary computes them (no zero-TTFT rule on TPOT).
  const auto run = evaluate(spec::resolve(s, spec::Catalog::builtin()));
  CHECK(*row(c, "mean_tpot_ms").predicted == Approx(run.summary.tpot_ms.mean).epsilon(1e-9));
  CHECK(*row(c, "mean_itl_ms").predicted == Approx(run.summary.itl_ms.mean).epsilon(1e-9));
  CHECK(*row(c, "mean_latency_ms").predicted == Approx(run.summary.e2e_ms.mean).epsilon(1e-9));
  // The request that streamed no text has TTFT 0 in the measurement and in the prediction.
  CHECK(*row(c, "mean_ttft_ms").predicted < run.summary.ttft_ms.mean);
  bool noted = false;
  for (const auto& n : c.notes) noted = noted || n.find("1 requests streamed no text") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("check on three real runs: predictions within the stated bounds") {
  // The measured-vs-predicted errors of docs/vllm.md. vLLM 0.5.4 leaves the GPU idle for milliseconds per decode
  // step (CPU work; vLLM RFC #6854, serving-engines.md §3), which llmsim does not model yet: on the H100 runs it
  // predicts 1.3x (80 requests) and 2.2x (320 requests) the measured throughput. The bound is loose on purpose;
  // it fails when a change moves the prediction further from the measurement than that.
  for (const char* f : {kH100_80, kH100_320}) {
    INFO(f);
    const auto c = check_h100(f);
    const double e = *row(c, "output_throughput").rel_error;
    CHECK(e > 0.0);   // optimistic: no CPU overhead in the model
    CHECK(e < 1.5);
  }
  VllmCheckOptions o;
  o.gpu = "a100-80gb-sxm";
  o.model = "llama-3.1-8b";
  o.vllm_args = "python3 -m vllm.entrypoints.openai.api_server --model meta-llama/Meta-Llama-3-8B-Instruct "
                "--max-model-len 2000 --gpu-memory-utilization 0.95 --max-num-seqs 1024 --max-num-batched-tokens 2048 --enable-chunked-prefill False";
  const auto c = check_vllm_result(read_vllm_result(data(kA100_80)), o);
  CHECK(std::abs(*row(c, "output_throughput").rel_error) < 0.25);
  CHECK(std::abs(*row(c, "mean_tpot_ms").rel_error) < 0.25);
  // Its ITL counts streamed chunks of several tokens: flagged, and the rows say so.
  CHECK_THAT(row(c, "mean_itl_ms").note, Catch::Contains("per streamed chunk"));
  CHECK(row(check_h100(kH100_80), "mean_itl_ms").note.empty());
  // With the multi-step flag its report's vLLM 0.6.0 ran (--num-scheduler-steps 10, an assumption: the file records
  // neither) the simulation streams a window's tokens as one chunk too: the ITL rows compare, within 20 % (per token
  // they were 89 % short).
  o.vllm_args += " --num-scheduler-steps 10";
  o.engine_version = "0.6.0";
  const auto m = check_vllm_result(read_vllm_result(data(kA100_80)), o);
  for (const char* key : {"mean_itl_ms", "median_itl_ms"}) {
    INFO(key);
    CHECK(row(m, key).note.empty());
    CHECK(std::abs(*row(m, key).rel_error) < 0.2);
    CHECK(std::abs(*row(c, key).rel_error) > 0.8);
  }
}

TEST_CASE("check: client concurrency is a closed loop; a finite rate draws arrivals") {
  VllmCheckOptions o;
  o.gpu = "h100-80gb-sxm";
  o.model = "llama-3.1-8b";  // opt-125m is not in the catalogue; the mapping of the file is what is tested
  auto r = read_vllm_result(data(kConcurrency));
  std::vector<std::string> notes;
  auto s = vllm_check_scenario(r, o, spec::Catalog::builtin(), notes);
  REQUIRE(std::holds_alternative<spec::ClosedLoop>(s.workload.arrival));
  CHECK(std::get<spec::ClosedLoop>(s.workload.arrival).concurrency == 2);
  CHECK(s.workload.num_requests == 8);
  // No per-request lengths: the means (256 / 8 = 32 in, 128 / 8 = 16 out).
  REQUIRE(std::holds_alternative<spec::FixedLength>(s.workload.input_tokens));
  CHECK(std::get<spec::FixedLength>(s.workload.input_tokens).value == 32);
  CHECK(std::get<spec::FixedLength>(s.workload.output_tokens).value == 16);
  // The same file at a finite rate (changed here, not a measurement): Gamma gaps of mean 1/rate.
  r.max_concurrency.reset();
  r.request_rate = 4.0;
  notes.clear();
  s = vllm_check_scenario(r, o, spec::Catalog::builtin(), notes);
  const auto& reqs = std::get<spec::TraceReplay>(s.workload.arrival).requests;
  REQUIRE(reqs.size() == 8);
  CHECK(reqs[0].arrival_s == 0);
  CHECK(reqs[7].arrival_s > reqs[1].arrival_s);
}

TEST_CASE("check: a finite rate that sends the whole run at once is inf, so max_concurrency spaces the requests") {
  // anyscale's runs write request_rate 1e9 with max_concurrency 128: 1,885 requests sent within 2 us.
  VllmCheckOptions o;
  o.gpu = "h100-80gb-sxm";
  o.model = "llama-3.1-8b";
  auto r = read_vllm_result(data(kConcurrency));  // 8 requests, max_concurrency 2, rate inf
  r.request_rate = 1e9;
  std::vector<std::string> notes;
  auto s = vllm_check_scenario(r, o, spec::Catalog::builtin(), notes);
  REQUIRE(std::holds_alternative<spec::ClosedLoop>(s.workload.arrival));
  CHECK(std::get<spec::ClosedLoop>(s.workload.arrival).concurrency == 2);
  CHECK_THAT(notes.front(), Catch::Contains("request_rate 1e+09/s") && Catch::Contains("read as inf"));
  // A rate whose arrivals span more than a millisecond stays a rate (7 gaps at 1000/s: 7 ms).
  r.request_rate = 1000.0;
  notes.clear();
  s = vllm_check_scenario(r, o, spec::Catalog::builtin(), notes);
  CHECK(std::holds_alternative<spec::TraceReplay>(s.workload.arrival));
}

TEST_CASE("check needs the GPU and a model it can size, and says so") {
  const auto r = read_vllm_result(data(kH100_80));
  VllmCheckOptions o;
  o.model = "llama-3.1-8b";
  CHECK_THROWS_WITH(check_vllm_result(r, o), Catch::Contains("--gpu"));
  o.gpu = "h100-80gb-sxm";
  o.model = "";
  CHECK_THROWS_WITH(check_vllm_result(r, o), Catch::Contains("'meta-llama/Meta-Llama-3-8B-Instruct' is not a catalogue model"));
  // The scenario may name the GPU instead; a quantized checkpoint's name sets the weights.
  o.gpu = "";
  o.scenario = Json{{"hardware", {{"gpu", "a100-80gb-sxm"}}}};
  o.vllm_args = "vllm serve neuralmagic/Meta-Llama-3.1-8B-FP8 --max-model-len 2048";
  std::vector<std::string> notes;
  const auto s = vllm_check_scenario(r, o, spec::Catalog::builtin(), notes);
  CHECK(s.hardware.gpu == "a100-80gb-sxm");
  CHECK(s.model == "llama-3.1-8b");
  CHECK(s.weights == "fp8");
}

TEST_CASE("an inline trace runs exactly as the same rows in a CSV file") {
  const auto dir = std::filesystem::temp_directory_path() / "llmsim_test_vllm_check";
  std::filesystem::create_directories(dir);
  const auto csv = dir / "trace.csv";
  std::ofstream(csv) << "arrival_time_s,input_tokens,output_tokens\n0,100,20\n0.05,300,1\n0.05,20,40\n0.3,700,0\n";
  spec::Scenario a;
  a.workload.arrival = spec::TraceReplay{csv.string(), 1.0, {}};
  a.workload.num_requests = 4;
  a.workload.warmup_requests = 0;
  spec::Scenario b = a;
  b.workload.arrival = spec::TraceReplay{"", 1.0, {{0, 100, 20}, {0.05, 300, 1}, {0.05, 20, 40}, {0.3, 700, 0}}};
  const auto ra = evaluate(spec::resolve(a, spec::Catalog::builtin()));
  const auto rb = evaluate(spec::resolve(b, spec::Catalog::builtin()));
  CHECK(ra.summary.completed_requests == 4);
  CHECK(metrics::to_json(ra.summary) == metrics::to_json(rb.summary));
}

TEST_CASE("a misspelled vLLM flag is an error with the flag it resembles; an unknown real flag is reported", "[vocabulary]") {
  try {
    spec::parse_vllm_serve_args("vllm serve meta-llama/Llama-3.1-8B --gpu-memory-utilisation 0.8");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("--gpu-memory-utilisation") &&
                                          Catch::Contains("did you mean --gpu-memory-utilization"));
  }
  CHECK_THROWS_WITH(spec::parse_vllm_serve_args("vllm serve m --max-num-seq 64"),
                    Catch::Contains("did you mean --max-num-seqs"));
  // Real flags llmsim does not model are kept for the notes, never refused.
  const auto a = spec::parse_vllm_serve_args("vllm serve m --disable-sliding-window --disable-custom-all-reduce --seed 3");
  CHECK(a.not_modelled == std::vector<std::string>{"--disable-sliding-window", "--disable-custom-all-reduce"});
  // LoRA is modelled (memory/lora_memory.hpp): its flags become engine fields.
  const auto lora = spec::parse_vllm_serve_args("vllm serve m --enable-lora --max-loras 4 --max-lora-rank 64");
  CHECK(lora.not_modelled.empty());
  CHECK(lora.engine_args["enable_lora"] == true);
  CHECK(lora.engine_args["max_loras"] == 4);
  CHECK(lora.engine_args["max_lora_rank"] == 64);
  CHECK(a.ignored == std::vector<std::string>{"--seed 3"});
  const auto b = spec::parse_vllm_serve_args("vllm serve m --gpu-memory-utilization 0.8 -tp 2");
  CHECK(b.engine_args["gpu_memory_utilization"] == 0.8);
  CHECK(b.engine_args["tensor_parallel_size"] == 2);
}

TEST_CASE("a request_rate too small to simulate is blamed by name, not the replay's time_scale", "[messages]") {
  VllmCheckOptions o;
  o.gpu = "h100-80gb-sxm";
  o.model = "llama-3.1-8b";
  auto r = read_vllm_result(data(kConcurrency));
  r.max_concurrency.reset();
  std::vector<std::string> notes;
  // 8 requests: 7 gaps of mean 1/rate must fit the clock's 1e9 s, so the rate must exceed 7e-9 req/s.
  for (const double rate : {1e-300, 1e-12, 5e-9}) {
    CAPTURE(rate);
    r.request_rate = rate;
    try {
      (void)vllm_check_scenario(r, o, spec::Catalog::builtin(), notes);
      FAIL("accepted request_rate " << rate);
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      CHECK(what.find("request_rate") != std::string::npos);
      CHECK(what.find("time_scale") == std::string::npos);
    }
  }
  r.request_rate = 1e-6;  // 7e6 s of arrivals: long, but within the clock
  CHECK_NOTHROW(vllm_check_scenario(r, o, spec::Catalog::builtin(), notes));
}

TEST_CASE("check: a request_rate inf run is a burst, said so, never called unstable", "[messages]") {
  // `vllm bench serve --request-rate inf` sends every request at t = 0: all 320 are in the system from the start
  // whatever the server's speed, so the growth check's "grew by 160 over the last 160 arrivals" said nothing.
  auto has = [](const VllmCheck& c, const std::string& text) {
    return std::any_of(c.notes.begin(), c.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  const auto burst = check_h100(kH100_320);
  CHECK(has(burst, "request_rate inf: all 3"));  // "all 320 requests" (those it simulates)
  CHECK(has(burst, "requests were sent at once — a burst, not an overload"));
  CHECK_FALSE(has(burst, "unstable"));
  // The same rows at a finite rate far above what the server serves (changed here, not a measurement): a load with
  // a rate, which the server falls behind, is still flagged.
  auto r = read_vllm_result(data(kH100_320));
  r.request_rate = 2000.0;
  VllmCheckOptions o;
  o.gpu = "h100-80gb-sxm";
  o.model = "llama-3.1-8b";
  o.vllm_args = kLambdaArgs;
  const auto paced = check_vllm_result(r, o);
  CHECK(has(paced, "the simulated run was unstable"));
  CHECK_FALSE(has(paced, "a burst"));
}

TEST_CASE("check: backend openai-chat sends to the chat endpoint; a scenario's own endpoint wins") {
  VllmCheckOptions o;
  o.gpu = "h100-80gb-sxm";
  o.model = "llama-3.1-8b";
  auto r = read_vllm_result(data(kConcurrency));
  std::vector<std::string> notes;
  CHECK(vllm_check_scenario(r, o, spec::Catalog::builtin(), notes).workload.endpoint == spec::Endpoint::completions);
  r.backend = "openai-chat";
  notes.clear();
  CHECK(vllm_check_scenario(r, o, spec::Catalog::builtin(), notes).workload.endpoint ==
        spec::Endpoint::chat_completions);
  CHECK(std::any_of(notes.begin(), notes.end(), [](const std::string& n) { return n.find("openai-chat") != std::string::npos; }));
  o.scenario = Json{{"workload", {{"endpoint", "/v1/completions"}}}};
  notes.clear();
  CHECK(vllm_check_scenario(r, o, spec::Catalog::builtin(), notes).workload.endpoint == spec::Endpoint::completions);
}

TEST_CASE("check: a release that predates the model's architecture is refused, stated by the file or the flag",
          "[architecture]") {
  // spec/architecture_release.hpp: vLLM serves DeepSeek-V3 from 0.6.6 (vllm#11559). A file that states 0.6.3 cannot
  // have run it; neither can a run the user names as 0.6.3.
  VllmResult r = read_vllm_result(data(kH100_80));
  VllmCheckOptions o;
  o.gpu = "8xh200-141gb-sxm";
  o.model = "deepseek-v3";
  std::vector<std::string> notes;
  r.version = "0.6.3";
  CHECK_THROWS_WITH(vllm_check_scenario(r, o, spec::Catalog::builtin(), notes),
                    Catch::Contains("the release the result file states") &&
                        Catch::Contains("vllm==0.6.3 predates 'deepseek-v3'") && Catch::Contains("from 0.6.6"));
  r.version = "0.6.6";
  CHECK_NOTHROW(vllm_check_scenario(r, o, spec::Catalog::builtin(), notes));
  // A local build may carry a backport: a note, not a refusal.
  r.version = "0.6.3+cu121.vendor";
  notes.clear();
  CHECK_NOTHROW(vllm_check_scenario(r, o, spec::Catalog::builtin(), notes));
  CHECK(std::any_of(notes.begin(), notes.end(),
                    [](const std::string& n) { return n.find("local build") != std::string::npos; }));
  // The release named by the flag: refused where the scenario is resolved.
  r.version.clear();
  o.engine_version = "0.6.3";
  CHECK_THROWS_WITH(check_vllm_result(r, o), Catch::Contains("engine.runtime: vllm==0.6.3 predates 'deepseek-v3'"));
}
