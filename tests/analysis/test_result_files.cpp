// The result files people have, read by `check` (issue 30): `vllm bench serve --append-result` JSON lines,
// SGLang bench_serving output, latency-only summaries, a start-up stall visible in the file's own TTFTs, and the
// hint to name the release when the file predates the runtime simulated. Real files in tests/data/vllm_results
// (sources in its README); the variants below are made from them by deleting or adding keys, as each test says.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>

#include "llmsim/analysis/result_notes.hpp"
#include "llmsim/analysis/server_args.hpp"
#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/analysis/vllm_result.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"

using namespace llmsim;
using namespace llmsim::analysis;

namespace {

std::string result_path(const std::string& name) { return std::string(LLMSIM_SOURCE_DIR) + "/tests/data/vllm_results/" + name; }

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char* kAppend = "lambdalabs-h100-llama3-8b-v0.5.4-append.jsonl";
const char* kSglang = "livinfly-a100pcie-sglang047-mistral7b-online.jsonl";
const char* kH100Np80 = "lambdalabs-h100-llama3-8b-v0.5.4-np80.json";

std::string thrown_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

bool any_note(const VllmCheck& c, const std::string& part) {
  for (const auto& n : c.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

const VllmCheckRow* find_row(const VllmCheck& c, const std::string& key) {
  for (const auto& r : c.rows)
    if (r.key == key) return &r;
  return nullptr;
}

VllmCheckOptions h100() {
  VllmCheckOptions o;
  o.gpu = "h100-80gb-sxm";
  o.model = "llama-3.1-8b";
  o.vllm_args = "vllm serve meta-llama/Meta-Llama-3-8B-Instruct --max-model-len 2048 --max-num-seqs 256";
  return o;
}

}  // namespace

TEST_CASE("--append-result JSON lines: every run, each named by its line", "[check][files]") {
  const auto runs = read_vllm_results(result_path(kAppend));
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].line == 1);
  CHECK(runs[1].line == 2);
  CHECK(runs[0].completed == 80);
  CHECK(runs[1].completed == 320);
  CHECK(runs[1].source == result_path(kAppend) + " line 2");
  // The same runs as the two files it was assembled from.
  CHECK(runs[1].input_lens == read_vllm_result(result_path("lambdalabs-h100-llama3-8b-v0.5.4-np320.json")).input_lens);
  CHECK(pick_vllm_run(runs, 2).completed == 320);
  CHECK_THAT(thrown_message([&] { pick_vllm_run(runs, 3); }), Catch::Contains("--run") && Catch::Contains("lines 1, 2"));
  // The one-run reader refuses to pick silently.
  CHECK_THAT(thrown_message([&] { read_vllm_result(result_path(kAppend)); }), Catch::Contains("2 runs") && Catch::Contains("--run"));
  // A single document (pretty-printed over many lines) stays one run.
  const auto one = read_vllm_results(result_path("er0080-bench-serve-opt125m-concurrency2.json"));
  REQUIRE(one.size() == 1);
  CHECK(one[0].line == 0);
  CHECK(pick_vllm_run(one, 1).completed == one[0].completed);
}

TEST_CASE("a bad line of a JSON-lines file is named by its line and field", "[check][files]") {
  const std::string first = slurp(result_path(kH100Np80));
  const std::string good = first.substr(0, first.find_last_not_of("\n") + 1);
  auto err = [&](const std::string& second) {
    return thrown_message([&] { parse_vllm_results(good + "\n\n" + second + "\n", "bench.jsonl"); });
  };
  CHECK(err(good).empty());
  CHECK_THAT(err(R"({"duration": "x", "completed": 3, "total_input_tokens": 1, "total_output_tokens": 2, "mean_ttft_ms": 3})"),
             Catch::StartsWith("bench.jsonl line 3: duration"));
  CHECK_THAT(err("{not json"), Catch::StartsWith("bench.jsonl line 3"));
  CHECK_THAT(err(R"({"results_ttft_s_mean": 0.2})"), Catch::Contains("line 3") && Catch::Contains("LLMPerf"));
  CHECK(parse_vllm_results(good + "\n\n" + good, "bench.jsonl").back().line == 3);
}

