// Words a reader acts on, said once and only when true, across every command that prints them (issue 29, attack6):
// an unstable run says "unstable" once (the run monitor's reason already carries the label: metrics::kUnstableLabel),
// a scenario with no latency target never "meets the SLO" (analysis::meets_slo_phrase), and the cold start is one
// figure (engine::cold_start_s).
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "llmsim/core/json_view.hpp"

using namespace llmsim;

namespace {

const std::string kScenarios = std::string(LLMSIM_SOURCE_DIR) + "/examples/scenarios/";

// Overloaded: 40 req/s of chat on one RTX 4090 (it serves about 6), short enough to run in a second.
const std::string kOverload = "--set hardware.gpu=rtx4090-24gb --set workload.arrival.rate=40 "
                              "--set workload.num_requests=400 --set workload.warmup_requests=20";

bool says_unstable_twice(const std::string& text) {
  static const std::regex twice("unstable:?\\s+unstable", std::regex::icase);
  return std::regex_search(text, twice);
}

std::string write_scratch(const std::string& name, const std::string& text) {
  const auto p = test::scratch_dir() / name;
  std::ofstream(p) << text;
  return p.string();
}

}  // namespace

TEST_CASE("an unstable run says 'unstable' once in every output that reports it", "[cli][said_once]") {
  std::vector<std::pair<std::string, test::Run>> outputs;
  const std::string chat = "'" + kScenarios + "chat-8b.json' ";
  outputs.emplace_back("simulate", test::run("simulate " + chat + kOverload));
  outputs.emplace_back("simulate --json", test::run("simulate " + chat + kOverload + " --json"));
  // A sweep's rows carry the reason in their `reason` column.
  const auto grid = write_scratch("said_once_grid.json",
                                  R"({"base": ")" + kScenarios + R"(chat-8b.json", "grid": {"workload.arrival.rate": [2, 40]}})");
  const auto csv = (test::scratch_dir() / "said_once.csv").string();
  outputs.emplace_back("sweep", test::run("sweep '" + grid + "' --set hardware.gpu=rtx4090-24gb --set workload.num_requests=400 "
                                          "--set workload.warmup_requests=20 --out '" + csv + "'"));
  outputs.back().second.out += test::read_file(csv);
  // check: a vLLM result sent at 40 req/s to one RTX 4090 (the simulated run is overloaded).
  const Json result = {{"backend", "vllm"}, {"model_id", "meta-llama/Llama-3.1-8B-Instruct"}, {"completed", 400},
                       {"request_rate", 40.0}, {"duration", 60.0}, {"total_input_tokens", 400 * 1000},
                       {"total_output_tokens", 400 * 200}, {"mean_ttft_ms", 50.0}, {"mean_tpot_ms", 20.0}};
  const auto file = write_scratch("said_once_result.json", result.dump());
  outputs.emplace_back("check", test::run("check '" + file + "' --gpu rtx4090-24gb --model llama-3.1-8b"));
  outputs.emplace_back("check --json", test::run("check '" + file + "' --gpu rtx4090-24gb --model llama-3.1-8b --json"));
  bool any_unstable = false;
  for (const auto& [what, r] : outputs) {
    INFO(what << " (exit " << r.code << "):\n" << r.out.substr(0, 3000));
    CHECK(r.code == 0);
    CHECK_FALSE(says_unstable_twice(r.out));
    any_unstable = any_unstable || r.out.find("nstable") != std::string::npos;
  }
  // The class is exercised: the runs above are unstable and say so, simulate's heading and check's note included.
  CHECK(any_unstable);
  CHECK_THAT(outputs[0].second.out, Catch::Contains("UNSTABLE: "));
  CHECK_THAT(outputs[3].second.out, Catch::Contains("the simulated run was unstable: "));
}

