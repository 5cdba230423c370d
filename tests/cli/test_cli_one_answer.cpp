// Issue 29, small wrong or unexplained outputs through the real binary: a note speaks of the flags the user typed;
// memory's KV unit under SGLang is labelled as llmsim's; a sweep row's empty prefix-cache hit rate says why; a
// disaggregated run prints one saturation number wherever it shows one.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "cli_util.hpp"
#include "llmsim/core/json_view.hpp"

using namespace llmsim;

namespace {

std::string sglang_memory(const std::string& line, const std::string& extra = "") {
  return "memory --gpu h100-80gb-sxm " + extra + " --sglang-args 'python -m sglang.launch_server --model-path " + line + "'";
}

}  // namespace

TEST_CASE("memory's notes name only flags the user typed; SGLang's implied radix cache is none of them") {
  // SGLang's radix cache is on unless --disable-radix-cache: the parser implies prefix caching, a flag nobody typed.
  const auto plain = test::run(sglang_memory("Qwen/Qwen3-8B"));
  REQUIRE(plain.code == 0);
  CHECK_THAT(plain.out, !Catch::Contains("--enable-prefix-caching"));
  CHECK_THAT(plain.out, !Catch::Contains("does not apply"));
  // Typed, a flag memory does not read is named as written.
  const auto graphs = test::run(sglang_memory("Qwen/Qwen3-8B --cuda-graph-max-bs 8"));
  REQUIRE(graphs.code == 0);
  CHECK_THAT(graphs.out, Catch::Contains("--cuda-graph-max-bs does not apply to `llmsim memory`"));
  // --disable-radix-cache is read (a hybrid model's Mamba pool depends on it, memory/sglang_mamba_pool.hpp): no note,
  // no mention of vLLM's name for it, and a dense model's plan is the same either way.
  const auto off = test::run(sglang_memory("Qwen/Qwen3-8B --disable-radix-cache"));
  REQUIRE(off.code == 0);
  CHECK_THAT(off.out, !Catch::Contains("does not apply"));
  CHECK_THAT(off.out, !Catch::Contains("--enable-prefix-caching"));
  CHECK(off.out == plain.out);
  // vLLM's own flag, typed and not read by memory, is still named.
  const auto vllm = test::run("memory --gpu h100-80gb-sxm --vllm-args 'vllm serve Qwen/Qwen3-8B --no-async-scheduling'");
  REQUIRE(vllm.code == 0);
  CHECK_THAT(vllm.out, Catch::Contains("async-scheduling does not apply to `llmsim memory`"));
}

TEST_CASE("memory under SGLang labels the block count as llmsim's unit and the 16-bit KV as --kv-cache-dtype auto") {
  const auto text = test::run(sglang_memory("Qwen/Qwen3-8B"));
  REQUIRE(text.code == 0);
  CHECK_THAT(text.out, Catch::Contains("blocks of 16 are llmsim's KV unit: SGLang's token pool allocates by --page-size"));
  CHECK_THAT(text.out, Catch::Contains("--kv-cache-dtype auto"));
  const auto sglang = Json::parse(test::run(sglang_memory("Qwen/Qwen3-8B", "--json"), false).out);
  CHECK_THAT(sglang["kv_unit_note"].get<std::string>(), Catch::Contains("--page-size"));
  // An FP8 cache is no 16-bit auto: only the block unit is labelled.
  const auto fp8 = Json::parse(test::run(sglang_memory("Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3", "--json"), false).out);
  CHECK_THAT(fp8["kv_unit_note"].get<std::string>(), !Catch::Contains("--kv-cache-dtype auto"));
  // vLLM's block and dtype are the plan's own: nothing to label.
  const auto vllm = test::run("memory --gpu h100-80gb-sxm --model qwen3-8b --json", false);
  REQUIRE(vllm.code == 0);
  CHECK(Json::parse(vllm.out)["kv_unit_note"] == "");
}