TEST_CASE("SGLang bench_serving output: read with its names, checked on the SGLang runtime", "[check][files]") {
  const auto runs = read_vllm_results(result_path(kSglang));
  REQUIRE(runs.size() == 5);
  for (const auto& r : runs) {
    CHECK(r.client == "sglang");
    CHECK(r.backend == "sglang");
    CHECK_FALSE(r.max_concurrency.has_value());  // null in the file
  }
  CHECK(*runs[0].request_rate == 1.0);
  CHECK(*runs[4].request_rate == 16.0);
  bool e2e = false, conc = false;
  for (const auto& l : runs[0].latencies) e2e = e2e || (l.key == "p99_e2e_latency_ms" && l.metric == "e2el");
  for (const auto& s : runs[0].scalars) conc = conc || s.key == "concurrency";
  CHECK(e2e);
  CHECK(conc);

  VllmCheckOptions o;
  o.gpu = "a100-40gb-pcie";
  o.model = "mistral-7b";  // the file has no model_id: SGLang's client does not write one
  const auto c = check_vllm_result(runs[0], o);
  REQUIRE(c.fits);
  CHECK(c.line == 1);
  CHECK(c.scenario.engine.resolved_runtime() == spec::Runtime::sglang);
  CHECK(any_note(c, "backend 'sglang'"));
  CHECK_FALSE(any_note(c, "llmsim models vLLM's engine"));
  // SGLang's "concurrency" is the mean number in flight: sum of E2E latencies over the duration (Little's law).
  const auto* cc = find_row(c, "concurrency");
  const auto* thr = find_row(c, "request_throughput");
  const auto* e2el = find_row(c, "mean_e2e_latency_ms");
  REQUIRE(cc);
  REQUIRE(thr);
  REQUIRE(e2el);
  REQUIRE(cc->predicted);
  CHECK(*cc->predicted == Approx(*thr->predicted * *e2el->predicted / 1e3).epsilon(1e-9));
  // Newer SGLang clients also write total_throughput (input + output tokens per second): added to the real line.
  Json line = parse_json(slurp(result_path(kSglang)).substr(0, slurp(result_path(kSglang)).find('\n')), "line");
  line["total_throughput"] = 1048.7;
  const auto ct = check_vllm_result(parse_vllm_result(line.dump(), "line"), o);
  REQUIRE(find_row(ct, "total_throughput"));
  REQUIRE(find_row(ct, "total_throughput")->predicted.has_value());
  CHECK(*find_row(ct, "total_throughput")->predicted ==
        Approx(*find_row(ct, "input_throughput")->predicted + *find_row(ct, "output_throughput")->predicted));
  // Every latency statistic the file states has a prediction (p95 ITL included: the engine keeps it).
  for (const auto& l : runs[0].latencies) {
    INFO(l.key);
    REQUIRE(find_row(c, l.key));
    CHECK(find_row(c, l.key)->predicted.has_value());
  }
  // A named SGLang release wins, and is SGLang's (not vLLM's) when given as a bare version.
  o.engine_version = "0.4.7.post1";
  CHECK(check_vllm_result(runs[0], o).scenario.engine.runtime_release == "sglang==0.4.7.post1");
}