TEST_CASE("with no SLO set, no output says an option meets the SLO", "[cli][said_once]") {
  // The last session's report said "1 of 1 options meet the SLO" for a scenario with none: nothing to meet.
  const std::string chat = "'" + kScenarios + "chat-8b.json' --set 'slo={}' --set workload.num_requests=300 "
                           "--set workload.warmup_requests=20 ";
  const auto html = (test::scratch_dir() / "no_slo.html").string();
  std::vector<std::pair<std::string, test::Run>> outputs;
  outputs.emplace_back("report", test::run("report " + chat + "--gpus a100-80gb-sxm,rtx4090-24gb --quants fp16 -o '" + html + "'"));
  outputs.back().second.out += test::read_file(html);
  outputs.emplace_back("compare", test::run("compare " + chat + "--gpus a100-80gb-sxm,rtx4090-24gb --quants fp16"));
  outputs.emplace_back("search", test::run("search " + chat + "--target-qps 4 --gpus rtx4090-24gb --jobs 1"));
  static const std::regex claim("meets? the SLO|SLO met\\b|within the SLO", std::regex::icase);
  for (const auto& [what, r] : outputs) {
    INFO(what << " (exit " << r.code << "):\n" << r.out.substr(0, 4000));
    CHECK(r.code == 0);
    CHECK_FALSE(std::regex_search(r.out, claim));
  }
  CHECK_THAT(outputs[0].second.out, Catch::Contains("options serve the load stably (no SLO set)"));
  // With an SLO the same sentence counts the options meeting it.
  const auto with_slo = (test::scratch_dir() / "with_slo.html").string();
  const auto r = test::run("report '" + kScenarios + "chat-8b.json' --set workload.num_requests=300 --set "
                           "workload.warmup_requests=20 --gpus a100-80gb-sxm --quants fp16 -o '" + with_slo + "'");
  REQUIRE(r.code == 0);
  CHECK_THAT(test::read_file(with_slo), Catch::Contains("options meet the SLO at this load"));
}

TEST_CASE("the cold start is one figure in simulate and capacity", "[cli][said_once]") {
  // capacity said "cold start 128 s" (weights alone) where simulate said "starts of 188 s" (weights + engine start).
  const std::string day = "'" + kScenarios + "month-autoscale.json'";
  const auto sim = test::run("simulate " + day + " --json", false);
  const auto cap = test::run("capacity " + day + " --json", false);
  REQUIRE(sim.code == 0);
  REQUIRE(cap.code == 0);
  const Json s = Json::parse(sim.out), c = Json::parse(cap.out);
  CHECK(s["cost"]["cold_start_s"].get<double>() == Approx(s["fleet"]["scale_up_delay_s"].get<double>()));
  CHECK(c["cold_start_s"].get<double>() == Approx(s["cost"]["cold_start_s"].get<double>()));
  const auto text = test::run("capacity " + day);
  const std::string expected = "cold start " + std::to_string(static_cast<int>(std::lround(c["cold_start_s"].get<double>()))) +
                               " s (weights over 1 Gbps + engine start 60 s)";
  CHECK_THAT(text.out, Catch::Contains(expected));
}

TEST_CASE("a tenant class's own SLO is an SLO in every header; a run that completed nothing meets nothing",
          "[cli][said_once]") {
  // compare's and capacity's headers said "SLO none" when only a class set a target (analysis::has_slo is the rule).
  const std::string classes =
      R"({"name": "class-slo", "model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"}, "slo": {},
          "workload": {"num_requests": 300, "warmup_requests": 20, "seed": 1, "classes": [
            {"name": "chat", "arrival": {"process": "poisson", "rate": 2.0},
             "input_tokens": {"dist": "fixed", "value": 512}, "output_tokens": {"dist": "fixed", "value": 64},
             "slo": {"ttft_ms": {"p95": 2000}}}]}})";
  const auto file = "'" + write_scratch("said_once_class_slo.json", classes) + "' ";
  const auto compare = test::run("compare " + file + "--gpus a100-80gb-sxm --quants fp16");
  const auto capacity = test::run("capacity " + file);
  const auto simulate = test::run("simulate " + file);
  for (const auto* r : {&compare, &capacity, &simulate}) {
    INFO(r->out.substr(0, 3000));
    CHECK(r->code == 0);
    CHECK(r->out.find("SLO none") == std::string::npos);
    CHECK(r->out.find("SLO: none") == std::string::npos);
    CHECK(r->out.find("SLO (none)") == std::string::npos);
  }
  CHECK_THAT(compare.out, Catch::Contains("SLO per tenant class"));
  CHECK_THAT(capacity.out, Catch::Contains("SLO: per tenant class"));
  CHECK_THAT(simulate.out, Catch::Contains("\nSLO met") || Catch::Contains("\nSLO NOT met"));
  // No SLO: no verdict (issue 29: it read as met). Every request timed out (a 1 ms client timeout): the text still says
  // nothing was met; the JSON has no verdict either way, only the note.
  const std::string none = "simulate '" + kScenarios + "chat-8b.json' --set 'slo={}' --set workload.num_requests=300 "
                           "--set workload.warmup_requests=20 ";
  const auto lost = test::run(none + "--set workload.timeout_s=0.001 --json", false);
  REQUIRE(lost.code == 0);
  const Json j = Json::parse(lost.out);
  CHECK(j["completed_requests"].get<std::int64_t>() == 0);
  CHECK(j["slo_met"].is_null());
  CHECK_THAT(test::run(none + "--set workload.timeout_s=0.001", false).out,
             Catch::Contains("no SLO set; NOT met: no request completed"));
  const auto served = test::run(none + "--json");
  REQUIRE(served.code == 0);
  CHECK(Json::parse(served.out)["slo_met"].is_null());
  CHECK_THAT(Json::parse(served.out)["slo_met_note"].get<std::string>(), Catch::StartsWith("no SLO set"));
  // No verdict, and no goodput either (it would be the throughput again): said once, on the verdict's line.
  CHECK_THAT(test::run(none).out,
             Catch::Contains("\nno SLO set (nothing to meet, so no goodput)") && !Catch::Contains("SLO met"));
}

