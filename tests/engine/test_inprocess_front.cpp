// vLLM before 0.6.0's in-process OpenAI server: each request's handler runs its synchronous front part (the request's
// validation and SamplingParams, the prompt's tokenisation: serving_engine.py `_validate_prompt_and_tokenize` calls the
// tokenizer on the event loop, vllm#10635) on the one event loop it shares with the engine, and hands the request to
// the engine only in a continuation queued behind the front parts the loop received meanwhile
// (perf/inprocess_server.hpp inprocess_front, engine/api_render_loop.hpp; issues 27/28). A burst of N requests reaches
// the engine after N front parts, an isolated request after its own; offline runs, an engine called in-process, vLLM
// 0.6.5+ (its tokenisation in a thread pool; 0.6.0-0.6.4: test_api_front06.cpp) and static batches have no such loop;
// a profile fitted on the runtime sets the fixed part.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "engine_test_util.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/perf/inprocess_server.hpp"
#include "llmsim/perf/serving_path.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

constexpr int kFrontPrompt = 128;

/// `n` requests of 128 prompt / 4 output tokens arriving at `times` (or all at t = 0), to vLLM 0.5.4's OpenAI server.
Json front_scenario(int n, const Json& engine, const std::vector<double>& times = {}) {
  Json reqs = Json::array();
  for (int k = 0; k < n; ++k) reqs.push_back({times.empty() ? 0.0 : times[static_cast<std::size_t>(k)], kFrontPrompt, 4});
  Json w = {{"arrival", {{"process", "trace"}, {"requests", reqs}}}, {"num_requests", n}, {"warmup_requests", 0}};
  Json e = {{"api_server", true}, {"runtime", "vllm==0.5.4"}};
  for (auto it = engine.begin(); it != engine.end(); ++it) e[it.key()] = it.value();
  Json s = test::scenario(w, e);
  s["model"] = "llama-3.1-8b";
  return s;
}

/// The same scenario with a profile fitted on vLLM 0.5 that sets the front part's fixed cost to `fixed_s`.
Json front_fitted(Json s, double fixed_s) {
  s["hardware"]["gpu_profile"] = {{"gpu_id", "a100-80gb-sxm"}, {"runtime", "vllm-v0.5"},
                                  {"inprocess_server_per_request_s", fixed_s}};
  return s;
}

constexpr double kFrontFitted = 2e-3;

/// One request's front part at the sourced values: the fixed part and the prompt's tokenisation.
double front_cost_s() {
  const auto& e = make(front_scenario(1, Json::object())).scenario.engine;
  return perf::inprocess_front(e, false).cost_s(kFrontPrompt);
}

}  // namespace

TEST_CASE("the in-process server's front part: vLLM before 0.6 served through its OpenAI server only",
          "[inprocess_front]") {
  const auto front = [](const Json& engine) {
    const auto rs = make(front_scenario(1, engine));
    return perf::inprocess_front(rs.scenario.engine, false);
  };
  const auto v05 = front(Json::object());
  CHECK(v05.fixed_s == perf::inprocess_server::kPerRequestS);
  CHECK(v05.per_prompt_token_s > 0);  // the runtime's tokenisation rate, run on the loop
  CHECK(front_cost_s() == Approx(perf::inprocess_server::kPerRequestS + kFrontPrompt * v05.per_prompt_token_s));
  CHECK(front({{"runtime", "vllm==0.4.0"}}).applies());  // vllm-v0-paged: the same server in the engine's process
  // 0.6.0-0.6.4 run it on the API server's own loop (tests/engine/test_api_front06.cpp); 0.6.5 tokenises in a thread
  // pool (vllm#10635).
  CHECK_FALSE(front({{"runtime", "vllm==0.6.5"}}).applies());
  CHECK_FALSE(front({{"runtime", "vllm==0.10.1"}}).applies());
  CHECK_FALSE(front({{"api_server", false}}).applies());  // AsyncLLMEngine called in-process: no HTTP handler
  const auto rs = make(front_scenario(1, Json::object()));
  CHECK_FALSE(perf::inprocess_front(rs.scenario.engine, true).applies());  // offline: LLM.generate
  // The tokenisation runs on the loop, so the path after the engine no longer carries it (one place prices it).
  CHECK(perf::serving_path(rs.scenario.engine, false).latency_s(kFrontPrompt) == 0);
  const auto v06 = make(front_scenario(1, {{"runtime", "vllm==0.6.3"}}));
  CHECK(perf::serving_path(v06.scenario.engine, false).latency_s(kFrontPrompt) > 0);
}