TEST_CASE("check with an SGLang server's command line: server_arg_sets' overrides, SGLang's scheduler", "[check][files]") {
  const auto runs = read_vllm_results(result_path(kSglang));
  VllmCheckOptions o;
  o.gpu = "a100-40gb-pcie";
  o.model = "mistral-7b";
  // The file alone: runtime sglang, and so SGLang's scheduler policy (its default), named in the notes.
  const auto plain = check_vllm_result(runs[0], o);
  CHECK(plain.scenario.engine.policy == spec::SchedulerPolicy::sglang);
  CHECK(any_note(plain, "policy 'sglang'"));
  // The server's command line: the same overrides the other commands apply (max_num_seqs, kv dtype), notes for
  // what is not modelled, and --model still wins over its --model-path.
  o.sglang_args = "python -m sglang.launch_server --model-path mistralai/Mistral-7B-Instruct-v0.3 "
                  "--max-running-requests 24 --kv-cache-dtype fp8_e5m2 --chunked-prefill-size 4096 --enable-mixed-chunk";
  const auto c = check_vllm_result(runs[0], o);
  REQUIRE(c.fits);
  CHECK(c.scenario.engine.max_num_seqs == 24);
  CHECK(c.scenario.kv_cache == "fp8");
  CHECK(c.scenario.model == "mistral-7b");
  CHECK(c.scenario.engine.policy == spec::SchedulerPolicy::sglang);
  CHECK(c.scenario.engine.max_num_batched_tokens == 4096);  // SGLang's chunk: the sglang policy's token budget
  CHECK(any_note(c, "SGLang arguments llmsim does not model (ignored): --enable-mixed-chunk"));
  // A vLLM client's file with an SGLang command line: the command line says the server was SGLang.
  const auto vllm_file = read_vllm_results(result_path(kH100Np80));
  VllmCheckOptions v;
  v.gpu = "h100-80gb-sxm";
  v.model = "llama-3.1-8b";  // Llama 3 8B's catalogue stand-in; --model wins over the command line's model
  v.sglang_args = "python -m sglang.launch_server --model-path meta-llama/Meta-Llama-3-8B-Instruct";
  const auto cv = check_vllm_result(vllm_file[0], v);
  CHECK(cv.scenario.engine.resolved_runtime() == spec::Runtime::sglang);
  CHECK(cv.scenario.engine.policy == spec::SchedulerPolicy::sglang);
  v.engine_version = "0.4.7";  // a bare release of an SGLang server is SGLang's
  CHECK(check_vllm_result(vllm_file[0], v).scenario.engine.runtime_release == "sglang==0.4.7");
  // One server: both command lines, or a misspelled flag, are errors naming the flag.
  // SGLang's client against a vLLM server (the vLLM line says so): vLLM, without a note that says SGLang.
  VllmCheckOptions sv;
  sv.gpu = "a100-40gb-pcie";
  sv.model = "mistral-7b";
  sv.vllm_args = "vllm serve mistralai/Mistral-7B-Instruct-v0.3 --max-num-seqs 24";
  const auto vs = check_vllm_result(runs[0], sv);
  CHECK(vs.scenario.engine.resolved_runtime() != spec::Runtime::sglang);
  CHECK(vs.scenario.engine.policy == spec::EngineConfig{}.policy);
  CHECK_FALSE(any_note(vs, "simulated on llmsim's SGLang runtime"));
  v.engine_version.clear();
  v.vllm_args = "vllm serve meta-llama/Meta-Llama-3-8B-Instruct";
  CHECK_THAT(thrown_message([&] { check_vllm_result(vllm_file[0], v); }), Catch::Contains("give one of them"));
  v.vllm_args.clear();
  v.sglang_args = "python -m sglang.launch_server --tp-szie 2";
  CHECK_THAT(thrown_message([&] { check_vllm_result(vllm_file[0], v); }),
             Catch::Contains("--tp-szie: unknown SGLang flag; did you mean --tp-size?"));
}