TEST_CASE("compare's money columns are headed in the scenario's currency, never '$' over another's", "[cli][said_once]") {
  // Guide 002 prices in HK$: the cells read "HKD 7.073" and the heads read "$/Mtok@target" above them.
  const auto r = test::run("compare " + kScenarios + "chat-8b.json --gpus rtx4090-24gb --set cost.currency=HKD "
                           "--prices rtx4090-24gb=3.9 --requests 300 --replications 1 -q");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("HKD/Mtok@target") && Catch::Contains("HKD/month") && Catch::Contains("HKD/Mtok@cap"));
  CHECK_THAT(r.out, Catch::Contains("HKD/Mtok@target and HKD/month: the fleet for the target load"));
  CHECK(r.out.find("$/M") == std::string::npos);
  CHECK(r.out.find("$/month") == std::string::npos);
}

TEST_CASE("search's runner-up line counts per GPU-hour in the scenario's currency, not in dollars", "[cli][said_once]") {
  // The class: a money word of one currency over another's numbers. In HKD the runner-up line read "req/s per
  // GPU-dollar-hour" over figures per HKD.
  const auto r = test::run("search " + kScenarios + "chat-8b.json --gpus rtx4090-24gb --set cost.currency=HKD "
                           "--set hardware.price_per_gpu_hour=3.9 --set hardware.gpu=rtx4090-24gb --target-qps 2 -q");
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.out, Catch::Contains("runner-up"));
  CHECK_THAT(r.out, Catch::Contains("req/s per GPU-HKD-hour"));
  CHECK(r.out.find("dollar") == std::string::npos);
  CHECK(r.out.find('$') == std::string::npos);
}

TEST_CASE("a day of a few requests prints its small rates, never 0.00", "[cli][said_once]") {
  // A 0.0002 req/s base (a peak of 0.00038): its rates printed "0.00" in simulate's table and summary and in
  // capacity's target line, next to a bill (attack8).
  const std::string day = "'" + kScenarios + "month-autoscale.json' --set workload.arrival.rate=0.0002";
  for (const std::string command : {"simulate", "capacity"}) {
    const auto r = test::run(command + " " + day);
    INFO(command << " (exit " << r.code << "):\n" << r.out.substr(0, 3000));
    REQUIRE(r.code == 0);
    static const std::regex zero_rate("\\b0\\.0+ (req/s|QPS)");
    static const std::regex zero_row("\\n(offered|achieved over the run) +0\\.0+\\b");  // simulate's table
    CHECK_FALSE(std::regex_search(r.out, zero_rate));
    CHECK_FALSE(std::regex_search(r.out, zero_row));
  }
}