TEST_CASE("a burst to vLLM 0.5.4's OpenAI server reaches the engine after every front part", "[inprocess_front]") {
  const int n = 100;
  const double c = front_cost_s();
  const auto served = test::recorded_run(front_scenario(n, Json::object()));
  const auto direct = test::recorded_run(front_scenario(n, {{"api_server", false}}));
  REQUIRE(served.summary.completed_requests == n);
  REQUIRE(direct.summary.completed_requests == n);
  CHECK(test::first_step_s(served) == Approx(n * c).epsilon(1e-9));
  CHECK(test::first_step_s(direct) < 1e-6);
  // After it the engine runs the same steps whatever the front part costs (the served steps carry the server's
  // streaming, an in-process caller's do not: the comparison is between two served runs): every request's TTFT is
  // N × the difference longer.
  const auto slower = test::recorded_run(front_fitted(front_scenario(n, Json::object()), kFrontFitted));
  REQUIRE(slower.summary.completed_requests == n);
  REQUIRE(served.iterations.size() == slower.iterations.size());
  for (std::size_t k = 0; k < served.iterations.size(); ++k)
    CHECK(served.iterations[k].duration_s == Approx(slower.iterations[k].duration_s).epsilon(1e-12));
  CHECK(test::mean_ttft_s(slower) - test::mean_ttft_s(served) ==
        Approx(n * (kFrontFitted - perf::inprocess_server::kPerRequestS)).epsilon(1e-6));
  // The gap grows with the burst: twice the requests, twice the wait before the first step.
  const auto twice = test::recorded_run(front_scenario(2 * n, Json::object()));
  CHECK(test::first_step_s(twice) == Approx(2 * n * c).epsilon(1e-9));
}

TEST_CASE("light load pays one front part; vLLM 0.6.5+ has no such loop", "[inprocess_front]") {
  std::vector<double> times;
  for (int k = 0; k < 20; ++k) times.push_back(0.5 * k);  // 2 req/s: the loop is idle at every arrival
  const auto served = test::recorded_run(front_scenario(20, Json::object(), times));
  const auto slower = test::recorded_run(front_fitted(front_scenario(20, Json::object(), times), kFrontFitted));
  CHECK(test::mean_ttft_s(slower) - test::mean_ttft_s(served) ==
        Approx(kFrontFitted - perf::inprocess_server::kPerRequestS).epsilon(1e-6));
  // 0.6.5 tokenises in a thread pool (vllm#10635); 0.6.0-0.6.4 queue on the API server's loop (test_api_front06.cpp).
  const auto v065 = test::recorded_run(front_scenario(100, {{"runtime", "vllm==0.6.5"}}));
  CHECK(test::first_step_s(v065) < 1e-6);
}

TEST_CASE("a profile fitted on vLLM 0.5 sets the front part's fixed cost; one of another runtime does not",
          "[inprocess_front]") {
  const int n = 50;
  const double fitted = kFrontFitted;
  const Json own = front_fitted(front_scenario(n, Json::object()), fitted);
  const auto rs = make(own);
  const double per_token = perf::inprocess_front(rs.scenario.engine, false).per_prompt_token_s;
  CHECK(test::first_step_s(test::recorded_run(own)) == Approx(n * (fitted + kFrontPrompt * per_token)).epsilon(1e-9));
  Json other = own;
  other["hardware"]["gpu_profile"]["runtime"] = "vllm-v1";
  CHECK(test::first_step_s(test::recorded_run(other)) == Approx(n * front_cost_s()).epsilon(1e-9));
}