TEST_CASE("a server's command line runs that server, whatever engine the scenario file chose", "[check][server_args]") {
  // scenario file < command line: the file's runtime or scheduler of the other server does not survive the line.
  const auto& cat = spec::Catalog::builtin();
  const auto engine_of = [&](Json doc, const std::string& vllm, const std::string& sglang) {
    std::vector<std::string> notes;
    const Json out = apply_server_args(std::move(doc), vllm, sglang, notes, cat);
    std::string all;
    for (const auto& n : notes) all += n + "\n";
    return std::pair{spec::scenario_from_json(JsonView(out, "")).engine, all};
  };
  Json doc = parse_json(R"({"model": "llama-3.1-8b", "engine": {"policy": "vllm", "max_model_len": 4096}})", "f");
  // An SGLang line on a file written for vLLM (examples/scenarios/chat-8b.json names policy "vllm").
  auto [e, notes] = engine_of(doc, "", "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct");
  CHECK(e.resolved_runtime() == spec::Runtime::sglang);
  CHECK(e.policy == spec::SchedulerPolicy::sglang);
  CHECK(e.max_model_len == 4096);  // the file's other settings stay
  CHECK_THAT(notes, Catch::Contains("engine.policy 'vllm' is vLLM's scheduler"));
  doc["engine"]["policy"] = "vllm-v0";
  CHECK(engine_of(doc, "", "python -m sglang.launch_server").first.policy == spec::SchedulerPolicy::sglang);
  // A vLLM line on a file written for SGLang: vLLM's default runtime and scheduler.
  doc["engine"] = {{"runtime", "sglang==0.4.6"}, {"policy", "sglang"}};
  std::tie(e, notes) = engine_of(doc, "vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2", "");
  CHECK(e.resolved_runtime() != spec::Runtime::sglang);
  CHECK(e.policy == spec::EngineConfig{}.policy);
  CHECK_THAT(notes, Catch::Contains("engine.runtime 'sglang==0.4.6' is SGLang's"));
  // A scheduler of neither server (static batching), or of the line's own, stays as the file gave it.
  doc["engine"] = {{"policy", "static"}};
  CHECK(engine_of(doc, "", "python -m sglang.launch_server").first.policy == spec::SchedulerPolicy::static_batching);
  doc["engine"] = {{"policy", "vllm-v0"}, {"runtime", "vllm==0.6.3.post1"}};
  CHECK(engine_of(doc, "vllm serve m --max-num-seqs 8", "").first.policy == spec::SchedulerPolicy::vllm_v0);
}

TEST_CASE("a server line's quantized checkpoint name sizes its weights as check's does", "[check][server_args]") {
  // attack12: `--vllm-args "vllm serve neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8"` on memory, simulate and every
  // scenario command sized catalogue llama-3.1-8b at fp16 (16 GB of weights vLLM never loads); check read the name's
  // format. One rule now (weight_format_in_name in server_arg_sets): the line's --quantization wins, the line
  // outranks the scenario's quant.weights, a plain name or a file keeps what it had.
  const auto& cat = spec::Catalog::builtin();
  const auto weights_of = [&](const std::string& scenario, const std::string& line) {
    std::vector<std::string> notes;
    const Json out = apply_server_args(parse_json(scenario, "f"), line, "", notes, cat);
    return spec::scenario_from_json(JsonView(out, "")).weights;
  };
  const std::string bare = R"({"engine": {"max_model_len": 4096}})";
  const std::string fp16 = R"({"quant": {"weights": "fp16"}, "engine": {"max_model_len": 4096}})";
  CHECK(weights_of(bare, "vllm serve neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8") == "fp8");
  CHECK(weights_of(fp16, "vllm serve neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8") == "fp8");
  CHECK(weights_of(bare, "vllm serve neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8-dynamic") == "fp8-dynamic");
  CHECK(weights_of(bare, "vllm serve hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4 --dtype half") == "awq-int4");
  CHECK(weights_of(bare, "vllm serve hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4 -q awq") == "awq-int4");
  CHECK(weights_of(bare, "vllm serve neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8 --quantization fp8") == "fp8");
  CHECK(weights_of(bare, "vllm serve meta-llama/Llama-3.1-8B-Instruct") == spec::Scenario{}.weights);
  CHECK(weights_of(fp16, "vllm serve meta-llama/Llama-3.1-8B-Instruct") == "fp16");
  // check reads the line by the same rule: --dtype half beside an AWQ checkpoint is its activation type (check
  // counted any --dtype as the weights given and sized the AWQ run at fp16).
  const auto result = parse_vllm_results(R"({"backend": "vllm", "completed": 10, "duration": 10, "total_input_tokens":
      1000, "total_output_tokens": 1000, "request_rate": 1.0, "mean_ttft_ms": 50, "mean_tpot_ms": 10})", "r.json");
  VllmCheckOptions o;
  o.gpu = "h100-80gb-sxm";
  o.vllm_args = "vllm serve hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4 --dtype half";
  std::vector<std::string> notes;
  CHECK(vllm_check_scenario(result.at(0), o, cat, notes).weights == "awq-int4");
}