TEST_CASE("no SLO set: no attainment in simulate's JSON and text, and sweep's --fail-if on it is an error",
          "[cli][said_once][slo]") {
  // Issue 29 (tidy): slo_met was null with no target but slo_attainment read 1.0 ("attainment 100.0%"), and a CI gate
  // 'slo_attainment < 0.9' passed on it.
  const std::string none = "simulate '" + kScenarios + "chat-8b.json' --set 'slo={}' --set workload.num_requests=200 "
                           "--set workload.warmup_requests=20 ";
  const auto j = test::run(none + "--json");
  REQUIRE(j.code == 0);
  const Json r = Json::parse(j.out);
  CHECK(r["slo_attainment"].is_null());
  CHECK(r["steady_state"]["slo_attainment"].is_null());
  CHECK_THAT(r["slo_met_note"].get<std::string>(), Catch::StartsWith("no SLO set"));
  // Goodput counts the requests that met the SLO: with none set every request did, and it read the throughput again
  // under another name. Null beside the note, everywhere goodput is written (top level, steady state, vLLM's key).
  CHECK(r["throughput"]["requests_per_s"].get<double>() > 0);
  for (const char* k : {"goodput_rps", "goodput_output_tps", "goodput_total_tps", "request_goodput"}) {
    INFO(k);
    CHECK(r[k].is_null());
  }
  CHECK(r["steady_state"]["goodput_rps"].is_null());
  CHECK(r["steady_state"]["goodput_output_tps"].is_null());
  const auto text = test::run(none);
  CHECK_THAT(text.out, Catch::Contains("\nno SLO set (nothing to meet, so no goodput)") &&
                           !Catch::Contains("attainment") && !Catch::Contains("goodput 0"));
  // Nor are the priced tokens "SLO-meeting" (attack11): with no target the cost per million counts every finished
  // request's output (metrics::priced_output_tokens), in simulate's and capacity's lines alike; with the file's SLO
  // the words stay.
  CHECK_THAT(text.out, !Catch::Contains("SLO-meeting") && Catch::Contains("per million output tokens (no SLO set"));
  const auto cap = test::run("capacity '" + kScenarios + "chat-8b.json' --set 'slo={}' --requests 150 --replications 1 "
                             "--target-qps 3");
  REQUIRE(cap.code == 0);
  CHECK_THAT(cap.out, !Catch::Contains("SLO-meeting") && Catch::Contains("per million output tokens (no SLO set"));
  const auto with_slo = test::run("simulate '" + kScenarios + "chat-8b.json' --set workload.num_requests=200 "
                                  "--set workload.warmup_requests=20");
  CHECK_THAT(with_slo.out, Catch::Contains("per million SLO-meeting output tokens"));
  const auto grid = test::temp_file("no-slo-grid.json",
                                    R"({"base": ")" + kScenarios + R"(chat-8b.json", "grid": {"workload.seed": [1]}})");
  const auto gate = test::run("sweep '" + grid.string() + "' --set 'slo={}' --set workload.num_requests=100 "
                              "--set workload.warmup_requests=10 --fail-if 'slo_attainment < 0.9'");
  CHECK(gate.code == 2);
  CHECK_THAT(gate.out, Catch::Contains("'slo_attainment < 0.9': 'slo_attainment' has no value in row 0 (no SLO set"));
  // A gate on goodput with no SLO would hold or fail on the throughput: refused the same way, by every command.
  const auto good_gate = test::run("sweep '" + grid.string() + "' --set 'slo={}' --set workload.num_requests=100 "
                                   "--set workload.warmup_requests=10 --fail-if 'goodput_output_tps < 1'");
  CHECK(good_gate.code == 2);
  CHECK_THAT(good_gate.out,
             Catch::Contains("'goodput_output_tps < 1': 'goodput_output_tps' has no value in row 0 (no SLO set"));
}

TEST_CASE("memory reads VLLM_PP_LAYER_PARTITION from --vllm-args or --pp-layer-partition, and sizes the largest stage") {
  // The pasted launch line's environment is part of what vLLM runs: "24,8" puts three quarters of Llama-3.1-8B's
  // layers on the first GPU, so it holds more weights than vLLM's default [16, 16]; a split that does not add up is
  // an error naming the field.
  const std::string mem = "memory --gpu rtx4090-24gb --json --vllm-args ";
  const auto even = test::run(mem + "'vllm serve meta-llama/Llama-3.1-8B -pp 2 --max-model-len 4096'", false);
  const auto skew = test::run(mem + "'VLLM_PP_LAYER_PARTITION=24,8 vllm serve meta-llama/Llama-3.1-8B -pp 2 "
                                    "--max-model-len 4096'", false);
  const auto flag = test::run("memory --gpu rtx4090-24gb --json --model llama-3.1-8b --pp 2 --max-model-len 4096 "
                              "--pp-layer-partition 24,8", false);
  REQUIRE(even.code == 0);
  REQUIRE(skew.code == 0);
  REQUIRE(flag.code == 0);
  const double w_even = Json::parse(even.out)["per_gpu"]["weights_bytes"].get<double>();
  const double w_skew = Json::parse(skew.out)["per_gpu"]["weights_bytes"].get<double>();
  CHECK(w_skew > 1.3 * w_even);
  CHECK(Json::parse(flag.out)["per_gpu"]["weights_bytes"].get<double>() == w_skew);
  const auto bad = test::run(mem + "'VLLM_PP_LAYER_PARTITION=16,8 vllm serve meta-llama/Llama-3.1-8B -pp 2'");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Catch::Contains("pp-layer-partition") && Catch::Contains("sums to 24 layers"));
}