TEST_CASE("a sweep row whose prefix-cache hit rate is empty because the release turned caching off says why") {
  const auto dir = test::scratch_dir();
  std::ofstream(dir / "hybrid_prefix_base.json") << R"({"model": "nemotron-3-nano-30b-a3b",
    "hardware": {"gpu": "h200-141gb-sxm"}, "engine": {"enable_prefix_caching": true, "max_model_len": 8192},
    "workload": {"arrival": {"process": "poisson", "rate": 1.0}, "input_tokens": {"dist": "fixed", "value": 5200},
      "output_tokens": {"dist": "fixed", "value": 16}, "prefix_tokens": 5000, "prefix_groups": 1,
      "num_requests": 24, "warmup_requests": 0}})";
  const auto grid = dir / "hybrid_prefix_grid.json";
  std::ofstream(grid) << R"({"base": "hybrid_prefix_base.json", "grid": {"engine.runtime": ["vllm==0.10.2", "vllm==0.12.0"]}})";
  const auto r = test::run("sweep '" + grid.string() + "' -q --json", false);
  REQUIRE(r.code == 0);
  const Json rows = Json::parse(r.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["prefix_cache_hit_rate"].is_null());
  CHECK_THAT(rows[0]["prefix_cache_note"].get<std::string>(),
             Catch::StartsWith("prefix caching is off: vLLM 0.10.2 disables it for a hybrid (Mamba-2) model"));
  CHECK(rows[1]["prefix_cache_hit_rate"].get<double>() > 0);
  CHECK(rows[1]["prefix_cache_note"] == "");
  // The CSV carries the column beside the hit rate.
  const auto csv = dir / "hybrid_prefix_rows.csv";
  REQUIRE(test::run("sweep '" + grid.string() + "' -q --out '" + csv.string() + "'").code == 0);
  CHECK_THAT(test::read_file(csv), Catch::Contains("prefix_cache_hit_rate,prefix_cache_note,"));
}

TEST_CASE("a disaggregated run bounded by its prefill pool prints that pool's saturation everywhere") {
  const auto scenario = (std::filesystem::path(LLMSIM_SOURCE_DIR) / "examples/scenarios/disagg-h100-ethernet.json").string();
  const std::string cmd = "simulate '" + scenario + "' --rate 200 --set workload.num_requests=600";
  const auto j = test::run(cmd + " --json", false);
  REQUIRE(j.code == 0);
  const Json doc = Json::parse(j.out);
  const Json& pools = doc["disaggregation"]["pools"];
  REQUIRE(pools[0]["role"] == "prefill");
  const double prefill = pools[0]["saturation_requests_per_s"].get<double>();
  REQUIRE(prefill > 0);
  CHECK(pools[1]["saturation_requests_per_s"] == 0);  // the decode pool never saturated: the prefill pool bounds
  // Before, the run's saturation was the decode pool's (never saturated: null, "-") beside the prefill pool's rate.
  REQUIRE(doc["saturation"]["requests_per_s"].is_number());
  CHECK(doc["saturation"]["requests_per_s"].get<double>() == Approx(prefill));
  CHECK(doc["saturation"]["time_s"].get<double>() > 0);
  // Its tokens are those requests' mean prompt and output at that rate.
  const Json& run = doc["throughput"];
  const double per_request_out = run["output_tokens_per_s"].get<double>() / run["requests_per_s"].get<double>();
  CHECK(doc["saturation"]["output_tokens_per_s"].get<double>() == Approx(prefill * per_request_out));
  CHECK(doc["unstable"] == true);
  CHECK_THAT(doc["reason"].get<std::string>(), Catch::Contains("against a saturation throughput of"));
  const auto text = test::run(cmd);
  REQUIRE(text.code == 0);
  CHECK_THAT(text.out, !Catch::Contains("saturation (while requests waited)   -"));
}