TEST_CASE("a latency-only summary is compared on what it states", "[check][files]") {
  // The real 80-prompt run with its duration and throughputs deleted.
  Json doc = parse_json(slurp(result_path(kH100Np80)), "f");
  for (const char* k : {"duration", "request_throughput", "input_throughput", "output_throughput"}) doc.erase(k);
  const auto r = parse_vllm_result(doc.dump(), "summary.json");
  CHECK(r.duration_s == 0);
  CHECK(r.mean_input_len == 244);  // 19504 / 80
  const auto c = check_vllm_result(r, h100());
  REQUIRE(c.fits);
  CHECK(find_row(c, "duration") == nullptr);
  CHECK(any_note(c, "latency-only summary"));
  REQUIRE(find_row(c, "mean_ttft_ms"));
  CHECK(find_row(c, "mean_ttft_ms")->rel_error.has_value());
  CHECK(find_row(c, "p99_tpot_ms")->rel_error.has_value());

  // Nothing but the latency statistics, the count and the lengths asked for (vLLM's random dataset keys).
  Json small = Json::object();
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (parse_vllm_latency_key(it.key())) small[it.key()] = it.value();
  small["model_id"] = doc["model_id"];
  small["num_prompts"] = 64;
  small["request_rate"] = 4;
  small["random_input_len"] = 512;
  small["random_output_len"] = 128;
  const auto s = parse_vllm_result(small.dump(), "small.json");
  CHECK(s.completed == 64);
  CHECK(s.mean_input_len == 512);
  CHECK(s.mean_output_len == 128);
  const auto cs = check_vllm_result(s, h100());
  REQUIRE(cs.fits);
  CHECK(cs.scenario.workload.num_requests == 64);
  CHECK(any_note(cs, "no token totals"));
  CHECK(cs.rows.size() == s.latencies.size());
  // A summary that does not say how long the requests were is refused, naming what is missing.
  small.erase("random_output_len");
  CHECK_THAT(thrown_message([&] { parse_vllm_result(small.dump(), "small.json"); }),
             Catch::StartsWith("small.json: total_output_tokens: missing, and no random_output_len or output_len"));
  small["random_output_len"] = 0;
  CHECK_THAT(thrown_message([&] { parse_vllm_result(small.dump(), "small.json"); }), Catch::Contains("random_output_len"));
  small.erase("num_prompts");
  small["random_output_len"] = 128;
  CHECK_THAT(thrown_message([&] { parse_vllm_result(small.dump(), "small.json"); }), Catch::Contains("'completed'"));
}

TEST_CASE("a start-up stall in the file's own TTFTs is noted", "[check][files]") {
  VllmResult r = read_vllm_result(result_path(kH100Np80));
  // Per-request TTFTs as --save-detailed writes them (seconds, request order); made up around the real median.
  r.ttfts_s.assign(80, 0.35);
  for (std::size_t i = 0; i < r.ttfts_s.size(); ++i) r.ttfts_s[i] += 0.002 * static_cast<double>(i % 7);
  CHECK_FALSE(start_stall_note(r));
  r.ttfts_s[0] = 6.5;
  r.ttfts_s[1] = 6.1;
  r.ttfts_s[2] = 5.8;
  const auto note = start_stall_note(r);
  REQUIRE(note);
  CHECK_THAT(*note, Catch::Contains("first 3 requests") && Catch::Contains("6.5 s"));
  CHECK(any_note(check_vllm_result(r, h100()), "artefact in the measured run"));
  // A slow request later in the run is load, not a start-up stall; a short stall (< 2 s) is not noted.
  r.ttfts_s[0] = r.ttfts_s[1] = r.ttfts_s[2] = 0.35;
  r.ttfts_s[40] = 7;
  CHECK_FALSE(start_stall_note(r));
  r.ttfts_s[40] = 0.35;
  r.ttfts_s[0] = 1.9;
  CHECK_FALSE(start_stall_note(r));
  // Too few requests to judge.
  r.ttfts_s.assign({6.0, 0.3, 0.3, 0.3});
  CHECK_FALSE(start_stall_note(r));
  // Read from the file's "ttfts" list.
  Json doc = parse_json(slurp(result_path(kH100Np80)), "f");
  Json t = Json::array();
  for (int i = 0; i < 80; ++i) t.push_back(i < 2 ? 4.0 : 0.3);
  doc["ttfts"] = t;
  const auto withlist = parse_vllm_result(doc.dump(), "d.json");
  REQUIRE(withlist.ttfts_s.size() == 80);
  CHECK(start_stall_note(withlist));
  doc["ttfts"][3] = -1;
  CHECK_THAT(thrown_message([&] { parse_vllm_result(doc.dump(), "d.json"); }), Catch::Contains("ttfts[3]"));
}

