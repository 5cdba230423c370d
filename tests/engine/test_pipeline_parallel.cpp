// Pipeline parallel: k batches in flight from k virtual engines over pp stages (engine.max_concurrent_batches).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <vector>

#include "../../libsim/src/engine/pipeline.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/serving_path.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

using namespace llmsim;
using engine::SimulationOptions;
using engine::simulate;

namespace {

spec::ResolvedScenario make_pp(int pp, int batches_in_flight, const Json& workload) {
  const Json j = {{"model", "llama-3.1-8b"}, {"quant", {{"weights", "fp16"}, {"kv_cache", "fp16"}}},
                  {"hardware", {{"gpu", "rtx4090-24gb"}, {"pp", pp}}},
                  {"engine", {{"max_num_seqs", 64}, {"max_model_len", 4096}, {"max_concurrent_batches", batches_in_flight},
                              {"api_server", false}}},  // the pipeline's own timing, no serving path in front
                  {"workload", workload}};
  return spec::resolve(spec::scenario_from_json(JsonView(j, "")), spec::Catalog::builtin());
}

Json closed_loop(int users, int requests) {
  return {{"arrival", {{"process", "closed"}, {"concurrency", users}}},
          {"input_tokens", {{"dist", "fixed"}, {"value", 256}}},
          {"output_tokens", {{"dist", "fixed"}, {"value", 128}}},
          {"num_requests", requests}, {"warmup_requests", 0}};
}

}  // namespace

