// vLLM V0 decodes eagerly once a running sequence passes max_seq_len_to_capture (8192; perf/runtime.cpp, the engine's
// longest context: engine/longest_context.hpp, docs/engine.md; issue 27). One request of 7,900 prompt tokens alone on
// an H100 under 0.6.3: its decode steps replay the graph up to the step that holds 8,191 cached tokens and run eagerly
// from the one that holds 8,192 (each dearer by the eager host's remainder), while V1 0.8.4's do not jump; the decode
// runs give the event-per-step engine's bits across the crossing, with other requests joining and leaving.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine_test_util.hpp"
#include "llmsim/engine/simulator.hpp"

using namespace llmsim;

namespace v0_graph_length_engine_test {

Json v0gle_scenario(const std::string& release, const Json& workload) {
  return Json{{"model", "llama-3.1-8b"},
              {"hardware", {{"gpu", "h100-80gb-sxm"}}},
              {"engine", {{"runtime", release}, {"api_server", false}, {"max_model_len", 16384}}},
              {"workload", workload}};
}

/// The decode-only steps' durations of one request of `input` prompt and `output` tokens, alone.
std::vector<double> v0gle_decode_steps(const std::string& release, int input, int output, bool runs) {
  const Json w = {{"arrival", {{"process", "offline"}}},
                  {"input_tokens", {{"dist", "fixed"}, {"value", input}}},
                  {"output_tokens", {{"dist", "fixed"}, {"value", output}}},
                  {"num_requests", 1},
                  {"warmup_requests", 0}};
  engine::SimulationOptions opt;
  opt.record_iterations = true;
  opt.decode_runs = runs;
  const auto r = engine::simulate(test::make(v0gle_scenario(release, w)), opt);
  std::vector<double> d;
  for (const auto& it : r.iterations)
    if (it.prefill_seqs == 0 && it.decode_seqs > 0) d.push_back(it.duration_s);
  return d;
}

}  // namespace v0_graph_length_engine_test

using namespace v0_graph_length_engine_test;

TEST_CASE("a V0 request's decode steps turn eager at the step that holds 8192 cached tokens", "[v0_graph_length]") {
  for (const bool runs : {true, false}) {
    INFO("decode runs " << runs);
    const auto v0 = v0gle_decode_steps("vllm==0.6.3", 7900, 600, runs);
    REQUIRE(v0.size() >= 500);
    // Decode step j holds 7,900 + j cached tokens (the prompt's, then one more per step): graphed for j < 292.
    const std::size_t cross = 8192 - 7900;
    std::size_t jumps = 0, at = 0;
    for (std::size_t j = 1; j < v0.size(); ++j)
      if (v0[j] - v0[j - 1] > 1e-3) {
        ++jumps;
        at = j;
      }
    CHECK(jumps == 1);
    CHECK(at == cross);
    // Llama-3.1-8B on an H100: ~6 ms of GPU work against 32 × 0.31 ms of Python host, a few ms more per step.
    CHECK(v0[cross] - v0[cross - 1] > 2e-3);
    CHECK(v0[cross] - v0[cross - 1] < 6e-3);
    // Both sides of the crossing grow only with the context (attention), by microseconds a step.
    CHECK(v0[cross - 1] - v0[0] < 0.5e-3);
    CHECK(v0.back() - v0[cross] < 0.5e-3);
  }
  // V1 0.8.4 keeps its graphs at any length: no jump.
  const auto v1 = v0gle_decode_steps("vllm==0.8.4", 7900, 600, true);
  REQUIRE(v1.size() >= 500);
  for (std::size_t j = 1; j < v1.size(); ++j) CHECK(v1[j] - v1[j - 1] < 1e-3);
}

TEST_CASE("decode runs give the event-per-step engine's bits across V0's graph length", "[v0_graph_length]") {
  // Prompts around the length, outputs long enough to cross it, at a load where requests join and leave mid-run.
  const Json w = {{"arrival", {{"process", "poisson"}, {"rate", 2.0}}},
                  {"input_tokens", {{"dist", "lognormal"}, {"mean", 6500}, {"sigma", 0.4}}},
                  {"output_tokens", {{"dist", "lognormal"}, {"mean", 500}, {"sigma", 0.8}}},
                  {"num_requests", 300},
                  {"warmup_requests", 0}};
  for (const char* release : {"vllm==0.6.3", "vllm==0.5.4"}) {
    INFO(release);
    const auto rs = test::make(v0gle_scenario(release, w));
    engine::SimulationOptions opt;
    opt.record_requests = true;
    opt.decode_runs = true;
    const auto with = engine::simulate(rs, opt);
    opt.decode_runs = false;
    const auto without = engine::simulate(rs, opt);
    CHECK(metrics::to_json(with.summary).dump() == metrics::to_json(without.summary).dump());
    REQUIRE(with.requests.size() == without.requests.size());
    std::size_t differ = 0;
    for (std::size_t k = 0; k < with.requests.size(); ++k)
      differ += with.requests[k].first_token_s != without.requests[k].first_token_s ||
                with.requests[k].finish_s != without.requests[k].finish_s;
    CHECK(differ == 0);
  }
}