TEST_CASE("a run older than the simulated runtime gets a hint to name its release", "[check][files]") {
  const auto r = read_vllm_result(result_path(kH100Np80));  // dated 20240915, vLLM 0.5.4 by its folder
  auto o = h100();
  const auto c = check_vllm_result(r, o);
  CHECK(any_note(c, "dated 2024-09-15, before vLLM 0.8.0"));
  o.engine_version = "0.5.4";
  CHECK_FALSE(any_note(check_vllm_result(r, o), "dated 2024-09-15"));
  // A stated release (vLLM's --metadata version=..., SGLang's server_info.version) is named in the hint.
  Json doc = parse_json(slurp(result_path(kH100Np80)), "f");
  doc["vllm_version"] = "0.5.4";
  doc["date"] = "20250601-120000";
  const auto stated = parse_vllm_result(doc.dump(), "v.json");
  CHECK(stated.version == "0.5.4");
  const auto hint = version_hint(stated, check_vllm_result(stated, h100()).scenario);
  REQUIRE(hint);
  CHECK_THAT(*hint, Catch::Contains("--engine-version 0.5.4") && Catch::Contains("vllm-v0.5"));
  // A current release, or a recent date, needs no hint.
  doc["vllm_version"] = "0.10.1";
  const auto current = parse_vllm_result(doc.dump(), "v.json");
  CHECK_FALSE(version_hint(current, check_vllm_result(current, h100()).scenario));
}

TEST_CASE("a vLLM 0.5.4-0.5.5 chunked-prefill run is told its decodes may skip steps (vllm#7874)", "[check][files]") {
  const auto r = read_vllm_result(result_path(kH100Np80));
  auto o = h100();
  o.vllm_args += " --enable-chunked-prefill";
  const std::string note = "puts the prompts it admitted ahead of the running decodes";
  o.engine_version = "0.5.5";
  const auto c = check_vllm_result(r, o);
  REQUIRE(c.scenario.engine.policy == spec::SchedulerPolicy::chunked);
  CHECK(any_note(c, note));
  CHECK(any_note(c, "vllm#7874"));
  o.engine_version = "0.5.4";
  CHECK(any_note(check_vllm_result(r, o), note));
  // 0.6.0 has the fix (decodes first, as llmsim schedules); 0.5.3 re-sorted the running queue by arrival.
  o.engine_version = "0.6.0";
  CHECK_FALSE(any_note(check_vllm_result(r, o), note));
  o.engine_version = "0.5.3";
  CHECK_FALSE(any_note(check_vllm_result(r, o), note));
  // Without chunked prefill (prefill-first steps) there is no running-queue budget walk to cut.
  auto plain = h100();
  plain.engine_version = "0.5.5";
  CHECK_FALSE(any_note(check_vllm_result(r, plain), note));
}

TEST_CASE("a result built field by field (totals only) keeps its mean lengths", "[check][files]") {
  // Callers that fill VllmResult themselves (the validation corpus) set the totals, not mean_input_len.
  VllmResult r = read_vllm_result(result_path(kH100Np80));
  r.input_lens.clear();
  r.output_lens.clear();
  r.mean_input_len = r.mean_output_len = 0;
  const auto c = check_vllm_result(r, h100());
  const auto& reqs = std::get<spec::TraceReplay>(c.scenario.workload.arrival).requests;
  REQUIRE_FALSE(reqs.empty());
  CHECK(reqs[0].input_tokens == 244);   // 19504 / 80
  CHECK(reqs[0].output_tokens == 176);  // 14101 / 80
}