TEST_CASE("pipeline parallel: one request alone takes the full pipeline latency, whatever the batches in flight") {
  const Json w = {{"arrival", {{"process", "constant"}, {"rate", 1.0}}},
                  {"input_tokens", {{"dist", "fixed"}, {"value", 512}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", 2}}},
                  {"num_requests", 1}, {"warmup_requests", 0}};
  for (int k : {0, 1}) {
    const auto rs = make_pp(2, k, w);
    const auto s = simulate(rs).summary;
    perf::BatchShape prefill;
    prefill.add_prefill(512, 0, true);
    const double hop = perf::serving_path(rs.scenario.engine, false).latency_s(0);  // V1's in-process AsyncLLM hop
    REQUIRE(s.ttft_ms.mean ==
            Approx((perf::make_cost_model(rs).iteration_time(prefill) + hop) * 1e3).epsilon(1e-9));
  }
}

TEST_CASE("pipeline parallel: a batch per stage overlaps the stages, one batch in flight leaves them idle") {
  // Prefill-heavy load: each stage is compute-bound on its half of the layers, so two batches in flight
  // keep both GPUs working and nearly double the throughput of one batch at a time.
  Json w = closed_loop(32, 1200);
  w["input_tokens"]["value"] = 2048;
  w["output_tokens"]["value"] = 2;
  const auto overlapped = simulate(make_pp(2, 0, w)).summary;
  const auto serial = simulate(make_pp(2, 1, w)).summary;
  const auto single_gpu = simulate(make_pp(1, 0, w)).summary;
  INFO("pp2 overlapped " << overlapped.throughput.input_tokens_per_s << " serial " << serial.throughput.input_tokens_per_s
                         << " one GPU " << single_gpu.throughput.input_tokens_per_s << " prompt tok/s");
  REQUIRE(overlapped.throughput.input_tokens_per_s > 1.7 * serial.throughput.input_tokens_per_s);
  REQUIRE(overlapped.throughput.input_tokens_per_s < 2.05 * serial.throughput.input_tokens_per_s);
  // One batch in flight over two GPUs is no faster than one GPU (it adds the stage transfer).
  REQUIRE(serial.throughput.input_tokens_per_s < 1.01 * single_gpu.throughput.input_tokens_per_s);
  REQUIRE(overlapped.mfu > 1.7 * serial.mfu);
}

TEST_CASE("pipeline parallel: memory-bound decode gains little from overlap (each micro-batch re-reads the weights)") {
  const Json w = closed_loop(64, 1500);
  const auto overlapped = simulate(make_pp(2, 0, w)).summary;
  const auto serial = simulate(make_pp(2, 1, w)).summary;
  INFO("pp2 overlapped " << overlapped.throughput.output_tokens_per_s << " serial " << serial.throughput.output_tokens_per_s);
  REQUIRE(overlapped.throughput.output_tokens_per_s > serial.throughput.output_tokens_per_s);
  REQUIRE(overlapped.throughput.output_tokens_per_s < 1.35 * serial.throughput.output_tokens_per_s);
}

TEST_CASE("pipeline parallel: each virtual engine runs one batch at a time and at most pp are in flight") {
  SimulationOptions opt;
  opt.record_iterations = true;
  const int pp = 4;
  const auto res = simulate(make_pp(pp, 0, closed_loop(48, 600)), opt);
  REQUIRE(res.summary.completed_requests == 600);
  REQUIRE(res.kv_blocks_in_use_at_end == 0);
  std::map<int, std::vector<engine::IterationRecord>> per_engine;
  std::vector<std::pair<double, int>> edges;
  for (const auto& it : res.iterations) {
    per_engine[it.virtual_engine].push_back(it);
    edges.emplace_back(it.start_s, +1);
    edges.emplace_back(it.start_s + it.duration_s, -1);
  }
  REQUIRE(per_engine.size() == static_cast<std::size_t>(pp));  // requests spread over every virtual engine
  for (auto& [v, its] : per_engine) {
    std::sort(its.begin(), its.end(), [](const auto& a, const auto& b) { return a.start_s < b.start_s; });
    for (std::size_t i = 1; i < its.size(); ++i) REQUIRE(its[i].start_s >= its[i - 1].start_s + its[i - 1].duration_s - 1e-12);
  }
  std::sort(edges.begin(), edges.end());  // at equal times an exit (-1) sorts before an entry
  int in_flight = 0, most = 0;
  for (const auto& [t, d] : edges) most = std::max(most, in_flight += d);
  REQUIRE(most == pp);
}

TEST_CASE("pipeline parallel: batches in flight above pp act as pp; negative is an error naming the field") {
  const Json w = closed_loop(16, 200);
  REQUIRE(simulate(make_pp(2, 8, w)).summary.throughput.output_tokens_per_s ==
          simulate(make_pp(2, 2, w)).summary.throughput.output_tokens_per_s);
  REQUIRE_THROWS_WITH(simulate(make_pp(2, -1, w)), Catch::Contains("engine.max_concurrent_batches"));
}

TEST_CASE("pipeline parallel: layers split as vLLM's get_pp_indices does, an uneven split paced by its largest stage",
          "[pipeline][pp_split]") {
  // vllm/distributed/utils.py get_pp_indices (VLLM_PP_LAYER_PARTITION unset): num_layers / pp each, the remainder one
  // more each to the stages before the last, from the second-to-last backwards. Its docstring's and tests' cases:
  using V = std::vector<int>;
  CHECK(spec::pp_stage_layers(32, 4) == V{8, 8, 8, 8});
  CHECK(spec::pp_stage_layers(35, 2) == V{18, 17});  // Gemma-4 E2B over two stages
  CHECK(spec::pp_stage_layers(22, 4) == V{5, 6, 6, 5});
  CHECK(spec::pp_stage_layers(61, 4) == V{15, 15, 16, 15});
  CHECK(spec::pp_stage_layers(5, 3) == V{2, 2, 1});
  CHECK(spec::pp_stage_layers(4, 3) == V{1, 2, 1});
  CHECK(spec::pp_stage_layers(3, 2) == V{2, 1});
  CHECK(spec::largest_pp_stage(35, 2) == 18);
  CHECK(spec::largest_pp_stage(32, 1) == 32);
  // Each stage takes its layers' share of a pass: 18/35 and 17/35 of a 35 s pass. A second batch ready at once enters
  // the first stage when the first batch leaves it (18 s) and leaves it at 36 s, after the second stage freed (35 s).
  engine::detail::Pipeline uneven(V{18, 17});
  const auto a = uneven.pass(0, 35), b = uneven.pass(0, 35);
  CHECK(a.entry_s == 0);
  CHECK(a.exit_s == Approx(35));
  CHECK(b.entry_s == Approx(18));
  CHECK(b.exit_s == Approx(53));  // 18 + 18 + 17: the larger stage paces it (an even split: 17.5 + 35 = 52.5)
  engine::detail::Pipeline even(V{16, 16});
  even.pass(0, 32);
  CHECK(even.pass(0, 32).exit_s == Approx(48));
  // End to end: llama-3.1-8b's 32 layers over 3 stages ([10, 11, 11]), which llmsim refused before, runs; a
  // compute-bound load gains less than 3x from the overlap (the 11-layer stages pace it: at most 32/11).
  Json w = closed_loop(48, 900);
  w["input_tokens"]["value"] = 2048;
  w["output_tokens"]["value"] = 2;
  const auto overlapped = simulate(make_pp(3, 0, w)).summary;
  const auto serial = simulate(make_pp(3, 1, w)).summary;
  REQUIRE(overlapped.completed_requests == 900);
  const double gain = overlapped.throughput.input_tokens_per_s / serial.throughput.input_tokens_per_s;
  INFO("pp3 overlapped / one batch in flight: x" << gain);
  CHECK(gain > 2.0);
  CHECK(gain <= 32.0 / 11.0 + 1e-9);
}

TEST_CASE("pipeline parallel: Gemma-4 E2B (35 layers) over 2 stages plans its largest stage and serves",
          "[pipeline][pp_split]") {
  // llmsim refused pp 2 for 35 layers ("must divide"); vLLM serves it as [18, 17] (issue 29).
  auto resolved = [](int pp) {
    const Json j = {{"model", "gemma-4-e2b"}, {"hardware", {{"gpu", "rtx4090-24gb"}, {"pp", pp}}},
                    {"engine", {{"max_model_len", 8192}, {"api_server", false}}},
                    {"workload", closed_loop(8, 60)}};
    return spec::resolve(spec::scenario_from_json(JsonView(j, "")), spec::Catalog::builtin());
  };
  const auto one = resolved(1), two = resolved(2);
  const auto p1 = memory::plan_memory(one), p2 = memory::plan_memory(two);
  REQUIRE(p2.fits);
  // The largest stage holds 18 of 35 layers and the heavier end (embeddings or LM head): more than half the weights,
  // less than all of them.
  CHECK(p2.per_gpu.weights_bytes > p1.per_gpu.weights_bytes / 2);
  CHECK(p2.per_gpu.weights_bytes < p1.per_gpu.weights_bytes);
  const auto s = simulate(two).summary;
  CHECK(s.fits);
  CHECK(s.completed_requests == 60);
}

TEST_CASE("VLLM_PP_LAYER_PARTITION: the given split is what the engine prices and the plan sizes; a bad one is an "
          "error naming the field", "[pipeline][pp_split]") {
  // vLLM's environment variable (vllm/distributed/utils.py get_pp_indices) sets each stage's layers: "24,8" puts
  // three quarters of llama-3.1-8b's 32 layers on the first stage, so that stage paces the pipeline and holds the
  // most weights, where vLLM's default split is [16, 16].
  auto with = [](const Json& partition, const Json& workload, const char* where = "hardware") {
    Json j = {{"model", "llama-3.1-8b"}, {"quant", {{"weights", "fp16"}, {"kv_cache", "fp16"}}},
              {"hardware", {{"gpu", "rtx4090-24gb"}, {"pp", 2}}},
              {"engine", {{"max_num_seqs", 64}, {"max_model_len", 4096}, {"api_server", false}}},
              {"workload", workload}};
    if (!partition.is_null()) {
      if (std::string(where) == "hardware") j["hardware"]["pp_layer_partition"] = partition;
      else j["VLLM_PP_LAYER_PARTITION"] = partition;  // as vLLM's environment names it, at the top level
    }
    return spec::resolve(spec::scenario_from_json(JsonView(j, "")), spec::Catalog::builtin());
  };
  Json w = closed_loop(32, 400);
  w["input_tokens"]["value"] = 2048;
  w["output_tokens"]["value"] = 2;
  const auto even = with(nullptr, w), skewed = with("24,8", w), listed = with(Json::array({24, 8}), w);
  const auto top = with("24, 8", w, "top");
  using V = std::vector<int>;
  CHECK(spec::pp_stage_layers(32, skewed.scenario.hardware.parallel) == V{24, 8});
  CHECK(spec::pp_stage_layers(32, top.scenario.hardware.parallel) == V{24, 8});
  CHECK(listed.scenario.hardware.parallel.layer_partition == V{24, 8});
  CHECK(spec::largest_pp_stage(32, even.scenario.hardware.parallel) == 16);
  // Sizing: the first stage's 24 layers (and the embeddings) are what one GPU holds.
  const auto plan_even = memory::plan_memory(even), plan_skewed = memory::plan_memory(skewed);
  CHECK(static_cast<double>(plan_skewed.per_gpu.weights_bytes) > 1.3 * static_cast<double>(plan_even.per_gpu.weights_bytes));
  CHECK(plan_skewed.kv_capacity_tokens < plan_even.kv_capacity_tokens);
  // Pricing: a compute-bound load through two overlapped stages is paced by the 24-layer one: at most 32/24 of one
  // pass's rate against the even split's 2x, so it is slower by about 24/16.
  const auto fast = simulate(even).summary, slow = simulate(skewed).summary;
  REQUIRE(fast.completed_requests == 400);
  REQUIRE(slow.completed_requests == 400);
  const double ratio = fast.throughput.input_tokens_per_s / slow.throughput.input_tokens_per_s;
  INFO("default split / 24,8: x" << ratio);
  CHECK(ratio > 1.3);
  CHECK(ratio < 1.6);
  // The scenario writes it back as it read it.
  CHECK(spec::to_json(skewed.scenario)["hardware"]["pp_layer_partition"] == Json::array({24, 8}));
  // vLLM's checks (the count and the sum), and a stage with no layer, each an error naming the field.
  for (const auto& [bad, says] : std::vector<std::pair<Json, std::string>>{
           {"16,8", "sums to 24 layers but the model has 32"},
           {"10,10,12", "has 3 stages but pipeline parallel is 2"},
           {"32,0", "stage 1 has 0 layers"},
           {"16;16", "invalid partition string '16;16'"},
           {"", "invalid partition string"}}) {
    INFO(bad.dump());
    CHECK_THROWS_WITH(with(bad, w), Catch::Contains("hardware.pp_layer_partition") && Catch::Contains(says));
  }
  CHECK_THROWS_WITH(with("16,8", w, "top"), Catch::Contains("sums to 24 layers"));
}
