// vLLM 0.6.0-0.6.4's OpenAI server: in a process of its own since vllm#6883 (MQLLMEngine), but each request's handler
// still tokenised its prompt synchronously on the server's event loop (serving_engine.py's
// _normalize_prompt_text_to_input) until vllm#10635 (first released in 0.6.5), and handed the request to the engine
// only in a continuation queued behind the handlers received meanwhile: the same front part and queue as before 0.6
// (perf/inprocess_server.hpp inprocess_front, engine/api_render_loop.hpp), carved out of the path after the engine
// (api_server_s) so a lone request pays what it paid before, and a burst of N reaches the engine after N of them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "engine_test_util.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/perf/inprocess_server.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/perf/serving_path.hpp"

using namespace llmsim;
using llmsim::test::make;

namespace {

constexpr int kF06Prompt = 128;

/// `n` requests of 128 prompt / 4 output tokens, all at t = 0 (or one at t = 0), to vLLM `release`'s OpenAI server.
Json f06_scenario(int n, const char* release, const Json& engine = Json::object()) {
  Json reqs = Json::array();
  for (int k = 0; k < n; ++k) reqs.push_back({0.0, kF06Prompt, 4});
  Json w = {{"arrival", {{"process", "trace"}, {"requests", reqs}}}, {"num_requests", n}, {"warmup_requests", 0}};
  Json e = {{"api_server", true}, {"runtime", release}};
  for (auto it = engine.begin(); it != engine.end(); ++it) e[it.key()] = it.value();
  Json s = test::scenario(w, e);
  s["model"] = "llama-3.1-8b";
  return s;
}

perf::InprocessFront f06_front(const char* release, const Json& engine = Json::object()) {
  return perf::inprocess_front(make(f06_scenario(1, release, engine)).scenario.engine, false);
}

}  // namespace

TEST_CASE("vLLM 0.6.0-0.6.4's API server runs each request's front part on its loop, taken out of its path",
          "[inprocess_front][api_front06]") {
  const double tokenise = perf::runtime_traits(spec::Runtime::vllm_v0).tokenise_per_token_s;
  const double api_server = perf::runtime_traits(spec::Runtime::vllm_v0).api_server_s;
  REQUIRE(api_server > perf::inprocess_server::kPerRequestS);
  // (0.6.0-0.6.1 add the RPC frontend's time per request to the fixed part: test_rpc_frontend.cpp.)
  for (const char* release : {"vllm==0.6.2", "vllm==0.6.3", "vllm==0.6.4.post1"}) {
    INFO(release);
    const auto front = f06_front(release);
    CHECK(front.fixed_s == perf::inprocess_server::kPerRequestS);
    CHECK(front.per_prompt_token_s == tokenise);
    CHECK(front.from_path_s == perf::inprocess_server::kPerRequestS);
    // The path after the engine: the frontend's 4 ms less the handler's part, no tokenisation (the loop prices it).
    const auto path = perf::serving_path(make(f06_scenario(1, release)).scenario.engine, false);
    CHECK(path.fixed_s == Approx(api_server - perf::inprocess_server::kPerRequestS));
    CHECK(path.per_prompt_token_s == 0);
    // A lone request pays what the whole path charged before: front + path = api_server_s + tokenisation.
    CHECK(front.cost_s(kF06Prompt) + path.latency_s(kF06Prompt) == Approx(api_server + tokenise * kF06Prompt));
  }
  // vllm#10635 (0.6.5) moved the tokenisation to a thread pool; a runtime name without a release prices today's server.
  for (const char* release : {"vllm==0.6.5", "vllm==0.7.3", "vllm-v0"}) {
    INFO(release);
    CHECK_FALSE(f06_front(release).applies());
    const auto path = perf::serving_path(make(f06_scenario(1, release)).scenario.engine, false);
    CHECK(path.fixed_s == api_server);
    CHECK(path.per_prompt_token_s == tokenise);
  }
  CHECK_FALSE(f06_front("vllm==0.6.3", {{"api_server", false}}).applies());  // MQLLMEngine driven in-process
  CHECK_FALSE(perf::inprocess_front(make(f06_scenario(1, "vllm==0.6.3")).scenario.engine, true).applies());  // offline
  // Before 0.6 the runtime's path is 0 after the engine: nothing to take out of it.
  CHECK(f06_front("vllm==0.5.4").from_path_s == 0);
}

TEST_CASE("a burst to vLLM 0.6.3's API server reaches the engine after every front part; its steps are unchanged",
          "[inprocess_front][api_front06]") {
  const int n = 100;
  const double c = f06_front("vllm==0.6.3").cost_s(kF06Prompt);
  const auto served = test::recorded_run(f06_scenario(n, "vllm==0.6.3"));
  const auto direct = test::recorded_run(f06_scenario(n, "vllm==0.6.3", {{"api_server", false}}));
  REQUIRE(served.summary.completed_requests == n);
  REQUIRE(direct.summary.completed_requests == n);
  // Under the old rule the served burst's first step started at t = 0 too (the whole path was after the engine).
  CHECK(test::first_step_s(served) == Approx(n * c).epsilon(1e-9));
  CHECK(test::first_step_s(direct) < 1e-6);
  // A profile fitted on vllm-v0 sets the fixed part; the loop is the API server's, so the engine's steps are the same
  // whatever it costs and every TTFT is N x the difference longer.
  const double fitted = 2e-3;
  Json slow = f06_scenario(n, "vllm==0.6.3");
  slow["hardware"]["gpu_profile"] = {{"gpu_id", "a100-80gb-sxm"}, {"runtime", "vllm-v0"},
                                     {"inprocess_server_per_request_s", fitted}};
  const auto slower = test::recorded_run(slow);
  REQUIRE(slower.summary.completed_requests == n);
  REQUIRE(served.iterations.size() == slower.iterations.size());
  for (std::size_t k = 0; k < served.iterations.size(); ++k)
    CHECK(served.iterations[k].duration_s == Approx(slower.iterations[k].duration_s).epsilon(1e-12));
  CHECK(test::mean_ttft_s(slower) - test::mean_ttft_s(served) ==
        Approx(n * (fitted - perf::inprocess_server::kPerRequestS)).epsilon(1e-6));
  // A profile fitted on another runtime does not set it.
  slow["hardware"]["gpu_profile"]["runtime"] = "vllm-v0.5";
  CHECK(test::first_step_s(test::recorded_run(slow)) == Approx(n * c).epsilon(1e-9));
}
